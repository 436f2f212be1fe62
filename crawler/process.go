package crawler

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// decision is the rules' decision of t's URL: the one made when a page
// linked to it, or, for a task from the stored frontier (a start URL, a
// resumed pass, a redirect target a retried task let go), one made now and
// kept on t for the rest of the task.
func (c *Crawler) decision(t *task) *rules.Decision {
	if t.dec == nil {
		if u, err := url.Parse(t.URL); err == nil {
			d := c.rules.Decide(u)
			t.dec = &d
		} else {
			// Never queued (see dispatcher.stage); the run's settings.
			t.dec = &rules.Decision{URL: t.URL, Action: rules.Check}
		}
	}
	return t.dec
}

// hardTimeout bounds a whole task, DNS and the redirects included: twice
// the soft timeout of its URL's requests.
func (c *Crawler) hardTimeout(t *task) time.Duration {
	return 2 * c.timeout(c.decision(t).Request)
}

// process runs one task end to end under the hard timeout.
func (c *Crawler) process(ctx context.Context, pass store.Pass, t task) outcome {
	defer c.stats.done.Add(1)
	o := outcome{task: t}
	now := c.cfg.Now()
	if t.fresh {
		return c.reuse(pass, t, *t.prev)
	}
	if !t.prevLoaded {
		t.prev = c.previous(t.URL)
	}
	prevp := t.prev
	hadPrev := prevp != nil
	var prev store.URLRecord
	if hadPrev {
		prev = *prevp
	}

	hard := c.hardTimeout(&t)
	hardCtx, cancel := context.WithTimeout(ctx, hard)
	defer cancel()
	var conditional *store.URLRecord
	if hadPrev && prev.Parsed && prev.Verdict == store.VerdictOK && !c.needsAnchors(prev) && !c.cfg.Refetch && c.mayParse(t.Depth) {
		conditional = prevp
	}
	if hadPrev && c.readAgain(t, prev) {
		t.upgradeNext = true
	}
	if hadPrev && c.recheckConditionally(t, prev) {
		conditional = prevp
	}
	var f fetched
	if _, _, local := c.siteOf(t.URL); local {
		f = c.readLocal(t)
		if f.finalURL == t.URL {
			f.dec = c.decision(&t)
		}
	} else {
		f = c.fetch(hardCtx, t, conditional, nil)
		o.abandoned, o.astray = f.abandoned, f.astray
		if c.settle(ctx, hardCtx, hard, &f, &o) {
			return o
		}
	}
	if errors.Is(f.err, throttle.ErrDeferred) && len(f.redirects) == 0 {
		// GET after a refused HEAD is held back by a server's pause.
		o.result, o.deferred = c.deferral(pass, t, f.finalURL)
		return o
	}

	if f.status == http.StatusNotModified && conditional != nil && len(f.redirects) == 0 && f.err == nil && f.errClass == "" && !f.skipped {
		// Unchanged since last time: keep what we knew, links included.
		o.result = c.reused(pass, t, prev, now)
		o.found = c.storedTargets(t.URL)
		o.result.Record.Status = prev.Status
		if prev.Parsed {
			o.result.Record.Unchanged = true
			c.countPage(prev.ContentType)
			c.same.read(&o.result.Record)
			fromPage(o.found, o.result.Record.Digest)
		}
		return o
	}
	if len(f.redirects) > 0 {
		return c.chain(hardCtx, pass, t, f, now)
	}
	// Handed back, the GET is the task's first request: nothing is sent
	// twice, so it never waits here.
	if c.upgrade(hardCtx, t, t.URL, &f, 0) {
		c.handBack(&f, &o)
		return o
	}
	c.freeSlot(&o)
	rec := c.fetchedRecord(pass, t, f, now)
	if f.local && f.finalURL != t.URL && rec.Verdict == store.VerdictOK {
		// A directory linked without its slash: a static host answers
		// with dir/, against which its links resolve. The page is parsed
		// there, once.
		if fu, err := url.Parse(f.finalURL); err == nil {
			if d := c.rules.Decide(fu); d.Action == rules.Parse {
				o.found = append(o.found, target{url: d.URL, action: rules.Parse, rule: d.Rule})
			}
		}
	}
	if c.parseInto(&rec, &o.result, &o.found, f, t.Task) && t.Action != rules.Parse.String() {
		rec.Action = rules.Parse.String()
	}
	if !rec.Parsed && hadPrev && prev.Parsed && rec.Verdict.Problem() && !f.local && c.mayParse(t.Depth) && c.ghost(prev, now) {
		// A page good recently is failing: follow its old links anyway so
		// one broken index page does not hide the rest of the site. (Not
		// a file: a missing one is gone, not failing for a while.)
		rec.Parsed = true
		rec.Note = store.GhostNote + prev.LastGood.Format(time.DateOnly)
		o.found = c.storedTargets(t.URL)
	} else if !rec.Parsed && !(hadPrev && keepsLastCopy(&prev, &rec, f.local)) {
		o.result.SetLinks = true // a page that stopped being one loses its links
	}
	history(&rec, prevp, pass, now)
	if rec.Verdict.Problem() {
		c.stats.problems.Add(1)
	}
	o.result.Record = rec
	return o
}

