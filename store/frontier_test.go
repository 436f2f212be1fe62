package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.etcd.io/bbolt"
)

// frontierKeys returns the numbers the frontier bucket's tasks are stored
// under, and its sequence; the test fails on a key that is not a number.
func frontierKeys(t *testing.T, db *DB) (keys []uint64, seq uint64) {
	t.Helper()
	err := db.view(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketFrontier)
		seq = b.Sequence()
		return b.ForEach(func(k, _ []byte) error {
			if len(k) != numberKeyLen {
				t.Errorf("frontier key %q is not a number", k)
				return nil
			}
			keys = append(keys, binary.BigEndian.Uint64(k))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys, seq
}

// The frontier is kept in the order tasks are queued, under numbers that
// only grow, and still goes by URL: a URL queued again is not added, a
// result takes its URL's task off, a held-back result keeps its task where
// it stands. A reopened file (a resumed pass) goes on from where it was.
func TestFrontierInQueueOrder(t *testing.T) {
	t.Parallel()
	const z, m, a, b = "http://127.0.0.1/z", "http://127.0.0.1/m", "http://127.0.0.1/a", "http://127.0.0.1/b"
	path := filepath.Join(t.TempDir(), "lp.db")
	db := openAt(t, path)
	p := begin(t, db, home)
	commit(t, db, p.ID, page(home, z, m, a, z))
	if got := frontierURLs(t, db); !slices.Equal(got, []string{z, m, a}) {
		t.Errorf("frontier = %q, want the order queued", got)
	}
	if keys, seq := frontierKeys(t, db); !slices.Equal(keys, []uint64{2, 3, 4}) || seq != 4 {
		t.Errorf("frontier keys = %v (sequence %d), want 2, 3, 4 (the seed was 1)", keys, seq)
	}

	// /m is held back by a pause: it keeps its place and takes the new task.
	held := requeued(checked(m, VerdictTransient, 503))
	held.Requeue.Depth = 5
	commit(t, db, p.ID, page(z, b, a), held)
	tasks, err := db.Frontier()
	if err != nil {
		t.Fatal(err)
	}
	want := []Task{{URL: m, Action: "check", Depth: 5}, {URL: a, Action: "check", Depth: 1}, {URL: b, Action: "check", Depth: 1}}
	if !reflect.DeepEqual(tasks, want) {
		t.Errorf("frontier = %+v\nwant %+v", tasks, want)
	}

	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openAt(t, path)
	if added, err := db.Enqueue(p.ID, []Task{{URL: a, Action: "parse"}, {URL: z, Action: "parse"}, {URL: "http://127.0.0.1/n", Action: "parse"}}); err != nil || len(added) != 1 || added[0].URL != "http://127.0.0.1/n" {
		t.Errorf("Enqueue after reopening added %+v, %v; want only /n (/a is queued, /z resolved)", added, err)
	}
	commit(t, db, p.ID, checked(a, VerdictOK, 200), checked(m, VerdictOK, 200))
	if got := frontierURLs(t, db); !slices.Equal(got, []string{b, "http://127.0.0.1/n"}) {
		t.Errorf("frontier after reopening = %q", got)
	}
	if keys, seq := frontierKeys(t, db); !slices.Equal(keys, []uint64{5, 6}) || seq != 6 {
		t.Errorf("frontier keys = %v (sequence %d), want 5, 6", keys, seq)
	}

	// A new pass starts from 1 again.
	finish(t, db, p, PassStopped)
	finish(t, db, p, PassAbandoned)
	p2 := begin(t, db, home, z, home)
	if keys, _ := frontierKeys(t, db); !slices.Equal(keys, []uint64{1, 2}) {
		t.Errorf("frontier keys of a new pass = %v, want 1, 2 (a seed given twice is one task)", keys)
	}
	commit(t, db, p2.ID, page(home, a))
	if got := frontierURLs(t, db); !slices.Equal(got, []string{z, a}) {
		t.Errorf("frontier of pass 2 = %q", got)
	}
}

// A commit that fails after queuing tasks leaves neither them in the file
// nor their URLs in the index: the next commit queues them.
func TestFrontierAfterAFailedCommit(t *testing.T) {
	t.Parallel()
	const bad = "http://127.0.0.1/bad"
	db := openTemp(t)
	p := begin(t, db, home)
	commit(t, db, p.ID, page(home, bad))
	// home's record, the first, does not decode: Commit fails when it
	// reads it, after home's links were queued.
	var good []byte
	err := db.update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketURLs)
		good = bytes.Clone(b.Get(be64(1)))
		e := encoder{}
		e.str(home)
		return b.Put(be64(1), append(e.bytes(), 99))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Commit(p.ID, []Result{page(home, about), checked(bad, VerdictOK, 200)}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Commit over a damaged record: %v, want ErrCorrupt", err)
	}
	if got := frontierURLs(t, db); !slices.Equal(got, []string{bad}) {
		t.Errorf("frontier after the failed commit = %q", got)
	}
	if err := db.update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketURLs).Put(be64(1), good) }); err != nil {
		t.Fatal(err)
	}
	commit(t, db, p.ID, page(home, about), checked(bad, VerdictOK, 200))
	if got := frontierURLs(t, db); !slices.Equal(got, []string{about}) {
		t.Errorf("frontier = %q, want %s queued by the commit after the failed one", got, about)
	}
}

