package crawler

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"net/url"
	"slices"

	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
)

// Each URL is fetched once per pass, redirect targets included. A worker
// that follows a redirect to a URL of the pass claims it first: if nobody
// had, the chain goes on and the worker records that URL too (and parses
// it, if it is a page to parse), so its own task is never queued; if some
// task already had it, the chain stops short of it, and the dispatcher
// finishes the record of the URLs before it from that task's result once
// it is known (see dispatcher.settle). A wait that can never end (two
// chains each waiting on the other) is a redirect loop.

// claims is the pass's set of URLs that some task resolves: queued, in
// flight, claimed by a redirect chain or done. The dispatcher owns it: it
// adds what pages link to, and claims redirect targets for the workers
// that follow them (Crawler.claim). Each entry also keeps what ends needs
// of the URL's result, when that is only a verdict and a status: one
// table, where a set and a map of results kept two (at 100,000 pages about
// 4 MB of the live heap).
//
// It is keyed by a 128-bit hash of the URL, not the URL: a lookup then
// compares 16 bytes in the table's own memory instead of following a
// pointer to each candidate's string, and the table holds no pointers, so
// the garbage collector never scans it. At 100,000 pages the map of
// strings cost 9 us a page (cache misses) against 2 at 10,000, and its
// strings were most of what each collection had to mark. Two URLs share
// a key with a probability of about n²/2¹²⁸ (one bit of the second hash
// marks a slot in use): 10⁻²⁶ for a million URLs.
//
// The table is open-addressed (see claimTable) rather than a Go map: a
// lookup of a URL claimed already, what most of a page's links are, reads
// one slot, often one cache line, where the map read a control word and
// then a slot elsewhere; and touch can start the reads of all of a page's
// links at once, before they are claimed one by one. At 100,000 pages,
// where the set (6 MB) is larger than a core's cache, the map's lookups
// cost about 10 us of CPU a page and the table's 5 (touch 3 of them);
// at 10,000 pages both about 4 (CPU profiles of the binary on
// scripts/bench.sh's site, loaded).
type claims struct {
	t      *claimTable
	s1, s2 maphash.Seed
}

// urlKey is a URL's key in claims: two independent 64-bit hashes, the
// second one odd.
type urlKey [2]uint64

func newClaims() claims {
	return claims{t: newClaimTable(), s1: maphash.MakeSeed(), s2: maphash.MakeSeed()}
}

func (c claims) key(u string) urlKey {
	return urlKey{maphash.String(c.s1, u), maphash.String(c.s2, u) | 1}
}

// get returns u's entry, and whether u is claimed.
func (c claims) get(u string) (claimed, bool) {
	s := c.t.find(c.key(u))
	return s.e, s.used()
}

// set replaces the entry of u, claimed already.
func (c claims) set(u string, e claimed) {
	k := c.key(u)
	if s := c.t.find(k); s.used() {
		s.e = e
	} else {
		c.t.add(s, k, e)
	}
}

// drop makes u unclaimed.
func (c claims) drop(u string) { c.t.remove(c.key(u)) }

// touch reads the slots of urls without using what it reads, so that the
// reads, which do not depend on each other, are in flight together: the
// lookups that follow then find the slots in the cache instead of each
// waiting for memory in turn. It returns a value made of what it read,
// for the caller to keep, so that the compiler keeps the reads.
func (c claims) touch(urls []target) uint64 {
	var sum uint64
	mask := uint64(len(c.t.slots) - 1)
	for i := range urls {
		sum += c.t.slots[maphash.String(c.s1, urls[i].url)&mask].k[1]
	}
	return sum
}

// claimTable is a hash table with open addressing and linear probing:
// a key's home is the slot its first hash picks, and it lies there or in
// the first slots after it (wrapping around), before any empty one. The
// table is kept at most half full, so a lookup of a key not in it reads
// about two slots.
type claimTable struct {
	slots []claimSlot // a power of two of them
	n     int         // slots in use
}

// claimSlot is one slot of a claimTable; its zero value is empty (a key's
// second hash is odd).
type claimSlot struct {
	k urlKey
	e claimed
}

