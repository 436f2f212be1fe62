package store

import (
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestEmptyDatabaseHasNoPasses(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	if _, ok, err := db.OpenPass(); ok || err != nil {
		t.Errorf("OpenPass = %v, %v", ok, err)
	}
	if _, ok, err := db.LastPass(); ok || err != nil {
		t.Errorf("LastPass = %v, %v", ok, err)
	}
	if _, ok, err := db.PreviousComplete(10); ok || err != nil {
		t.Errorf("PreviousComplete = %v, %v", ok, err)
	}
	if _, err := db.Pass(1); !errors.Is(err, ErrNoPass) {
		t.Errorf("Pass(1): err = %v, want ErrNoPass", err)
	}
	if tasks, err := db.Frontier(); len(tasks) != 0 || err != nil {
		t.Errorf("Frontier = %v, %v", tasks, err)
	}
	if ps, err := db.Passes(); len(ps) != 0 || err != nil {
		t.Errorf("Passes = %v, %v", ps, err)
	}
}

func TestPassLifecycle(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "lp.db")
	db := openAt(t, path)

	in := Pass{StartURLs: []string{"http://127.0.0.1/"}, SettingsHash: "abc", Started: t0, Root: "/srv/site"}
	seeds := []Task{{URL: "http://127.0.0.1/", Action: "parse"}, {URL: "http://127.0.0.1/extra", Action: "check", Depth: 1}}
	p1, err := db.BeginPass(in, seeds)
	if err != nil {
		t.Fatal(err)
	}
	want := in
	want.ID, want.State = 1, PassRunning
	if !reflect.DeepEqual(p1, want) {
		t.Errorf("BeginPass = %+v, want %+v", p1, want)
	}
	if got, err := db.Frontier(); err != nil || !reflect.DeepEqual(got, seeds) {
		t.Errorf("Frontier = %+v, %v; want the seeds %+v", got, err, seeds)
	}
	if got, ok, err := db.OpenPass(); !ok || err != nil || !reflect.DeepEqual(got, p1) {
		t.Errorf("OpenPass = %+v, %v, %v", got, ok, err)
	}
	if _, err := db.BeginPass(in, nil); err == nil {
		t.Error("BeginPass while pass 1 is running succeeded")
	}

	// Stopped is still open, and survives a restart.
	p1.State, p1.Elapsed, p1.Finished = PassStopped, 90*time.Second, t0.Add(2*time.Minute)
	if err := db.UpdatePass(p1); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openAt(t, path)
	if got, ok, err := db.OpenPass(); !ok || err != nil || !reflect.DeepEqual(got, p1) {
		t.Errorf("OpenPass after reopening = %+v, %v, %v; want %+v", got, ok, err, p1)
	}
	if got := frontierURLs(t, db); len(got) != 2 {
		t.Errorf("frontier after reopening = %q", got)
	}
	p1.State = PassRunning
	if err := db.UpdatePass(p1); err != nil {
		t.Fatalf("resuming a stopped pass: %v", err)
	}

	// Complete closes it for good and drops its frontier; its tally stays.
	p1.Tally = &Tally{Broken: 3, New: 1, Still: 2}
	p1 = finish(t, db, p1, PassComplete)
	if _, ok, _ := db.OpenPass(); ok {
		t.Error("a complete pass is still open")
	}
	if got := frontierURLs(t, db); len(got) != 0 {
		t.Errorf("frontier of a complete pass = %q", got)
	}
	p1.State = PassRunning
	if err := db.UpdatePass(p1); err == nil {
		t.Error("reopening a complete pass succeeded")
	}
	p1.State = PassComplete

	p2 := begin(t, db, "http://127.0.0.1/")
	if p2.ID != 2 {
		t.Errorf("second pass ID = %d, want 2", p2.ID)
	}
	p2 = finish(t, db, p2, PassAbandoned)
	p3 := begin(t, db, "http://127.0.0.1/")

	if got, err := db.Pass(1); err != nil || !reflect.DeepEqual(got, p1) {
		t.Errorf("Pass(1) = %+v, %v; want %+v", got, err, p1)
	}
	if ps, err := db.Passes(); err != nil || len(ps) != 3 || !reflect.DeepEqual(ps[0], p1) || ps[1].ID != 2 || ps[2].ID != 3 {
		t.Errorf("Passes = %+v, %v; want passes 1, 2, 3 oldest first", ps, err)
	}
	if got, ok, err := db.LastPass(); !ok || err != nil || got.ID != p3.ID {
		t.Errorf("LastPass = %+v, %v, %v; want pass %d", got, ok, err, p3.ID)
	}
	for _, tt := range []struct {
		before uint64
		want   uint64 // 0: none
	}{{1, 0}, {2, 1}, {3, 1}, {4, 1}, {100, 1}} {
		got, ok, err := db.PreviousComplete(tt.before)
		if err != nil || ok != (tt.want != 0) || got.ID != tt.want {
			t.Errorf("PreviousComplete(%d) = pass %d, %v, %v; want pass %d", tt.before, got.ID, ok, err, tt.want)
		}
	}
}

