package crawler

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// task is a frontier entry with the host it is queued under and, once the
// dispatcher staged it, the throttle's permit for its first request.
type task struct {
	store.Task
	host       string
	permit     *throttle.Permit
	retries                     // so far (after 429/503/timeouts the throttle allows retrying)
	restored   retries          // of retries, what earlier runs of the pass used (see dispatcher.push)
	prev       *store.URLRecord // what an earlier pass (or run) recorded
	prevLoaded bool             // prev was read when staged
	fresh      bool             // prev is young enough to reuse without a request
	robotsOK   bool             // the discoverer found robots.txt allows it
	robots     string           // when set, this is not a URL of the pass but the probe of this host: its name, and robots.txt when permit is set
	third      bool             // counted against the third-party share of the workers
	// sitemapsOf, when set (the scheme), makes this not a URL of the pass
	// but the reading of the Sitemap: lines of the host's robots.txt.
	sitemapsOf string
	// dec is the rules' decision of URL, made once when a page linked to
	// it and carried here, so that no step of the task asks again; nil
	// for a task from the stored frontier until its worker decides it
	// (see Crawler.decision).
	dec *rules.Decision
	// getNext: a HEAD of this URL was refused and the GET that must follow
	// had to wait for the host, or the HEAD timed out; the GET is the
	// task's first request now.
	getNext bool
	// upgradeNext: the URL was checked and answered a page the rules
	// parse, and the GET that reads it had to wait for the host; that GET
	// is the task's first request now (see Crawler.upgrade).
	upgradeNext bool
	notBefore   time.Time // while delayed (see dispatcher.delay)
	// freed: its requests are done and it gave back its request slot; it
	// holds only a worker until its outcome comes back (see freeSlot).
	freed bool
}

// target is a URL a page links to, already decided by the rules.
type target struct {
	url    string
	host   string
	action rules.Action
	rule   string // who decided, kept on skipped records
	err    string // "invalid URL" when the reference could not be parsed
	// robots is the discoverer's reading of the host's robots.txt, when
	// it was already known.
	robots  robotsAnswer
	sitemap bool // a sitemap to read, listed by an index or robots.txt
	// traps is set for a page to parse that spider-trap limits apply to.
	traps *trapInfo
	// dec is the rules' decision of url, for the task (nil for a target
	// that never becomes one).
	dec *rules.Decision
	// public: a redirect from another origin reached it, so its task is
	// requested without credentials (see store.Task.Public).
	public bool
	// from is the digest of the page whose link this is (store.Task.From).
	from uint64
}

// outcome is what a worker hands back for one task.
type outcome struct {
	task    task
	result  store.Result
	found   []target
	stopped bool // cut short by a stop: not committed, done again on resume
	retry   bool // queue the task again; the host's throttle decides when
	// comeback, with retry: the server said when to come back (this
	// Retry-After), so the retry is not a failed try.
	comeback time.Duration
	// due, with retry: the server refused the task for the host's pace
	// (a 429, or any answer that made a comeback), so it is due the
	// moment the host's pause or backoff ends (see hostQueue.again).
	due bool
	// deferred is set when the result holds back URLs of the site's own
	// hosts (held of them) to a later run, to the end of the server's
	// pause.
	deferred time.Time
	held     int
	// hops are the records of the redirect targets the task claimed, the
	// chain's end last; found are that page's links when it was parsed.
	hops []store.Result
	// waitOn, when set, is a URL another task resolves, where the task's
	// redirects lead: waits (the task's URL first, then the targets it
	// claimed) are finished from its result, and result is not used.
	waitOn string
	waits  []waiting
	// handOff, with waitOn, says the task's chain claimed waitOn and left
	// it to be queued as a task of its own (see hopRefused).
	handOff *handOff
	// released are redirect targets claimed by a task that is retried.
	released []string
	// dropped are redirect targets the task's chain claimed and did not
	// record: it gave up past --max-redirects, and from each of them the
	// chain is shorter than that, so how theirs ends is not known (see
	// dispatcher.dropped).
	dropped []string
	// abandoned are redirect targets a HEAD chain claimed before its task
	// was asked again with GET from its own URL, which did not pass through
	// them (see restartAsGet): let go like dropped ones.
	abandoned []string
	// astray are the targets where that HEAD chain was led astray (see
	// dispatcher.astray).
	astray []string
	// later, with retry, holds the task back this long: a follow-up
	// request of it had to wait for its host (see acquireNext).
	later time.Duration
	// hold, with retry, holds the task back this long, its host going on
	// meanwhile: the server refused its URL again after it waited as
	// told (see throttle.Decision.Hold).
	hold time.Duration
}

