package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/bbolt"
)

const (
	home  = "http://127.0.0.1/"
	about = "http://127.0.0.1/about"
	gone  = "http://127.0.0.1/gone"
	ext   = "https://example.invalid/x"
)

func TestCommitStoresRecordsAndLinks(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	p := begin(t, db, home)
	r := page(home, about, ext)
	r.Links[1].Fragment = "section-2"
	r.Record.Redirects = []Hop{{URL: "http://127.0.0.1", Status: 301}}
	commit(t, db, p.ID, r)

	got, ok, err := db.Get(home)
	want := r.Record
	want.Pass = p.ID
	if !ok || err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Get = %+v, %v, %v;\nwant %+v", got, ok, err, want)
	}
	links, err := db.Links(home)
	if err != nil || !reflect.DeepEqual(links, r.Links) {
		t.Errorf("Links = %+v, %v; want %+v", links, err, r.Links)
	}
	if _, ok, err := db.Get(about); ok || err != nil {
		t.Errorf("Get of an unresolved URL = %v, %v", ok, err)
	}
	if links, err := db.Links(about); links != nil || err != nil {
		t.Errorf("Links of a page without links = %v, %v", links, err)
	}
	if got := frontierURLs(t, db); !reflect.DeepEqual(got, []string{about, ext}) {
		t.Errorf("frontier = %q, want the two targets", got)
	}
}

