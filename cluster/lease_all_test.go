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
func TestRenewalsAllAtOnce(t *testing.T) {
	t.Parallel()
	_, js := leaseSetup(t, 3*time.Second)
	w, err := newWorker(t, js, "w1", "0-255")
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
	// Two rounds: each lease's revision moves on twice.
	for round := 0; round < 2; {
		select {
		case <-ctx.Done():
			t.Fatalf("round %d: not every lease renewed: %v", round+1, ctx.Err())
		case <-w.Context().Done():
			t.Fatalf("the worker gave its shards up: %v", context.Cause(w.Context()))
		case <-time.After(100 * time.Millisecond): // polling the server's leases
		}
		now, err := leaseEntries(ctx, b.leases)
		if err != nil {
			t.Fatal(err)
		}
		renewed := 0
		for s := range Shards {
			if now[s] != nil && first[s] != nil && now[s].Revision() > first[s].Revision() && string(now[s].Value()) == string(w.leases.value) {
				renewed++
			}
		}
		if renewed == Shards {
			first, round = now, round+1
		}
	}
	// Another process's write to shard 7: the next round finds it.
	if _, err := b.leases.Update(ctx, leaseKey(7), []byte("w2@other@db"), first[7].Revision()); err != nil {
		t.Fatal(err)
	}
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