type hostQueue struct {
	name string
	// again are the tasks the server sent away until the host's pause
	// or backoff ends (see outcome.due), in the order they were refused:
	// their time has come before any URL never asked. Queued behind the
	// new ones, each came back only after every new URL had been
	// refused in turn, and a server that refuses each URL's first
	// request checked one page of 41 in four minutes (qa6 Q4).
	again []queued
	tasks []queued
	// urls holds the URLs of the entries of again and tasks (see queued);
	// dead are its bytes that no entry uses any more.
	urls     []byte
	dead     int
	inflight int // tasks and probes of the host on workers
	// requesting are those of inflight that may still send a request:
	// what PerHost bounds (see freeSlot).
	requesting int
	inRing     bool
	notBefore  time.Time // the throttle said wait until then
	waitAt     int       // its place in dispatcher.waiting, while notBefore is set
	// slot, when set, is the slot the host waits for, on that slot's queue
	// and out of the ring (see parkForSlot); released is the slot it was
	// taken off that queue for and not looked at since (see refillSlots).
	slot, released slotKind
	// needsWorker: at the head of the ring, it found every worker busy
	// and needs no probe; it is looked at again once a worker frees.
	needsWorker bool
	robots      robotsState
	own         bool // a host of the site: a start host, or one the rules parse
	// parsed is the URL of the task at the head, parsed: a host is looked
	// at a few times before its head task goes (its probe, its wait), and
	// a URL is parsed once there rather than each time. Only the head's:
	// a parsed URL for every queued task would cost more than its string.
	parsed    *url.URL
	parsedFor string
}

type robotsState uint8

const (
	robotsUnknown robotsState = iota
	robotsLoading
)

// dispatcher owns the frontier and the pass's dedupe set; only its
// goroutine touches them (workers following redirects ask it to claim their
// targets, see chain.go).
type dispatcher struct {
	c     *Crawler
	pass  store.Pass
	seen  claims
	hosts map[string]*hostQueue
	ring  []*hostQueue // hosts with queued tasks and a free slot, round robin
	// probeParked and thirdParked are hosts taken out of the ring until a
	// slot frees, in the order they were parked: a host to probe while
	// every probe worker is busy, a third-party host while third-party
	// tasks hold their share of the workers (see hosts.go). probeOut and
	// thirdOut count the hosts taken off them for a free slot and not
	// looked at since (see refillSlots).
	probeParked, thirdParked []*hostQueue
	probeOut                 bool
	thirdOut                 int
	third                    int // third-party tasks on workers
	ownHosts                 map[string]bool
	probe                    *task // a host probe (name, robots.txt) for the probe workers
	probing                  int   // probes in flight
	// waiting are the hosts the throttle asked to wait, until their
	// notBefore (see due.go).
	waiting    dueHeap[*hostQueue]
	staged     *task // holds a permit, handed to the next free worker
	queued     int
	inflight   int // tasks on workers, probes aside
	requesting int // of inflight, those that may still send a request: what Concurrency bounds
	wake       *time.Timer
	wakeAt     time.Time
	// sitemapURLs are the URLs taken from sitemaps in this pass, at most
	// Config.SitemapLimit.
	sitemapURLs map[string]struct{}
	traps       trapState // counted over seen; see traps.go
	// deferred counts the URLs of the site's own hosts held back to a
	// later run by a server's pause; resumeAfter is when the last of those
	// pauses ends.
	deferred    int
	resumeAfter time.Time
	// ends and waiters finish the records whose redirects lead to a URL
	// another task resolves (see chain.go).
	ends    ends
	waiters map[string][]waiting
	// delayed are tasks handed back by workers until their time (see
	// delay), on no host's queue meanwhile.
	delayed dueHeap[*task]
	// decided are the decisions shared by queued tasks, and decisions
	// their numbers (see shared).
	decided   []*rules.Decision
	decisions map[rules.Decision]uint32
	// fulls are the queued tasks kept whole, by number, and freeFulls
	// the numbers free for the next (see queue).
	fulls     []task
	freeFulls []uint32
	// touched keeps what seen.touch read (see handle).
	touched uint64
	// astray are the redirect targets where a HEAD chain of this pass was
	// led astray: it failed there (a refusal GET confirmed, a loop only
	// HEAD gets), so its task was asked again with GET from its own URL.
	// A later HEAD chain that reaches one is asked again with GET at once
	// (claimAstray), without requesting it: an IIS site whose every HEAD
	// redirects to one error page had that page asked once a link
	// (review10 R4). Few: the error pages of a pass's hosts.
	astray map[string]struct{}
}

