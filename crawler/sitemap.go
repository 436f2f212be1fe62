package crawler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// Sitemaps seed a pass with pages no link may reach. A sitemap is a task
// like any other (action "sitemap"): it waits for its host's throttle and
// robots.txt, it is committed with the URLs it lists as that result's
// Enqueue, and it stays in the frontier until it is read, so a resumed pass
// reads exactly the sitemaps it had not read yet. Its entries are stored as
// its links (tag "url" or "sitemap", attribute "loc", with their lines), so
// the report names the sitemap and line that listed a broken URL. One that
// fails but was read whole within Config.Ghost is followed from that copy,
// as a page is (a ghost), and one not read with no such copy keeps its last
// copy's entries unfollowed (keepsLastCopy): a sitemap down for a night must
// not make what it lists "no longer linked" (qa9 T6).

const (
	// actionSitemap is the action of a sitemap's task and of its record.
	actionSitemap = "sitemap"
	// DefaultSitemapLimit is how many URLs a pass takes from sitemaps when
	// Config.SitemapLimit is 0: as many as one sitemap file may list.
	DefaultSitemapLimit = 50000
	// maxSitemapDepth bounds nested sitemap indexes. The protocol lets an
	// index list only sitemaps, but some sites nest indexes anyway.
	maxSitemapDepth = 3
)

// processSitemap fetches a sitemap and reads it as it streams in. A sitemap
// that fails (a 404, a timeout, something that is not a sitemap) is a
// record like any URL's; whatever it listed before a syntax error or a cut
// is still taken, unless its last good copy is followed instead.
func (c *Crawler) processSitemap(ctx context.Context, pass store.Pass, t task) outcome {
	defer c.stats.done.Add(1)
	o := outcome{task: t}
	now := c.cfg.Now()
	if !t.prevLoaded {
		t.prev = c.previous(t.URL)
	}
	hard := c.hardTimeout(&t)
	hardCtx, cancel := context.WithTimeout(ctx, hard)
	defer cancel()
	var doc sitemapDoc
	f := c.fetch(hardCtx, t, nil, func(r io.Reader) error {
		var err error
		doc, err = readSitemap(r, c.cfg.SitemapLimit, maxSitemapSize)
		return err
	})
	if c.settle(ctx, hardCtx, hard, &f, &o) {
		return o
	}
	rec := c.fetchedRecord(pass, t, f, now)
	var notes []string
	if rec.Note != "" {
		// Why it was not read (a redirect not followed, robots.txt), which
		// the notes of its reading below must not wipe out.
		notes = append(notes, rec.Note)
	}
	if f.consumeErr != nil && rec.Verdict == store.VerdictOK {
		rec.Verdict, rec.Error = store.VerdictBroken, "bad sitemap"
		if errors.Is(f.consumeErr, errNotSitemap) {
			rec.Error = "not a sitemap"
		}
		notes = append(notes, f.consumeErr.Error())
	}
	if n := c.emptied(t, rec, doc); n > 0 {
		// A well-formed sitemap that lists nothing where it listed n URLs
		// last time is a broken generator after a deploy far more often
		// than a site that dropped every page: for one night it is not
		// read, as a page that came back empty (qa8 E1). Empty again the
		// night after, it is taken at its word.
		rec.Verdict, rec.Error = store.VerdictTransient, "empty sitemap"
		notes = append(notes, fmt.Sprintf("lists no URL where its last copy listed %d", n))
	}
	switch prev := t.prev; {
	case rec.Verdict.Problem() && prev != nil && sitemapCopy(prev) && c.ghost(*prev, now):
		// Failing (a 503, a timeout, cut short, no longer a sitemap), but
		// read whole recently: its entries are taken from that copy, as a
		// ghost page's links are, so that a sitemap down for a night does
		// not make what it lists "no longer linked" and then "new" (qa9
		// T6). What was read of it before a cut is dropped with the rest
		// of tonight's copy: the lines named are the stored copy's.
		rec.Parsed = true
		notes = []string{store.GhostNote + prev.LastGood.Format(time.DateOnly)}
		o.found = c.storedSitemapTargets(t)
	case unreadVerdict(rec.Verdict) && len(doc.entries) == 0 && prev != nil:
		// Not read, and no copy recent enough to follow: its last copy's
		// entries are kept, not followed, for the report to tell what
		// lies behind it from what is gone (see keepsLastCopy).
	default:
		if doc.truncated {
			notes = append(notes, fmt.Sprintf("sitemap larger than %d MB: only the first part was read", maxSitemapSize>>20))
		}
		if doc.over > 0 {
			atLeast := ""
			if doc.overCut {
				atLeast = "at least "
			}
			notes = append(notes, fmt.Sprintf("lists %s%d entries more than the most a pass takes from sitemaps (%d, --sitemap-limit): they were not taken", atLeast, doc.over, c.cfg.SitemapLimit))
			rec.NotTaken = doc.over
		}
		base, err := url.Parse(f.finalURL)
		if err != nil {
			base = nil
		}
		o.result.SetLinks = true
		o.result.Links, o.found, notes = c.sitemapTargets(base, t, doc, notes)
		// Read only in part (cut, reset, a syntax error): the entries
		// stored are tonight's, with tonight's lines, so the report names
		// the sitemap as their referrer while it still lists the sitemap
		// as not read.
		rec.Parsed = rec.Verdict.Problem() && len(doc.entries) > 0
	}
	rec.Note = strings.Join(notes, "; ")
	history(&rec, t.prev, pass, now)
	if rec.Verdict.Problem() {
		c.stats.problems.Add(1)
	}
	o.result.Record = rec
	return o
}

