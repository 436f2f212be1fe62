package cluster

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/store"
)

// Termination is never early: one worker's outbox drainer is held while it
// and every other worker have nothing else to do, and the rest of the web
// is reachable only through that outbox. The coordinator must keep the
// pass running through several verdicts, and once the drainer is let go,
// the pass ends with every page.
func TestTerminationWaitsForHeldOutbox(t *testing.T) {
	t.Parallel()
	js := connect(t, startServer(t))
	wb := newWeb(12, 4)
	vlog := newVerdictLog()
	tick, taken := vlog.tick, vlog.taken
	c, merged, rec := coordinate(t, js, CoordinatorConfig{Poll: 20 * time.Millisecond, onVerdict: vlog.record}, wb.url(0, 0))

	release := make(chan struct{})
	held := Shard("site0.test")
	var nodes []*node
	var holder *node
	for i, shards := range wb.split(3) {
		cfg := WorkerConfig{Batch: 2}
		owns := false
		for _, s := range shards {
			owns = owns || s == held
		}
		if owns {
			cfg.beforeDrain = func(ctx context.Context) {
				select {
				case <-release:
				case <-ctx.Done():
				}
			}
		}
		n := startNode(t, js, wb, fmt.Sprintf("w%d", i+1), shards, rec, cfg)
		nodes = append(nodes, n)
		if owns {
			holder = n
		}
	}

	// Wait until the state is the one to prove: the holder's crawler is
	// idle with its outbox full, and every other worker reports idle.
	established := func() bool {
		holder.f.mu.Lock()
		idle := holder.f.crawlerIdle
		holder.f.mu.Unlock()
		if n, _ := holder.db.OutboxLen(); !idle || n == 0 {
			return false
		}
		statuses, err := Workers(context.Background(), js)
		if err != nil {
			t.Fatal(err)
		}
		others, acked := 0, false
		for _, st := range statuses {
			switch {
			case st.Pass != rec.Pass.ID:
			case st.Name == holder.name:
				// The seed's message is acked, and the holder says so:
				// nothing but the outbox keeps the pass going.
				acked = st.acked(held) > 0
			case st.Idle:
				others++
			}
		}
		return acked && others == len(nodes)-1
	}
	// Then ten verdicts taken after the state was seen must all keep the
	// pass running.
	timeout := time.After(60 * time.Second)
	mark := -1
	for {
		select {
		case <-tick:
		case <-timeout:
			t.Fatalf("the held state was never reached, or no verdicts came after it (mark %d)", mark)
		}
		vs := taken()
		for _, v := range vs {
			if v.Over {
				t.Fatalf("the pass ended with a worker's outbox held: %+v", v)
			}
		}
		if mark < 0 && established() {
			mark = len(taken())
		}
		if mark >= 0 && len(vs) >= mark+10 {
			for _, v := range vs[mark:] {
				t.Logf("verdict while held: %s", v.Why)
			}
			break
		}
	}
	if p, _ := merged.Pass(rec.Pass.ID); p.State != store.PassRunning {
		t.Fatalf("merged pass is %s while an outbox is held", p.State)
	}
	for _, n := range nodes {
		select {
		case <-n.f.Done():
			t.Fatalf("%s was told the pass is over", n.name)
		default:
		}
	}

	close(release)
	for _, n := range nodes {
		n.wait(t)
	}
	checkMerged(t, c, merged, rec, wb, nodes, 0)
}

// The rule's last clause: a worker that reported idle, and then took and
// acked a message it has not yet reported, leaves no trace but the
// consumer's delivered sequence beyond what it reported acked. Held right
// there, with every other worker idle and nothing in any stream, the pass
// must wait.
func TestTerminationWaitsForUnreportedAck(t *testing.T) {
	t.Parallel()
	js := connect(t, startServer(t))
	wb := newWeb(6, 1) // one page a site: each forward is one message
	vlog := newVerdictLog()
	tick, taken := vlog.tick, vlog.taken
	c, merged, rec := coordinate(t, js, CoordinatorConfig{Poll: 20 * time.Millisecond, onVerdict: vlog.record}, wb.url(0, 0))

	first := Shard("site0.test")
	var rest []int
	for _, s := range wb.split(1)[0] {
		if s != first {
			rest = append(rest, s)
		}
	}
	if Shard("site1.test") == first {
		t.Fatal("the test needs site1 in another shard than site0")
	}
	releaseA, releaseB, held := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var onceA, onceB, onceHeld sync.Once
	t.Cleanup(func() { onceA.Do(func() { close(releaseA) }); onceB.Do(func() { close(releaseB) }) })
	a := startNode(t, js, wb, "a", []int{first}, rec, WorkerConfig{beforeDrain: func(ctx context.Context) {
		select {
		case <-releaseA:
		case <-ctx.Done():
		}
	}})
	// b reports when something happens to it, never on a timer: the
	// report that says its progress every few seconds would say "busy"
	// (its database holds the held message's tasks) before the test looks,
	// and it is the stale idle report the pass must not end on.
	b := startNode(t, js, wb, "b", rest, rec, WorkerConfig{reportEvery: time.Hour, afterAck: func(ctx context.Context) {
		onceHeld.Do(func() { close(held) })
		select {
		case <-releaseB:
		case <-ctx.Done():
		}
	}})

	status := func(name string) WorkerStatus {
		statuses, err := Workers(context.Background(), js)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range statuses {
			if st.Name == name {
				return st
			}
		}
		return WorkerStatus{}
	}
	waitFor(t, tick, "b to report idle", func() bool {
		st := status("b")
		return st.Pass == rec.Pass.ID && st.Idle
	})
	onceA.Do(func() { close(releaseA) })
	stream, err := js.Stream(context.Background(), todoStream)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, tick, "b holding an acked message, a idle, the stream empty", func() bool {
		select {
		case <-held:
		default:
			return false
		}
		if st := status("a"); st.Pass != rec.Pass.ID || !st.Idle {
			return false
		}
		info, err := stream.Info(context.Background())
		return err == nil && info.State.Msgs == 0
	})
	if st := status("b"); !st.Idle {
		t.Fatalf("b's report is not the stale idle one the test needs: %+v", st)
	}
	mark := len(taken())
	waitFor(t, tick, "ten verdicts", func() bool {
		vs := taken()
		for _, v := range vs {
			if v.Over {
				t.Fatalf("the pass ended while a worker held an acked, unreported message: %+v", v)
			}
		}
		return len(vs) >= mark+10
	})
	for _, v := range taken()[mark:] {
		t.Logf("verdict while held: %s", v.Why)
	}
	onceB.Do(func() { close(releaseB) })
	for _, n := range []*node{a, b} {
		n.wait(t)
	}
	checkMerged(t, c, merged, rec, wb, []*node{a, b}, 0)
}

// verdictLog keeps every verdict the coordinator takes, in order; tick
// wakes a test waiting for the next one.
type verdictLog struct {
	mu       sync.Mutex
	verdicts []Verdict
	tick     chan struct{}
}

func newVerdictLog() *verdictLog { return &verdictLog{tick: make(chan struct{}, 1)} }

func (l *verdictLog) record(v Verdict) {
	l.mu.Lock()
	l.verdicts = append(l.verdicts, v)
	l.mu.Unlock()
	select {
	case l.tick <- struct{}{}:
	default:
	}
}

func (l *verdictLog) taken() []Verdict {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.verdicts)
}