func TestUpdatePassRejects(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	p := begin(t, db, "http://127.0.0.1/")
	tests := []struct {
		name string
		p    Pass
		want error
	}{
		{"unknown pass", Pass{ID: 9, State: PassStopped}, ErrNoPass},
		{"unknown state", Pass{ID: p.ID, State: "paused"}, nil},
	}
	for _, tt := range tests {
		err := db.UpdatePass(tt.p)
		if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.want)
		}
	}
	if got, _ := db.Pass(p.ID); got.State != PassRunning {
		t.Errorf("a rejected update changed the pass: %+v", got)
	}
}

func TestBeginPassStartsFromAnEmptyFrontier(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	p := begin(t, db, "http://127.0.0.1/")
	commit(t, db, p.ID, page("http://127.0.0.1/", "http://127.0.0.1/left-over"))
	finish(t, db, p, PassAbandoned)
	begin(t, db, "http://127.0.0.1/new")
	if got := frontierURLs(t, db); !reflect.DeepEqual(got, []string{"http://127.0.0.1/new"}) {
		t.Errorf("frontier of the new pass = %q", got)
	}
}

func TestBeginPassRejectsBadSeeds(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	long := "http://127.0.0.1/" + string(make([]byte, MaxURLLength))
	for _, seed := range []string{"", long} {
		if _, err := db.BeginPass(Pass{}, []Task{{URL: seed, Action: "parse"}}); err == nil {
			t.Errorf("BeginPass with a seed of %d bytes succeeded", len(seed))
		}
	}
	if _, ok, _ := db.LastPass(); ok {
		t.Error("a refused BeginPass stored a pass")
	}
}

// A pass's Base is the newest complete pass of its own site before it:
// passes stopped or abandoned since, and other sites' passes, are passed
// over (qa6 Q3). A pass that comes with a Base (a cluster worker's, the
// coordinator's) keeps it.
func TestBeginPassSetsItsBase(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	const a, b = "http://a.test/", "http://b.test/"
	steps := []struct {
		site  string
		end   PassState
		wantB uint64
	}{
		{a, PassAbandoned, 0}, // 1: nothing complete before it
		{a, PassComplete, 0},  // 2
		{a, PassStopped, 2},   // 3
		{b, PassComplete, 0},  // 4: another site's
		{a, PassAbandoned, 2}, // 5: not 3 (stopped), not 4 (site b)
		{a, PassComplete, 2},  // 6
		{a, PassComplete, 6},  // 7
	}
	for i, s := range steps {
		if open, ok, err := db.OpenPass(); err != nil {
			t.Fatal(err)
		} else if ok {
			finish(t, db, open, PassAbandoned)
		}
		p := begin(t, db, s.site)
		if p.ID != uint64(i+1) || p.Base != s.wantB {
			t.Errorf("pass %d of %s: Base %d, want %d", p.ID, s.site, p.Base, s.wantB)
		}
		if stored, err := db.Pass(p.ID); err != nil || stored.Base != p.Base {
			t.Errorf("pass %d as stored: Base %d, %v; want %d", p.ID, stored.Base, err, p.Base)
		}
		finish(t, db, p, s.end)
	}
	given, err := db.BeginPass(Pass{StartURLs: []string{a}, ID: 20, Base: 2}, nil)
	if err != nil || given.Base != 2 {
		t.Errorf("a pass begun with Base 2: %d, %v", given.Base, err)
	}
}

func TestPassSkips(t *testing.T) {
	t.Parallel()
	p := Pass{ID: 7, Base: 4}
	for id, want := range map[uint64]bool{3: false, 4: false, 5: true, 6: true, 7: false, 8: false} {
		if got := p.Skips(id); got != want {
			t.Errorf("pass 7 based on 4: Skips(%d) = %v, want %v", id, got, want)
		}
	}
	if (Pass{ID: 7}).Skips(5) {
		t.Error("a pass with no Base skips pass 5: it has nothing to compare with, and skips nothing")
	}
}