func (s *claimSlot) used() bool { return s.k[1] != 0 }

// firstClaimSlots is a new table's size: the URLs of a small site, so
// that it is not doubled over and over while the first pages come in.
const firstClaimSlots = 1 << 10

func newClaimTable() *claimTable {
	return &claimTable{slots: make([]claimSlot, firstClaimSlots)}
}

// find returns the slot holding k, or else the empty slot where k goes.
func (t *claimTable) find(k urlKey) *claimSlot {
	mask := uint64(len(t.slots) - 1)
	for i := k[0] & mask; ; i = (i + 1) & mask {
		if s := &t.slots[i]; s.k == k || !s.used() {
			return s
		}
	}
}

// add puts k with entry e in s, the empty slot find returned for it.
func (t *claimTable) add(s *claimSlot, k urlKey, e claimed) {
	s.k, s.e = k, e
	t.n++
	if 2*t.n > len(t.slots) {
		t.grow()
	}
}

func (t *claimTable) grow() {
	old := t.slots
	t.slots = make([]claimSlot, 2*len(old))
	for i := range old {
		if old[i].used() {
			*t.find(old[i].k) = old[i]
		}
	}
}

// remove takes k out of the table, if it is in it. The keys after it up to
// the next empty slot are moved back where they are still found from their
// home (backward shift), so that no lookup stops at the hole.
func (t *claimTable) remove(k urlKey) {
	mask := uint64(len(t.slots) - 1)
	i := k[0] & mask
	for ; t.slots[i].k != k; i = (i + 1) & mask {
		if !t.slots[i].used() {
			return
		}
	}
	for j := (i + 1) & mask; t.slots[j].used(); j = (j + 1) & mask {
		// The key at j may move to the hole at i unless its home lies
		// cyclically in (i, j]: then it would be found before i.
		if home := t.slots[j].k[0] & mask; (j-home)&mask >= (j-i)&mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = claimSlot{}
	t.n--
}

// claimed is a URL's entry in claims.
type claimed struct {
	end uint8 // the result's verdict, 1 + its index in endVerdicts; 0 while unknown here
	// hop says a redirect chain claimed the URL, and linked that a page
	// (or the frontier) named it while it was so claimed: should the
	// chain drop it (see dropped), it is then queued as a task of its own.
	// (Next to end, the entry stays 8 bytes.)
	hop, linked bool
	status      int32
}

// endVerdicts are the verdicts a claims entry can keep.
var endVerdicts = []store.Verdict{store.VerdictOK, store.VerdictBroken, store.VerdictTransient, store.VerdictUnverifiable, store.VerdictSkipped}

// claim adds u and says whether it was new.
func (c claims) claim(u string) bool { return c.claimAs(u, claimed{}) }

// claimHop is claim for a redirect chain's target.
func (c claims) claimHop(u string) bool { return c.claimAs(u, claimed{hop: true}) }

// claimAs adds u with entry e unless u is claimed already, and says
// whether it was new.
func (c claims) claimAs(u string, e claimed) bool {
	k := c.key(u)
	s := c.t.find(k)
	if s.used() {
		return false
	}
	c.t.add(s, k, e)
	return true
}

// claimLink is claim for a URL a page (or the frontier) names: when u is
// claimed already it notes the link instead, which only a redirect target
// claimed by a chain that has not ended needs to know (see
// claimed.linked). One lookup for both: a page's links are mostly claimed
// already, and at 100,000 pages each lookup in the set is a cache miss.
func (c claims) claimLink(u string) bool {
	k := c.key(u)
	s := c.t.find(k)
	switch {
	case !s.used():
		c.t.add(s, k, claimed{})
		return true
	case s.e.hop && !s.e.linked && s.e.end == 0:
		s.e.linked = true
	}
	return false
}

// claimReq is a worker's request to claim a redirect target; the answer
// comes on reply, which has room for it.
type claimReq struct {
	url string
	// head says the chain asking follows HEAD: a target where a HEAD
	// chain was led astray is not claimed for it (see claimAstray).
	head  bool
	reply chan claimAnswer
}

// claimAnswer is the dispatcher's answer to a claimReq.
type claimAnswer uint8

const (
	claimTaken claimAnswer = iota // another task resolves it: the chain waits on it
	claimFresh                    // the chain's to request and record
	// claimAstray: a HEAD chain of this pass was led astray there (see
	// dispatcher.astray); the chain asking, a HEAD chain too, would be
	// led the same way, and is asked again with GET from its task's URL
	// at once, without requesting it.
	claimAstray
)

// errNoDispatcher ends a chain whose run ended under it (it failed).
var errNoDispatcher = errors.New("the pass ended")

// claim asks the dispatcher to claim u for the redirect chain a worker
// follows (a HEAD chain with head), and says whether it was new.
func (c *Crawler) claim(ctx context.Context, u string, head bool) (claimAnswer, error) {
	reply := make(chan claimAnswer, 1)
	select {
	case c.claimReqs <- claimReq{url: u, head: head, reply: reply}:
	case <-ctx.Done():
		return claimTaken, ctx.Err()
	case <-c.looped:
		return claimTaken, errNoDispatcher
	}
	// Taken is answered, at once: an answer not read would be a URL
	// claimed that no task resolves.
	return <-reply, nil
}

// chainEnd is what a record that ends in a redirect takes from the record
// of the URL the redirect leads to: the whole chain's outcome. A chain
// pieced together from the results of two tasks (or two crawlers) that
// comes back to rec's URL through records that await each other is a
// redirect loop; one fetch followed whole (stitched false) was judged by
// fetch, which knows the cookies each hop carried: there, a page that set
// a cookie and redirected to itself may well end at itself.
//
// A stitched chain whose end is a settled answer at rec's URL, or past
// it, is no loop: that answer came from a request the end's own chain made
// to rec's URL, which a chain makes only after a hop set a cookie (the
// hops after a cookie are not claimed, see fetch). With the cookie, the
// URL answered otherwise than rec's own request: a cookie wall whose
// consent URL is also linked, and which a browser gets through (review8
// F1). Without a cookie, each chain would have waited on the other.
func chainEnd(rec *store.URLRecord, end store.URLRecord, maxRedirects int, stitched bool) {
	rec.Status, rec.ContentType, rec.Size = end.Status, end.ContentType, end.Size
	rec.Verdict, rec.Error, rec.Note = end.Verdict, end.Error, ""
	rec.FinalURL = end.URL
	if end.FinalURL != "" {
		rec.FinalURL = end.FinalURL
	}
	rec.Redirects = append(slices.Clip(rec.Redirects), end.Redirects...)
	switch {
	case stitched && (end.Awaits != "" || end.Error == store.ErrorRedirectLoop) &&
		(rec.FinalURL == rec.URL || slices.ContainsFunc(end.Redirects, func(h store.Hop) bool { return h.URL == rec.URL })):
		rec.Verdict, rec.Error = store.VerdictBroken, store.ErrorRedirectLoop
		rec.Status = rec.Redirects[len(rec.Redirects)-1].Status
	case len(rec.Redirects) > maxRedirects:
		// As when fetch gives up: the last hop followed is the one past
		// the limit, and its status is the chain's.
		rec.Verdict, rec.Error = store.VerdictBroken, store.ErrorTooManyRedirects
		if len(rec.Redirects) > maxRedirects+1 {
			rec.FinalURL = rec.Redirects[maxRedirects+1].URL
		}
		rec.Status = rec.Redirects[maxRedirects].Status
		rec.Redirects = rec.Redirects[:maxRedirects+1]
	case end.Verdict == store.VerdictSkipped && end.Error == store.ErrorRobots:
		rec.Note = "skipped: robots.txt disallows a redirect target"
	case end.Verdict == store.VerdictSkipped, heldBack(end.Error), end.Error == errCookieAcross, end.Error == store.ErrorUnsupportedScheme:
		// A skip, or a hold's Retry-After or silence: said of the
		// target's host, and as true of the link that leads there,
		// which the report shows while the target is a hop it hides
		// (review7 RV2 #5). So is how to leave out a target in a scheme
		// linkpatrol cannot check.
		rec.Note = end.Note
	}
}

// heldBack says whether class is that of a URL held back to a later run
// (see hold): its note says why and until when.
func heldBack(class string) bool {
	return class == store.ErrorRateLimited || class == store.ErrorHostDown || class == stoppedAnswering
}

// ends keeps, for every URL resolved in this run, what a redirect to it
// needs: most results are a verdict and a status, kept in the URL's claims
// entry; the few with an error, a note or redirects of their own, or of a
// URL not claimed, are kept whole.
type ends struct {
	seen claims
	full map[string]*store.URLRecord
}

func newEnds(seen claims) ends {
	return ends{seen: seen, full: make(map[string]*store.URLRecord)}
}

func (e ends) put(rec *store.URLRecord) {
	if rec.Error == "" && rec.Note == "" && rec.FinalURL == "" && len(rec.Redirects) == 0 && rec.Status == int(int32(rec.Status)) {
		v := slices.Index(endVerdicts, rec.Verdict)
		if _, ok := e.seen.get(rec.URL); ok && v >= 0 {
			e.seen.set(rec.URL, claimed{end: uint8(v + 1), status: int32(rec.Status)})
			delete(e.full, rec.URL)
			return
		}
	}
	if c, ok := e.seen.get(rec.URL); ok && c.end != 0 {
		e.seen.set(rec.URL, claimed{})
	}
	e.full[rec.URL] = &store.URLRecord{URL: rec.URL, Verdict: rec.Verdict, Status: rec.Status,
		Error: rec.Error, Note: rec.Note, FinalURL: rec.FinalURL, Redirects: rec.Redirects}
}

func (e ends) get(u string) (store.URLRecord, bool) {
	if c, _ := e.seen.get(u); c.end != 0 {
		return store.URLRecord{URL: u, Verdict: endVerdicts[c.end-1], Status: int(c.status)}, true
	}
	if r, ok := e.full[u]; ok {
		return *r, true
	}
	return store.URLRecord{}, false
}

// waiting is a record whose redirect leads to a URL another task resolves:
// it is finished from that URL's result.
type waiting struct {
	rec   store.URLRecord
	prev  *store.URLRecord // for history
	depth int              // hops from a start URL, should it be queued again
	via   string           // for a redirect target: the URL whose task reached it
	// public: should it be queued again, its task is requested without
	// credentials (see store.Task.Public).
	public bool
	// forward are the chain's hops to hosts another crawler owns, committed
	// with this record for their owner (see Frontier).
	forward []store.Task
	// head, shared by the records of one chain, is set when that chain was
	// followed with HEAD: should the URL it waits on fail, its task is
	// asked again with GET instead (see redo).
	head *headChain
}

// headChain is a HEAD redirect chain whose records wait on a URL another
// task resolves. A HEAD chain that ends in a failure says nothing of the
// link: some servers redirect HEAD alone to an error page (qa9 T2), so,
// as when the chain fails within its own fetch (see restartAsGet), its
// task is asked again with GET from its own URL, and the redirect targets
// it claimed are let go.
type headChain struct {
	task   task
	keys   []string // the redirect targets it claimed, in order
	target string   // the URL it waits on
	redone bool
}

// headFailed says whether end, where a HEAD chain leads, makes the chain
// be asked again with GET: a problem, but not a hold, which is resumed
// as such (see finishWaiting).
func headFailed(end *store.URLRecord) bool {
	return end.Verdict.Problem() && !end.HeldOwn() && !heldBack(end.Error)
}

// markHead makes records, the waiting records of t's HEAD chain that
// stopped short of target, one headChain's.
func markHead(t task, target string, records []waiting) {
	hc := &headChain{task: t, target: target}
	for _, w := range records[1:] {
		hc.keys = append(hc.keys, w.rec.URL)
	}
	for i := range records {
		records[i].head = hc
	}
}

// redo asks hc's task again with GET from its own URL: its waiting records
// are taken back and the redirect targets it claimed let go (see dropped).
func (d *dispatcher) redo(hc *headChain, res *store.Result) {
	if hc.redone {
		return
	}
	hc.redone = true
	for _, k := range append(slices.Clip(hc.keys), hc.target) {
		ws := slices.DeleteFunc(d.waiters[k], func(w waiting) bool { return w.head == hc })
		if len(ws) == 0 {
			delete(d.waiters, k)
		} else {
			d.waiters[k] = ws
		}
	}
	d.dropped(hc.task, hc.keys, res, true)
	nt := hc.task
	nt.permit, nt.getNext, nt.freed = nil, true, false
	d.enqueue(nt)
}

// claimHop answers r, a worker's claim of a redirect target.
func (d *dispatcher) claimHop(r claimReq) claimAnswer {
	if _, ok := d.astray[r.url]; ok && r.head {
		return claimAstray
	}
	if d.seen.claimHop(r.url) {
		return claimFresh
	}
	return claimTaken
}

// ledAstray remembers, for the pass, targets where a HEAD chain was led
// astray (see dispatcher.astray).
func (d *dispatcher) ledAstray(keys ...string) {
	for _, k := range keys {
		d.astray[k] = struct{}{}
	}
}

// ended finishes w from end, the result of the URL it waited on, or asks
// its HEAD chain again with GET (see headChain).
func (d *dispatcher) ended(w waiting, end store.URLRecord) []store.Result {
	if w.head != nil && headFailed(&end) {
		d.ledAstray(end.URL)
		d.redo(w.head, nil)
		return nil
	}
	return []store.Result{d.finishWaiting(w, end)}
}

// onlyHeadsWait says whether rec, the result of a redirect target a HEAD
// chain claimed and left to a task of its own (see hopRefused), is a
// failure that only HEAD chains wait on, no page linking to it: they are
// asked again with GET, and rec, the answer to a request no link leads to,
// is not recorded, or it would be listed as a problem of its own.
func (d *dispatcher) onlyHeadsWait(rec *store.URLRecord) bool {
	e, ok := d.seen.get(rec.URL)
	if !ok || !e.hop || e.linked || !headFailed(rec) {
		return false
	}
	ws := d.waiters[rec.URL]
	for _, w := range ws {
		if w.head == nil {
			return false
		}
	}
	return len(ws) > 0
}

// noteVia says, on a redirect target's record that has no note of its
// own, where it was reached from: a broken one may be linked from no page.
func (w *waiting) noteVia() {
	if w.via != "" && w.rec.Note == "" {
		w.rec.Note = viaNote(w.via)
	}
}

func viaNote(from string) string { return store.RedirectNote + from }

// wait registers ws (a task's URL first, then the redirect targets it
// claimed, each leading to the next) to be finished from target's result,
// and finishes them at once when that is already known.
func (d *dispatcher) wait(target string, ws []waiting) ([]store.Result, error) {
	for i := 0; i < len(ws)-1; i++ {
		next := ws[i+1].rec.URL
		d.waiters[next] = append(d.waiters[next], ws[i])
	}
	last := ws[len(ws)-1]
	if end, ok := d.ends.get(target); ok {
		return d.ended(last, end), nil
	}
	// Resolved by an earlier run of this pass: the store has it, unless
	// it was held back by a pause then, and is queued again now.
	end, ok, err := d.c.store.Get(target)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", target, err)
	}
	if ok && end.Pass == d.pass.ID && !end.HeldOwn() {
		return d.ended(last, end), nil
	}
	d.waiters[target] = append(d.waiters[target], last)
	return nil, nil
}