// Damage to the frontier is found when the file is opened for writing
// (verify), and, past that, when it is next written, before anything is
// queued under a number already taken or a task is taken off for another
// URL.
func TestDamagedFrontier(t *testing.T) {
	t.Parallel()
	const a = "http://127.0.0.1/a"
	for _, tt := range []struct {
		name   string
		damage func(b *bbolt.Bucket) error
	}{
		{"key not a number", func(b *bbolt.Bucket) error {
			return b.Put([]byte("abc"), appendFrontierEntry(nil, &Task{URL: a, Action: "check"}))
		}},
		{"number above the sequence", func(b *bbolt.Bucket) error {
			return b.Put(be64(b.Sequence()+1), appendFrontierEntry(nil, &Task{URL: a, Action: "check"}))
		}},
		{"entry without a URL", func(b *bbolt.Bucket) error { return b.Put(be64(1), []byte{0, taskFormat1}) }},
		{"URL cut short", func(b *bbolt.Bucket) error { return b.Put(be64(1), []byte{40, 'h'}) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "lp.db")
			db := openAt(t, path)
			p := begin(t, db, home)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			rawUpdate(t, path, func(tx *bbolt.Tx) error { return tt.damage(tx.Bucket(bucketFrontier)) })
			if db, err := Open(path, Options{}); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "in the queue of its unfinished pass") {
				if err == nil {
					db.Close()
				}
				t.Errorf("Open: %v, want ErrCorrupt in the queue", err)
			}
			// Past Open's verify, as if the damage came while it was open.
			db, err := open(path, Options{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Commit(p.ID, []Result{page(home, about)}); !errors.Is(err, ErrCorrupt) {
				t.Errorf("Commit: %v, want ErrCorrupt", err)
			}
			if _, err := db.Enqueue(p.ID, []Task{{URL: about, Action: "check"}}); !errors.Is(err, ErrCorrupt) {
				t.Errorf("Enqueue: %v, want ErrCorrupt", err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			// check --new-pass drops the queue unread and keeps the history.
			db, err = Open(path, Options{NewPass: true})
			if err != nil {
				t.Fatalf("Open with NewPass: %v", err)
			}
			defer db.Close()
			abandonAndBegin(t, db, p.ID)
		})
	}
}

// TestMigrateSchema4 opens a file the schema-4 build wrote (testdata, made
// by main 6a30c63): pass 1 stopped after home (linking to /a, /b, /c, /d,
// /e) and /b; /d and /e carry a trap run and the public mark. Read-only,
// its frontier reads in URL order and the file is left as it was; opened
// for writing, the tasks move under numbers in URL order, and the pass
// goes on: a result takes its task off, a queued URL is not queued again,
// a new one goes last.
func TestMigrateSchema4(t *testing.T) {
	t.Parallel()
	const a, b, c, d, e, f = "http://127.0.0.1/a", "http://127.0.0.1/b", "http://127.0.0.1/c", "http://127.0.0.1/d", "http://127.0.0.1/e", "http://127.0.0.1/f"
	path, orig := copyTestdata(t, "schema4.bolt", 4)
	want := []Task{
		{URL: a, Action: "check", Depth: 1},
		{URL: c, Action: "check", Depth: 1},
		{URL: d, Action: "parse", Depth: 1, Run: 3},
		{URL: e, Action: "check", Depth: 2, Public: true},
	}
	same := func(what string, db *DB) {
		t.Helper()
		if got, err := db.Frontier(); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Frontier = %+v, %v\nwant %+v", what, got, err, want)
		}
		if quiet, _, err := db.Quiet(1); err != nil || quiet {
			t.Errorf("%s: Quiet = %v, %v; want busy", what, quiet, err)
		}
		if got := resolved(t, db, 1); !reflect.DeepEqual(got, []string{home, b}) {
			t.Errorf("%s: ResolvedIn(1) = %q", what, got)
		}
	}

	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only Open of a schema-4 file: %v", err)
	}
	same("read-only", ro)
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, orig) {
		t.Error("a read-only Open changed the schema-4 file")
	}

	db := openAt(t, path)
	same("migrated", db)
	if keys, seq := frontierKeys(t, db); !slices.Equal(keys, []uint64{1, 2, 3, 4}) || seq != 4 {
		t.Errorf("migrated frontier keys = %v (sequence %d), want 1-4", keys, seq)
	}
	commit(t, db, 1, page(c, d, f, b), checked(a, VerdictOK, 200))
	if got := frontierURLs(t, db); !slices.Equal(got, []string{d, e, f}) {
		t.Errorf("frontier = %q, want /d and /e as they were, then /f", got)
	}
	commit(t, db, 1, page(d), checked(e, VerdictOK, 200), checked(f, VerdictOK, 200))
	if quiet, _, err := db.Quiet(1); err != nil || !quiet {
		t.Errorf("Quiet after every task = %v, %v", quiet, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if got := schemaOf(t, path); got != SchemaVersion {
		t.Errorf("after migration schema = %d, want %d", got, SchemaVersion)
	}
}

// A schema-4 file whose frontier holds a task that does not decode is not
// migrated: Open says it is damaged, that --new-pass keeps the history, and
// leaves it at schema 4, its frontier as it was. With NewPass (check
// --new-pass) it opens, and the pass is abandoned with its history kept
// (review7 R4: the migration decoded every task and failed the Open).
func TestMigrateDamagedSchema4(t *testing.T) {
	t.Parallel()
	path, _ := copyTestdata(t, "schema4.bolt", 4)
	rawUpdate(t, path, func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketFrontier).Put([]byte("http://127.0.0.1/c"), []byte{taskFormat1 + 7})
	})
	if db, err := Open(path, Options{}); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "add --new-pass to abandon that pass and keep the history") {
		if err == nil {
			_ = db.Close()
		}
		t.Fatalf("Open of a damaged schema-4 file: %v, want ErrCorrupt advising --new-pass", err)
	}
	defer func() {
		if t.Failed() {
			return
		}
		db, err := Open(path, Options{NewPass: true})
		if err != nil {
			t.Fatalf("Open with NewPass: %v", err)
		}
		defer db.Close()
		abandonAndBegin(t, db, 1)
	}()
	if got := schemaOf(t, path); got != 4 {
		t.Errorf("schema after a failed migration = %d, want 4", got)
	}
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if keys := frontierRawKeys(t, ro); !slices.Equal(keys, []string{"http://127.0.0.1/a", "http://127.0.0.1/c", "http://127.0.0.1/d", "http://127.0.0.1/e"}) {
		t.Errorf("frontier keys after a failed migration = %q", keys)
	}
}

