package crawler

import (
	"math"
	"slices"

	"github.com/linkpatrol/linkpatrol/rules"
)

// A pass finds most URLs of a site long before it fetches them: on the
// generated 100,000-page site nearly every URL is queued once a few
// thousand pages are parsed, and stays queued for most of the pass. A
// queued task used to be a whole task (176 bytes in its host's queue) and
// its own copy of its decision (128 bytes): 30 MB of the live heap there.
// A host's queue now holds a queued entry of 40 bytes, with the decision
// shared by every task decided alike; only a task that carries more (a
// retry, a delay, the reading of robots.txt) keeps all of itself.
//
// The entry holds no pointer either: its URL is in its host's arena of
// URL bytes (hostQueue.urls), its decision and its whole task are numbers
// in the dispatcher's tables. The collector marks what is live at every
// cycle, and with a pointer and a string an entry, the tens of thousands
// of queued URLs of a big site were most of what it marked: at 100,000
// pages the live heap is three to four times that of 10,000, and every
// page's share of the marking grew with it.

// queued is a task on its host's queue.
type queued struct {
	// at and n are where the URL is in the host's arena (see
	// hostQueue.urls); unused when full is set.
	at, n uint32
	// dec is the task's decision without its URL, shared: 1 + its index
	// in dispatcher.decided (see dispatcher.shared); 0 for a task that
	// was never decided.
	dec uint32
	// full is the whole task, when it carries more than these fields:
	// 1 + its index in dispatcher.fulls; the other fields are then unused.
	full       uint32
	depth, run int32
	action     uint8 // an index into queuedActions
	robotsOK   bool
	// from is store.Task.From, the digest of the page that linked to the
	// task: nearly every queued task has one.
	from uint64
}

// queuedActions are the actions a queued entry can carry, by index.
var queuedActions = []string{"", rules.Parse.String(), rules.Check.String(), actionSitemap}

// queue makes the entry for t on q, whole unless the small form gives back
// exactly t.
func (d *dispatcher) queue(q *hostQueue, t task) queued {
	action := slices.Index(queuedActions, t.Action)
	small := action >= 0 && t.Depth >= 0 && t.Depth <= math.MaxInt32 && t.Run >= 0 && t.Run <= math.MaxInt32 &&
		(t.dec == nil || t.dec.URL == t.URL) && uint64(len(q.urls))+uint64(len(t.URL)) <= math.MaxUint32
	if small {
		e := queued{at: uint32(len(q.urls)), n: uint32(len(t.URL)), dec: d.shared(t.dec), depth: int32(t.Depth), run: int32(t.Run), action: uint8(action), robotsOK: t.robotsOK, from: t.From}
		q.urls = append(q.urls, t.URL...)
		// Whatever field task gains, a task the entry does not give back
		// whole is kept whole.
		back, orig := d.small(q.name, t.URL, &e), t
		back.dec, orig.dec = nil, nil
		if back == orig {
			return e
		}
		q.urls = q.urls[:e.at]
	}
	t.dec = queuedDecision(t.dec)
	var i uint32
	if n := len(d.freeFulls); n > 0 {
		i, d.freeFulls = d.freeFulls[n-1], d.freeFulls[:n-1]
		d.fulls[i] = t
	} else {
		i = uint32(len(d.fulls))
		d.fulls = append(d.fulls, t)
	}
	return queued{full: i + 1}
}

// task is the task of e, queued on q. Its decision, when shared, has no
// URL until the task is taken (see withURL).
func (d *dispatcher) task(q *hostQueue, e *queued) task {
	if e.full != 0 {
		return d.fulls[e.full-1]
	}
	return d.small(q.name, string(q.urls[e.at:e.at+e.n]), e)
}

// small is the task of a small entry e of host, whose URL is url.
func (d *dispatcher) small(host, url string, e *queued) task {
	t := task{host: host, robotsOK: e.robotsOK}
	if e.dec != 0 {
		t.dec = d.decided[e.dec-1]
	}
	t.URL, t.Action, t.Depth, t.Run, t.From = url, queuedActions[e.action], int(e.depth), int(e.run), e.from
	return t
}

// unqueue lets go of what e, taken off q, held: its whole task, or its
// URL's bytes, which the arena gives back once they are half of it.
func (d *dispatcher) unqueue(q *hostQueue, e queued) {
	if e.full != 0 {
		d.fulls[e.full-1] = task{}
		d.freeFulls = append(d.freeFulls, e.full-1)
		return
	}
	q.dead += int(e.n)
	if q.len() == 0 {
		q.urls, q.dead = q.urls[:0], 0
		return
	}
	if q.dead >= minCompact && 2*q.dead >= len(q.urls) {
		q.compact()
	}
}

// minCompact is the fewest dead bytes worth copying a host's arena for.
const minCompact = 4 << 10

// compact copies the URLs q's entries still use to a new arena. It copies
// no more than the bytes let go since the last time, so each byte queued
// is copied about once.
func (q *hostQueue) compact() {
	urls := make([]byte, 0, len(q.urls)-q.dead)
	for _, es := range [2][]queued{q.again, q.tasks} {
		for i := range es {
			if e := &es[i]; e.full == 0 {
				at := len(urls)
				urls = append(urls, q.urls[e.at:e.at+e.n]...)
				e.at = uint32(at)
			}
		}
	}
	q.urls, q.dead = urls, 0
}

// shared is the number of a decision equal to dec but for its URL, fragment
// and parsed URL, the same one for every task decided alike: 1 + its index
// in d.decided, 0 for none. The dispatcher's goroutine alone uses it. A rule
// set that decided every URL differently would give one per URL: no more
// than a copy each, as before.
func (d *dispatcher) shared(dec *rules.Decision) uint32 {
	if dec == nil {
		return 0
	}
	key := *dec
	key.URL, key.Fragment, key.Parsed = "", "", nil
	if i, ok := d.decisions[key]; ok {
		return i
	}
	d.decided = append(d.decided, &key)
	i := uint32(len(d.decided))
	d.decisions[key] = i
	return i
}

// withURL gives a task taken from its queue a decision of its own, with
// its URL, which the steps of the task read.
func withURL(t *task) {
	if t.dec != nil && t.dec.URL == "" {
		dec := *t.dec
		dec.URL = t.URL
		t.dec = &dec
	}
}
