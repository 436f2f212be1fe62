package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"go.etcd.io/bbolt"
)

const (
	foreign  = "http://other.example/a"
	foreign2 = "http://third.example/b"
)

// forwarding is a parsed page that links to a local and a foreign URL, as
// a cluster worker's crawler commits it: the local one queued, the foreign
// one forwarded.
func forwarding(url string, foreign ...string) Result {
	r := page(url, about)
	for _, f := range foreign {
		r.Links = append(r.Links, Link{URL: f, Line: 9, Tag: "a", Attr: "href"})
		r.Forward = append(r.Forward, Task{URL: f, Action: "check", Depth: 1})
	}
	return r
}

// outbox lists the outbox, in order.
func outbox(t *testing.T, db *DB) (seqs []uint64, entries []OutboxEntry) {
	t.Helper()
	err := db.Outbox(func(seq uint64, e OutboxEntry) error {
		seqs = append(seqs, seq)
		entries = append(entries, e)
		return nil
	})
	if err != nil {
		t.Fatalf("Outbox: %v", err)
	}
	return seqs, entries
}

func TestCommitOutbox(t *testing.T) {
	t.Parallel()
	requeued := checked("http://127.0.0.1/slow", VerdictTransient, 503)
	requeued.Requeue = &Task{URL: "http://127.0.0.1/slow", Action: "check", Depth: 2, Run: 1}
	tests := []struct {
		name      string
		forward   bool // Options.ForwardResults
		results   []Result
		wantTasks []string // URLs of the entry's tasks; no entry when both are empty
		wantRes   []string // URLs of the entry's results
	}{
		{"nothing to forward", false, []Result{page(home, about)}, nil, nil},
		{"forwarded tasks of every result, in order", false,
			[]Result{forwarding(home, foreign), checked(ext, VerdictOK, 200), forwarding("http://127.0.0.1/x", foreign2, foreign)},
			[]string{foreign, foreign2, foreign}, nil},
		{"a worker forwards its results", true, []Result{page(home, about), requeued}, nil, []string{home, requeued.Record.URL}},
		{"a worker forwards both", true, []Result{forwarding(home, foreign)}, []string{foreign}, []string{home}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db, err := Open(filepath.Join(t.TempDir(), "w.db"), Options{ForwardResults: tt.forward})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			p := begin(t, db, home)
			commit(t, db, p.ID, slices.Clone(tt.results)...)

			for _, u := range frontierURLs(t, db) {
				if u == foreign || u == foreign2 {
					t.Errorf("forwarded %s is on the frontier", u)
				}
			}
			seqs, entries := outbox(t, db)
			if n, err := db.OutboxLen(); n != len(entries) || err != nil {
				t.Errorf("OutboxLen = %d, %v; Outbox visited %d", n, err, len(entries))
			}
			if tt.wantTasks == nil && tt.wantRes == nil {
				if len(entries) != 0 {
					t.Fatalf("outbox = %+v, want it empty", entries)
				}
				select {
				case <-db.OutboxReady():
					t.Error("OutboxReady signalled without an entry")
				default:
				}
				return
			}
			if len(entries) != 1 || seqs[0] != 1 {
				t.Fatalf("outbox = %v %+v, want one entry, number 1", seqs, entries)
			}
			select {
			case <-db.OutboxReady():
			default:
				t.Error("OutboxReady not signalled after a commit with an entry")
			}
			e := entries[0]
			if e.Pass != p.ID {
				t.Errorf("entry of pass %d, want %d", e.Pass, p.ID)
			}
			var gotTasks, gotRes []string
			for _, tk := range e.Tasks {
				gotTasks = append(gotTasks, tk.URL)
			}
			if !slices.Equal(gotTasks, tt.wantTasks) {
				t.Errorf("entry tasks = %q, want %q", gotTasks, tt.wantTasks)
			}
			for i, r := range e.Results {
				gotRes = append(gotRes, r.Record.URL)
				want := tt.results[i]
				want.Record.Pass = p.ID
				want.Enqueue, want.Forward = nil, nil
				if !reflect.DeepEqual(r, want) {
					t.Errorf("forwarded result %d:\n got %+v\nwant %+v", i, r, want)
				}
				// What the worker stored is what it forwarded.
				if stored, _, _ := db.Get(r.Record.URL); !reflect.DeepEqual(stored, r.Record) {
					t.Errorf("forwarded record %+v, stored %+v", r.Record, stored)
				}
			}
			if !slices.Equal(gotRes, tt.wantRes) {
				t.Errorf("entry results = %q, want %q", gotRes, tt.wantRes)
			}
		})
	}
}

