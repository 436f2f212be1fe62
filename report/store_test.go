package report

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/store"
)

// fillStore replays a history into a real bbolt file the way a check does:
// BeginPass, Commit of the results, UpdatePass with the final state.
func fillStore(t testing.TB, history []fixturePass) *store.DB {
	t.Helper()
	return replay(t, history, false)
}

// replay fills a real bbolt file from history. With ownTally a complete
// pass's tally is that of its own report, built once the pass is
// closed and before the next pass overwrites its records; otherwise it is the fixture's.
func replay(t testing.TB, history []fixturePass, ownTally bool) *store.DB {
	t.Helper()
	// No fsync in each commit (check's default, the file fsynced on the
	// store's own goroutine): nothing here is about a power cut, and
	// these fixtures were about 1,400 fdatasyncs a run of the package.
	db, err := store.Open(filepath.Join(t.TempDir(), "linkpatrol.db"), store.Options{SyncEvery: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, fp := range history {
		var seeds []store.Task
		for _, u := range fp.pass.StartURLs {
			seeds = append(seeds, store.Task{URL: u, Action: "parse"})
		}
		begun := fp.pass
		begun.State, begun.Finished, begun.Elapsed = "", time.Time{}, 0
		p, err := db.BeginPass(begun, seeds)
		if err != nil {
			t.Fatal(err)
		}
		results := make([]store.Result, len(fp.results))
		for i, res := range fp.results {
			res.Record.Pass = p.ID
			results[i] = res
		}
		if err := db.Commit(p.ID, results); err != nil {
			t.Fatal(err)
		}
		p.State, p.Finished, p.Elapsed, p.Tally = fp.pass.State, fp.pass.Finished, fp.pass.Elapsed, fp.pass.Tally
		if err := db.UpdatePass(p); err != nil {
			t.Fatal(err)
		}
		if ownTally && p.State == store.PassComplete {
			tally := build(t, db, p.ID, Options{}).Tally()
			p.Tally = &tally
			if err := db.UpdatePass(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	return db
}

// TestBuildFromStore builds the golden reports from a real database and
// checks they are the reports the in-memory replay gives.
func TestBuildFromStore(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		history []fixturePass
		pass    uint64
		opt     Options
	}{
		{"web", webHistory(), 2, Options{}},
		{"web all", webHistory(), 2, Options{All: true}},
		{"web previous pass", webHistory(), 1, Options{}},
		{"dir", dirHistory(), 1, Options{BaseDir: "/work"}},
		{"fragments", fragHistory(), 1, Options{CheckFragments: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := build(t, newMemSource(t, c.history), c.pass, c.opt)
			got := build(t, fillStore(t, c.history), c.pass, c.opt)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("report from the store differs from the replay:\n got %+v\nwant %+v", got, want)
			}
			for _, format := range Formats() {
				if a, b := render(t, got, format), render(t, want, format); a != b {
					t.Errorf("%s differs:\n%s\n---\n%s", format, a, b)
				}
			}
		})
	}
}