// keepsLastCopy says whether a page that could not be read now (rec: a
// server error, a timeout, a refusal), with no copy recent enough to follow
// as a ghost, keeps the links of its last copy read (prev's, or kept by
// prev the same way). They are not followed: the report reads them to tell
// a problem that only this page led to, not checked tonight, from one
// whose link is gone (qa7 Q5). A page that answers 404 or stopped being a
// page loses them, as does a file: a missing one is gone.
func keepsLastCopy(prev, rec *store.URLRecord, local bool) bool {
	return !local && unreadVerdict(rec.Verdict) && (prev.Parsed || unreadVerdict(prev.Verdict))
}

// unreadVerdict says whether a document that ended with v was not read
// (a server error, a timeout, a refusal), rather than found gone.
func unreadVerdict(v store.Verdict) bool {
	return v == store.VerdictTransient || v == store.VerdictUnverifiable
}

// upgrade fetches with GET a URL that was only checked but answered with
// an HTML page or a stylesheet the rules would parse: a page first met as
// a resource (an <img> or a <link> to it) is parsed like any other,
// whichever link the walk met first, and the site's own stylesheets are
// read for their url() and @import.
//
// The GET waits for its host at most within (see acquireNext). Past that,
// upgrade sets f.later and f.upgradeNext and says so: the caller hands the
// task back to the dispatcher (see handBack), and the GET becomes its
// first request when the host allows, rather than the worker sitting out
// the wait. The check's answer is dropped then; the GET answers again.
func (c *Crawler) upgrade(ctx context.Context, t task, first string, f *fetched, within time.Duration) (handBack bool) {
	if t.Action != rules.Check.String() || f.body != nil || !f.reached || f.err != nil || f.errClass != "" ||
		f.status/100 != 2 || !parsable(f.contentType) {
		return false
	}
	d := f.decided(c)
	if d.Action != rules.Parse {
		return false
	}
	if !c.mayParse(t.Depth) {
		f.note = fmt.Sprintf("not parsed: more than %d links from the start URLs (--max-depth)", c.cfg.MaxDepth)
		return false
	}
	u, err := url.Parse(f.finalURL)
	if err != nil {
		return false
	}
	if trap, held := upgradeHeld(t, u, d.Traps); held {
		// Checked, and ok, but its links are not followed.
		f.note = "not parsed: " + strings.TrimPrefix(trap.Note(), "skipped: ")
		return false
	}
	p, err := c.acquireNext(ctx, u.Host, f.finalURL, within)
	var we *waitError
	if errors.As(err, &we) {
		f.later, f.upgradeNext = we.wait, true
		return true
	}
	if err != nil {
		return false // the check stands; the throttle said no more requests now
	}
	fu, _ := url.Parse(first)
	h := c.requestWith(ctx, http.MethodGet, f.finalURL, p, requestOpts{wantHTML: true, retries: t.retries, public: t.Public || fu == nil || !sameOrigin(fu, u), policy: f.policy})
	if h.err == nil && !h.retry {
		f.hop = h
	}
	return false
}