// settled notes the result of rec's URL and finishes what waited on it.
func (d *dispatcher) settled(rec *store.URLRecord) []store.Result {
	if rec.URL == "" {
		return nil
	}
	d.ends.put(rec)
	ws, ok := d.waiters[rec.URL]
	if !ok {
		return nil
	}
	delete(d.waiters, rec.URL)
	out := make([]store.Result, 0, len(ws))
	for _, w := range ws {
		out = append(out, d.ended(w, *rec)...)
	}
	return out
}

func (d *dispatcher) finishWaiting(w waiting, end store.URLRecord) store.Result {
	chainEnd(&w.rec, end, d.c.cfg.MaxRedirects, true)
	w.noteVia()
	rec := w.rec
	history(&rec, w.prev, d.pass, d.c.cfg.Now())
	if rec.Verdict.Problem() && w.via == "" {
		// A hop of a failing chain is part of the link's problem, as the
		// report counts it (qa5 N1): the progress line said 22 problems
		// for one link to an endless redirect.
		d.c.stats.problems.Add(1)
	}
	res := store.Result{Record: rec, SetLinks: true, Forward: w.forward}
	if end.HeldOwn() {
		// The chain ends at a URL of the site held back by a pause: this
		// URL is done again with it when the pass resumes.
		requeue(&res, w.depth, w.public)
		until, held := d.c.cfg.Throttle.Deferred(hostOf(end.URL), end.URL)
		if !held {
			until = d.c.cfg.Now() // the pause has run out meanwhile
		}
		d.noteDeferred(until, 1)
	}
	return res
}

