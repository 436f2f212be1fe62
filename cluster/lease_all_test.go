package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A worker renews the leases of its shards all at once (updateAll), each
// over its own revision: every one of a worker's 256 leases is written
// again round after round, and one that another process wrote meanwhile
// is known lost, the worker's Context ending with the shard named.
//
// The keeper runs on a test clock, which the test moves to each round:
// the rounds are what is tested, not their spacing. On a TTL of 3 s
// the test waited two real rounds and read all 256 leases every 100 ms
// meanwhile, which made it one of the package's costliest.
func TestRenewalsAllAtOnce(t *testing.T) {
	t.Parallel()
	_, js := leaseSetup(t, time.Hour)
	clk := newTestClock()
	w, err := newWorkerWith(t, js, "0-255", WorkerConfig{Name: "w1", DB: openDB(t, "w1.db", true), clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	b, err := openBuckets(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	first, err := leaseEntries(ctx, b.leases)
	if err != nil {
		t.Fatal(err)
	}
	// round moves the clock to the keeper's next round, once it waits for
	// it; with done set it then waits for the keeper to wait again, the
	// round over. A keeper that never waits (its next round due at once,
	// round after round) fails the test when ctx ends.
	stop, cancelStop := context.WithCancel(ctx)
	defer cancelStop()
	context.AfterFunc(w.Context(), cancelStop)
	waiting := func() time.Time {
		t.Helper()
		at, ok := clk.sleeper(stop.Done())
		switch {
		case ok:
		case w.Context().Err() != nil:
			t.Fatalf("the worker gave its shards up: %v", context.Cause(w.Context()))
		default:
			t.Fatal("the keeper did not wait for its next round")
		}
		return at
	}
	round := func(done bool) {
		t.Helper()
		clk.advance(waiting().Sub(clk.now()))
		if done {
			waiting()
		}
	}
	// Two rounds: each lease's revision moves on twice.
	for r := 1; r <= 2; r++ {
		round(true)
		now, err := leaseEntries(ctx, b.leases)
		if err != nil {
			t.Fatal(err)
		}
		var missed []int
		for s := range Shards {
			if now[s] == nil || first[s] == nil || now[s].Revision() <= first[s].Revision() || string(now[s].Value()) != string(w.leases.value) {
				missed = append(missed, s)
			}
		}
		if len(missed) > 0 {
			t.Fatalf("round %d did not renew the leases of shards %s", r, FormatShards(missed))
		}
		first = now
	}
	// Another process's write to shard 7: the next round finds it.
	if _, err := b.leases.Update(ctx, leaseKey(7), []byte("w2@other@db"), first[7].Revision()); err != nil {
		t.Fatal(err)
	}
	round(false)
	select {
	case <-w.Context().Done():
	case <-ctx.Done():
		t.Fatal("the worker kept shard 7 after another process wrote its lease")
	}
	var lost *lostError
	if cause := context.Cause(w.Context()); !errors.As(cause, &lost) || lost.shard != 7 || !errors.Is(lost.cause, jetstream.ErrKeyRevisionMismatch) {
		t.Errorf("the worker stopped with %v; want shard 7's lease lost", cause)
	}
}