func newDispatcher(c *Crawler, pass store.Pass, seen claims) *dispatcher {
	d := &dispatcher{c: c, pass: pass, seen: seen, hosts: make(map[string]*hostQueue),
		sitemapURLs: make(map[string]struct{}), traps: newTrapState(),
		ends: newEnds(seen), waiters: make(map[string][]waiting), ownHosts: make(map[string]bool),
		decisions: make(map[rules.Decision]uint32), astray: make(map[string]struct{})}
	d.waiting = dueHeap[*hostQueue]{at: func(q *hostQueue) *time.Time { return &q.notBefore }, index: func(q *hostQueue, i int) { q.waitAt = i }}
	d.delayed = dueHeap[*task]{at: func(t *task) *time.Time { return &t.notBefore }}
	for _, s := range pass.StartURLs {
		if u, err := url.Parse(s); err == nil {
			d.ownHosts[u.Host] = true
		}
	}
	return d
}

func (d *dispatcher) idle() bool {
	return d.queued == 0 && d.inflight == 0 && d.staged == nil && len(d.waiters) == 0 && d.probing == 0 && d.probe == nil && d.delayed.Len() == 0
}

// push queues a task from the stored frontier; it is already in the store.
func (d *dispatcher) push(t store.Task) {
	if !d.seen.claimLink(t.URL) {
		return
	}
	d.traps.admitted(t.URL, "")
	host := ""
	if u, err := url.Parse(t.URL); err == nil {
		host = u.Host
	}
	// The tries an earlier run of the pass used are the task's so far
	// (see keepTries).
	tk := task{Task: t, host: host}
	tk.attempt, tk.comebacks = t.Tries, throttle.Comebacks{N: t.Comebacks, Waited: t.ComebacksWaited}
	tk.Tries, tk.Comebacks, tk.ComebacksWaited = 0, 0, 0
	tk.restored = tk.retries
	d.enqueue(tk)
}

func (d *dispatcher) enqueue(t task) {
	d.queueOn(t, queueLast)
}

// queuePlace is where queueOn puts a task.
type queuePlace uint8

const (
	queueLast     queuePlace = iota // behind every other task of its host
	queueDue                        // behind the tasks due again (see hostQueue.again), before the others
	queueDueFirst                   // before every other task of its host
)

// queueOn queues t on its host's queue, at place.
func (d *dispatcher) queueOn(t task, place queuePlace) {
	q := d.hosts[t.host]
	if q == nil {
		q = &hostQueue{name: t.host, own: d.ownHosts[t.host]}
		d.hosts[t.host] = q
	}
	if t.Action == rules.Parse.String() && !q.own {
		q.own = true
		d.ownHosts[t.host] = true
	}
	switch place {
	case queueDue:
		q.again = append(q.again, d.queue(q, t))
	case queueDueFirst:
		q.again = slices.Insert(q.again, 0, d.queue(q, t))
	default:
		q.tasks = append(q.tasks, d.queue(q, t))
	}
	d.queued++
	d.c.stats.queued.Store(int64(d.queued))
	d.schedule(q)
}

func (d *dispatcher) schedule(q *hostQueue) {
	if !q.inRing && q.len() > 0 && q.requesting < d.c.cfg.PerHost && q.robots != robotsLoading && q.notBefore.IsZero() && q.slot == slotNone {
		q.inRing = true
		d.ring = append(d.ring, q)
	}
}