func frontierRawKeys(t *testing.T, db *DB) (keys []string) {
	t.Helper()
	err := db.view(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketFrontier).ForEach(func(k, _ []byte) error {
			keys = append(keys, string(k))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func FuzzFrontierEntry(f *testing.F) {
	f.Add(appendFrontierEntry(nil, &Task{URL: "http://127.0.0.1/a", Action: "parse", Depth: 2, Run: 3, Public: true}))
	f.Add([]byte{0, taskFormat1})
	f.Add([]byte{40, 'h'})
	f.Fuzz(func(t *testing.T, v []byte) {
		task, err := decodeFrontier(SchemaVersion, be64(1), v)
		if err != nil {
			return
		}
		again, err := decodeFrontier(SchemaVersion, be64(1), appendFrontierEntry(nil, &task))
		if err != nil || !reflect.DeepEqual(again, task) {
			t.Errorf("%+v encoded again decodes as %+v, %v", task, again, err)
		}
	})
}

// abandonAndBegin does what check --new-pass does with the open pass id,
// and checks that the passes before the new one are all kept.
func abandonAndBegin(t *testing.T, db *DB, id uint64) {
	t.Helper()
	p, err := db.Pass(id)
	if err != nil {
		t.Fatal(err)
	}
	p.State = PassAbandoned
	if err := db.UpdatePass(p); err != nil {
		t.Fatalf("abandon pass %d: %v", id, err)
	}
	next := begin(t, db, home)
	if got, err := db.Frontier(); err != nil || len(got) != 1 || got[0].URL != home {
		t.Errorf("frontier of the new pass = %+v, %v; want the seed alone", got, err)
	}
	ps, err := db.Passes()
	if err != nil || len(ps) != int(next.ID) {
		t.Errorf("passes = %d, %v; want all %d kept", len(ps), err, next.ID)
	}
}
