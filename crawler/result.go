package crawler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// chain turns a fetch that followed redirects into records: one for the
// task's URL and one for every redirect target it claimed, each ending
// where the chain ends; the page the chain ends at is parsed here, under
// its own URL, once. A chain that stopped at a target another task
// resolves is handed to the dispatcher to finish (see chain.go).
func (c *Crawler) chain(hardCtx context.Context, pass store.Pass, t task, f fetched, now time.Time) outcome {
	o := outcome{task: t, abandoned: f.abandoned, astray: f.astray}
	n := len(f.redirects)
	// keyAt is the pass's URL of the i-th URL requested ("" when not
	// recorded). A chain that stopped before claiming its last target has
	// no key for it: that target is not recorded either, and the run goes
	// on rather than crash over one task.
	keyAt := func(i int) string {
		switch {
		case i == 0:
			return t.URL
		case i > len(f.keys):
			return ""
		}
		return f.keys[i-1]
	}
	if !f.reached && f.errClass == store.ErrorTooManyRedirects {
		// Given up past --max-redirects: the chain from each target it
		// claimed is shorter than that, and how it ends is not known. The
		// task's record says the whole chain; the targets are not
		// recorded (qa5 N1: a page that links one gets it checked).
		for i := 1; i < n; i++ {
			if k := keyAt(i); k != "" {
				o.dropped = append(o.dropped, k)
			}
		}
		f.keys = nil
	}
	var end store.URLRecord
	var endResult *store.Result
	// home: the chain came back to the task's own URL, once a hop had set
	// a cookie (see chainCookies), and ended there: what it got is that
	// URL's page, parsed on the task's own record.
	home := false
	switch {
	case f.awaits != "":
		// Another crawler resolves the chain's end (see awaitEnd).
	case f.pendingOn != "":
		end.URL = f.pendingOn
	case !f.reached:
		// A loop or too many redirects: every URL of it ends the same way.
		end = store.URLRecord{URL: f.finalURL, Verdict: store.VerdictBroken, Error: f.errClass, Status: f.status}
	default:
		key := keyAt(n)
		action := rules.Check
		if f.decided(c).Action == rules.Parse && (t.Action == rules.Parse.String() || f.body != nil) {
			action = rules.Parse
		}
		ft := task{Task: store.Task{URL: key, Action: action.String(), Depth: t.Depth, Public: t.Public}, dec: f.dec}
		if key == "" {
			ft.URL = f.finalURL // not recorded: only its outcome is passed on
			home = f.finalURL == t.URL
		} else {
			// Handed back, the task's chain is requested again: a
			// short wait is sat out, as for a hop (see maxHopWait).
			if c.upgrade(hardCtx, ft, t.URL, &f, maxHopWait) {
				c.handBack(&f, &o)
				return o
			}
		}
		fe := f
		fe.redirects = nil
		end = c.fetchedRecord(pass, ft, fe, now)
		if key != "" {
			endResult = &store.Result{}
			if c.parseInto(&end, endResult, &o.found, fe, ft.Depth) {
				end.Action = rules.Parse.String()
			} else {
				endResult.SetLinks = true
			}
			if end.Note == "" {
				// The URL that really redirected here (qa5 N1), not the
				// task's, which may be hops away.
				end.Note = viaNote(f.redirects[n-1].URL)
			}
			prev := c.previous(key)
			history(&end, prev, pass, now)
			endResult.Record = end
		}
	}
	// From the end back to the task's URL, each recorded URL ends where
	// the next one does, through the hops between them.
	var hops []store.Hop
	var records []waiting
	for i := n - 1; i >= 0; i-- {
		hops = append([]store.Hop{f.redirects[i]}, hops...)
		key := keyAt(i)
		if key == "" {
			continue
		}
		rec := store.URLRecord{URL: key, Pass: pass.ID, Action: rules.Check.String(), FetchedAt: now, Redirects: hops}
		var prev *store.URLRecord
		if i == 0 {
			rec.Action, prev = t.Action, t.prev
		} else {
			prev = c.previous(key)
		}
		w := waiting{rec: rec, prev: prev, depth: t.Depth + min(i, 1), public: t.Public}
		if i > 0 {
			w.via, w.public = f.redirects[i-1].URL, publicHop(t, key)
		}
		records = append(records, w)
		hops = nil
	}
	slices.Reverse(records) // the task's URL first
	o.found = append(o.found, f.foreign...)
	if f.awaits != "" {
		var tail []store.Hop // from the record at hand to the awaited URL
		for i := len(records) - 1; i >= 0; i-- {
			w := &records[i]
			tail = append(slices.Clip(w.rec.Redirects), tail...)
			w.rec.Redirects = tail
			awaitEnd(&w.rec, f.awaits, w.via)
			history(&w.rec, w.prev, pass, now)
		}
		o.result = store.Result{Record: records[0].rec, SetLinks: true}
		for _, w := range records[1:] {
			o.hops = append(o.hops, store.Result{Record: w.rec, SetLinks: true})
		}
		return o
	}
	if f.pendingOn != "" {
		if f.head {
			markHead(t, f.pendingOn, records)
		}
		o.waitOn, o.waits, o.handOff = f.pendingOn, records, f.handOff
		return o
	}
	for i := len(records) - 1; i >= 0; i-- {
		w := &records[i]
		chainEnd(&w.rec, end, c.cfg.MaxRedirects, false)
		w.noteVia()
		history(&w.rec, w.prev, pass, now)
		if w.rec.Verdict.Problem() && w.via == "" {
			c.stats.problems.Add(1) // one per chain, as the report counts (see waiting.via)
		}
		end = w.rec
	}
	o.result = store.Result{Record: records[0].rec, SetLinks: true}
	if home {
		var found []target
		fe := f
		fe.redirects = nil
		if c.parseInto(&o.result.Record, &o.result, &found, fe, t.Depth) && t.Action != rules.Parse.String() {
			o.result.Record.Action = rules.Parse.String()
		}
		o.found = append(o.found, found...)
	}
	for _, w := range records[1:] {
		o.hops = append(o.hops, store.Result{Record: w.rec, SetLinks: true})
	}
	if endResult != nil {
		o.hops = append(o.hops, *endResult)
	}
	if errors.Is(f.err, throttle.ErrDeferred) && f.reached {
		if until := c.heldBackBy(f.finalURL).until; !until.IsZero() {
			// The chain ends at a URL of the site held back by a pause:
			// all of it is done again when the pass resumes.
			requeue(&o.result, t.Depth, t.Public)
			for i := range o.hops {
				requeue(&o.hops[i], t.Depth+1, publicHop(t, o.hops[i].Record.URL))
			}
			o.deferred, o.held = until, 1+len(o.hops)
		}
	}
	return o
}