// stage picks the next task to hand to a worker and gets the throttle's
// permit for it, never blocking: a host that must wait is parked until its
// time, and the other hosts go on. URLs that must not be fetched at all
// (robots.txt, quota, a deferred host) are resolved on the spot and
// returned for writing.
func (d *dispatcher) stage() []store.Result {
	var resolved []store.Result
	// Only with a worker free: a permit is the right to send now, and one
	// held while every worker is busy would be spent late, bunching the
	// host's requests past its window.
	for d.staged == nil {
		d.refillSlots()
		if len(d.ring) == 0 || (d.busy() && (!d.probeFree() || d.ring[0].needsWorker)) {
			// All the head could do now is settle at once, and it does
			// when a worker frees: looked at on every event meanwhile
			// (each request's send, slot, outcome and permit), it was
			// asked about again and again.
			break
		}
		q := d.ring[0]
		t := d.task(q, q.head())
		if err := d.c.deadHost(q.name); err != nil {
			d.pop(q)
			class, note := "dns", "no such host: every URL of "+q.name+" settled at once"
			if errors.Is(err, errInvalidHost) {
				class, note = "invalid host", ""
			}
			resolved = append(resolved, d.c.immediate(d.pass, t.URL, store.VerdictBroken, class, note))
			continue
		}
		if d.c.mayReuse() && t.sitemapsOf == "" {
			// Only with recheck intervals can a stored result be reused;
			// otherwise the worker reads it, in parallel. A sitemap is
			// always read again: what it lists is the point.
			// Its recheck interval comes with its decision, made when it
			// was found (or here, once, for a task from the store).
			t.prev = d.c.previous(t.URL)
			t.fresh = t.prev != nil && t.Action != actionSitemap && d.c.reusable(d.pass, t.prev, d.c.decision(&t).Request)
			t.prevLoaded = true
		}
		if d.c.cfg.Throttle == nil || t.fresh || q.name == "" {
			// A reuse sends no request and a file is read from disk: neither
			// costs a host anything.
			if d.busy() {
				q.needsWorker = true
				break
			}
			d.take(q, t)
			break
		}
		u, err := q.parse(t.URL)
		if err != nil {
			d.pop(q)
			resolved = append(resolved, d.c.immediate(d.pass, t.URL, store.VerdictBroken, "invalid URL", ""))
			continue
		}
		if _, held := d.c.cfg.Throttle.Deferred(q.name, t.URL); held && t.sitemapsOf == "" {
			// Before robots.txt: a host that asked for a long pause is not
			// asked for its robots.txt either.
			d.pop(q)
			resolved = append(resolved, d.deferral(t))
			continue
		}
		probe := t
		dns := d.c.needsDNS(u)
		robots := d.c.robotsGate(u, t.robotsOK || t.sitemapsOf != "")
		if dns || robots == robotsNotRead {
			// The host's name and robots.txt come first; its URLs wait
			// for them, and the probe waits on no worker.
			if !d.probeFree() {
				d.parkForSlot(q, slotProbe) // the other hosts go on meanwhile
				continue
			}
			probe = task{host: q.name, robots: u.Scheme}
			if dns {
				// The name first, asking the host for nothing: one that
				// does not exist never touches its throttle.
				d.startProbe(q, probe)
				continue
			}
		} else if d.busy() {
			q.needsWorker = true
			break
		} else if d.thirdFull(q) {
			d.parkForSlot(q, slotThird)
			continue
		} else if t.sitemapsOf != "" {
			// The file is known (or ignored, and the worker asks the
			// throttle itself if it must fetch it).
			d.take(q, t)
			break
		} else if robots != robotsAllowed {
			d.pop(q)
			resolved = append(resolved, d.c.robotsRefusal(d.pass, t.URL, q.name, robots))
			continue
		}
		p, wait, err := d.c.cfg.Throttle.Reserve(q.name)
		switch {
		case errors.Is(err, throttle.ErrDeferred):
			d.pop(q)
			resolved = append(resolved, d.deferral(t))
		case err != nil:
			d.pop(q)
			resolved = append(resolved, d.c.immediate(d.pass, t.URL, store.VerdictSkipped, politeClass(err), "skipped: the host's quota for this pass is used up"))
		case wait > 0:
			d.park(q, wait)
		case probe.robots != "":
			probe.permit = p
			d.startProbe(q, probe)
		default:
			t.permit = p
			d.take(q, t)
		}
	}
	return resolved
}

// deferral resolves a task held back by a server's pause, counting it
// when it leaves the pass unfinished.
func (d *dispatcher) deferral(t task) store.Result {
	d.c.stats.done.Add(1)
	res, until := d.c.deferral(d.pass, t, t.URL)
	d.noteDeferred(until, 1)
	return res
}

// noteDeferred counts n URLs of the site held back until then.
func (d *dispatcher) noteDeferred(until time.Time, n int) {
	if until.IsZero() {
		return
	}
	d.deferred += n
	if until.After(d.resumeAfter) {
		d.resumeAfter = until
	}
}

// busy says whether no task may start now: Concurrency of them may still
// send requests, or every worker is taken.
func (d *dispatcher) busy() bool {
	return d.requesting >= d.c.cfg.Concurrency || d.inflight >= Workers(d.c.cfg.Concurrency)
}

