package crawler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/singleflight"

	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// Store is what a pass needs from the database: *store.DB is one.
type Store interface {
	Get(url string) (store.URLRecord, bool, error)
	Links(page string) ([]store.Link, error)
	// CommitHosts commits results and the hosts' state in one transaction.
	CommitHosts(passID uint64, results []store.Result, hosts map[string][]byte) error
	PutHostStates(states map[string][]byte) error
	ForEachHostState(fn func(host string, v []byte) error) error

	// The pass's own lifecycle (see Run).
	Path() string
	OpenPass() (store.Pass, bool, error)
	LastPass() (store.Pass, bool, error)
	BeginPass(p store.Pass, seeds []store.Task) (store.Pass, error)
	UpdatePass(p store.Pass) error
	Frontier() ([]store.Task, error)
	ResolvedIn(passID uint64, fn func(url string) error) error
	// AddSiteOrigins records the hosts a start URL's redirects added to
	// the site (see siteWidener).
	AddSiteOrigins(passID uint64, origins []string) error
	Digests(passID uint64, fn func(url string, digest uint64) error) error
}

// Decider classifies and canonicalizes URLs; *rules.Engine is one.
type Decider interface {
	Decide(u *url.URL) rules.Decision
	// StartHost says whether a host is the site's own: a pause that holds
	// back its URLs leaves the pass unfinished, not just a URL unverified.
	StartHost(host string) bool
}

// siteWidener is a Decider whose site grows by the hosts its start URLs
// redirect to (http://example.com/ -> https://www.example.com/): their pages
// are parsed as the site's; *rules.Engine is one. A Decider that is not
// keeps the site to the start URLs' hosts.
type siteWidener interface {
	// FollowStart is told that the pass's URL start redirects to target,
	// and returns the origin it added to the site, or "", and whether
	// target is on the site's hosts now.
	FollowStart(start string, target *url.URL) (origin string, onSite bool)
	// AddSiteOrigins adds origins an earlier run of the pass added.
	AddSiteOrigins(origins []string) error
	SiteOrigins() []string
}

// DefaultMaxRedirects is how many redirects a link may take: 20, as in
// Chrome and Firefox, so a link that works in a browser is never reported
// as "too many redirects".
const DefaultMaxRedirects = 20

// The defaults of the Config fields left zero. The command's flags and
// config keys default to the same values: its settings table reads them
// from here, so a pass run from a test and one run by linkpatrol check
// commit, time out and cap alike.
const (
	DefaultConcurrency   = 16
	DefaultPerHost       = 8 // never more than Concurrency
	DefaultTimeout       = 20 * time.Second
	DefaultMaxSize       = 10 << 20
	DefaultBatchSize     = 32 // what a kill may cost
	DefaultBatchInterval = time.Second
)

// Config holds the settings of one pass. The zero value of a field means
// its default.
type Config struct {
	Concurrency   int           // requests in flight in total; default DefaultConcurrency (the pool has a few more workers: see Workers)
	PerHost       int           // requests in flight to one host; default DefaultPerHost, at most Concurrency
	Timeout       time.Duration // soft timeout of one request; the whole task gets twice this; default DefaultTimeout
	Grace         time.Duration // how long in-flight tasks may finish after a stop; default 2s
	MaxSize       int64         // HTML body cap, after decompression; default DefaultMaxSize
	MaxRedirects  int           // redirects followed; default DefaultMaxRedirects
	UserAgent     string
	Insecure      bool          // skip TLS certificate verification (--insecure)
	BatchSize     int           // results per commit (a unit is never split); default DefaultBatchSize
	BatchInterval time.Duration // longest wait before a commit; default DefaultBatchInterval
	Recheck       rules.Recheck // how long a result stays fresh, per verdict; zero = always fetch
	RulesRecheck  bool          // some rule sets its own recheck interval
	Ghost         time.Duration // a failing page good within this still has its old links followed
	// Refetch (--no-reuse) fetches and reads every URL in full: no stored
	// result is reused, whatever Recheck or a rule says, and no page is
	// revalidated with a conditional request, so none is answered 304.
	Refetch bool
	// Roots are the absolute directories checked as built sites; their
	// files are the file: URLs of their absolute paths (see local.go).
	Roots []string
	// BaseURL, with Roots, is where the sites are published: absolute links
	// under it are the directory's files. Nil: they are served at the root
	// of a host, so only relative and root-relative links are theirs.
	BaseURL *url.URL
	// Throttle keeps every host's politeness; nil means none beyond PerHost.
	Throttle *throttle.Throttle
	// HostSettings are the throttle settings of a host, for the crawler's
	// own questions (does it obey robots.txt?); the throttle has the same.
	HostSettings func(host string) throttle.Settings
	Transport    http.RoundTripper
	Logger       *slog.Logger
	Now          func() time.Time

	// Sitemaps are sitemap or sitemap index URLs (gzip'd or not) whose
	// pages seed the pass, decided by the rules like links.
	Sitemaps []string
	// RobotsSitemaps also reads the sitemaps named by the Sitemap: lines of
	// the robots.txt of each start URL's host.
	RobotsSitemaps bool
	// SitemapLimit caps the distinct URLs a pass takes from all its
	// sitemaps; default DefaultSitemapLimit.
	SitemapLimit int
	// MaxDepth is how many links from a start URL a page may be and still
	// have its links followed; pages further out are checked, not parsed
	// (see mayParse). 0 means no limit.
	MaxDepth int
	// CheckFragments stores the id and <a name> anchors of every page
	// parsed (URLRecord.IDs), so the report can check links to page#frag.
	CheckFragments bool
	// Frontier is where work comes from besides the pages' own links, and
	// which hosts this crawler fetches; nil is Local(): all of them.
	Frontier Frontier

	// maxLinks, when positive, replaces maxPageLinks as the links read
	// of a page, only so that a test can cut a page of a few links.
	maxLinks int
}