// fetchedRecord is the record of a fetch that ran to its end, classified by
// how the chain ended: a stop on purpose, a refusal by the throttle, a
// broken chain, a failed request or the final status.
func (c *Crawler) fetchedRecord(pass store.Pass, t task, f fetched, now time.Time) store.URLRecord {
	rec := store.URLRecord{
		URL: t.URL, Pass: pass.ID, Action: t.Action, FetchedAt: now,
		Status: f.status, ContentType: f.contentType, Size: f.size,
		Redirects: f.redirects,
	}
	if f.finalURL != t.URL {
		rec.FinalURL = f.finalURL
	}
	if f.header != nil {
		rec.ETag = f.header.Get("ETag")
		rec.LastModified = f.header.Get("Last-Modified")
	}
	switch {
	case f.skipped && f.note != "":
		rec.Verdict, rec.Error, rec.Note = store.VerdictSkipped, f.errClass, f.note
	case f.skipped:
		rec.Verdict, rec.Error, rec.Note = store.VerdictSkipped, f.errClass, "skipped: robots.txt disallows a redirect target"
		if len(f.redirects) == 0 {
			rec.Note = "skipped: robots.txt disallows it"
		}
	case errors.Is(f.err, throttle.ErrDeferred):
		c.heldBackBy(f.finalURL).record(&rec)
	case politeClass(f.err) != "":
		rec.Verdict, rec.Error, rec.Note = store.VerdictSkipped, politeClass(f.err), "skipped: "+f.err.Error()
	case f.errClass != "":
		rec.Verdict, rec.Error, rec.Note = store.VerdictBroken, f.errClass, f.note
		if f.verdict != "" {
			rec.Verdict = f.verdict
		}
	case f.local:
		rec.Verdict, rec.Note = store.VerdictOK, f.note // a symlink out of the directory says so
	case f.err != nil:
		rec.Verdict, rec.Error = classifyError(f.err)
		if sb := (*shortBodyError)(nil); errors.As(f.err, &sb) {
			rec.Note = sb.Error()
		} else if why := certProblem(f.err); why != "" {
			rec.Note = why
		} else if why := transferEncodingProblem(f.err); why != "" {
			rec.Note = why
		} else if ue := (*unsupportedEncodingError)(nil); errors.As(f.err, &ue) {
			rec.Note = "could not decode (Content-Encoding " + ue.coding + ")"
		} else if malformedHeader(f.err) != "" {
			rec.Note = malformedHeaderNote(f.err)
		} else if cl := badContentLength(f.err); cl != "" {
			rec.Note = "the server sent Content-Length " + cl + ", which is not a length"
		}
	default:
		rec.Verdict, rec.Error = classifyStatus(f.status, f.header, f.policy)
		if f.note != "" {
			rec.Note = f.note // why a page that was only checked was not parsed (upgrade)
		}
		if n := t.attempt + t.comebacks.N + f.resent; n > 0 && (rec.Verdict == store.VerdictTransient || rec.Verdict == store.VerdictUnverifiable) {
			// Without it a URL refused on every request of a pass read
			// like one asked once (hold2: "429 Too Many Requests; never
			// worked" after 5 or 13 requests).
			rec.Note = strings.TrimPrefix(rec.Note+fmt.Sprintf("; gave up after %d tries", 1+n), "; ")
		}
	}
	return rec
}