// take moves the task at the head of q to the staged slot and rotates the ring.
func (d *dispatcher) take(q *hostQueue, t task) {
	q.inflight++
	q.requesting++
	d.inflight++
	d.requesting++
	t.third = !q.own && !t.fresh
	if t.third {
		d.third++
	}
	d.pop(q)
	withURL(&t)
	t.freed = false // a task handed back once is sending again
	d.staged = &t
	d.c.stats.inflight.Store(int64(d.inflight))
}

// pop removes the task at the head of q, which is at the head of the ring.
func (d *dispatcher) pop(q *hostQueue) {
	var e queued
	if len(q.again) > 0 {
		e, q.again = q.again[0], q.again[1:]
	} else {
		e, q.tasks = q.tasks[0], q.tasks[1:]
	}
	d.unqueue(q, e)
	d.queued--
	d.leaveRing(q)
	d.schedule(q)
	d.c.stats.queued.Store(int64(d.queued))
}

// free gives back the request slot of a task of host whose requests are
// done (see freeSlot): the next task may send its request while this one
// is parsed. The task stays on its worker, and in inflight, until its
// outcome comes back.
func (d *dispatcher) free(host string) {
	q := d.hosts[host]
	q.requesting--
	d.requesting--
	d.schedule(q)
}

// len is how many tasks q holds.
func (q *hostQueue) len() int {
	return len(q.again) + len(q.tasks)
}

// head is the task q hands out next.
func (q *hostQueue) head() *queued {
	if len(q.again) > 0 {
		return &q.again[0]
	}
	return &q.tasks[0]
}

// leaveRing takes q, at the head of the ring, out of it.
func (d *dispatcher) leaveRing(q *hostQueue) {
	d.ring = d.ring[1:]
	q.inRing, q.needsWorker = false, false
	switch q.released {
	case slotProbe:
		d.probeOut = false
	case slotThird:
		d.thirdOut--
	}
	q.released = slotNone
}

// parse is url.Parse of u, the URL of the task at q's head, kept for as
// long as that task stays there.
func (q *hostQueue) parse(u string) (*url.URL, error) {
	if q.parsed != nil && q.parsedFor == u {
		return q.parsed, nil
	}
	p, err := url.Parse(u)
	if err != nil {
		return nil, err
	}
	q.parsed, q.parsedFor = p, u
	return p, nil
}

// park takes q out of the ring until the throttle lets it go again.
func (d *dispatcher) park(q *hostQueue, wait time.Duration) {
	d.leaveRing(q)
	q.notBefore = time.Now().Add(wait)
	d.waiting.add(q)
	d.wakeBy(q.notBefore)
}

// delay holds t back for wait, on no host's queue: a follow-up request of
// it (a redirect hop, GET after a refused HEAD) found its host's throttle
// asking for a longer wait than a worker holds on for, so the worker gave
// the task back rather than sit out the wait (see acquireNext). Its own
// host's other tasks go on meanwhile. Once its time comes it goes ahead of
// the host's new URLs (queueDue): it continues a request already under
// way, and queued behind the new URLs of a host paced at one request a
// second it waited minutes, every other chain's hop with it (qa9 T1).
func (d *dispatcher) delay(t task, wait time.Duration) {
	t.notBefore = time.Now().Add(wait)
	d.delayed.add(&t)
	d.wakeBy(t.notBefore)
}

// wakeBy makes the wake timer fire at at, or sooner.
func (d *dispatcher) wakeBy(at time.Time) {
	if !d.wakeAt.IsZero() && !at.Before(d.wakeAt) {
		return
	}
	d.wakeAt = at
	if d.wake == nil {
		d.wake = time.NewTimer(time.Until(at))
	} else {
		d.wake.Reset(time.Until(at))
	}
}

// unpark returns to the ring every parked host whose time has come, and
// queues again every task held back whose time has come.
func (d *dispatcher) unpark() {
	now := time.Now()
	d.waiting.release(now, d.schedule)
	d.delayed.release(now, func(t *task) { d.queueOn(*t, queueDue) })
	d.wakeAt = time.Time{}
	for _, at := range []time.Time{d.waiting.next(), d.delayed.next()} {
		if !at.IsZero() {
			d.wakeBy(at)
		}
	}
}

// unparkFreed returns to the ring the parked hosts a permit done may have
// let go before their time (see Throttle.Freed): the in-flight cap binds
// until a request ends, and Reserve can only guess when. A task held back
// waits for its time whatever frees up.
func (d *dispatcher) unparkFreed() {
	for _, h := range d.c.cfg.Throttle.Freed() {
		if q := d.hosts[h]; q != nil && !q.notBefore.IsZero() {
			d.waiting.remove(q.waitAt)
			q.notBefore = time.Time{}
			d.schedule(q)
		}
	}
}