// A Commit that fails leaves no entry behind, like everything else it
// would have written.
func TestCommitOutboxAtomic(t *testing.T) {
	t.Parallel()
	db, err := Open(filepath.Join(t.TempDir(), "w.db"), Options{ForwardResults: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p := begin(t, db, home)
	bad := forwarding(home, foreign)
	bad.Forward = append(bad.Forward, Task{URL: "", Action: "check"})
	if err := db.Commit(p.ID, []Result{bad}); err == nil {
		t.Error("Commit forwarding a task without a URL succeeded")
	}
	if err := db.Commit(p.ID+1, []Result{forwarding(home, foreign)}); err == nil {
		t.Error("Commit to a pass that is not open succeeded")
	}
	if _, entries := outbox(t, db); len(entries) != 0 {
		t.Errorf("failed commits left %+v in the outbox", entries)
	}
	if _, ok, _ := db.Get(home); ok {
		t.Error("a failed commit stored a record")
	}
}

func TestOutboxOrderAndDelete(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	p := begin(t, db, home)
	// More entries than Outbox reads per transaction.
	const n = outboxChunk*2 + 5
	for i := range n {
		commit(t, db, p.ID, forwarding(home, foreign+string(rune('a'+i%26))+"/"+string(rune('0'+i/26))))
	}
	var visited []uint64
	err := db.Outbox(func(seq uint64, e OutboxEntry) error {
		visited = append(visited, seq)
		// Draining as it goes, as a cluster's drainer does.
		return db.DeleteOutbox(seq)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(visited) != n || !slices.IsSorted(visited) || visited[0] != 1 || visited[n-1] != n {
		t.Errorf("Outbox visited %d entries %v, want 1..%d in order", len(visited), visited, n)
	}
	if left, err := db.OutboxLen(); left != 0 || err != nil {
		t.Errorf("after deleting every entry OutboxLen = %d, %v", left, err)
	}
	if err := db.DeleteOutbox(1); err != nil {
		t.Errorf("deleting an entry twice: %v", err)
	}
	// A number is not given twice, not even after the outbox ran empty.
	commit(t, db, p.ID, forwarding(home, foreign))
	if seqs, _ := outbox(t, db); !slices.Equal(seqs, []uint64{n + 1}) {
		t.Errorf("entry after draining numbered %v, want %d", seqs, n+1)
	}

	stop := errors.New("stop")
	calls := 0
	commit(t, db, p.ID, forwarding(home, foreign2))
	if err := db.Outbox(func(uint64, OutboxEntry) error { calls++; return stop }); err != stop || calls != 1 {
		t.Errorf("Outbox with fn failing: %v after %d calls, want fn's error after 1", err, calls)
	}
}

func TestEnqueue(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	old := begin(t, db, home)
	commit(t, db, old.ID, page(home, about), checked(about, VerdictOK, 200), checked(ext, VerdictOK, 200))
	finish(t, db, old, PassComplete)
	p := begin(t, db, home)
	commit(t, db, p.ID, page(home, about)) // home resolved, about queued, ext resolved only in the old pass

	tasks := []Task{
		{URL: "http://127.0.0.1/z", Action: "check", Depth: 3},
		{URL: about, Action: "check"},                          // queued already
		{URL: home, Action: "parse"},                           // resolved in this pass
		{URL: ext, Action: "check", Depth: 1},                  // resolved in an older pass: due again
		{URL: "http://127.0.0.1/z", Action: "check", Depth: 9}, // twice in one batch
		{URL: "http://127.0.0.1/b", Action: "parse", Depth: 2, Run: 4},
	}
	given := slices.Clone(tasks)
	added, err := db.Enqueue(p.ID, tasks)
	if err != nil {
		t.Fatal(err)
	}
	want := []Task{tasks[0], tasks[3], tasks[5]} // the order given
	if !reflect.DeepEqual(added, want) {
		t.Errorf("Enqueue added %+v, want %+v", added, want)
	}
	if !reflect.DeepEqual(tasks, given) {
		t.Error("Enqueue reordered the caller's slice")
	}
	if got := frontierURLs(t, db); !slices.Equal(got, []string{"http://127.0.0.1/about", "http://127.0.0.1/z", ext, "http://127.0.0.1/b"}) {
		t.Errorf("frontier = %q, want the order queued", got)
	}
	frontier, _ := db.Frontier()
	if i := slices.IndexFunc(frontier, func(tk Task) bool { return tk.URL == "http://127.0.0.1/b" }); frontier[i] != tasks[5] {
		t.Errorf("queued task = %+v, want %+v", frontier[i], tasks[5])
	}
	if again, err := db.Enqueue(p.ID, tasks); len(again) != 0 || err != nil {
		t.Errorf("a repeated batch (a redelivered message) added %+v, %v", again, err)
	}

	for _, tt := range []struct {
		name  string
		pass  uint64
		tasks []Task
	}{
		{"pass not open", old.ID, []Task{{URL: "http://127.0.0.1/y", Action: "check"}}},
		{"empty URL", p.ID, []Task{{URL: "http://127.0.0.1/y", Action: "check"}, {Action: "check"}}},
	} {
		if added, err := db.Enqueue(tt.pass, tt.tasks); err == nil || added != nil {
			t.Errorf("%s: Enqueue = %+v, %v; want an error", tt.name, added, err)
		}
	}
	if got := frontierURLs(t, db); slices.Contains(got, "http://127.0.0.1/y") {
		t.Error("a failed Enqueue queued a task")
	}
}

func TestBeginPassWithID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		before  int      // passes begun and completed first, numbered 1..before
		ids     []uint64 // given IDs, 0 for the next
		want    []uint64
		wantErr bool // on the last
	}{
		{"given on a new file", 0, []uint64{7, 0}, []uint64{7, 8}, false},
		{"given after own passes", 2, []uint64{5}, []uint64{5}, false},
		{"the next, given", 2, []uint64{3}, []uint64{3}, false},
		{"older than one stored", 3, []uint64{2}, nil, true},
		{"equal to one stored", 3, []uint64{3}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db := openTemp(t)
			for range tt.before {
				finish(t, db, begin(t, db, home), PassComplete)
			}
			for i, id := range tt.ids {
				p, err := db.BeginPass(Pass{ID: id, StartURLs: []string{home}, Started: t0}, []Task{{URL: home, Action: "parse"}})
				if tt.wantErr {
					if err == nil {
						t.Fatalf("BeginPass(ID %d) = %d, want an error", id, p.ID)
					}
					if open, ok, _ := db.OpenPass(); ok {
						t.Errorf("a refused BeginPass left pass %d open", open.ID)
					}
					return
				}
				if err != nil || p.ID != tt.want[i] || p.State != PassRunning {
					t.Fatalf("BeginPass(ID %d) = %d %s, %v; want %d", id, p.ID, p.State, err, tt.want[i])
				}
				if stored, err := db.Pass(p.ID); err != nil || stored.ID != p.ID {
					t.Errorf("Pass(%d) = %+v, %v", p.ID, stored, err)
				}
				finish(t, db, p, PassComplete)
			}
		})
	}
}

// BeginPass drops what an abandoned pass left in the outbox, without
// giving its numbers again.
func TestBeginPassDropsOutbox(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	p := begin(t, db, home)
	commit(t, db, p.ID, forwarding(home, foreign))
	finish(t, db, p, PassAbandoned)
	p2 := begin(t, db, home)
	if _, entries := outbox(t, db); len(entries) != 0 {
		t.Errorf("new pass kept %+v of the abandoned one", entries)
	}
	commit(t, db, p2.ID, forwarding(home, foreign))
	if seqs, _ := outbox(t, db); !slices.Equal(seqs, []uint64{2}) {
		t.Errorf("entry numbered %v, want 2", seqs)
	}
}

func TestCompactKeepsOutbox(t *testing.T) {
	t.Parallel()
	db, _ := bloated(t)
	p := begin(t, db, home)
	commit(t, db, p.ID, forwarding(home, foreign))
	commit(t, db, p.ID, forwarding(about, foreign2))
	if err := db.DeleteOutbox(1); err != nil {
		t.Fatal(err)
	}
	if before, after, err := db.Compact(context.Background()); err != nil || after >= before {
		t.Fatalf("Compact = %d, %d, %v; want a rewrite", before, after, err)
	}
	commit(t, db, p.ID, forwarding(ext, foreign))
	seqs, entries := outbox(t, db)
	if !slices.Equal(seqs, []uint64{2, 3}) || entries[0].Tasks[0].URL != foreign2 {
		t.Errorf("after Compact the outbox is %v %+v, want entries 2 and 3", seqs, entries)
	}
}

func TestOutboxEntryRoundTrip(t *testing.T) {
	t.Parallel()
	var full URLRecord
	fill(t, reflect.ValueOf(&full).Elem(), 1)
	full.URL = "http://127.0.0.1/full"
	tests := []OutboxEntry{
		{Pass: 1},
		{Pass: 9, Tasks: []Task{{URL: foreign, Action: "check", Depth: 2, Run: 1, Public: true}, {URL: foreign2, Action: "parse"}}},
		{Pass: 3, Results: []Result{
			{Record: full, SetLinks: true, Links: []Link{{URL: foreign, Fragment: "x", Line: 3, Tag: "a", Attr: "href"}}},
			{Record: record(home), SetLinks: true}, // links deleted
			{Record: record(about), Requeue: &Task{URL: about, Action: "parse", Depth: 1}},
		}},
	}
	for _, want := range tests {
		v, err := want.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var got OutboxEntry
		if err := got.UnmarshalBinary(v); err != nil {
			t.Fatalf("UnmarshalBinary(%+v): %v", want, err)
		}
		for i := range got.Results {
			if !sameRecord(got.Results[i].Record, want.Results[i].Record) {
				t.Errorf("record %d:\n got %+v\nwant %+v", i, got.Results[i].Record, want.Results[i].Record)
			}
			got.Results[i].Record = want.Results[i].Record
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
		}
		if err := got.UnmarshalBinary(v[:len(v)-1]); !errors.Is(err, ErrCorrupt) {
			t.Errorf("a cut entry: err = %v, want ErrCorrupt", err)
		}
	}
}

func FuzzDecodeOutbox(f *testing.F) {
	for _, e := range []OutboxEntry{
		{Pass: 2, Tasks: []Task{{URL: foreign, Action: "check", Depth: 1}}},
		{Pass: 2, Results: []Result{page(home, about), {Record: record(about), Requeue: &Task{URL: about, Action: "check"}}}},
	} {
		v, err := e.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		var e OutboxEntry
		if err := e.UnmarshalBinary(v); err != nil {
			return
		}
		again, err := e.MarshalBinary()
		if err != nil {
			return // a time that cannot encode again, as in FuzzDecodeRecord
		}
		var e2 OutboxEntry
		if err := e2.UnmarshalBinary(again); err != nil {
			t.Fatalf("re-encoded entry does not decode: %v", err)
		}
		if len(e2.Tasks) != len(e.Tasks) || len(e2.Results) != len(e.Results) || e2.Pass != e.Pass {
			t.Fatalf("re-encoding changed the entry:\n%+v\n%+v", e, e2)
		}
	})
}

