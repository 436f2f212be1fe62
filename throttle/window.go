package throttle

import (
	"slices"
	"time"
)

// window is the flood window as the server sees it: at most limit requests
// arriving in any interval of length span. The crawler cannot see when a
// request arrives, only that it arrives after its permit and before it is
// over (answered or failed), so a request counts from its permit until
// span after it is over, an open one all the while. A new request may start
// only while fewer than limit are counted: then the limit-th request before
// it was over, and so had arrived, at least span before the new one can
// arrive. Counting permits instead let 14 requests of a 10/5s window reach
// a server within 5 s, the permits being a few ms ahead of the arrivals.
type window struct {
	open int         // requests not over yet
	ring []time.Time // when the requests over within span were over, oldest first
	head int         // index of the oldest
	n    int
}

// waitAt is how long to wait from now until one more request keeps at most
// limit counted. When open requests must end first, that is not known yet:
// the answer is then span, the least it can be (Ready fires when one ends).
func (w *window) waitAt(now time.Time, limit int, span time.Duration) time.Duration {
	w.expire(now.Add(-span))
	over := w.open + w.n - limit // how many must leave the count first
	switch {
	case over < 0:
		return 0
	case over >= w.n:
		return span
	}
	return w.at(over).Add(span).Sub(now)
}

// at is the i-th oldest end kept.
func (w *window) at(i int) time.Time {
	return w.ring[(w.head+i)%len(w.ring)]
}

// expire drops the ends at or before cutoff: a request over then shares no
// interval of length span with one starting at cutoff+span or later.
func (w *window) expire(cutoff time.Time) {
	for w.n > 0 && !w.ring[w.head].After(cutoff) {
		w.ring[w.head] = time.Time{}
		w.head = (w.head + 1) % len(w.ring)
		w.n--
	}
}

// over records that k open requests ended at t.
func (w *window) over(t time.Time, k int) {
	w.open -= k
	for range k {
		w.push(t)
	}
}

// push keeps one end, growing the ring as needed; the limit bounds it.
func (w *window) push(t time.Time) {
	if w.n == len(w.ring) {
		grown := make([]time.Time, max(2*len(w.ring), 8))
		for i := range w.n {
			grown[i] = w.at(i)
		}
		w.ring, w.head = grown, 0
	}
	w.ring[(w.head+w.n)%len(w.ring)] = t
	w.n++
}

// count is how many requests are counted at now: open, or over within
// span before it.
func (w *window) count(now time.Time, span time.Duration) int {
	w.expire(now.Add(-span))
	return w.open + w.n
}

// recent is what another process needs to keep the window: the latest
// limit ends within span before now, oldest first, an open request
// counted as over now. (One still open may reach the server after now, if
// this process dies before it ends: a restart after a kill assumes such
// requests, see Throttle.Resume.)
func (w *window) recent(now time.Time, limit int, span time.Duration) []time.Time {
	w.expire(now.Add(-span))
	ends := make([]time.Time, 0, min(limit, w.n+w.open))
	for range min(w.open, limit) {
		ends = append(ends, now)
	}
	for i := w.n - 1; i >= 0 && len(ends) < limit; i-- {
		ends = append(ends, w.at(i))
	}
	slices.Reverse(ends)
	return ends
}

// restore merges ends saved by another process (see recent) into the
// window, keeping the newest limit of both, in order.
func (w *window) restore(ends []time.Time, limit int) {
	all := make([]time.Time, 0, w.n+len(ends))
	for i := range w.n {
		all = append(all, w.at(i))
	}
	all = append(all, ends...)
	slices.SortFunc(all, time.Time.Compare)
	all = all[max(0, len(all)-limit):]
	w.ring, w.head, w.n = nil, 0, 0
	for _, t := range all {
		w.push(t)
	}
}
