package cluster

import (
	"context"
	"slices"
	"testing"

	"github.com/linkpatrol/linkpatrol/store"
)

// resolvedIn lists the URLs a database resolved in the pass.
func resolvedIn(t testing.TB, db *store.DB, pass uint64) []string {
	t.Helper()
	var out []string
	if err := db.ResolvedIn(pass, func(u string) error { out = append(out, u); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkMerged checks that the merged database holds every page of the web,
// each fetched once but for at most repeats, and that nothing is left
// anywhere.
func checkMerged(t *testing.T, c *Coordinator, merged *store.DB, rec PassRecord, wb *web, nodes []*node, repeats int) {
	t.Helper()
	want := wb.all()
	slices.Sort(want)
	if got := resolvedIn(t, merged, rec.Pass.ID); !slices.Equal(got, want) {
		t.Errorf("merged database resolved %d URLs, want %d:\n got %q\nwant %q", len(got), len(want), got, want)
	}
	if r := wb.repeated(); len(r) > repeats {
		t.Errorf("URLs fetched more than once: %q (at most %d may be)", r, repeats)
	}
	p, err := merged.Pass(rec.Pass.ID)
	if err != nil || p.State != store.PassComplete {
		t.Errorf("merged pass = %+v, %v; want complete", p, err)
	}
	links, err := merged.Links(wb.url(0, 0))
	if err != nil || len(links) != 2 {
		t.Errorf("merged links of the home page = %+v, %v", links, err)
	}
	for _, n := range nodes {
		if l, err := n.db.OutboxLen(); l != 0 || err != nil {
			t.Errorf("%s: %d outbox entries left, %v", n.name, l, err)
		}
	}
	v, err := c.Verdict(context.Background(), rec.Pass.ID)
	if err != nil || !v.Over {
		t.Errorf("after the pass, Verdict = %+v, %v", v, err)
	}
}

// A pass over three workers reaches every page, though each host's pages
// are found by another shard's owner, and the merged database holds them
// all, each fetched once.
func TestDistributedPass(t *testing.T) {
	t.Parallel()
	js := connect(t, startServer(t))
	wb := newWeb(24, 8)
	c, merged, rec := coordinate(t, js, CoordinatorConfig{}, wb.url(0, 0))
	var nodes []*node
	for i, shards := range wb.split(3) {
		nodes = append(nodes, startNode(t, js, wb, "w"+string(rune('1'+i)), shards, rec, WorkerConfig{Batch: 3}))
	}
	for _, n := range nodes {
		n.wait(t)
		if got := n.f.Ended(); got != store.PassComplete {
			t.Errorf("%s: pass ended %q", n.name, got)
		}
	}
	checkMerged(t, c, merged, rec, wb, nodes, 0)
}