func (d *dispatcher) finish(t task) {
	q := d.hosts[t.host]
	q.inflight--
	if !t.freed {
		q.requesting--
	}
	switch {
	case t.robots != "":
		q.robots = robotsUnknown // known now, or to be fetched again after a stop
		d.probing--
	case t.third:
		d.third--
		fallthrough
	default:
		d.inflight--
		if !t.freed {
			d.requesting--
		}
	}
	d.c.stats.inflight.Store(int64(d.inflight))
	if q.len() == 0 && q.inflight == 0 && q.notBefore.IsZero() {
		delete(d.hosts, t.host)
		return
	}
	d.schedule(q)
}

// loop hands tasks to workers and turns their outcomes into writes until
// the frontier is empty, or until stop is cancelled and nothing is in flight.
//
// Idle, with every result committed, it tells the frontier so and waits
// for the frontier's Done (the pass is complete everywhere) or for more
// work to come in.
func (d *dispatcher) loop(stop, failed context.Context, tasks, probes chan<- task, outcomes <-chan outcome, writes chan<- []store.Result, flushes chan<- chan error, claimReqs <-chan claimReq) error {
	stopCh := stop.Done()
	stopping := false
	incoming := d.c.frontier.Incoming()
	var done <-chan struct{} // the frontier's, while idle
	var ready <-chan struct{}
	if d.c.cfg.Throttle != nil {
		ready = d.c.cfg.Throttle.Ready()
	}
	defer func() {
		if d.wake != nil {
			d.wake.Stop()
		}
	}()
	for {
		if !stopping {
			if err := d.writeEach(failed, writes, d.stage()); err != nil {
				return err
			}
		}
		if d.inflight == 0 && d.probing == 0 && (stopping || (d.queued == 0 && d.waiting.Len() == 0 && d.delayed.Len() == 0)) {
			if stopping {
				return nil
			}
			if len(d.waiters) > 0 {
				if err := d.writeEach(failed, writes, d.loops()); err != nil {
					return err
				}
				continue
			}
			if done == nil {
				if err := d.flush(failed, flushes); err != nil {
					return err
				}
				d.c.frontier.Idle(true)
				done = d.c.frontier.Done()
			}
		}
		var send, sendProbe chan<- task
		var next, nextProbe task
		if d.staged != nil {
			send, next = tasks, *d.staged
		}
		if d.probe != nil {
			sendProbe, nextProbe = probes, *d.probe
		}
		var wake <-chan time.Time
		if d.wake != nil && !d.wakeAt.IsZero() {
			wake = d.wake.C
		}
		select {
		case send <- next:
			d.staged = nil
		case sendProbe <- nextProbe:
			d.probe = nil
		case o := <-outcomes:
			d.finish(o.task)
			switch {
			case o.stopped, o.task.robots != "":
			case o.retry:
				o.task.permit = nil
				switch {
				case o.later > 0:
					d.delay(o.task, o.later) // nothing failed: no retry is counted
				default:
					// A failed try refused again is asked again first:
					// the host's backoff, which doubles with each round
					// of refusals, ends only with an answer, and a server
					// refusing each URL's first requests answers the URL
					// furthest on; queued behind the others' second tries,
					// the third ones waited minutes (qa6 Q4, "Retry-After:
					// 0" twice). Comebacks keep their order: the host's
					// pause is the same for all of them.
					again := o.comeback == 0 && o.due && o.task.attempt > 0
					o.task.count(o.comeback)
					if err := d.keepTries(failed, writes, o.task); err != nil {
						return err
					}
					switch {
					case o.hold > 0:
						d.delay(o.task, o.hold)
					case again:
						d.queueOn(o.task, queueDueFirst)
					case o.due || o.comeback > 0:
						d.queueOn(o.task, queueDue)
					default:
						d.enqueue(o.task)
					}
				}
				d.unclaim(o.task, o.released)
				d.ledAstray(o.astray...)
				d.dropped(o.task, o.abandoned, nil, true)
			default:
				if err := d.handle(failed, o, writes); err != nil {
					return err
				}
			}
		case r := <-claimReqs:
			r.reply <- d.claimHop(r)
		case host := <-d.c.frees:
			d.free(host)
		case batch := <-incoming:
			if done != nil {
				done = nil
				d.c.frontier.Idle(false)
			}
			for _, t := range batch {
				d.push(t)
			}
		case <-done:
			return nil
		case <-wake:
			d.unpark()
		case <-ready:
			d.unparkFreed()
		case <-stopCh:
			// No new tasks from here on; wait for the ones in flight.
			stopping, stopCh = true, nil
			if d.staged != nil {
				d.release(*d.staged)
				d.staged = nil
			}
			if d.probe != nil {
				d.release(*d.probe)
				d.probe = nil
			}
		case <-failed.Done():
			return failed.Err()
		}
	}
}

