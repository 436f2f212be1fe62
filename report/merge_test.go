package report

import (
	"errors"
	"hash/fnv"
	"reflect"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/store"
)

// splitHistory deals a history's URLs between n workers by a hash of the
// URL, as shards do.
func splitHistory(history []fixturePass, n int) [][]fixturePass {
	return splitBy(history, n, func(u string) int {
		h := fnv.New32a()
		h.Write([]byte(u))
		return int(h.Sum32() % uint32(n))
	})
}

// splitBy deals a history's URLs between n workers as owner says: every
// worker holds every pass, and each URL in every pass lives with one
// worker. Tallies stay with worker 0.
func splitBy(history []fixturePass, n int, owner func(url string) int) [][]fixturePass {
	out := make([][]fixturePass, n)
	for _, fp := range history {
		for w := range n {
			p := fp.pass
			if w > 0 {
				p.Tally = nil
			}
			out[w] = append(out[w], fixturePass{pass: p})
		}
		for _, res := range fp.results {
			w := owner(res.Record.URL)
			last := &out[w][len(out[w])-1]
			last.results = append(last.results, res)
		}
	}
	return out
}

// The files of three workers read as one give the report of the one file
// a single process writes, in every format and for every pass.
func TestMergeEqualsOneFile(t *testing.T) {
	t.Parallel()
	history := webHistory()
	// A URL resolved twice: worker files can both hold one when a worker
	// followed a redirect onto another's host. The fetch that came last
	// is the one the report shows.
	fixed := "https://example.com/fixed.html"
	for i, res := range history[1].results {
		if res.Record.URL == fixed {
			history[1].results[i].Record.FetchedAt = night2.Add(time.Minute)
		}
	}
	parts := splitHistory(history, 3)
	var stale store.Result
	stale.Record = store.URLRecord{URL: fixed, Action: "check", Verdict: store.VerdictBroken, Status: 404, FetchedAt: night2}
	for w := range parts {
		has := false
		for _, res := range parts[w][1].results {
			has = has || res.Record.URL == fixed
		}
		if !has {
			parts[w][1].results = append(parts[w][1].results, stale)
			break
		}
	}
	var srcs []Source
	for _, p := range parts {
		srcs = append(srcs, fillStore(t, p))
	}
	one := fillStore(t, history)
	all := Merge(srcs...)
	for _, c := range []struct {
		pass uint64
		opt  Options
	}{
		{2, Options{}},
		{2, Options{All: true}},
		{2, Options{OnlyNew: true}},
		{1, Options{All: true}},
	} {
		want := build(t, one, c.pass, c.opt)
		got := build(t, all, c.pass, c.opt)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("pass %d %+v: merged report differs:\n got %+v\nwant %+v", c.pass, c.opt, got, want)
		}
		for _, format := range Formats() {
			if a, b := render(t, got, format), render(t, want, format); a != b {
				t.Errorf("pass %d %+v: %s differs:\n%s\n---\n%s", c.pass, c.opt, format, a, b)
			}
		}
	}
}

// The merged pass is as unfinished as its least finished file, and a file
// without the pass does not hide it.
func TestMergedPassState(t *testing.T) {
	t.Parallel()
	done := webHistory()[:1]
	stopped := webHistory()[:1]
	stopped[0].pass.State = store.PassStopped
	stopped[0].pass.Deferred = 3
	a, b := fillStore(t, done), fillStore(t, stopped)
	empty, err := store.Open(t.TempDir()+"/empty.db", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer empty.Close()
	p, err := Merge(a, empty, b).Pass(1)
	if err != nil {
		t.Fatal(err)
	}
	if p.State != store.PassStopped || p.Deferred != 3 || p.Finished.IsZero() {
		t.Errorf("merged pass %+v: want stopped with 3 deferred", p)
	}
	if _, ok, err := Merge(a, b).PreviousComplete(2); ok || err != nil {
		t.Errorf("PreviousComplete(2) = %v, %v: pass 1 is stopped in one file, so not complete", ok, err)
	}
	if _, ok, _ := Merge(a, a).PreviousComplete(2); !ok {
		t.Error("PreviousComplete(2): pass 1 is complete in every file")
	}
	if _, err := Merge(empty).Pass(1); !errors.Is(err, store.ErrNoPass) {
		t.Errorf("no file holds pass 1: %v, want ErrNoPass", err)
	}
}
