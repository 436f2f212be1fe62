package crawler

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
)

// A pass is opened, run and closed by one call, Run, as bbolt's Update
// begins, runs and commits a transaction: the caller says which pass it
// wants (PassSpec), and Run resumes the store's unfinished pass when it is
// that one, begins it otherwise, and records how it ended.

// PassSpec says which pass Run works on.
type PassSpec struct {
	// Pass is the pass to begin: its StartURLs, SettingsHash, the
	// directories of a built site (Root, Roots, RelativePaths) and Config.
	// An unfinished pass is resumed only when its start URLs and settings
	// hash are these. ID, when set, is the pass's ID (a cluster's workers
	// use the coordinator's): an unfinished pass with that ID is resumed,
	// and a new pass gets it.
	Pass store.Pass
	// Seeds are the URLs a new pass begins from, each decided by the rules;
	// one they exclude refuses the pass (ErrExcludedStart). None is
	// allowed: a worker may begin with nothing and take all its work from
	// the Frontier.
	Seeds []string
	// New abandons an unfinished pass instead of resuming it, and begins a
	// pass even when the last one was of other start URLs. It never
	// abandons the pass Pass.ID names.
	New bool
	// Opened, when set, is called with the pass once it is open and before
	// anything is fetched. An error from it ends Run, the pass stopped.
	Opened func(Opened) error
}

// Opened describes the pass Run opened.
type Opened struct {
	Pass    store.Pass
	Queued  int // tasks on its frontier
	Done    int // URLs an earlier run of the pass resolved
	Resumed bool
	// LastAlive is set when the run before died (killed, crashed) instead
	// of stopping, so it may have had requests out that it did not save
	// (see store.Pass.RunStarted and throttle.Throttle.Killed): when it was
	// last known alive (its pass's Alive or RunStarted, the later). The run
	// before on this database, whichever pass it worked on, since the
	// hosts' state is the database's. Zero when it ended properly.
	LastAlive time.Time
}

// The reasons Run refuses to open a pass; a *RefusedError wraps one, so
// errors.Is tells them apart.
var (
	// ErrOtherPassOpen: the store holds an unfinished pass of other start
	// URLs (or, with Pass.ID set, of another ID).
	ErrOtherPassOpen = errors.New("another pass is unfinished")
	// ErrSettingsChanged: the unfinished pass began with another settings
	// hash.
	ErrSettingsChanged = errors.New("the unfinished pass began with other settings")
	// ErrOtherSite: the store's last pass was of other start URLs, whose
	// history would be read as this site's.
	ErrOtherSite = errors.New("the store holds another site's passes")
	// ErrExcludedStart: the rules exclude a seed.
	ErrExcludedStart = errors.New("a start URL is excluded")
)

// RefusedError is a pass Run would not open, and why.
type RefusedError struct {
	Reason error      // one of ErrOtherPassOpen, ErrSettingsChanged, ErrOtherSite, ErrExcludedStart
	Path   string     // the store's file
	Pass   store.Pass // the pass in the way: the unfinished one, or the last one
	URL    string     // ErrExcludedStart: the seed
	Rule   string     // ErrExcludedStart: the rule that excludes it
}

func (e *RefusedError) Error() string {
	switch e.Reason {
	case ErrOtherPassOpen:
		return fmt.Sprintf("%s holds an unfinished pass %d of %s", e.Path, e.Pass.ID, strings.Join(e.Pass.StartURLs, " "))
	case ErrSettingsChanged:
		return fmt.Sprintf("pass %d in %s began with other rules or settings", e.Pass.ID, e.Path)
	case ErrOtherSite:
		what := strings.Join(e.Pass.StartURLs, " ")
		if dirs := e.Pass.Dirs(); len(dirs) > 0 {
			what = strings.Join(dirs, " ")
		}
		return fmt.Sprintf("%s holds the passes of %s", e.Path, what)
	case ErrExcludedStart:
		return fmt.Sprintf("start URL %s is excluded by %s", e.URL, e.Rule)
	}
	return e.Reason.Error()
}

func (e *RefusedError) Unwrap() error { return e.Reason }

// Run opens the pass spec describes, works on it until its frontier is
// empty (and the Frontier says the pass is done everywhere) or ctx is
// cancelled, and closes it: its state (complete or stopped), Finished,
// Elapsed and the URLs deferred to a later run are stored, and the pass is
// returned as stored.
//
// When ctx is cancelled no new task starts, tasks in flight get
// Config.Grace to finish, everything finished is committed, and Run returns
// with Complete false; cancelling hard stops the grace at once. An error
// before the pass is open (a *RefusedError, or the store's) comes with the
// zero Pass; one after, with the pass as stored.
func (c *Crawler) Run(ctx, hard context.Context, spec PassSpec) (store.Pass, Outcome, error) {
	o, queue, done, err := c.open(spec)
	if err != nil {
		return store.Pass{}, Outcome{}, err
	}
	pass := o.Pass
	c.passID = pass.ID
	if spec.Opened != nil {
		if err := spec.Opened(o); err != nil {
			pass.State, pass.RunStarted = store.PassStopped, time.Time{}
			if serr := c.store.UpdatePass(pass); serr != nil {
				err = errors.Join(err, fmt.Errorf("save pass %d: %w", pass.ID, serr))
			}
			return pass, Outcome{}, err
		}
	}
	began := time.Now()
	out, runErr := c.run(ctx, hard, pass, began, queue, done, o.LastAlive)

	pass.Elapsed += time.Since(began)
	pass.RunStarted = time.Time{} // ended, not killed: everything it started is saved
	pass.Deferred, pass.ResumeAfter = 0, time.Time{}
	if ctx.Err() == nil {
		// Finished but for URLs held back by a pause: the report says to
		// come back after it. A stopped run says it was stopped instead.
		pass.Deferred, pass.ResumeAfter = out.Deferred, out.ResumeAfter
	}
	pass.State = store.PassStopped
	if out.Complete {
		pass.State = store.PassComplete
	}
	pass.Finished = time.Now()
	pass.SiteOrigins = c.siteOrigins()
	if err := c.store.UpdatePass(pass); err != nil {
		return pass, out, fmt.Errorf("save pass %d: %w", pass.ID, err)
	}
	// What was committed is kept, and the pass is stopped: resumable.
	return pass, out, runErr
}