// TestMigrateSchema1 opens a file the schema-1 build wrote (testdata, made
// by commit aa8f8e4's parent): read-only it reads as it is, with an empty
// outbox; opened for writing it becomes the current schema and goes on
// with its open pass as a worker's database.
func TestMigrateSchema1(t *testing.T) {
	t.Parallel()
	path, orig := copyTestdata(t, "schema1.bolt", 1)

	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only Open of a schema-1 file: %v", err)
	}
	checkSchema1Content(t, ro)
	if n, err := ro.OutboxLen(); n != 0 || err != nil {
		t.Errorf("read-only schema 1: OutboxLen = %d, %v", n, err)
	}
	if _, entries := outbox(t, ro); len(entries) != 0 {
		t.Errorf("read-only schema 1: outbox %+v", entries)
	}
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, orig) {
		t.Error("a read-only Open changed the schema-1 file")
	}

	db, err := Open(path, Options{ForwardResults: true})
	if err != nil {
		t.Fatalf("Open of a schema-1 file for writing: %v", err)
	}
	checkSchema1Content(t, db)
	open, ok, err := db.OpenPass()
	if err != nil || !ok {
		t.Fatalf("OpenPass after migration = %v, %v", ok, err)
	}
	commit(t, db, open.ID, forwarding("http://127.0.0.1/new", foreign))
	if _, entries := outbox(t, db); len(entries) != 1 || entries[0].Tasks[0].URL != foreign {
		t.Errorf("outbox after a commit in the migrated file: %+v", entries)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if got := schemaOf(t, path); got != SchemaVersion {
		t.Errorf("after migration schema = %d, want %d", got, SchemaVersion)
	}
	db = openAt(t, path)
	if _, entries := outbox(t, db); len(entries) != 1 {
		t.Errorf("after reopening, outbox %+v", entries)
	}
}

