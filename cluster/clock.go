package cluster

import (
	"context"
	"time"
)

// clock is the time a worker's lease keeper goes by: when a write was
// sent, when the next round is due, when the worker must give its shards
// up. A worker runs on the real one (realClock). The server's TTL is not
// on it: a lease lapses at the server in real time, so a test whose keeper
// runs on a clock it moves by hand gives its bucket a TTL that real time
// never reaches while the test runs.
type clock interface {
	now() time.Time
	// sleepUntil waits until t, or until ctx ends (false).
	sleepUntil(ctx context.Context, t time.Time) bool
	// withDeadline is context.WithDeadline, by this clock.
	withDeadline(ctx context.Context, t time.Time) (context.Context, context.CancelFunc)
}

type realClock struct{}

func (realClock) now() time.Time { return time.Now() }

func (realClock) sleepUntil(ctx context.Context, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

func (realClock) withDeadline(ctx context.Context, t time.Time) (context.Context, context.CancelFunc) {
	return context.WithDeadline(ctx, t)
}