// Workers is how many tasks a pass with concurrency requests in flight
// holds at once: what a kill may lose besides the batch being committed.
// The few workers beyond concurrency parse pages: a task gives its request
// slot back once its last request is answered (freeSlot), and the next
// task's request goes out while it is parsed. Before, a worker held its
// slot through the parse, and fewer than concurrency requests were in
// flight whenever a page was parsed.
func Workers(concurrency int) int {
	return concurrency + max(2, concurrency/8)
}

// freeSlot tells the dispatcher that o's task sends no more requests, so
// that another task may send one while this one is parsed. Only a task
// whose next step is its result does: a redirect's chain and a sitemap
// keep their slot to the end.
func (c *Crawler) freeSlot(o *outcome) {
	select {
	case c.frees <- o.task.host:
		o.task.freed = true
	case <-c.looped:
	}
}

// readAgain says whether a URL this task only checks was read by the last
// pass (prev), and would be read again: then it is asked for with GET at
// once, as upgrade would after a HEAD. A page's links read back from the
// store call every <link> a resource, so without this a stylesheet of an
// unchanged page cost a HEAD and then a GET each time it changed.
func (c *Crawler) readAgain(t task, prev store.URLRecord) bool {
	if t.Action != rules.Check.String() || !prev.Parsed || prev.Verdict != store.VerdictOK || !c.mayParse(t.Depth) {
		return false
	}
	d := c.decision(&t)
	if d.Action != rules.Parse {
		return false
	}
	u, err := url.Parse(d.URL)
	if err != nil {
		return false
	}
	_, held := upgradeHeld(t, u, d.Traps)
	return !held
}

// recheckConditionally says whether t, a URL that was no page last time
// (an image, a download: the site's own are revalidated every run), is
// asked with the validators of its last good answer, so that a server
// that keeps them answers 304 and sends nothing again: a PDF linked from
// a page is fetched with GET, and so is an image whose server refuses
// HEAD. Not one that was a page or a stylesheet, which a check that finds
// one may parse (see upgrade): a 304 would keep its record unparsed.
func (c *Crawler) recheckConditionally(t task, prev store.URLRecord) bool {
	return !t.upgradeNext && !c.cfg.Refetch &&
		!prev.Parsed && prev.Verdict == store.VerdictOK && len(prev.Redirects) == 0 &&
		(prev.ETag != "" || prev.LastModified != "") && !parsable(prev.ContentType)
}

// mayParse says whether a page depth links from a start URL may have its
// links followed (Config.MaxDepth). Every place that decides to parse a
// task or a redirect's end asks it, so a page beyond the depth is fetched
// as a check (HEAD, GET fallback) like any checked link: its own status is
// still verified. Unlike a spider trap (--max-hops), it is not held back.
func (c *Crawler) mayParse(depth int) bool {
	return c.cfg.MaxDepth <= 0 || depth <= c.cfg.MaxDepth
}

// parseInto parses the page f fetched into rec (the record of f.finalURL)
// and its result, when it is HTML the rules parse, and says whether it did.
// A page with the content of the page that linked to it is not (see
// sameAs); its task t carries its depth and that page's digest.
func (c *Crawler) parseInto(rec *store.URLRecord, res *store.Result, found *[]target, f fetched, t store.Task) bool {
	if f.truncated {
		rec.Note = fmt.Sprintf("page larger than %d bytes: only the first part was checked", c.cfg.MaxSize)
	}
	if rec.Verdict != store.VerdictOK || f.body == nil {
		return false
	}
	final, err := url.Parse(f.finalURL)
	if err != nil || f.decided(c).Action != rules.Parse {
		return false
	}
	if c.sameAs(rec, f, final, t) {
		return false
	}
	var links []store.Link
	var fnd []target
	var ids []string
	more := false
	if isCSS(f.contentType) {
		links, fnd = c.stylesheetLinks(final, f.body)
		if c.cfg.CheckFragments {
			ids = []string{} // nothing to link to, and known to be so
		}
	} else {
		links, fnd, ids, more = c.extractLinks(final, f.header, f.body, f.contentType)
	}
	res.SetLinks = true
	res.Links = links
	*found = fnd
	rec.Parsed = true
	if f.truncated {
		rec.Cut |= store.CutSize
	}
	if more {
		rec.Cut |= store.CutLinks
		rec.Note = strings.TrimPrefix(rec.Note+"; "+fmt.Sprintf("page has more than %d links: only the first %d were checked", c.cfg.maxLinks, c.cfg.maxLinks), "; ")
	}
	if rec.Cut != 0 {
		c.carryPastCut(rec, res, found)
	}
	if !f.truncated && !more {
		// Anchors past the cut are unknown: without any, the page's
		// fragments are not checked rather than all reported.
		rec.IDs = ids
	}
	fromPage(*found, rec.Digest)
	c.countPage(f.contentType)
	return true
}