// sitemapTargets decides every entry of a sitemap like a link: resolved
// (against the sitemap's final URL, though the protocol wants absolute
// URLs), rewritten and given its action by the rules. An index's entries
// are sitemaps to read in turn, unless indexes nest too deep.
func (c *Crawler) sitemapTargets(base *url.URL, t task, doc sitemapDoc, notes []string) ([]store.Link, []target, []string) {
	tag := doc.kind.entryTag()
	nested := doc.kind == sitemapIndex
	follow := !nested || t.Depth < maxSitemapDepth
	if !follow && len(doc.entries) > 0 {
		notes = append(notes, fmt.Sprintf("sitemap indexes nested more than %d deep: the sitemaps this one lists were not read", maxSitemapDepth))
	}
	col := newRefs(c, base, len(doc.entries), follow, nil)
	for _, e := range doc.entries {
		col.add(e.loc, store.Link{Line: e.line, Tag: tag, Attr: "loc"}, false, nested)
	}
	return col.links, col.found, notes
}

// emptied is how many entries the last copy of t's sitemap listed when it
// was read whole then and lists none now, or 0.
func (c *Crawler) emptied(t task, rec store.URLRecord, doc sitemapDoc) int {
	if rec.Verdict != store.VerdictOK || len(doc.entries) > 0 || doc.over > 0 || t.prev == nil ||
		t.prev.Verdict != store.VerdictOK || t.prev.Action != actionSitemap {
		return 0
	}
	links, err := c.store.Links(t.URL)
	if err != nil {
		c.readFailed("read stored sitemap entries", err, "url", t.URL)
		return 0
	}
	return len(links)
}

// sitemapCopy says whether the stored entries of a sitemap (prev, its
// record) are those of its last good copy: it was read whole then, or
// followed from that copy already (a ghost).
func sitemapCopy(prev *store.URLRecord) bool {
	return prev.Action == actionSitemap &&
		(prev.Verdict == store.VerdictOK || prev.Parsed && strings.HasPrefix(prev.Note, store.GhostNote))
}

// storedSitemapTargets decides the stored entries of t's sitemap, its last
// good copy, as sitemapTargets decides those read now: the same rules,
// limits and nesting.
func (c *Crawler) storedSitemapTargets(t task) []target {
	links, err := c.store.Links(t.URL)
	if err != nil {
		c.readFailed("read stored sitemap entries", err, "url", t.URL)
		return nil
	}
	doc := sitemapDoc{kind: sitemapURLSet, entries: make([]sitemapEntry, 0, len(links))}
	for _, l := range links {
		if l.Tag == sitemapIndex.entryTag() {
			doc.kind = sitemapIndex
		}
		loc := l.URL
		if l.Fragment != "" {
			loc += "#" + l.Fragment
		}
		doc.entries = append(doc.entries, sitemapEntry{loc: loc, line: l.Line})
	}
	base, err := url.Parse(t.URL)
	if err != nil {
		return nil
	}
	_, found, _ := c.sitemapTargets(base, t, doc, nil)
	return found
}