// previous reads what is known of u from earlier passes (or earlier runs of
// this pass). In the first pass of a database, begun by this run, there is
// nothing: a run resolves each URL once (the dispatcher's claims), and all
// the records there are are this run's, so the read is skipped (at 100,000
// pages it was a random page of the file for every task).
func (c *Crawler) previous(u string) *store.URLRecord {
	if c.noHistory {
		return nil
	}
	prev, ok, err := c.store.Get(u)
	if err != nil {
		c.readFailed("read previous result", err, "url", u)
		return nil
	}
	if !ok {
		return nil
	}
	return &prev
}

// reusable says whether prev, what is known of a URL whose requests carry
// policy p, is fresh enough to reuse without a request in pass.
func (c *Crawler) reusable(pass store.Pass, prev *store.URLRecord, p *rules.Policy) bool {
	// A file costs nothing to read again, and a site on disk is checked
	// right after it was edited: its results are never reused.
	// A record that awaited another crawler's URL (see awaitEnd) says
	// nothing of how its chain ended.
	local := strings.HasPrefix(prev.URL, "file:")
	return !local && prev.Awaits == "" && prev.Pass != pass.ID && c.fresh(*prev, c.cfg.Now(), p)
}

// history carries the URL's past into its new record, resolved in pass.
func history(rec *store.URLRecord, prev *store.URLRecord, pass store.Pass, now time.Time) {
	if prev != nil && prev.Awaits != "" {
		// Its chain went on at another worker's URL, and that pass's
		// verdict is known where it was finished, not here: the past
		// before that pass is carried, and an earlier pass's verdict is
		// left for the merged database to fill (see RedoHistory), unless
		// that pass is one this pass's history passes over anyway.
		history(rec, pastOf(prev), pass, now)
		if prev.Pass != pass.ID && !pass.Skips(prev.Pass) {
			rec.PrevVerdict, rec.PrevPass = "", prev.Pass
		}
		return
	}
	if prev == nil {
		rec.FirstSeen = now
		if rec.Verdict == store.VerdictOK {
			rec.LastGood = now
		} else if rec.Verdict.Problem() {
			rec.FirstBroken, rec.Failures = now, 1
		}
		return
	}
	rec.FirstSeen = prev.FirstSeen
	if rec.FirstSeen.IsZero() {
		rec.FirstSeen = now
	}
	carryPast(rec, prev, pass)
	rec.LastGood = prev.LastGood
	switch {
	case rec.Verdict == store.VerdictOK:
		rec.LastGood = now
	case rec.Verdict.Problem():
		rec.FirstBroken = prev.FirstBroken
		if rec.FirstBroken.IsZero() {
			rec.FirstBroken = now
		}
		rec.Failures = prev.Failures
		if prev.Pass != pass.ID || prev.Failures == 0 {
			rec.Failures++
		}
	default: // skipped: neither good nor bad, the run of failures is untouched
		rec.FirstBroken, rec.Failures = prev.FirstBroken, prev.Failures
	}
}

