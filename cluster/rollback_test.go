package cluster

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/linkpatrol/linkpatrol/crawler/crawltest"
	"github.com/linkpatrol/linkpatrol/store"
)

// qa5 N16: a worker killed mid-pass and started again on a backup of its
// file, taken earlier in the pass or before it. The backup has the worker's database
// ID, so it is not a second database (TestFreshDatabaseMidPass...), but it
// lacks the tasks of every message the worker acked since: the stream
// holds them no more, and before, the pass ended complete without them.
// The file notes each message with its tasks, and the worker reports what
// it holds; started again holding less than it reported, it is an older
// copy, and the pass ends unfinished, naming it. Started again on its own
// file, the same worker ends the pass complete, with every URL.
func TestRestoredBackupMidPassLeavesThePassUnfinished(t *testing.T) {
	t.Parallel()
	const (
		none = iota
		beforeThePass
		midPass
	)
	var subs []crawltest.Subtest
	for _, tc := range []struct {
		name    string
		restore int // which backup
	}{
		{"restored from a backup taken mid-pass", midPass},
		{"restored from a backup taken before the pass", beforeThePass},
		{"started again on its own file", none},
	} {
		subs = append(subs, crawltest.Subtest{Name: tc.name, F: func(t *testing.T) {
			js := connect(t, startServer(t))
			wb := newWeb(12, 5)
			cfg, tick := ticks(t)
			c, merged, rec := coordinate(t, js, cfg, wb.url(0, 0))

			// The victim owns the seed's shard; the other worker's
			// drainer is held until the backup is taken, so that what it
			// forwards to the victim comes after.
			var victimShards, otherShards []int
			for _, shards := range wb.split(2) {
				if slices.Contains(shards, Shard("site0.test")) {
					victimShards = shards
				} else {
					otherShards = shards
				}
			}
			otherHold, releaseOther := gate(t)
			other := startNode(t, js, wb, "w1", otherShards, rec, WorkerConfig{Batch: 2, beforeDrain: otherHold})
			path := filepath.Join(t.TempDir(), "w2.db")
			backups := map[int]string{}
			if tc.restore == beforeThePass {
				// The nightly copy of a worker that ran before.
				db, err := store.Open(path, store.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := db.ID(); err != nil {
					t.Fatal(err)
				}
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
				backups[beforeThePass] = copyFile(t, path, "")
			}
			victim := restartNode(t, js, wb, "w2", path, victimShards, rec, WorkerConfig{Batch: 2})
			waitFor(t, tick, "w2 to report the seed's message held, and w1 to hold tasks for w2", func() bool {
				return len(reportedHeld(t, js, "w2")) > 0 && outboxHasTasksFor(t, other.db, victimShards)
			})
			victim.kill()
			backups[midPass] = copyFile(t, path, "")
			backup := backups[midPass]
			if tc.restore == beforeThePass {
				backup = backups[beforeThePass]
			}
			held := heldIn(t, backup, rec.Pass.ID)

			// Started again on its file, its outbox held so that the pass
			// cannot end, it takes the other worker's forwards.
			victimHold, releaseVictim := gate(t)
			victim = restartNode(t, js, wb, "w2", path, victimShards, rec, WorkerConfig{Batch: 2, beforeDrain: victimHold})
			releaseOther()
			waitFor(t, tick, "w2 to report messages "+filepath.Base(backup)+" lacks", func() bool {
				for shard, seq := range reportedHeld(t, js, "w2") {
					if seq > held[shard] {
						return true
					}
				}
				return false
			})
			victim.kill()
			releaseVictim()
			if tc.restore != none {
				copyFile(t, backups[tc.restore], path)
			}
			victim = restartNode(t, js, wb, "w2", path, victimShards, rec, WorkerConfig{Batch: 2})
			for _, n := range []*node{other, victim} {
				n.wait(t)
			}

			p, err := merged.Pass(rec.Pass.ID)
			if err != nil {
				t.Fatal(err)
			}
			if tc.restore == none {
				if p.Unfinished != "" {
					t.Errorf("the pass says %q; want nothing unfinished", p.Unfinished)
				}
				// Each kill may cost the fetches of one commit (simCrawler's 7).
				checkMerged(t, c, merged, rec, wb, []*node{other, victim}, 2*7)
				return
			}
			if p.State != store.PassStopped {
				t.Fatalf("the merged pass ended %s with w2 on an older copy of its file; want stopped", p.State)
			}
			for _, want := range []string{"older copy", "worker w2's " + victim.w.dbID, path, "--new-pass"} {
				if !strings.Contains(p.Unfinished, want) {
					t.Errorf("the pass says %q; want it to name %q", p.Unfinished, want)
				}
			}
			cur, _, err := CurrentPass(context.Background(), js)
			if err != nil || cur.Pass.State != store.PassStopped || cur.Pass.Unfinished != p.Unfinished {
				t.Errorf("the pass record: %+v, %v; want it stopped as the merged database says", cur.Pass, err)
			}
		}})
	}
	crawltest.AtOnce(t, subs...)
}

// reportedHeld is what worker name last reported its file holds of the
// pass (WorkerStatus.Received).
func reportedHeld(t *testing.T, js jetstream.JetStream, name string) map[string]uint64 {
	t.Helper()
	sts, err := Workers(context.Background(), js)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range sts {
		if st.Name == name {
			return st.Received
		}
	}
	return nil
}

// heldIn is what the database file at path holds of pass, by shard, as a
// worker reports it (WorkerStatus.Received).
func heldIn(t *testing.T, path string, pass uint64) map[string]uint64 {
	t.Helper()
	db, err := store.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	held, err := heldMessages(db, pass)
	if err != nil {
		t.Fatal(err)
	}
	return held
}

// gate returns a beforeDrain hook that holds a worker's outbox drainer
// until release (which the test's end calls too).
func gate(t *testing.T) (hold func(context.Context), release func()) {
	ch := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(ch) }) }
	t.Cleanup(release)
	return func(ctx context.Context) {
		select {
		case <-ch:
		case <-ctx.Done():
		}
	}, release
}

