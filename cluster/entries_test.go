package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A watch whose initial values lapsed at the server before they were
// delivered (leases have a TTL) never delivers them: entries makes the
// watch again, and the new one finds the keys as they are then. Before,
// entries waited on the first one for good, and a worker waiting for a
// twin's leases to lapse hung (seen under load in
// TestLeasesOfAKilledWorkerLapseForAnotherDatabase).
func TestEntriesOfAWatchThatNeverEnds(t *testing.T) {
	t.Parallel()
	kv := &silentFirstWatch{}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	es, err := entries(ctx, kv, leaseKeys)
	if err != nil || len(es) != 0 {
		t.Fatalf("entries = %d entries, %v; want none and no error", len(es), err)
	}
	if kv.reads != 2 || kv.watches != 1 {
		t.Errorf("%d reads of the keys and %d watches, want 2 and 1: the silent watch, then the keys read again", kv.reads, kv.watches)
	}
}

// silentFirstWatch is a bucket that holds one lease until its first watch,
// which delivers nothing, not even the end of its initial values, as a
// watch whose values all lapsed; after, the bucket is empty.
type silentFirstWatch struct {
	bucket
	reads, watches int
}

func (k *silentFirstWatch) keysNow(context.Context, string) (map[string]bool, error) {
	k.reads++
	if k.watches == 0 {
		return map[string]bool{leaseKey(1): true}, nil
	}
	return map[string]bool{}, nil
}

func (k *silentFirstWatch) Watch(context.Context, string, ...jetstream.WatchOpt) (jetstream.KeyWatcher, error) {
	k.watches++
	return &fakeWatcher{updates: make(chan jetstream.KeyValueEntry, 1)}, nil
}

type fakeWatcher struct{ updates chan jetstream.KeyValueEntry }

func (w *fakeWatcher) Updates() <-chan jetstream.KeyValueEntry { return w.updates }
func (w *fakeWatcher) Stop() error                             { return nil }

// A worker waiting for a twin's leases to lapse reads those leases, not
// every lease: a watch of every lease misses its end whenever one lapses
// during it (above), and waiting out such a watch, again and again, is
// what it did before. Here every watch of the whole bucket stays silent;
// the twin's lease lapses after its TTL, and the wait ends.
func TestTwinWaitReadsOnlyTheTwinsLeases(t *testing.T) {
	t.Parallel()
	_, js := leaseSetup(t, time.Second)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	b, err := openBuckets(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	twin := identity{name: "w1", token: "twin", db: "elsewhere"}
	rev, err := b.leases.Create(ctx, leaseKey(3), leaseValue(twin))
	if err != nil {
		t.Fatal(err)
	}
	l := &leases{kv: &silentWatches{bucket: b.leases}, id: identity{name: "w1", token: "me", db: "here"}, ttl: time.Second, clock: realClock{},
		owner: func(context.Context) (*Owner, error) { return nil, nil }}
	if err := l.await(ctx, map[int]uint64{3: rev}, t.Logf); err != nil {
		t.Fatalf("waiting for the twin's lease to lapse: %v", err)
	}
}

// silentWatches is a bucket every watch of which (Watch, of a whole key
// range) delivers nothing, not even the end of its initial values.
type silentWatches struct{ bucket }

func (k *silentWatches) Watch(context.Context, string, ...jetstream.WatchOpt) (jetstream.KeyWatcher, error) {
	return &fakeWatcher{updates: make(chan jetstream.KeyValueEntry)}, nil
}
