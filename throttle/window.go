package throttle

import (
	"slices"
	"time"
)

// window remembers the request starts that fall inside the flood window,
// oldest first, in a ring that grows to at most the window's limit. Starts
// older than the window are dropped as soon as they are seen, so a limit
// that never binds costs memory for the starts of one window only.
type window struct {
	ring []time.Time
	head int // index of the oldest start
	n    int
}

// waitAt is how long to wait from now until one more start keeps at most
// limit starts in every half-open interval of length span.
func (w *window) waitAt(now time.Time, limit int, span time.Duration) time.Duration {
	w.expire(now.Add(-span))
	if w.n < limit {
		return 0
	}
	return w.ring[w.head].Add(span).Sub(now)
}

// expire drops the starts at or before cutoff: they share no interval of
// length span with a start at cutoff+span or later.
func (w *window) expire(cutoff time.Time) {
	for w.n > 0 && !w.ring[w.head].After(cutoff) {
		w.ring[w.head] = time.Time{}
		w.head = (w.head + 1) % len(w.ring)
		w.n--
	}
}

// add records a start; the caller has checked waitAt first, so the ring
// never needs to hold more than limit starts.
func (w *window) add(t time.Time, limit int) {
	if w.n == len(w.ring) {
		grown := make([]time.Time, min(max(2*len(w.ring), 8), limit))
		for i := range w.n {
			grown[i] = w.ring[(w.head+i)%len(w.ring)]
		}
		w.ring, w.head = grown, 0
	}
	w.ring[(w.head+w.n)%len(w.ring)] = t
	w.n++
}

// since returns the starts after cutoff, oldest first.
func (w *window) since(cutoff time.Time) []time.Time {
	var out []time.Time
	for i := range w.n {
		if t := w.ring[(w.head+i)%len(w.ring)]; t.After(cutoff) {
			out = append(out, t)
		}
	}
	return out
}

// merge adds starts (oldest first) recorded elsewhere, keeping the newest
// limit of both, in order.
func (w *window) merge(starts []time.Time, limit int) {
	all := append(w.since(time.Time{}), starts...)
	slices.SortFunc(all, time.Time.Compare)
	all = all[max(0, len(all)-limit):]
	w.ring, w.head, w.n = make([]time.Time, len(all)), 0, 0
	for _, t := range all {
		w.add(t, limit)
	}
}

// count is the number of starts after cutoff.
func (w *window) count(cutoff time.Time) int {
	w.expire(cutoff)
	return w.n
}