// copyFile copies a closed database file to dst, or aside when dst is "",
// as a backup would, and returns the copy's path.
func copyFile(t *testing.T, src, dst string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if dst == "" {
		dst = filepath.Join(t.TempDir(), filepath.Base(src)+".backup")
	}
	if err := os.WriteFile(dst, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

// outboxHasTasksFor says whether db's outbox holds a task of shards.
func outboxHasTasksFor(t *testing.T, db *store.DB, shards []int) bool {
	t.Helper()
	found := false
	err := db.Outbox(func(_ uint64, e store.OutboxEntry) error {
		for _, task := range e.Tasks {
			found = found || slices.Contains(shards, shardOfURL(task.URL))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// behind, the rule: a database is behind on a shard it is to work when a
// report of a worker on it (by its ID, for the pass) says it held a later
// message of that shard than it holds now.
func TestBehind(t *testing.T) {
	t.Parallel()
	var owned [Shards]bool
	for _, s := range []int{3, 7, 9} {
		owned[s] = true
	}
	report := func(name, db string, pass uint64, received map[string]uint64) *WorkerStatus {
		return &WorkerStatus{Name: name, DB: db, Pass: pass, Received: received}
	}
	for _, tc := range []struct {
		name     string
		statuses []*WorkerStatus
		held     map[string]uint64
		want     *Behind
	}{
		{"no report", nil, map[string]uint64{"3": 5}, nil},
		{"holds what it reported", []*WorkerStatus{report("w2", "A", 4, map[string]uint64{"3": 5, "7": 2})},
			map[string]uint64{"3": 5, "7": 9}, nil},
		{"holds less", []*WorkerStatus{report("w2", "A", 4, map[string]uint64{"3": 5, "7": 12, "9": 1})},
			map[string]uint64{"3": 5, "7": 9},
			&Behind{Shards: "7,9", Shard: 7, Worker: "w2", Reported: 12, Held: 9}},
		{"holds nothing of the pass (a copy from before it)", []*WorkerStatus{report("w2", "A", 4, map[string]uint64{"9": 30})},
			map[string]uint64{},
			&Behind{Shards: "9", Shard: 9, Worker: "w2", Reported: 30}},
		{"another database's report", []*WorkerStatus{report("w2", "B", 4, map[string]uint64{"3": 50})},
			map[string]uint64{"3": 5}, nil},
		{"another pass's report", []*WorkerStatus{report("w2", "A", 3, map[string]uint64{"3": 50})},
			map[string]uint64{"3": 5}, nil},
		{"a shard it is not to work (a copy of a live worker's file)", []*WorkerStatus{report("w1", "A", 4, map[string]uint64{"4": 50})},
			map[string]uint64{}, nil},
		{"reports of two names on copies of one file", []*WorkerStatus{
			report("w2", "A", 4, map[string]uint64{"7": 12}),
			report("w9", "A", 4, map[string]uint64{"3": 8, "7": 15}),
		}, map[string]uint64{"3": 5, "7": 9},
			&Behind{Shards: "3,7", Shard: 3, Worker: "w9", Reported: 8, Held: 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			statuses := map[string]*WorkerStatus{}
			for _, st := range tc.statuses {
				statuses[st.Name] = st
			}
			got := behind(statuses, "A", 4, tc.held, &owned)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("behind = %+v; want %+v", got, tc.want)
			}
		})
	}
}

// A database once found behind stays so for the pass: a later join adds
// shards, and keeps the first finding's figures.
func TestBehindAnd(t *testing.T) {
	t.Parallel()
	first := &Behind{Shards: "7,9", Shard: 7, Worker: "w2", Reported: 12, Held: 9}
	later := &Behind{Shards: "3,9", Shard: 3, Worker: "w2", Reported: 4, Held: 1}
	for _, tc := range []struct {
		name string
		b, c *Behind
		want *Behind
	}{
		{"neither", nil, nil, nil},
		{"only before", first, nil, first},
		{"only now", nil, later, later},
		{"both", first, later, &Behind{Shards: "3,7,9", Shard: 7, Worker: "w2", Reported: 12, Held: 9}},
	} {
		if got := tc.b.and(tc.c); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: and = %+v; want %+v", tc.name, got, tc.want)
		}
	}
}