func (c *Config) setDefaults() {
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.PerHost <= 0 {
		c.PerHost = DefaultPerHost
	}
	c.PerHost = min(c.PerHost, c.Concurrency)
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Grace <= 0 {
		c.Grace = 2 * time.Second
	}
	if c.MaxSize <= 0 {
		c.MaxSize = DefaultMaxSize
	}
	if c.maxLinks <= 0 {
		c.maxLinks = maxPageLinks
	}
	if c.MaxRedirects <= 0 {
		c.MaxRedirects = DefaultMaxRedirects
	}
	if c.UserAgent == "" {
		c.UserAgent = "linkpatrol"
	}
	if c.BatchSize <= 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.BatchInterval <= 0 {
		c.BatchInterval = DefaultBatchInterval
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.SitemapLimit <= 0 {
		c.SitemapLimit = DefaultSitemapLimit
	}
}

// Crawler runs passes. It is safe to read Progress from another goroutine
// while Run works.
type Crawler struct {
	cfg   Config
	rules Decider
	store Store
	// passID is the ID of the pass Run works on, set before any task runs.
	passID uint64
	client *http.Client
	tr     http.RoundTripper
	stats  counters
	sites  []*site // the directories of Config.Roots
	// robotsOnce makes concurrent askers of one host's robots.txt share a fetch.
	robotsOnce singleflight.Group
	// robotsTries counts, per host, the robots.txt fetches the throttle
	// asked to try again (429/503, timeouts), for its retry limit, and
	// keeps what the last one got: robotsAgain.
	robotsTries sync.Map
	// slowHosts holds the hosts whose long Crawl-delay this run has
	// warned of (see warnCrawlDelay).
	slowHosts sync.Map
	// claimReqs take a worker's redirect target to the dispatcher, which
	// owns the pass's claims; looped closes when the dispatcher is gone.
	claimReqs chan claimReq
	looped    chan struct{}
	// frees take to the dispatcher the host of a task whose requests are
	// done (see freeSlot).
	frees chan string
	// frontier is the running pass's Config.Frontier (or a Local one).
	frontier Frontier
	// dns holds, by host name, nil for a name that resolved and the error
	// for one that does not exist (see hosts.go).
	dns sync.Map
	// resolved holds what came of the references pages write.
	resolved resolvedCache
	readers  readerPool
	pageBufs bufPool
	// unsaved is the host state a failed commit took and did not write,
	// for the next save (see changedHostStates).
	unsaved map[string][]byte
	// damaged is set by the first read that found the database damaged;
	// the run then ends with that one error (see readFailed).
	damaged *fatal
	// same holds the running pass's pages read for links by their
	// content (see samecontent.go).
	same *sameContent
	// noHistory says the running pass is the database's first and was
	// begun by this run: every record in it is one this run wrote (see
	// previous).
	noHistory bool
}

// fatal carries the first error that must end a run from wherever it was
// met, as one error rather than a warning per URL read.
type fatal struct {
	once sync.Once
	ch   chan struct{}
	err  error
}

func (f *fatal) set(err error) {
	f.once.Do(func() {
		f.err = err
		close(f.ch)
	})
}

// readFailed handles a failed read of the store: a damaged file ends the
// run, anything else is logged and the read treated as finding nothing.
func (c *Crawler) readFailed(msg string, err error, args ...any) {
	if errors.Is(err, store.ErrCorrupt) && c.damaged != nil {
		c.damaged.set(err)
		return
	}
	c.cfg.Logger.Warn(msg, append(args, "err", err)...)
}

// New builds a crawler. The transport is built once so that connections are
// reused across the whole pass.
func New(cfg Config, decider Decider, st Store) *Crawler {
	cfg.setDefaults()
	tr := cfg.Transport
	if tr == nil {
		tr = newTransport(cfg)
	}
	return &Crawler{
		sites: newSites(cfg.Roots, cfg.BaseURL),
		cfg:   cfg,
		rules: decider,
		store: st,
		tr:    tr,
		client: &http.Client{
			Transport: keepBadLocation{tr},
			// Redirects are followed by fetch, hop by hop, so each hop is
			// recorded and a loop can be named as one.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
}

// Outcome says how a Run ended.
type Outcome struct {
	Complete bool // the frontier ran dry (and its Done closed) and nothing was deferred; false when stopped
	// Deferred counts the URLs of the site's own hosts that a server's
	// pause held back to a later run (they stay queued; the pass is not
	// complete); ResumeAfter is when the last of those pauses ends.
	Deferred    int
	ResumeAfter time.Time
	// ForeignHops counts the redirect hops to hosts this crawler does not
	// own (see Frontier), handed to their owner instead of followed (see
	// awaits.go).
	ForeignHops int64
}

// run works on pass until its frontier is empty (and the frontier says
// the pass is done everywhere) or ctx is cancelled; see Run. queue is the
// frontier to start from (seeds, or what a stopped run left); done lists
// every URL already resolved in this pass. dead, when not zero, is when
// the run before, killed, was last known alive (see Opened).
func (c *Crawler) run(ctx context.Context, hard context.Context, pass store.Pass, began time.Time, queue []store.Task, done []string, dead time.Time) (Outcome, error) {
	// Fetches outlive a stop by the grace period so that work nearly done
	// is not thrown away; hard (a second signal) ends them at once.
	fetchCtx, cancelFetch := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelFetch()
	go func() {
		select {
		case <-ctx.Done():
		case <-fetchCtx.Done():
			return
		}
		t := time.NewTimer(c.cfg.Grace)
		defer t.Stop()
		select {
		case <-t.C:
		case <-hard.Done():
		case <-fetchCtx.Done():
		}
		cancelFetch()
	}()

	g, gctx := errgroup.WithContext(context.WithoutCancel(ctx))
	// Unbuffered: what a kill loses is what is not committed, and each
	// buffer here would add to it. With them, that is the tasks in the
	// workers' hands (at most Workers(Concurrency), each fetching, parsing or waiting to hand
	// its outcome over) and the writer's one batch; while that batch
	// commits, the dispatcher waits for it.
	tasks := make(chan task)
	outcomes := make(chan outcome)
	writes := make(chan []store.Result)

	c.claimReqs, c.looped, c.frees = make(chan claimReq), make(chan struct{}), make(chan string)
	c.frontier = c.cfg.Frontier
	if c.frontier == nil {
		c.frontier = Local()
	}
	if err := c.loadHostState(pass.ID, dead); err != nil {
		return Outcome{}, fmt.Errorf("load host state: %w", err)
	}
	if err := c.openSites(); err != nil {
		return Outcome{}, err
	}
	defer c.closeSites()
	if err := c.loadSameContent(pass.ID, len(done) > 0); err != nil {
		return Outcome{}, fmt.Errorf("read the digests of the pages already read: %w", err)
	}
	probes := make(chan task)
	for range probeWorkers(c.cfg.Concurrency) {
		g.Go(func() error {
			for t := range probes {
				c.probeHost(fetchCtx, t)
				select {
				case outcomes <- outcome{task: t}:
				case <-gctx.Done():
					return gctx.Err()
				}
			}
			return nil
		})
	}
	for range Workers(c.cfg.Concurrency) {
		g.Go(func() error {
			for t := range tasks {
				var o outcome
				switch {
				case t.sitemapsOf != "":
					o = c.robotsSitemaps(fetchCtx, t)
				case t.Action == actionSitemap:
					o = c.processSitemap(fetchCtx, pass, t)
				default:
					o = c.process(fetchCtx, pass, t)
					// A start URL, or a file of a checked directory: the
					// report tells these from pages reached by links.
					o.result.Record.Seed = t.Depth == 0
				}
				select {
				case outcomes <- o:
				case <-gctx.Done():
					return gctx.Err()
				}
			}
			return nil
		})
	}
	flushes := make(chan chan error)
	g.Go(func() error { return c.writeLoop(gctx, pass, began, writes, flushes) })
	c.damaged = &fatal{ch: make(chan struct{})}
	g.Go(func() error {
		select {
		case <-c.damaged.ch:
			return c.damaged.err
		case <-c.looped:
			return nil
		}
	})

	resumed := len(done) > 0
	seen := newClaims()
	for _, u := range done {
		seen.claim(u)
	}
	for _, t := range queue {
		// Held back by a pause last time: recorded, but still to be done.
		seen.drop(t.URL)
	}
	d := newDispatcher(c, pass, seen)
	for _, u := range done {
		if _, ok := seen.get(u); ok {
			d.traps.admitted(u, "")
		}
	}
	done = nil
	for _, t := range queue {
		d.push(t)
	}
	d.seedSitemaps(resumed)
	var outc Outcome
	err := d.loop(ctx, gctx, tasks, probes, outcomes, writes, flushes, c.claimReqs)
	close(c.looped)
	close(tasks)
	close(probes)
	close(writes)
	// The dispatcher only sees that the group failed; the cause is the
	// group's own error.
	if werr := g.Wait(); werr != nil && (err == nil || errors.Is(err, context.Canceled)) {
		err = werr
	}
	if serr := c.saveHostState(); serr != nil && err == nil {
		err = fmt.Errorf("save host state: %w", serr)
	}
	if tr, ok := c.tr.(interface{ CloseIdleConnections() }); ok {
		tr.CloseIdleConnections()
	}
	outc.Deferred, outc.ResumeAfter = d.deferred, d.resumeAfter
	outc.ForeignHops = c.stats.foreignHops.Load()
	outc.Complete = err == nil && ctx.Err() == nil && d.idle() && d.deferred == 0
	return outc, err
}

// Progress is a snapshot of a running pass, for a progress line or a status page.
type Progress struct {
	Done     int64 // tasks finished this run
	Pages    int64 // pages parsed this run
	Queued   int64
	InFlight int64
	Problems int64 // broken, transient or unverifiable so far this run
	Requests int64 // HTTP requests sent, redirects and fallbacks included
	Reused   int64 // results taken from an earlier pass without a request
	Traps    int64 // pages held back as suspected spider traps this run
	// ForeignHops are redirect hops to hosts the frontier does not own,
	// handed to their owner (see Frontier).
	ForeignHops int64
}

type counters struct {
	done, pages, queued, inflight, problems, requests, reused, traps, foreignHops atomic.Int64
}

// Progress returns the current counters.
func (c *Crawler) Progress() Progress {
	s := &c.stats
	return Progress{
		Done: s.done.Load(), Pages: s.pages.Load(), Queued: s.queued.Load(),
		InFlight: s.inflight.Load(), Problems: s.problems.Load(),
		Requests: s.requests.Load(), Reused: s.reused.Load(), Traps: s.traps.Load(),
		ForeignHops: s.foreignHops.Load(),
	}
}

// writeLoop commits what comes in on in, in batches. A request on flushes
// commits everything handed over before it and answers with the error.
// keepTimeEvery is how often writeLoop stores the pass's working time and
// that the run is alive (store.Pass.Alive), busy or idle.
const keepTimeEvery = store.Heartbeat

// aliveUnseen is how long after its last stored sign of life a run killed
// may still have started a request: until its next heartbeat was due
// (keepTimeEvery), and as long again for a heartbeat held up behind a
// slow commit.
const aliveUnseen = 2 * keepTimeEvery

func (c *Crawler) writeLoop(ctx context.Context, pass store.Pass, began time.Time, in <-chan []store.Result, flushes <-chan chan error) error {
	passID := pass.ID
	batch := make([]store.Result, 0, c.cfg.BatchSize)
	queued := 0 // tasks the batch puts on the frontier
	tick := time.NewTicker(c.cfg.BatchInterval)
	defer tick.Stop()
	// The pass's working time is stored now and then while it runs, not
	// only when the run ends: a killed run never gets there, and a pass
	// resumed after kills said only its last run's time (review7 RV1:
	// elapsed_seconds 5.0 after 18 kills). A kill costs at most
	// keepTimeEvery of it.
	// The same write is the run's heartbeat: after a kill, the next run
	// knows the dead one started nothing after about then (aliveUnseen),
	// and waits for its requests only as long as they can still be out.
	beat := time.NewTicker(keepTimeEvery)
	defer beat.Stop()
	keepTime := func() error {
		p := pass
		p.Elapsed += time.Since(began)
		p.Alive = c.cfg.Now()
		return c.store.UpdatePass(p)
	}
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		queued = 0
		// A pause a host asked for must survive a crash, not just a stop:
		// the hosts' state is committed with the results.
		hosts, err := c.changedHostStates()
		if err != nil {
			return fmt.Errorf("save host state: %w", err)
		}
		if err := c.store.CommitHosts(passID, batch, hosts); err != nil {
			c.unsaved = hosts
			return err // the store names the batch and the file
		}
		clear(batch)
		batch = batch[:0]
		return nil
	}
	add := func(unit []store.Result) error {
		// A unit is committed whole (see dispatcher.write), even past
		// BatchSize: a kill costs the units of one batch.
		batch = append(batch, unit...)
		for _, r := range unit {
			queued += len(r.Enqueue) + len(r.Forward)
		}
		// A commit is bounded by its new tasks too, so that it takes
		// well under the grace period a stop gives it.
		if len(batch) >= c.cfg.BatchSize || queued >= maxPageLinks {
			return flush()
		}
		return nil
	}
	for {
		select {
		case unit, ok := <-in:
			if !ok {
				return flush()
			}
			if err := add(unit); err != nil {
				return err
			}
		case reply := <-flushes:
			// in is unbuffered and the dispatcher asks after handing
			// its results over: every one of them is in the batch.
			err := flush()
			reply <- err
			if err != nil {
				return err
			}
		case <-tick.C:
			if len(batch) == 0 {
				// No answer came, but requests may have started: their
				// starts, saved within a tick, are what a run resumed
				// after a kill counts in flight until they time out
				// (throttle.Config.RequestLife).
				if err := c.saveHostState(); err != nil {
					return fmt.Errorf("save host state: %w", err)
				}
				continue
			}
			if err := flush(); err != nil {
				return err
			}
		case <-beat.C:
			// Time with nothing answering is the pass's time too
			// (review8 F7), and a run with nothing to commit is alive.
			if err := keepTime(); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Hosts is the throttle's view of every host, for a status page or summary,
// and a row for each checked directory (keyed by its path: what was read
// from it, with no waiting).
func (c *Crawler) Hosts() []throttle.HostStats {
	var hs []throttle.HostStats
	if c.cfg.Throttle != nil {
		hs = c.cfg.Throttle.Stats()
	}
	return append(hs, c.localStats()...)
}

// followStart makes the host a start URL (t's) redirects to one of the
// site's own, when the rules say it is (see rules.Engine.FollowStart),
// before next is decided; it is recorded in the pass at once, ahead of any
// result decided with it, so that a run killed afterwards resumes with it.
// It says whether next is on the site's hosts: once a chain has left them
// (an SSO or CDN host), fetch asks no more, so a hop after that is never
// added (review11 H1: http://a/ -> https://login.b/ -> https://login.b/form).
func (c *Crawler) followStart(t task, next *url.URL) (onSite bool) {
	w, ok := c.rules.(siteWidener)
	if !ok || t.Depth != 0 {
		return false
	}
	origin, onSite := w.FollowStart(t.URL, next)
	if origin == "" {
		return onSite
	}
	c.cfg.Logger.Info("site host", "start", t.URL, "redirects to", origin)
	if c.cfg.Throttle != nil {
		// Met already (the start host's robots.txt redirected there
		// too, as a whole site's redirect does), as another site's.
		c.cfg.Throttle.Resettle(next.Host)
	}
	if err := c.store.AddSiteOrigins(c.passID, []string{origin}); err != nil {
		// The run goes on with it; only a resumed run would not know it.
		c.cfg.Logger.Warn("site host not saved", "origin", origin, "err", err)
	}
	return true
}

// siteOrigins are the origins the pass's start URLs redirected to so far.
func (c *Crawler) siteOrigins() []string {
	if w, ok := c.rules.(siteWidener); ok {
		return w.SiteOrigins()
	}
	return nil
}
