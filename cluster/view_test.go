package cluster

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// While a worker is busy, the coordinator's looks at the termination rule
// (every Poll, and at each change) read the state bucket from its view,
// not from the server: one watch for the whole pass. Before, each look
// was a watch of the workers' reports, a Get of the pass record, two more
// for a resumed pass's floor and a watch of the Joined records per busy
// worker, five times a second.
func TestLooksAtABusyPassAskTheServerNothing(t *testing.T) {
	t.Parallel()
	js := connect(t, startServer(t))
	wb := newWeb(6, 2)
	vlog := newVerdictLog()
	merged := openDB(t, "merged.db", false)
	var kv *countingKV
	c, _ := runCoordinatorOn(t, js, merged, CoordinatorConfig{Poll: 20 * time.Millisecond, onVerdict: vlog.record}, Options{LeaseTTL: leaseTTL},
		func(c *Coordinator) { kv = &countingKV{bucket: c.b.state}; c.b.state = kv })
	rec, err := c.Begin(context.Background(), BeginRequest{Pass: mergedPass(wb), Seeds: seedsOf(wb)})
	if err != nil {
		t.Fatal(err)
	}
	// One worker, whose outbox is held: it stays busy.
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	startNode(t, js, wb, "w1", wb.split(1)[0], rec, WorkerConfig{beforeDrain: func(ctx context.Context) {
		select {
		case <-release:
		case <-ctx.Done():
		}
	}})
	busy := func() bool {
		vs := vlog.taken()
		return len(vs) > 0 && strings.Contains(vs[len(vs)-1].Why, "is busy")
	}
	waitFor(t, vlog.tick, "a verdict saying w1 is busy", busy)
	watches, gets := kv.watches.Load(), kv.gets.Load()
	mark := len(vlog.taken())
	waitFor(t, vlog.tick, "ten more verdicts", func() bool { return len(vlog.taken()) >= mark+10 })
	if !busy() {
		t.Fatalf("the pass is not busy any more: %+v", vlog.taken()[len(vlog.taken())-1])
	}
	if w, g := kv.watches.Load()-watches, kv.gets.Load()-gets; w != 0 || g != 0 {
		t.Errorf("ten looks at a busy pass made %d watches and %d reads of the state bucket, want none", w, g)
	}
}

// countingKV counts the reads of a bucket that go to the server, and its
// deletes.
type countingKV struct {
	bucket
	watches, gets, deletes atomic.Int64
}

func (k *countingKV) Delete(ctx context.Context, key string, opts ...jetstream.KVDeleteOpt) error {
	k.deletes.Add(1)
	return k.bucket.Delete(ctx, key, opts...)
}

func (k *countingKV) Watch(ctx context.Context, keys string, opts ...jetstream.WatchOpt) (jetstream.KeyWatcher, error) {
	k.watches.Add(1)
	return k.bucket.Watch(ctx, keys, opts...)
}

func (k *countingKV) Get(ctx context.Context, key string) (jetstream.KeyValueEntry, error) {
	k.gets.Add(1)
	return k.bucket.Get(ctx, key)
}

// keysAt is the inner bucket's, so that the coordinator may keep its
// lease reads (leaseCache) through a countingKV.
func (k *countingKV) keysAt(ctx context.Context, filter string) (map[string]bool, uint64, error) {
	return k.bucket.(keysAtReader).keysAt(ctx, filter)
}

// The rule reads every lease again only when the lease bucket changed: a
// lease written, deleted, or gone without a marker, as one that lapsed
// (the server removes it). Until then a look at the rule asks for the
// keys alone; before, each look while every worker was idle was a watch
// of every lease.
func TestRuleReadsTheLeasesAgainOnlyWhenTheyChange(t *testing.T) {
	t.Parallel()
	js := connect(t, startServer(t))
	wb := newWeb(1, 1)
	var kv *countingKV
	c, _ := runCoordinatorOn(t, js, openDB(t, "merged.db", false), CoordinatorConfig{Poll: time.Hour}, Options{LeaseTTL: leaseTTL},
		func(c *Coordinator) { kv = &countingKV{bucket: c.b.leases}; c.b.leases = kv })
	ctx := context.Background()
	rec, err := c.Begin(ctx, BeginRequest{Pass: mergedPass(wb), Seeds: seedsOf(wb)})
	if err != nil {
		t.Fatal(err)
	}
	// Nobody reported for the pass: a holder is named, else the seed's
	// message waits.
	holder := func(want string) {
		t.Helper()
		v, err := c.Verdict(ctx, rec.Pass.ID)
		if err != nil {
			t.Fatal(err)
		}
		named := strings.HasPrefix(v.Why, "worker "+want+" (holding shard 5)")
		if want == "" {
			named = strings.Contains(v.Why, "messages waiting")
		}
		if !named {
			t.Fatalf("verdict %q; want it to name holder %q", v.Why, want)
		}
	}
	put := func(name string) {
		t.Helper()
		if _, err := kv.Put(ctx, leaseKey(5), []byte(name+"@token@db")); err != nil {
			t.Fatal(err)
		}
	}
	put("ghost")
	holder("ghost")
	watches := kv.watches.Load()
	holder("ghost")
	holder("ghost")
	if w := kv.watches.Load() - watches; w != 0 {
		t.Errorf("two looks at unchanged leases made %d watches of them, want none", w)
	}
	put("other")
	holder("other")
	if err := kv.Delete(ctx, leaseKey(5)); err != nil {
		t.Fatal(err)
	}
	holder("")
	put("ghost")
	holder("ghost")
	// Gone as a lapsed lease goes: no marker, the stream's last sequence
	// where it was.
	s, err := js.Stream(ctx, "KV_"+leaseBucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Purge(ctx, jetstream.WithPurgeSubject("$KV."+leaseBucket+"."+leaseKey(5))); err != nil {
		t.Fatal(err)
	}
	holder("")
}
