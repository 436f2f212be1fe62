package crawler

import (
	"container/heap"
	"time"
)

// A link directory or a blog roll links thousands of other sites, each
// slowed by its own politeness: thousands of hosts wait at once, each a
// second or so. The dispatcher used to keep them in one list that every
// timer and every permit done walked whole, asking the throttle again for
// each host: CPU grew with the square of the hosts (qa8 S1: 3,000 hosts
// 5.3 CPU-s, 10,000 hosts 73). Now the hosts that wait for a time, and the
// tasks held back until theirs, are kept in order of when they are due,
// and a permit done wakes only the hosts it concerns (Throttle.Freed).

// dueHeap holds items by the time they are due, the soonest first.
type dueHeap[T any] struct {
	items []T
	// at is where an item keeps its time; it reads zero once released.
	at func(T) *time.Time
	// index, when set, tells an item where it is (-1: not held), so
	// that it can be taken out before its time.
	index func(T, int)
}

func (h *dueHeap[T]) Len() int           { return len(h.items) }
func (h *dueHeap[T]) Less(i, j int) bool { return h.at(h.items[i]).Before(*h.at(h.items[j])) }
func (h *dueHeap[T]) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	if h.index != nil {
		h.index(h.items[i], i)
		h.index(h.items[j], j)
	}
}
func (h *dueHeap[T]) Push(x any) {
	it := x.(T)
	if h.index != nil {
		h.index(it, len(h.items))
	}
	h.items = append(h.items, it)
}
func (h *dueHeap[T]) Pop() any {
	n := len(h.items) - 1
	it := h.items[n]
	var zero T
	h.items[n] = zero
	h.items = h.items[:n]
	if h.index != nil {
		h.index(it, -1)
	}
	return it
}

// add holds it until its time.
func (h *dueHeap[T]) add(it T) { heap.Push(h, it) }

// remove takes out the item at i (as index told it), before its time.
func (h *dueHeap[T]) remove(i int) T { return heap.Remove(h, i).(T) }

// next is when the soonest item is due; zero when none is held.
func (h *dueHeap[T]) next() time.Time {
	if len(h.items) == 0 {
		return time.Time{}
	}
	return *h.at(h.items[0])
}

// release hands release each item due by now, soonest first, with its
// time cleared.
func (h *dueHeap[T]) release(now time.Time, release func(T)) {
	for len(h.items) > 0 && !h.at(h.items[0]).After(now) {
		it := heap.Pop(h).(T)
		*h.at(it) = time.Time{}
		release(it)
	}
}
