package crawler_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
)

// Run opens the pass it is asked for or refuses, saying why in a way a
// caller can tell apart (errors.Is), and leaves the database as it was when
// it refuses.
func TestRunOpensOrRefusesThePass(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(page(`<a href="/a">a</a>`))
	t.Cleanup(srv.Close)
	a, b := srv.URL+"/", srv.URL+"/b"
	tests := []struct {
		name string
		// before is what the database holds: a pass of these start URLs,
		// open or complete, with this settings hash.
		before   []string
		open     bool
		hash     string
		spec     crawler.PassSpec
		want     error // nil: the pass runs
		resumed  bool
		abandons bool // the pass before is abandoned
	}{
		{name: "new database", spec: passOf(a)},
		{name: "resume", before: []string{a}, open: true, spec: passOf(a), resumed: true},
		{name: "other pass open", before: []string{b}, open: true, spec: passOf(a), want: crawler.ErrOtherPassOpen},
		{name: "other pass open, new", before: []string{b}, open: true, spec: crawler.PassSpec{Pass: store.Pass{StartURLs: []string{a}}, Seeds: []string{a}, New: true}, abandons: true},
		{name: "other settings", before: []string{a}, open: true, hash: "x", spec: crawler.PassSpec{Pass: store.Pass{StartURLs: []string{a}, SettingsHash: "y"}, Seeds: []string{a}}, want: crawler.ErrSettingsChanged},
		{name: "other site", before: []string{b}, spec: passOf(a), want: crawler.ErrOtherSite},
		{name: "other site, new", before: []string{b}, spec: crawler.PassSpec{Pass: store.Pass{StartURLs: []string{a}}, Seeds: []string{a}, New: true}},
		{name: "excluded start", before: []string{b}, open: true, spec: crawler.PassSpec{Pass: store.Pass{StartURLs: []string{a}}, Seeds: []string{a, srv.URL + "/private"}, New: true}, want: crawler.ErrExcludedStart},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db := openDB(t)
			var before store.Pass
			if tt.before != nil {
				var err error
				before, err = db.BeginPass(store.Pass{StartURLs: tt.before, SettingsHash: tt.hash}, []store.Task{{URL: tt.before[0], Action: "parse"}})
				if err != nil {
					t.Fatal(err)
				}
				if !tt.open {
					before.State = store.PassComplete
					if err := db.UpdatePass(before); err != nil {
						t.Fatal(err)
					}
				}
			}
			engine, err := rules.New(rules.Config{Start: []string{a}, Exclude: []string{`/private`}})
			if err != nil {
				t.Fatal(err)
			}
			var opened crawler.Opened
			spec := tt.spec
			spec.Opened = func(o crawler.Opened) error { opened = o; return nil }
			pass, out, err := crawler.New(crawler.Config{Concurrency: 2}, engine, db).Run(context.Background(), context.Background(), spec)
			if tt.want != nil {
				var refused *crawler.RefusedError
				if !errors.Is(err, tt.want) || !errors.As(err, &refused) || pass.ID != 0 {
					t.Fatalf("got pass %d, %v; want refused: %v", pass.ID, err, tt.want)
				}
				if p, open, _ := db.OpenPass(); open != tt.open || (open && p.State != before.State) {
					t.Errorf("refusing changed the database's open pass: %v %+v", open, p)
				}
				return
			}
			if err != nil || !out.Complete || pass.State != store.PassComplete || pass.Finished.IsZero() {
				t.Fatalf("run: %v, complete %v, state %s", err, out.Complete, pass.State)
			}
			if opened.Pass.ID != pass.ID || opened.Resumed != (tt.resumed && opened.Done > 0) || (tt.resumed && opened.Pass.ID != before.ID) {
				t.Errorf("opened %+v, ran pass %d; resumed want %v", opened, pass.ID, tt.resumed)
			}
			stored, ok, err := db.LastPass()
			if err != nil || !ok || stored.ID != pass.ID || stored.State != store.PassComplete {
				t.Errorf("the pass as stored: %+v (%v)", stored, err)
			}
			if tt.abandons {
				passes, err := db.Passes()
				if err != nil {
					t.Fatal(err)
				}
				if passes[0].ID != before.ID || passes[0].State != store.PassAbandoned {
					t.Errorf("the pass before: %+v, want abandoned", passes[0])
				}
			}
		})
	}
}

