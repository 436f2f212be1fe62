package cluster

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

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
//
// Twelve hosts of four pages: 24 of eight made the test 4x costlier and
// reached no line of the package more (coverage of cluster and store,
// two runs of each).
func TestDistributedPass(t *testing.T) {
	t.Parallel()
	js := connect(t, startServer(t))
	wb := newWeb(12, 4)
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

// Workers owning ranges of shards, as in a real cluster, make consumers
// only for shards that get tasks through the stream, and those tasks
// reach them: with the frontier's look into the stream an hour apart,
// through the doorbells alone for each shard whose first task came after
// its worker joined.
func TestConsumersOnlyForShardsInUse(t *testing.T) {
	t.Parallel()
	js := connect(t, startServer(t))
	wb := newWeb(6, 4)
	c, merged, rec := coordinate(t, js, CoordinatorConfig{}, wb.url(0, 0))
	var nodes []*node
	for i, r := range []string{"0-127", "128-255"} {
		shards, _ := ParseShards(r)
		nodes = append(nodes, startNode(t, js, wb, fmt.Sprint("w", i+1), shards, rec, WorkerConfig{Batch: 3, lookEvery: time.Hour}))
	}
	for _, n := range nodes {
		n.wait(t)
	}
	checkMerged(t, c, merged, rec, wb, nodes, 0)
	// A worker's own links to its own shards never pass through the
	// stream: the shards that get a consumer are those of the seed and
	// of links that crossed between the workers, a few of the web's.
	inUse := map[string]bool{}
	for h := range wb.hosts {
		inUse[todoConsumer(Shard(fmt.Sprintf("site%d.test", h)))] = true
	}
	stream, err := js.Stream(context.Background(), todoStream)
	if err != nil {
		t.Fatal(err)
	}
	names := stream.ConsumerNames(context.Background())
	var got []string
	for name := range names.Name() {
		got = append(got, name)
	}
	if err := names.Err(); err != nil {
		t.Fatal(err)
	}
	var other []string
	for _, n := range got {
		if !inUse[n] {
			other = append(other, n)
		}
	}
	if len(got) == 0 || len(other) > 0 {
		t.Errorf("%d shard consumers, %d of them of shards no host is in (%.40q); want some of those of the %d shards in use, and no other of the 256 owned", len(got), len(other), other, len(inUse))
	}
}
