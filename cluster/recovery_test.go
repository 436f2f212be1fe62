package cluster

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// ticks returns a coordinator config whose verdicts wake the test, so it
// can wait on a condition without sleeping.
func ticks(t *testing.T) (CoordinatorConfig, <-chan struct{}) {
	tick := make(chan struct{}, 1)
	var last string
	return CoordinatorConfig{Poll: 20 * time.Millisecond, onVerdict: func(v Verdict) {
		if v.Why != last {
			last = v.Why
			t.Logf("verdict: %+v", v)
		}
		select {
		case tick <- struct{}{}:
		default:
		}
	}}, tick
}

func waitFor(t *testing.T, tick <-chan struct{}, what string, cond func() bool) {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for !cond() {
		select {
		case <-tick:
		case <-timeout:
			t.Fatalf("waiting for %s: timed out", what)
		}
	}
}

// A worker killed mid-pass with entries in its outbox, and restarted on
// its own file, takes its leases back at once, publishes what its outbox
// held and finishes its part: the pass loses nothing.
func TestWorkerKilledAndRestarted(t *testing.T) {
	t.Parallel()
	js := connect(t, startServer(t))
	wb := newWeb(12, 5)
	cfg, tick := ticks(t)
	c, merged, rec := coordinate(t, js, cfg, wb.url(0, 0))

	victimShard := Shard("site0.test")
	hold := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(hold) }) }
	t.Cleanup(release)
	var nodes []*node
	var victim *node
	var victimShards []int
	victimPath := filepath.Join(t.TempDir(), "victim.db")
	for i, shards := range wb.split(3) {
		name := "w" + string(rune('1'+i))
		owns := false
		for _, s := range shards {
			owns = owns || s == victimShard
		}
		if !owns {
			nodes = append(nodes, startNode(t, js, wb, name, shards, rec, WorkerConfig{Batch: 2}))
			continue
		}
		victimShards = shards
		victim = restartNode(t, js, wb, name, victimPath, shards, rec, WorkerConfig{Batch: 2,
			beforeDrain: func(ctx context.Context) {
				select {
				case <-hold:
				case <-ctx.Done():
				}
			}})
	}
	waitFor(t, tick, "the victim's outbox to fill", func() bool {
		n, _ := victim.db.OutboxLen()
		return n >= 2
	})
	victim.kill()

	restarted := restartNode(t, js, wb, victim.name, victimPath, victimShards, rec, WorkerConfig{Batch: 2})
	nodes = append(nodes, restarted)
	for _, n := range nodes {
		n.wait(t)
	}
	// The sim crawler commits each batch of up to 7 fetches before its
	// next: a kill repeats at most one batch.
	checkMerged(t, c, merged, rec, wb, nodes, 7)
}

// The coordinator stopped mid-pass and started again on the same merged
// database and server writes the results that waited for it and ends the
// pass as if nothing happened.
func TestCoordinatorRestarted(t *testing.T) {
	t.Parallel()
	js := connect(t, startServer(t))
	wb := newWeb(12, 5)
	merged := openDB(t, "merged.db", false)
	cfg, tick := ticks(t)
	c, stop := runCoordinator(t, js, merged, cfg)
	rec, err := c.Begin(context.Background(), BeginRequest{Pass: mergedPass(wb), Seeds: seedsOf(wb)})
	if err != nil {
		t.Fatal(err)
	}
	var nodes []*node
	for i, shards := range wb.split(3) {
		nodes = append(nodes, startNode(t, js, wb, "w"+string(rune('1'+i)), shards, rec, WorkerConfig{Batch: 2}))
	}
	waitFor(t, tick, "some results in the merged database", func() bool {
		return len(resolvedIn(t, merged, rec.Pass.ID)) > 0
	})
	stop()

	cfg2, _ := ticks(t)
	c2, _ := runCoordinator(t, js, merged, cfg2)
	for _, n := range nodes {
		n.wait(t)
	}
	checkMerged(t, c2, merged, rec, wb, nodes, 0)
	// Begin again with the same settings gives the record of the pass,
	// ended, not a new pass.
	again, err := c2.Begin(context.Background(), BeginRequest{Pass: mergedPass(wb), Seeds: seedsOf(wb)})
	if err != nil || again.Pass.ID != rec.Pass.ID+1 {
		t.Errorf("Begin after the pass ended = pass %d, %v; want a new pass %d", again.Pass.ID, err, rec.Pass.ID+1)
	}
}

// What a killed worker was delivered and never acked reaches the worker
// restarted on its shards at once, not AckWait later: with AckWait an
// hour long, the pass completes only because the restarted worker has the
// unacked message delivered again when it joins.
func TestRestartedWorkerGetsUnackedTasksAtOnce(t *testing.T) {
	t.Parallel()
	js := connect(t, startServer(t))
	wb := newWeb(12, 5)
	cfg, _ := ticks(t)
	c, merged, rec := coordinate(t, js, cfg, wb.url(0, 0))

	victimShard := Shard("site0.test") // its seed is the first message
	held := make(chan struct{})
	var once sync.Once
	var nodes []*node
	var victim *node
	var victimShards []int
	victimPath := filepath.Join(t.TempDir(), "victim.db")
	for i, shards := range wb.split(3) {
		name := "w" + string(rune('1'+i))
		if !slices.Contains(shards, victimShard) {
			nodes = append(nodes, startNode(t, js, wb, name, shards, rec, WorkerConfig{Batch: 2, ackWait: time.Hour}))
			continue
		}
		victimShards = shards
		victim = restartNode(t, js, wb, name, victimPath, shards, rec, WorkerConfig{Batch: 2, ackWait: time.Hour,
			beforeCommit: func(ctx context.Context, _ int) {
				once.Do(func() { close(held) })
				<-ctx.Done() // never commits nor acks: killed first
			}})
	}
	select {
	case <-held:
	case <-time.After(60 * time.Second):
		t.Fatal("the victim was delivered nothing")
	}
	victim.kill()
	info, err := js.Consumer(context.Background(), todoStream, todoConsumer(victimShard))
	if err != nil {
		t.Fatal(err)
	}
	if n := info.CachedInfo().NumAckPending; n == 0 {
		t.Fatal("the killed worker left no message unacked: the test proves nothing")
	}

	restarted := restartNode(t, js, wb, victim.name, victimPath, victimShards, rec, WorkerConfig{Batch: 2, ackWait: time.Hour})
	nodes = append(nodes, restarted)
	for _, n := range nodes {
		n.wait(t)
	}
	checkMerged(t, c, merged, rec, wb, nodes, 0)
}