// open resumes the unfinished pass when it is the one spec describes, or
// begins that one, and returns it running with its frontier and the URLs it
// resolved already.
func (c *Crawler) open(spec PassSpec) (Opened, []store.Task, []string, error) {
	want := spec.Pass
	open, ok, err := c.store.OpenPass()
	if err != nil {
		return Opened{}, nil, nil, err
	}
	refuse := func(reason error, p store.Pass) (Opened, []store.Task, []string, error) {
		return Opened{}, nil, nil, &RefusedError{Reason: reason, Path: c.store.Path(), Pass: p}
	}
	mine := ok && (want.ID == 0 || open.ID == want.ID)
	if ok && (!spec.New || (want.ID != 0 && open.ID == want.ID)) {
		if !mine || !slices.Equal(open.StartURLs, want.StartURLs) {
			return refuse(ErrOtherPassOpen, open)
		}
		if open.SettingsHash != "" && open.SettingsHash != want.SettingsHash {
			return refuse(ErrSettingsChanged, open)
		}
		return c.resume(open, want)
	}
	// The run before on this database may have died whatever pass it
	// worked on: the one abandoned here, or the last one when another
	// process abandoned it (a cluster worker's beginPass): its requests
	// are out at hosts this pass shares (review10 R10: --new-pass after
	// a kill, what the GitHub Action runs, let 4 in at --per-host 2).
	var before Opened
	if ok {
		before.LastAlive = open.LastSeen()
	} else {
		last, had, err := c.store.LastPass()
		if err != nil {
			return Opened{}, nil, nil, err
		}
		if had {
			before.LastAlive = last.LastSeen()
		}
		// Another site's history would be read as this one's: its results
		// reused, its problems "fixed". Say so rather than mix them.
		if had && !spec.New && !slices.Equal(last.StartURLs, want.StartURLs) {
			return refuse(ErrOtherSite, last)
		}
		// Records come only with a pass, and go before it (Prune).
		c.noHistory = !had
	}
	seeds := make([]store.Task, 0, len(spec.Seeds))
	for _, s := range spec.Seeds {
		u, err := url.Parse(s)
		if err != nil {
			return Opened{}, nil, nil, fmt.Errorf("start URL %q: %w", s, err)
		}
		d := c.rules.Decide(u)
		if d.Action != rules.Parse && d.Action != rules.Check {
			return Opened{}, nil, nil, &RefusedError{Reason: ErrExcludedStart, Path: c.store.Path(), URL: s, Rule: d.Rule}
		}
		seeds = append(seeds, store.Task{URL: d.URL, Action: d.Action.String()})
	}
	if ok {
		open.State = store.PassAbandoned
		open.Finished = time.Now()
		if err := c.store.UpdatePass(open); err != nil {
			return Opened{}, nil, nil, err
		}
	}
	p := want
	p.State, p.Finished, p.Elapsed, p.Tally = "", time.Time{}, 0, nil
	if p.Started.IsZero() {
		p.Started = time.Now()
	}
	p.RunStarted, p.Alive = c.cfg.Now(), time.Time{}
	c.sticky(&p, want)
	pass, err := c.store.BeginPass(p, seeds)
	if err != nil {
		return Opened{}, nil, nil, err
	}
	return Opened{Pass: pass, Queued: len(seeds), LastAlive: before.LastAlive}, seeds, nil, nil
}

// resume reopens open with its stored frontier and done set.
func (c *Crawler) resume(open, want store.Pass) (Opened, []store.Task, []string, error) {
	queue, err := c.store.Frontier()
	if err != nil {
		return Opened{}, nil, nil, err
	}
	var done []string
	err = c.store.ResolvedIn(open.ID, func(u string) error {
		done = append(done, u)
		return nil
	})
	if err != nil {
		return Opened{}, nil, nil, err
	}
	c.noHistory = false
	if w, ok := c.rules.(siteWidener); ok {
		// Decided as the run before decided: its start URLs' redirects
		// made these hosts the site's.
		if err := w.AddSiteOrigins(open.SiteOrigins); err != nil {
			return Opened{}, nil, nil, fmt.Errorf("pass %d: %w", open.ID, err)
		}
	}
	lastAlive := open.LastSeen()
	open.State, open.RunStarted, open.Alive = store.PassRunning, c.cfg.Now(), time.Time{}
	c.sticky(&open, want)
	if err := c.store.UpdatePass(open); err != nil {
		return Opened{}, nil, nil, err
	}
	return Opened{Pass: open, Queued: len(queue), Done: len(done), Resumed: len(done) > 0, LastAlive: lastAlive}, queue, done, nil
}

// sticky carries onto p what this run adds to the pass: the config file it
// was given, and settings that, once on, stay on for the whole pass (a pass
// that stores anchors is reported with its fragment checks).
func (c *Crawler) sticky(p *store.Pass, want store.Pass) {
	if want.Config != "" {
		p.Config = want.Config
	}
	p.CheckFragments = p.CheckFragments || want.CheckFragments || c.cfg.CheckFragments
	p.Insecure = p.Insecure || want.Insecure || c.cfg.Insecure
}
