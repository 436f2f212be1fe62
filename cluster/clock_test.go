package cluster

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// testClock is a clock that moves only when the test moves it: a lease
// keeper on it runs a renewal round when the test says a third of the TTL
// passed, not when it did. Give its worker's bucket a TTL real time does
// not reach in the test (the server lapses leases in real time).
type testClock struct {
	mu       sync.Mutex
	t        time.Time
	waiters  []*clockWaiter
	sleeping chan struct{} // closed, and made again, when a sleepUntil begins
}

type clockWaiter struct {
	at    time.Time
	sleep bool // a sleepUntil, not a deadline
	fire  func()
}

func newTestClock() *testClock {
	return &testClock{t: time.Now(), sleeping: make(chan struct{})}
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// add registers w, or fires it at once when its time has come.
func (c *testClock) add(w *clockWaiter) {
	c.mu.Lock()
	if !c.t.Before(w.at) {
		c.mu.Unlock()
		w.fire()
		return
	}
	c.waiters = append(c.waiters, w)
	if w.sleep {
		close(c.sleeping)
		c.sleeping = make(chan struct{})
	}
	c.mu.Unlock()
}

func (c *testClock) remove(w *clockWaiter) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waiters = slices.DeleteFunc(c.waiters, func(x *clockWaiter) bool { return x == w })
}

func (c *testClock) sleepUntil(ctx context.Context, t time.Time) bool {
	ch := make(chan struct{})
	w := &clockWaiter{at: t, sleep: true, fire: func() { close(ch) }}
	c.add(w)
	select {
	case <-ctx.Done():
		c.remove(w)
		return false
	case <-ch:
		return true
	}
}

func (c *testClock) withDeadline(ctx context.Context, t time.Time) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	w := &clockWaiter{at: t, fire: func() { cancel(context.DeadlineExceeded) }}
	c.add(w)
	return ctx, func() { c.remove(w); cancel(context.Canceled) }
}

// advance moves the clock d forward and fires what came due.
func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	var due []*clockWaiter
	c.waiters = slices.DeleteFunc(c.waiters, func(w *clockWaiter) bool {
		if !c.t.Before(w.at) {
			due = append(due, w)
			return true
		}
		return false
	})
	c.mu.Unlock()
	for _, w := range due {
		w.fire()
	}
}

// sleeper returns the earliest time a sleepUntil waits for, once one
// waits; ok is false if stop closed first.
func (c *testClock) sleeper(stop <-chan struct{}) (at time.Time, ok bool) {
	for {
		c.mu.Lock()
		found := false
		for _, w := range c.waiters {
			if w.sleep && (!found || w.at.Before(at)) {
				at, found = w.at, true
			}
		}
		sleeping := c.sleeping
		c.mu.Unlock()
		if found {
			return at, true
		}
		select {
		case <-sleeping:
		case <-stop:
			return time.Time{}, false
		}
	}
}

// round moves the clock to the next round of the keeper on it, once it
// waits for it.
func (c *testClock) round() {
	at, _ := c.sleeper(nil)
	c.advance(at.Sub(c.now()))
}

// autoRounds moves the clock to each round of the keepers on it as soon
// as they wait for it, so that rounds come one after another, until the
// returned stop is called (at the latest when the test ends).
func (c *testClock) autoRounds(t *testing.T) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			at, ok := c.sleeper(done)
			if !ok {
				return
			}
			c.advance(at.Sub(c.now()))
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { close(done); <-finished }) }
	t.Cleanup(stop)
	return stop
}