// A cluster worker's pass has the coordinator's ID and may begin with no
// seeds at all; the pass with that ID is resumed, and is never abandoned
// for being "new".
func TestRunGivenPassID(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(page(`ok`))
	t.Cleanup(srv.Close)
	start := srv.URL + "/"
	engine, err := rules.New(rules.Config{Start: []string{start}})
	if err != nil {
		t.Fatal(err)
	}
	db := openDB(t)
	c := crawler.New(crawler.Config{Concurrency: 2}, engine, db)
	worker := crawler.PassSpec{Pass: store.Pass{ID: 7, StartURLs: []string{start}}, New: true}
	stop, cancel := context.WithCancel(context.Background())
	cancel()
	pass, out, err := c.Run(stop, context.Background(), worker)
	if err != nil || out.Complete || pass.ID != 7 || pass.State != store.PassStopped {
		t.Fatalf("stopped at once: pass %d %s, complete %v, %v", pass.ID, pass.State, out.Complete, err)
	}
	other := worker
	other.Pass.ID, other.New = 8, false
	if _, _, err := c.Run(context.Background(), context.Background(), other); !errors.Is(err, crawler.ErrOtherPassOpen) {
		t.Fatalf("pass 8 while 7 is open: %v, want refused", err)
	}
	pass, out, err = c.Run(context.Background(), context.Background(), worker)
	if err != nil || !out.Complete || pass.ID != 7 || pass.State != store.PassComplete {
		t.Fatalf("resumed: pass %d %s, complete %v, %v", pass.ID, pass.State, out.Complete, err)
	}
	worker.Pass.ID, worker.Seeds = 9, []string{start}
	pass, out, err = c.Run(context.Background(), context.Background(), worker)
	if err != nil || !out.Complete || pass.ID != 9 {
		t.Fatalf("pass 9: %d, complete %v, %v", pass.ID, out.Complete, err)
	}
	if rec, ok, _ := db.Get(start); !ok || rec.Pass != 9 || rec.Verdict != store.VerdictOK {
		t.Errorf("the seed of pass 9: %+v", rec)
	}
}

// reads counts the records a crawler reads from its store.
type reads struct {
	*store.DB
	mu  sync.Mutex
	got []string
}

func (r *reads) Get(u string) (store.URLRecord, bool, error) {
	r.mu.Lock()
	r.got = append(r.got, u)
	r.mu.Unlock()
	return r.DB.Get(u)
}

func (r *reads) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

// The first pass of a database reads no earlier record of its URLs (there
// is none), and the next pass, which has them, reads each and carries its
// history on. An open pass abandoned for a new one is history too.
func TestFirstPassReadsNoHistory(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	mux := http.NewServeMux()
	mux.Handle("/{$}", page(`<a href="/a">a</a> <a href="/b">b</a>`))
	mux.Handle("/a", page(`<a href="/">home</a>`))
	srv.Config.Handler = mux
	start := srv.URL + "/"
	engine, err := rules.New(rules.Config{Start: []string{start}})
	if err != nil {
		t.Fatal(err)
	}
	db := &reads{DB: openDB(t)}
	run := func(spec crawler.PassSpec) map[string]store.URLRecord {
		t.Helper()
		pass, _, err := crawler.New(crawler.Config{}, engine, db).Run(context.Background(), context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		recs := make(map[string]store.URLRecord)
		if err := db.Records(pass.ID, func(r *store.URLRecord) error { recs[r.URL] = *r; return nil }); err != nil {
			t.Fatal(err)
		}
		return recs
	}
	spec := passOf(start)
	spec.New = true
	first := run(spec)
	if n := db.count(); n != 0 {
		t.Errorf("the first pass read %d records: %q", n, db.got)
	}
	if len(first) != 3 || first[srv.URL+"/b"].Verdict != store.VerdictBroken || first[start].FirstSeen.IsZero() {
		t.Fatalf("first pass records: %+v", first)
	}
	second := run(spec)
	if n := db.count(); n < 3 {
		t.Errorf("the second pass read %d records, want one for each of its 3 URLs", n)
	}
	for u, r := range second {
		if r.PrevPass != first[u].Pass || r.PrevVerdict != first[u].Verdict || !r.FirstSeen.Equal(first[u].FirstSeen) {
			t.Errorf("%s: second pass record %+v does not carry the first's %+v", u, r, first[u])
		}
	}
	if b := second[srv.URL+"/b"]; b.Failures != 2 || !b.FirstBroken.Equal(first[srv.URL+"/b"].FirstBroken) {
		t.Errorf("/b broken twice: failures %d, first broken %v; want 2, %v", b.Failures, b.FirstBroken, first[srv.URL+"/b"].FirstBroken)
	}
}