func TestCommitFrontier(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		batch []Result
		want  []string // frontier after the batch; home was the seed
	}{
		{"enqueued then done in one batch", []Result{page(home, about), checked(about, VerdictOK, 200)}, nil},
		{"done then enqueued in one batch", []Result{checked(about, VerdictOK, 200), page(home, about)}, nil},
		{"enqueued twice", []Result{page(home, about, about)}, []string{about}},
		{"done without links", []Result{checked(home, VerdictBroken, 404)}, nil},
		{"page links to itself", []Result{page(home, home, about)}, []string{about}},
		{"held back by a pause: recorded, still queued", []Result{page(home, about), requeued(checked(about, VerdictTransient, 0))}, []string{about}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openTemp(t)
			p := begin(t, db, home)
			commit(t, db, p.ID, tt.batch...)
			if got := frontierURLs(t, db); !slices.Equal(got, tt.want) {
				t.Errorf("frontier = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCommitKeepsTheFirstQueuedTask(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	p := begin(t, db, home)
	first := page(home, about)
	second := page("http://127.0.0.1/deep", about)
	second.Enqueue[0].Depth = 7
	commit(t, db, p.ID, first)
	commit(t, db, p.ID, second)
	tasks, err := db.Frontier()
	if err != nil {
		t.Fatal(err)
	}
	if want := []Task{{URL: about, Action: "check", Depth: 1}}; !reflect.DeepEqual(tasks, want) {
		t.Errorf("frontier = %+v, want %+v", tasks, want)
	}
}

func TestCommitQueuesURLsResolvedInEarlierPasses(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	p1 := begin(t, db, home)
	commit(t, db, p1.ID, page(home, about), checked(about, VerdictOK, 200))
	finish(t, db, p1, PassComplete)

	p2 := begin(t, db, home)
	commit(t, db, p2.ID, page(home, about))
	if got := frontierURLs(t, db); !slices.Equal(got, []string{about}) {
		t.Errorf("frontier = %q; a URL resolved in pass 1 must be queued again in pass 2", got)
	}
}

func TestCommitLinks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		second Result
		want   []string // targets of home's stored links after the second commit
	}{
		{"SetLinks false keeps the old links", Result{Record: record(home)}, []string{about, gone}},
		{"SetLinks replaces them", page(home, ext), []string{ext}},
		{"SetLinks with none deletes them", Result{Record: record(home), SetLinks: true}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openTemp(t)
			p := begin(t, db, home)
			commit(t, db, p.ID, page(home, about, gone))
			commit(t, db, p.ID, tt.second)
			links, err := db.Links(home)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range links {
				got = append(got, l.URL)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("links = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCommitRejects(t *testing.T) {
	t.Parallel()
	long := home + strings.Repeat("x", MaxURLLength)
	wrongPass := page(home, about)
	wrongPass.Record.Pass = 99
	tests := []struct {
		name  string
		pass  uint64 // 0: the open pass
		batch []Result
	}{
		{"a pass that is not open", 42, []Result{page(home)}},
		{"pass zero", 0, nil},
		{"a record of another pass", 0, []Result{wrongPass}},
		{"an empty URL", 0, []Result{page("")}},
		{"a URL too long for a key", 0, []Result{page(long)}},
		{"a task with a URL too long", 0, []Result{page(home, long)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openTemp(t)
			p := begin(t, db, home)
			pass := tt.pass
			if pass == 0 && tt.name != "pass zero" {
				pass = p.ID
			}
			// A good result first: a refused batch must not leave it behind.
			batch := append([]Result{page(about, gone)}, tt.batch...)
			if err := db.Commit(pass, batch); err == nil {
				t.Fatal("Commit succeeded")
			}
			if _, ok, _ := db.Get(about); ok {
				t.Error("a refused batch wrote its first record")
			}
			if got := frontierURLs(t, db); !slices.Equal(got, []string{home}) {
				t.Errorf("a refused batch changed the frontier: %q", got)
			}
		})
	}
}

func TestCommitToAClosedPassFails(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	p := begin(t, db, home)
	finish(t, db, p, PassComplete)
	if err := db.Commit(p.ID, []Result{page(home)}); err == nil {
		t.Error("Commit to a complete pass succeeded")
	}
}

// twoPasses leaves pass 1 complete with home, about and gone, and pass 2
// open having re-resolved home (now linking to ext and about) and ext.
func twoPasses(t *testing.T) (*DB, Pass, Pass) {
	t.Helper()
	db := openTemp(t)
	p1 := begin(t, db, home)
	commit(t, db, p1.ID, page(home, about, gone), page(about, home), checked(gone, VerdictBroken, 404))
	p1 = finish(t, db, p1, PassComplete)
	p2 := begin(t, db, home)
	commit(t, db, p2.ID, page(home, ext, about), checked(ext, VerdictOK, 200))
	return db, p1, p2
}

func TestScansFilterByPass(t *testing.T) {
	t.Parallel()
	db, p1, p2 := twoPasses(t)
	tests := []struct {
		pass      uint64
		records   []string
		pageLinks map[string][]string
	}{
		{p1.ID, []string{about, gone}, map[string][]string{about: {home}}},
		{p2.ID, []string{home, ext}, map[string][]string{home: {ext, about}}},
		{99, nil, map[string][]string{}},
	}
	for _, tt := range tests {
		var recs []string
		err := db.Records(tt.pass, func(r *URLRecord) error {
			if r.Pass != tt.pass {
				t.Errorf("Records(%d) gave a record of pass %d", tt.pass, r.Pass)
			}
			recs = append(recs, r.URL)
			return nil
		})
		if err != nil || !slices.Equal(recs, tt.records) {
			t.Errorf("Records(%d) = %q, %v; want %q", tt.pass, recs, err, tt.records)
		}
		if got := resolved(t, db, tt.pass); !slices.Equal(got, tt.records) {
			t.Errorf("ResolvedIn(%d) = %q, want %q", tt.pass, got, tt.records)
		}
		pages := map[string][]string{}
		err = db.PageLinks(tt.pass, func(pg *URLRecord, links []Link) error {
			if pg.Pass != tt.pass || !pg.Parsed {
				t.Errorf("PageLinks(%d) gave page %+v", tt.pass, pg)
			}
			for _, l := range links {
				pages[pg.URL] = append(pages[pg.URL], l.URL)
			}
			return nil
		})
		if err != nil || !reflect.DeepEqual(pages, tt.pageLinks) {
			t.Errorf("PageLinks(%d) = %q, %v; want %q", tt.pass, pages, err, tt.pageLinks)
		}
	}
}

func TestScanCallbacks(t *testing.T) {
	t.Parallel()
	db, _, p2 := twoPasses(t)
	stop := errors.New("stop")
	scans := map[string]func(func() error) error{
		"Records": func(fn func() error) error { return db.Records(p2.ID, func(*URLRecord) error { return fn() }) },
		"PageLinks": func(fn func() error) error {
			return db.PageLinks(p2.ID, func(*URLRecord, []Link) error { return fn() })
		},
		"ResolvedIn": func(fn func() error) error { return db.ResolvedIn(p2.ID, func(string) error { return fn() }) },
		"ForEachHostState": func(fn func() error) error {
			return db.ForEachHostState(func(string, []byte) error { return fn() })
		},
	}
	if err := db.PutHostState("127.0.0.1", []byte{1}); err != nil {
		t.Fatal(err)
	}
	for name, scan := range scans {
		calls := 0
		if err := scan(func() error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
			t.Errorf("%s: a callback error gave %v after %d calls; want it back after 1", name, err, calls)
		}
		// A panic in the callback is the caller's: it must come out as it
		// went in, not be reported as a damaged file.
		func() {
			defer func() {
				if r := recover(); r != "callback bug" {
					t.Errorf("%s: recovered %v, want the callback's own panic", name, r)
				}
			}()
			_ = scan(func() error { panic("callback bug") })
		}()
		if _, _, err := db.OpenPass(); err != nil {
			t.Errorf("%s: the database is unusable after a callback panicked: %v", name, err)
		}
	}
}

func TestHostState(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	if _, ok, err := db.HostState("a.example"); ok || err != nil {
		t.Errorf("HostState of an unknown host = %v, %v", ok, err)
	}
	v := []byte("paused until 10:00")
	for _, h := range []string{"b.example", "a.example"} {
		if err := db.PutHostState(h, v); err != nil {
			t.Fatal(err)
		}
	}
	v[0] = 'X' // the store must not keep the caller's slice
	got, ok, err := db.HostState("a.example")
	if !ok || err != nil || string(got) != "paused until 10:00" {
		t.Errorf("HostState = %q, %v, %v", got, ok, err)
	}
	if err := db.PutHostState("b.example", nil); err != nil {
		t.Fatal(err)
	}
	var hosts []string
	err = db.ForEachHostState(func(h string, v []byte) error {
		hosts = append(hosts, h+"="+string(v))
		return nil
	})
	if err != nil || !slices.Equal(hosts, []string{"a.example=paused until 10:00"}) {
		t.Errorf("ForEachHostState = %q, %v; an empty Put should have forgotten b.example", hosts, err)
	}
	if err := db.PutHostState("", v); err == nil {
		t.Error("PutHostState with an empty host succeeded")
	}
}

// CommitHosts writes the results and the hosts' state together, or, when a
// host cannot be stored, neither.
func TestCommitHosts(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	p := begin(t, db, "http://a/")
	err := db.CommitHosts(p.ID, []Result{page("http://a/")}, map[string][]byte{"a": []byte("1"), "": []byte("2")})
	if err == nil {
		t.Fatal("CommitHosts with an empty host succeeded")
	}
	if got := resolved(t, db, p.ID); len(got) != 0 {
		t.Errorf("a failed CommitHosts stored records %q", got)
	}
	if _, ok, _ := db.HostState("a"); ok {
		t.Error("a failed CommitHosts stored host state")
	}
	if err := db.PutHostState("b", []byte("old")); err != nil {
		t.Fatal(err)
	}
	err = db.CommitHosts(p.ID, []Result{page("http://a/")}, map[string][]byte{"a": []byte("1"), "b": nil})
	if err != nil {
		t.Fatal(err)
	}
	if got := resolved(t, db, p.ID); !slices.Equal(got, []string{"http://a/"}) {
		t.Errorf("resolved after CommitHosts = %q", got)
	}
	if v, ok, err := db.HostState("a"); !ok || err != nil || string(v) != "1" {
		t.Errorf("HostState(a) = %q, %v, %v", v, ok, err)
	}
	if _, ok, _ := db.HostState("b"); ok {
		t.Error("CommitHosts with an empty state kept the host")
	}
}

// With SyncEvery a commit does not wait for fsync, and what was committed
// is there after the file is reopened (Close syncs).
func TestSyncEveryKeepsCommits(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "lp.db")
	db, err := Open(path, Options{SyncEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	p, err := db.BeginPass(Pass{StartURLs: []string{"http://a/"}}, []Task{{URL: "http://a/", Action: "parse"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Commit(p.ID, []Result{{Record: URLRecord{URL: "http://a/", Verdict: VerdictOK}}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if rec, ok, err := db.Get("http://a/"); err != nil || !ok || rec.Verdict != VerdictOK {
		t.Errorf("after reopen: %+v %v %v", rec, ok, err)
	}
}

// With SyncEvery the fsync runs beside the commits: while one is under
// way (here held until the test lets it go) commits go on, and Close waits
// for it and syncs once more.
func TestSyncDoesNotHoldCommits(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "lp.db")
	db, err := Open(path, Options{SyncEvery: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	db.syncs.Wait() // Open's own fsync
	started, release := make(chan struct{}), make(chan struct{})
	var syncs atomic.Int32
	db.syncFile = func(b *bbolt.DB) error {
		if syncs.Add(1) == 1 {
			close(started)
			<-release
		}
		return b.Sync()
	}
	p := begin(t, db, "http://a/")
	<-started // BeginPass's commit started the first fsync
	// Were a commit to wait for the held fsync, these would never end.
	for i := range 20 {
		commit(t, db, p.ID, Result{Record: record(fmt.Sprintf("http://a/%d", i))})
	}
	if n := syncs.Load(); n != 1 {
		t.Errorf("%d fsyncs started while one was under way, want none", n-1)
	}
	close(release)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if n := syncs.Load(); n != 2 {
		t.Errorf("%d fsyncs in all, want the held one and Close's", n)
	}
	db, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := resolved(t, db, p.ID); len(got) != 20 {
		t.Errorf("after reopen %d URLs resolved, want 20", len(got))
	}
}

// A failed fsync stops every later write, and Close says so: the kernel
// may have dropped writes it had accepted.
func TestFailedSyncStopsWrites(t *testing.T) {
	t.Parallel()
	db, err := Open(filepath.Join(t.TempDir(), "lp.db"), Options{SyncEvery: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	db.syncs.Wait() // Open's own fsync
	errDisk := errors.New("disk on fire")
	db.syncFile = func(*bbolt.DB) error { return errDisk }
	p := begin(t, db, "http://a/")
	db.syncs.Wait() // the fsync BeginPass started has failed
	err = db.Commit(p.ID, []Result{{Record: record("http://a/")}})
	if !errors.Is(err, errDisk) {
		t.Errorf("Commit after a failed fsync: %v, want %v", err, errDisk)
	}
	if rec, ok, _ := db.Get("http://a/"); ok {
		t.Errorf("the commit was written: %+v", rec)
	}
	if err := db.Close(); !errors.Is(err, errDisk) {
		t.Errorf("Close after a failed fsync: %v, want %v", err, errDisk)
	}
}

func requeued(r Result) Result {
	r.Requeue = &Task{URL: r.Record.URL, Action: r.Record.Action, Depth: 1}
	return r
}

// Only SyncEvery turns off bbolt's fsync in each commit: without it a
// power cut can damage the file (see doc.go, "bbolt settings"), so a zero
// SyncEvery must leave every commit synced.
func TestSyncEveryZeroSyncsEachCommit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		every time.Duration
		want  bool
	}{{0, false}, {time.Second, true}} {
		db, err := Open(filepath.Join(t.TempDir(), "lp.db"), Options{SyncEvery: tc.every})
		if err != nil {
			t.Fatal(err)
		}
		if db.bolt.NoSync != tc.want {
			t.Errorf("SyncEvery %v: bbolt NoSync = %v, want %v", tc.every, db.bolt.NoSync, tc.want)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// A URL that comes twice in a commit keeps the later result, whatever lies
// between them, and only that record is left in the file.
func TestCommitKeepsTheLaterResultOfAURL(t *testing.T) {
	t.Parallel()
	db, err := Open(filepath.Join(t.TempDir(), "lp.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p := begin(t, db, "http://a/")
	// Many results of one URL among others: a sort that is not stable
	// would keep one of them at random.
	var rs []Result
	for i := range 40 {
		rs = append(rs, checked(fmt.Sprintf("http://a/%02d", 39-i), VerdictOK, 200), checked("http://a/z", VerdictBroken, 400+i))
	}
	rs = append(rs, checked("http://a/z", VerdictOK, 200))
	commit(t, db, p.ID, rs...)
	if rec, ok, err := db.Get("http://a/z"); err != nil || !ok || rec.Verdict != VerdictOK || rec.Status != 200 {
		t.Errorf("http://a/z: %s %d (%v %v), want the last result, ok 200", rec.Verdict, rec.Status, ok, err)
	}
	if got := resolved(t, db, p.ID); len(got) != 41 {
		t.Errorf("%d URLs resolved, want 41", len(got))
	}
	if _, urls, _ := recordEntries(t, db); len(urls) != 41 {
		t.Errorf("%d records in the file, want 41", len(urls))
	}
}

// A Tried result replaces the queued task of its URL with the tries it
// used, writes no record, and queues nothing that was not queued (qa10 Q6).
func TestCommitTriedKeepsTheTries(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	p := begin(t, db, "http://a/", "http://a/x")
	tried := Task{URL: "http://a/x", Action: "parse", Tries: 2, Comebacks: 1, ComebacksWaited: time.Minute}
	err := db.Commit(p.ID, []Result{{Tried: &tried}, {Tried: &Task{URL: "http://a/never-queued", Action: "check", Tries: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	front, err := db.Frontier()
	if err != nil {
		t.Fatal(err)
	}
	want := []Task{{URL: "http://a/", Action: "parse"}, tried}
	if !slices.Equal(front, want) {
		t.Errorf("frontier = %+v, want %+v", front, want)
	}
	if got := resolved(t, db, p.ID); len(got) != 0 {
		t.Errorf("a Tried result stored records %q", got)
	}
}