// keepTries hands the writer t's tries so far, to be saved with its queued
// task (store.Result.Tried): a run resumed after a stop or a kill gives it
// only what is left of its retries, where each run gave a URL that kept
// timing out 1+N requests (qa10 Q6: 7 over kill, kill, finish at
// --retries 2).
func (d *dispatcher) keepTries(failed context.Context, writes chan<- []store.Result, t task) error {
	if t.sitemapsOf != "" {
		return nil // not a task of the frontier
	}
	st := t.Task
	st.Tries, st.Comebacks, st.ComebacksWaited = t.attempt, t.comebacks.N, t.comebacks.Waited
	select {
	case writes <- []store.Result{{Tried: &st}}:
		return nil
	case <-failed.Done():
		return failed.Err()
	}
}

// flush waits until the writer has committed every result handed to it.
func (d *dispatcher) flush(failed context.Context, flushes chan<- chan error) error {
	reply := make(chan error, 1)
	select {
	case flushes <- reply:
	case <-failed.Done():
		return failed.Err()
	}
	select {
	case err := <-reply:
		return err
	case <-failed.Done():
		return failed.Err()
	}
}

// release gives back the permit of a task that will not be sent.
func (d *dispatcher) release(t task) {
	if t.permit != nil {
		t.permit.Done(throttle.Outcome{Err: context.Canceled})
	}
	d.finish(t)
}

// write hands results to the writer as one unit, with the records that
// waited on them: the writer commits a unit whole. A page's record marks it
// done, so a resume does not read it again; the records of what it links
// (skipped, refused by robots.txt, held back, broken at once) and the
// queueing carried by the last hop of its redirect chain exist only in the
// same unit. Split across two commits, a kill between them lost them for
// good (qa7 Q11).
func (d *dispatcher) write(failed context.Context, writes chan<- []store.Result, rs ...store.Result) error {
	if len(rs) == 0 {
		return nil
	}
	rs = slices.Clip(rs)
	for i := 0; i < len(rs); i++ {
		d.c.logDecision(&rs[i].Record)
		rs = append(rs, d.settled(&rs[i].Record)...)
	}
	select {
	case writes <- rs:
		return nil
	case <-failed.Done():
		return failed.Err()
	}
}

// writeEach hands independent results to the writer, each as a unit of its
// own, so that a host's thousands of URLs settled at once are not one commit.
func (d *dispatcher) writeEach(failed context.Context, writes chan<- []store.Result, rs []store.Result) error {
	for _, r := range rs {
		if err := d.write(failed, writes, r); err != nil {
			return err
		}
	}
	return nil
}