// robotsSitemaps reads the Sitemap: lines of a start host's robots.txt. The
// file is usually known by now (the throttle fetched it before the host's
// first request); it is fetched here, through the throttle, for a host whose
// robots.txt is otherwise ignored.
func (c *Crawler) robotsSitemaps(ctx context.Context, t task) outcome {
	o := outcome{task: t}
	var r *throttle.Robots
	if c.cfg.Throttle != nil {
		c.loadRobots(ctx, t.sitemapsOf, t.host, nil)
		r, _ = c.cfg.Throttle.Robots(t.host)
	} else {
		r, _ = c.fetchRobots(ctx, t.URL, nil, &retries{})
	}
	if ctx.Err() != nil {
		o.stopped = true
		return o
	}
	base, err := url.Parse(t.URL)
	if err != nil {
		return o
	}
	var robots robotsMemo
	for _, s := range r.Sitemaps() {
		u, err := rules.Resolve(base, s)
		if err != nil {
			o.found = append(o.found, target{url: clip(s), err: "invalid URL"})
			continue
		}
		d := c.rules.Decide(u)
		if d.Action == rules.Ignore {
			continue
		}
		if len(d.URL) > store.MaxURLLength {
			o.found = append(o.found, target{url: clip(d.URL), err: "URL too long"})
			continue
		}
		tg := target{url: d.URL, host: d.Parsed.Host, action: d.Action, rule: d.Rule, sitemap: true}
		c.robotsVerdict(&tg, u, &robots)
		o.found = append(o.found, tg)
	}
	return o
}

// seedSitemaps queues, at the start of a run, the configured sitemaps and
// the reading of each start host's robots.txt for its Sitemap: lines. None
// of them is written to the frontier: a sitemap read in this pass is in the
// done set and is not queued again, and one not read yet is simply queued
// again by the next run. resumed says this run continues a pass. With a
// frontier shared by several crawlers, a sitemap (and a start host's
// robots.txt) is read only by the crawler that owns its host.
func (d *dispatcher) seedSitemaps(resumed bool) {
	c := d.c
	var roots []string
	for _, s := range c.cfg.Sitemaps {
		u, err := rules.Resolve(nil, s)
		if err != nil {
			c.cfg.Logger.Warn("ignoring sitemap", "url", s, "err", err)
			continue
		}
		if !c.frontier.Owns(u.Host) {
			continue // its owner reads it, and forwards what it names
		}
		canon := c.rules.Decide(u).URL
		roots = append(roots, canon)
		d.push(store.Task{URL: canon, Action: actionSitemap})
	}
	if c.cfg.RobotsSitemaps {
		origins := make(map[string]bool)
		for _, s := range d.pass.StartURLs {
			u, err := url.Parse(s)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || origins[u.Scheme+"://"+u.Host] || !c.frontier.Owns(u.Host) {
				continue
			}
			origins[u.Scheme+"://"+u.Host] = true
			robotsURL := u.Scheme + "://" + u.Host + "/robots.txt"
			d.enqueue(task{Task: store.Task{URL: robotsURL}, host: u.Host, sitemapsOf: u.Scheme})
			if c.cfg.Throttle == nil {
				continue
			}
			if r, ok := c.cfg.Throttle.Robots(u.Host); ok {
				for _, s := range r.Sitemaps() {
					if su, err := rules.Resolve(u, s); err == nil {
						roots = append(roots, c.rules.Decide(su).URL)
					}
				}
			}
		}
	}
	if resumed {
		d.recountSitemaps(roots)
	}
}

// recountSitemaps refills, on resume, the set of URLs the pass has taken from
// sitemaps, so that SitemapLimit holds across runs and not per run: every
// sitemap read in this pass is reached from the roots through the index
// entries stored as its links. An entry over the limit was stored but not
// taken; counting it too only matters once the limit is reached, and then
// the count stops at the limit anyway.
func (d *dispatcher) recountSitemaps(roots []string) {
	c := d.c
	visited := make(map[string]bool)
	for len(roots) > 0 && len(d.sitemapURLs) < c.cfg.SitemapLimit {
		s := roots[len(roots)-1]
		roots = roots[:len(roots)-1]
		if visited[s] {
			continue
		}
		visited[s] = true
		rec, ok, err := c.store.Get(s)
		if err != nil {
			c.readFailed("read sitemap record", err, "url", s)
			continue
		}
		if !ok || rec.Pass != d.pass.ID || rec.Action != actionSitemap {
			continue
		}
		links, err := c.store.Links(s)
		if err != nil {
			c.readFailed("read sitemap entries", err, "url", s)
			continue
		}
		for _, l := range links {
			switch {
			case l.Tag == sitemapIndex.entryTag():
				roots = append(roots, l.URL)
			case len(d.sitemapURLs) < c.cfg.SitemapLimit:
				d.sitemapURLs[l.URL] = struct{}{}
			}
		}
	}
}

// sitemapAllows says whether the pass takes a target a sitemap listed: at
// most SitemapLimit distinct URLs in all, and no further sitemap once they
// are all taken.
func (d *dispatcher) sitemapAllows(t target) bool {
	if t.sitemap {
		return len(d.sitemapURLs) < d.c.cfg.SitemapLimit
	}
	if _, ok := d.sitemapURLs[t.url]; ok {
		return true
	}
	if len(d.sitemapURLs) >= d.c.cfg.SitemapLimit {
		return false
	}
	d.sitemapURLs[t.url] = struct{}{}
	return true
}