// checkSchema1Content checks what testdata/schema1.bolt holds: pass 1
// complete, pass 2 open with home resolved and two links queued.
func checkSchema1Content(t *testing.T, db *DB) {
	t.Helper()
	passes, err := db.Passes()
	if err != nil || len(passes) != 2 || passes[0].State != PassComplete || passes[1].State != PassRunning {
		t.Fatalf("passes = %+v, %v", passes, err)
	}
	// home was resolved again in pass 2, which owns its record now.
	if got := resolved(t, db, 1); !slices.Equal(got, []string{about, "http://127.0.0.1/gone"}) {
		t.Errorf("pass 1 resolved %q", got)
	}
	if got := frontierURLs(t, db); !slices.Equal(got, []string{about, "http://127.0.0.1/new"}) {
		t.Errorf("frontier = %q", got)
	}
	if v, ok, err := db.HostState("127.0.0.1"); string(v) != "state" || !ok || err != nil {
		t.Errorf("HostState = %q, %v, %v", v, ok, err)
	}
}

func schemaOf(t *testing.T, path string) uint64 {
	t.Helper()
	b, err := bbolt.Open(path, 0, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var v uint64
	err = b.View(func(tx *bbolt.Tx) error {
		v = binary.BigEndian.Uint64(tx.Bucket(bucketMeta).Get(keySchema))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestQuiet(t *testing.T) {
	t.Parallel()
	held := checked("http://127.0.0.1/slow", VerdictTransient, 503)
	held.Requeue = &Task{URL: "http://127.0.0.1/slow", Action: "check"}
	tests := []struct {
		name         string
		results      []Result
		drain        bool // delete the outbox entries
		wantQuiet    bool
		wantDeferred int
	}{
		{"seed still queued", nil, false, false, 0},
		{"links queued", []Result{page(home, about)}, false, false, 0},
		{"all resolved", []Result{page(home, about), checked(about, VerdictOK, 200)}, false, true, 0},
		{"a held URL waits for a later run", []Result{page(home, held.Record.URL), held}, false, true, 1},
		{"outbox not drained", []Result{forwarding(home), checked(about, VerdictOK, 200)}, false, false, 0},
		{"outbox drained", []Result{forwarding(home, foreign), checked(about, VerdictOK, 200)}, true, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db, err := Open(filepath.Join(t.TempDir(), "w.db"), Options{ForwardResults: tt.name == "outbox not drained"})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			p := begin(t, db, home)
			for _, r := range tt.results {
				commit(t, db, p.ID, r)
			}
			if tt.drain {
				if err := db.Outbox(func(seq uint64, _ OutboxEntry) error { return db.DeleteOutbox(seq) }); err != nil {
					t.Fatal(err)
				}
			}
			quiet, deferred, err := db.Quiet(p.ID)
			if err != nil || quiet != tt.wantQuiet || (quiet && deferred != tt.wantDeferred) {
				t.Errorf("Quiet = %v, %d, %v; want %v, %d", quiet, deferred, err, tt.wantQuiet, tt.wantDeferred)
			}
		})
	}
	db := openTemp(t)
	if _, _, err := db.Quiet(1); err == nil {
		t.Error("Quiet of a pass that is not open succeeded")
	}
}