func (d *dispatcher) handle(failed context.Context, o outcome, writes chan<- []store.Result) error {
	res := o.result
	d.noteDeferred(o.deferred, max(o.held, 1))
	var extra []store.Result
	fromSitemap := o.task.Action == actionSitemap || o.task.sitemapsOf != ""
	notTaken := 0
	pageTemplate := sync.OnceValue(func() string { return templateOf(o.task.URL) })
	// Most links are claimed already; each lookup is a cache miss on a big
	// site. Their reads start together here instead of one after another.
	d.touched += d.seen.touch(o.found)
	for _, t := range o.found {
		if fromSitemap && !d.sitemapAllows(t) {
			notTaken++
			continue
		}
		if len(t.url) > store.MaxURLLength {
			// However it got here (a rewrite, a redirect), a URL the store
			// cannot key is a result, not a batch that fails to commit.
			t.url, t.err = clip(t.url), "URL too long"
		}
		if !d.seen.claimLink(t.url) {
			continue
		}
		if t.action == rules.Parse && !d.c.mayParse(o.task.Depth+1) {
			// Beyond --max-depth: checked like a link to another site,
			// so no spider-trap limit holds it back either.
			t.action = rules.Check
		}
		trap, held, run := d.traps.admit(&t, o.task, pageTemplate, !fromSitemap)
		unsupported, isUnsupported := rules.UnsupportedSchemeOf(t.rule)
		switch {
		case t.err != "":
			extra = append(extra, d.c.immediate(d.pass, t.url, store.VerdictBroken, t.err, ""))
		case t.robots == robotsDisallowed, t.robots == robotsFailing:
			extra = append(extra, d.c.robotsRefusal(d.pass, t.url, t.host, t.robots))
		case held:
			extra = append(extra, d.c.heldBack(d.pass, t.url, trap))
		case t.action == rules.Skip && isUnsupported:
			// Nothing says it works, and no one chose to leave it out
			// (qa9 T11: "skipped on purpose", exit 0).
			extra = append(extra, d.c.immediate(d.pass, t.url, store.VerdictUnverifiable, store.ErrorUnsupportedScheme,
				unsupportedNote(unsupported)))
		case t.action == rules.Skip:
			extra = append(extra, d.c.immediate(d.pass, t.url, store.VerdictSkipped, "", "skipped: "+t.rule))
		default:
			nt := task{Task: store.Task{URL: t.url, Action: t.action.String(), Depth: o.task.Depth + 1, Run: run, Public: t.public, From: t.from}, host: t.host, robotsOK: t.robots == robotsAllowed, dec: t.dec}
			if t.sitemap {
				nt.Action = actionSitemap
				if o.task.sitemapsOf != "" {
					nt.Depth = 0 // named by robots.txt: as good as configured
				}
			}
			if o.task.sitemapsOf == "" && !d.c.frontier.Owns(t.host) {
				// Another crawler's: committed with this result, for it.
				// (What robots.txt names is queued but never committed:
				// it is read here.)
				res.Forward = append(res.Forward, nt.Task)
				continue
			}
			res.Enqueue = append(res.Enqueue, nt.Task)
			d.enqueue(nt)
		}
	}
	if notTaken > 0 && o.task.sitemapsOf == "" {
		note := fmt.Sprintf("the pass took the most URLs it takes from sitemaps (%d): %d entries of this one were not taken", d.c.cfg.SitemapLimit, notTaken)
		if res.Record.Note != "" {
			note = res.Record.Note + "; " + note
		}
		res.Record.Note = note
		res.Record.NotTaken += notTaken
	}
	if o.task.sitemapsOf != "" {
		// Reading robots.txt resolves no URL of the pass: its sitemaps are
		// queued, not committed, and found again by the next run.
		return d.write(failed, writes, extra...)
	}
	d.dropped(o.task, o.dropped, &res, false)
	d.ledAstray(o.astray...)
	d.dropped(o.task, o.abandoned, &res, true)
	if len(o.hops) == 0 && o.waitOn == "" && len(res.Enqueue)+len(res.Forward)+len(extra) == 0 && d.onlyHeadsWait(&res.Record) {
		d.ledAstray(res.Record.URL)
		for _, w := range slices.Clone(d.waiters[res.Record.URL]) {
			d.redo(w.head, nil)
		}
		d.seen.drop(res.Record.URL)
		d.c.stats.problems.Add(-1) // counted as one by its task (process)
		return nil
	}
	if len(o.hops) > 0 {
		// The links found are the chain's end's, and so is their queueing.
		last := &o.hops[len(o.hops)-1]
		last.Enqueue, res.Enqueue = res.Enqueue, nil
		last.Forward, res.Forward = res.Forward, nil
		extra = append(o.hops, extra...)
	}
	if o.waitOn != "" {
		// The task's own record is written when the chain's end is known.
		o.waits[0].forward = res.Forward
		if hc := o.waits[0].head; hc != nil && o.handOff == nil {
			if _, ok := d.astray[o.waitOn]; ok {
				// Since the chain found it claimed, another HEAD chain
				// was led astray there (and let it go): asked again
				// with GET now, as it would have been at the claim.
				d.redo(hc, nil)
				return d.write(failed, writes, extra...)
			}
		}
		if nt, ok := d.hopTask(o.task, o.waitOn); ok && o.handOff != nil {
			d.delay(nt, o.handOff.wait) // nothing failed: no retry is counted
		}
		rs, err := d.wait(o.waitOn, o.waits)
		if err != nil {
			return err
		}
		return d.write(failed, writes, append(rs, extra...)...)
	}
	return d.write(failed, writes, append([]store.Result{res}, extra...)...)
}

// unsupportedNote is the note of a link in a scheme linkpatrol cannot
// check: what it is, and how to make leaving such links out your choice.
func unsupportedNote(scheme string) string {
	return "not checked: only http and https links are requested; --exclude '^" + regexp.QuoteMeta(scheme) +
		":' (or a [[rule]] that skips or ignores them) leaves them out on purpose"
}