// carryPastCut keeps, for a page read only in part, the links of its last
// full copy that the part read now does not have: they may well be past the
// cut, and nothing says they were removed. Dropped, a broken link still on
// the page became "no longer linked" and the night clean (qa4 F17). They are
// stored after the links read now and followed as a ghost page's links are
// (linkTargets); rec.Carried and CarriedFrom tell the report which they are
// and how old. A page never read whole has no such copy. Only cut pages get
// here, so the extra reads stay off the common path.
func (c *Crawler) carryPastCut(rec *store.URLRecord, res *store.Result, found *[]target) {
	prev := c.previous(rec.URL)
	if prev == nil || !prev.Parsed {
		return
	}
	from := prev.LastGood // read whole, or a ghost of a copy that was
	if prev.Cut != 0 {
		from = prev.CarriedFrom
	}
	if from.IsZero() {
		return
	}
	stored, err := c.store.Links(rec.URL)
	if err != nil {
		c.readFailed("read stored links", err, "page", rec.URL)
		return
	}
	read := make(map[string]struct{}, len(res.Links))
	for _, l := range res.Links {
		read[l.URL] = struct{}{}
	}
	var carried []store.Link
	for _, l := range stored {
		if _, ok := read[l.URL]; !ok {
			carried = append(carried, l)
		}
	}
	// Kept even when nothing is carried: the page's stored links are then
	// all from the part read, and the next cut must still know that a full
	// copy stands behind them, or a link that moves past the cut then is
	// dropped as no longer linked.
	rec.CarriedFrom = from
	if len(carried) == 0 {
		return
	}
	res.Links = append(res.Links, carried...)
	rec.Carried = len(carried)
	links := "links"
	if len(carried) == 1 {
		links = "link"
	}
	rec.Note += fmt.Sprintf("; %d %s not in the part read carried from its last full copy (%s)",
		len(carried), links, from.Format("2006-01-02"))
	seen := make(map[string]struct{}, len(*found))
	for _, tg := range *found {
		seen[tg.url] = struct{}{}
	}
	for _, tg := range c.linkTargets(rec.URL, carried) {
		if _, dup := seen[tg.url]; !dup {
			*found = append(*found, tg)
		}
	}
}

// countPage counts a parsed document for Progress, unless it was a
// stylesheet.
func (c *Crawler) countPage(contentType string) {
	if !isCSS(contentType) {
		c.stats.pages.Add(1)
	}
}

// handBack gives the task of f back to the dispatcher, to be queued again
// when its host allows (f.retry) or after f.later.
func (c *Crawler) handBack(f *fetched, o *outcome) {
	o.retry, o.comeback = true, f.comeback
	o.due = f.comeback > 0 || f.status == http.StatusTooManyRequests
	o.hold = f.hold
	o.later, o.task.getNext, o.task.upgradeNext = f.later, f.getNext, f.upgradeNext
	o.task.attempt += f.resent // net/http's own resends were tries too
	// The redirect targets claimed on the way are this task's no more:
	// they are queued as tasks of their own.
	for _, k := range f.keys {
		if k != "" {
			o.released = append(o.released, k)
		}
	}
}

// settle says whether a fetch ended its task without a result: cut short
// by a stop (the task stays queued and is done again on resume) or to be
// retried when the throttle allows, or after a follow-up request's wait.
// It names a task that overran the hard timeout.
func (c *Crawler) settle(ctx, hardCtx context.Context, hard time.Duration, f *fetched, o *outcome) bool {
	switch {
	case f.err != nil && ctx.Err() != nil:
		o.stopped = true
		return true
	case f.retry, f.later > 0:
		c.handBack(f, o)
		return true
	case f.err != nil && hardCtx.Err() != nil:
		f.err = fmt.Errorf("task took longer than %s: %w", hard, context.DeadlineExceeded)
	}
	return false
}
