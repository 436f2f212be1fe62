package cluster

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/linkpatrol/linkpatrol/crawler/crawltest"
	"github.com/linkpatrol/linkpatrol/store"
)

// qa4 F0, reproduction B: a worker stopped mid-pass whose file is then
// lost, started again under its name on a fresh database. The fresh file
// lacks what the first one held queued (here: the outbox entries it never
// published), nothing in the cluster holds it any more, and the pass must
// not end complete: it ends stopped, saying which databases worked the
// shards and that a new pass is needed.
func TestFreshDatabaseMidPassLeavesThePassUnfinished(t *testing.T) {
	t.Parallel()
	var subs []crawltest.Subtest
	// Under the same name the fresh worker's reports replace the old
	// one's; under another, the old one's last "busy" stays, and the pass
	// must not wait for it for ever (qa5 N19).
	for _, tc := range []struct {
		name      string
		freshName func(old string) string
	}{
		{"same name", func(old string) string { return old }},
		{"another name", func(string) string { return "w9" }},
	} {
		subs = append(subs, crawltest.Subtest{Name: tc.name, F: func(t *testing.T) {
			freshName := tc.freshName
			js := connect(t, startServer(t))
			wb := newWeb(12, 5)
			cfg, tick := ticks(t)
			_, merged, rec := coordinate(t, js, cfg, wb.url(0, 0))

			victimShard := Shard("site0.test") // its seed is the first task
			hold := make(chan struct{})
			var once sync.Once
			release := func() { once.Do(func() { close(hold) }) }
			t.Cleanup(release)
			var nodes []*node
			var victim *node
			var victimShards []int
			for i, shards := range wb.split(2) {
				name := "w" + string(rune('1'+i))
				if !slices.Contains(shards, victimShard) {
					nodes = append(nodes, startNode(t, js, wb, name, shards, rec, WorkerConfig{Batch: 2}))
					continue
				}
				victimShards = shards
				victim = startNode(t, js, wb, name, shards, rec, WorkerConfig{Batch: 2,
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
			lost := victim.w.dbID
			victim.stop()

			fresh := startNode(t, js, wb, freshName(victim.name), victimShards, rec, WorkerConfig{Batch: 2})
			nodes = append(nodes, fresh)
			for _, n := range nodes {
				n.wait(t)
			}
			if got := len(resolvedIn(t, merged, rec.Pass.ID)); got == len(wb.all()) {
				t.Fatalf("every URL was checked: the test proves nothing")
			}
			p, err := merged.Pass(rec.Pass.ID)
			if err != nil {
				t.Fatal(err)
			}
			if p.State != store.PassStopped {
				t.Fatalf("the merged pass ended %s with URLs lost in %s's first database; want stopped", p.State, victim.name)
			}
			for _, want := range []string{lost, fresh.w.dbID, "--new-pass", "worker " + victim.name} {
				if !strings.Contains(p.Unfinished, want) {
					t.Errorf("the pass says %q; want it to name %q", p.Unfinished, want)
				}
			}
			cur, _, err := CurrentPass(context.Background(), js)
			if err != nil || cur.Pass.State != store.PassStopped || cur.Pass.Unfinished != p.Unfinished {
				t.Errorf("the pass record: %+v, %v; want it stopped as the merged database says", cur.Pass, err)
			}
			// The same command again ends the same way at once, never
			// resumed into a pass that forgot what it lost.
			again, err := Begin(context.Background(), js.Conn(), BeginRequest{Pass: cur.Pass, Config: cur.Config, MaxRedirects: cur.MaxRedirects})
			if err != nil || again.Pass.State != store.PassStopped || again.Pass.Unfinished != p.Unfinished {
				t.Errorf("begun again: %+v, %v; want the same stopped pass, saying what was lost", again.Pass, err)
			}
		}})
	}
	crawltest.AtOnce(t, subs...)
}