// carryPast sets what rec, resolved in pass, says the URL was in the pass
// its report compares with (PrevVerdict, PrevPass and the run of failures
// then), from prev, the URL's latest record before rec.
func carryPast(rec *store.URLRecord, prev *store.URLRecord, pass store.Pass) {
	if prev.Pass == pass.ID || pass.Skips(prev.Pass) {
		// Resolved again in the same pass (a resume redid it), or last
		// resolved in a pass never finished after the one this pass is
		// compared with: its past is what prev carried, as that pass
		// recorded it. A recheck in a stopped night is no verdict of a
		// complete pass: a link broken before it is not new after it, nor
		// one fixed in it fixed (qa6 Q3).
		rec.PrevVerdict, rec.PrevPass = prev.PrevVerdict, prev.PrevPass
		rec.PrevFailures, rec.PrevFirstBroken = prev.PrevFailures, prev.PrevFirstBroken
		if rec.PrevFailures == 0 && rec.PrevFirstBroken.IsZero() && prev.Verdict.Problem() {
			// Written before a problem's record kept the run of then:
			// prev's pass had counted one more failure on it.
			rec.PrevFailures, rec.PrevFirstBroken = max(prev.Failures-1, 0), prev.FirstBroken
		}
	} else {
		rec.PrevVerdict, rec.PrevPass = prev.Verdict, prev.Pass
		rec.PrevFailures, rec.PrevFirstBroken = prev.Failures, prev.FirstBroken
	}
	if !rec.PrevVerdict.Problem() {
		rec.PrevFailures, rec.PrevFirstBroken = 0, time.Time{}
	}
}

// immediate builds the record of a URL that is resolved without a request.
func (c *Crawler) immediate(pass store.Pass, u string, v store.Verdict, errClass, note string) store.Result {
	c.stats.done.Add(1)
	return c.unfetched(pass, u, v, errClass, note)
}

// unfetched is immediate for a task whose worker counts it done itself.
func (c *Crawler) unfetched(pass store.Pass, u string, v store.Verdict, errClass, note string) store.Result {
	now := c.cfg.Now()
	rec := store.URLRecord{URL: u, Pass: pass.ID, Verdict: v, Error: errClass, Note: note, Action: "check"}
	if v == store.VerdictSkipped {
		rec.Action = "skip"
	}
	prev, ok, err := c.store.Get(u)
	var prevp *store.URLRecord
	if err != nil {
		c.readFailed("read previous result", err, "url", u)
	} else if ok {
		prevp = &prev
	}
	history(&rec, prevp, pass, now)
	if v.Problem() {
		c.stats.problems.Add(1)
	}
	return store.Result{Record: rec}
}