// loops finishes what still waits when nothing else is left to do: only
// redirects that lead round to each other can wait for ever.
func (d *dispatcher) loops() []store.Result {
	var out []store.Result
	for target, ws := range d.waiters {
		for _, w := range ws {
			last := w.rec.Redirects[len(w.rec.Redirects)-1]
			out = append(out, d.finishWaiting(w, store.URLRecord{URL: target, Verdict: store.VerdictBroken, Error: store.ErrorRedirectLoop, Status: last.Status}))
		}
	}
	clear(d.waiters)
	return out
}

// dropped handles the redirect targets a chain claimed and then did not
// record (see outcome.dropped): each that a link or another chain waits
// for is queued as a task of its own, and the others are no longer
// claimed, so that a link found later queues them. With heads, the chain
// let them go because HEAD led it astray (see restartAsGet): a HEAD chain
// waiting on one of them would be led the same way, and is asked again
// with GET too (see redo). res, when set, commits the tasks queued.
func (d *dispatcher) dropped(t task, keys []string, res *store.Result, heads bool) {
	for _, k := range keys {
		e, ok := d.seen.get(k)
		if !ok || !e.hop {
			continue
		}
		if heads {
			var hcs []*headChain
			for _, w := range d.waiters[k] {
				if w.head != nil {
					hcs = append(hcs, w.head)
				}
			}
			for _, hc := range hcs {
				d.redo(hc, res)
			}
		}
		if !e.linked && len(d.waiters[k]) == 0 {
			d.seen.drop(k)
			continue
		}
		d.seen.set(k, claimed{})
		if nt, ok := d.hopTask(t, k); ok {
			if res != nil {
				res.Enqueue = append(res.Enqueue, nt.Task)
			}
			d.enqueue(nt)
		}
	}
}

// unclaim queues as tasks of their own the redirect targets a retried task
// had claimed: its next try finds them taken and waits on them.
func (d *dispatcher) unclaim(t task, keys []string) {
	for _, k := range keys {
		if nt, ok := d.hopTask(t, k); ok {
			d.enqueue(nt)
		}
	}
}

// hopTask is the task of its own of k, a redirect target t's chain
// claimed, requested as the chain would have requested it: without
// credentials when the chain had left the task's origin (or the task was
// public itself). Keys are URLs the chain parsed: ok is false only for one
// that is not.
func (d *dispatcher) hopTask(t task, k string) (nt task, ok bool) {
	u, err := url.Parse(k)
	if err != nil {
		return task{}, false
	}
	action := d.c.rules.Decide(u).Action
	if action != rules.Parse || !d.c.mayParse(t.Depth+1) {
		action = rules.Check
	}
	return task{Task: store.Task{URL: k, Action: action.String(), Depth: t.Depth + 1, Public: publicHop(t, k), From: t.From}, host: u.Host}, true
}
