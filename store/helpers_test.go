package store

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.etcd.io/bbolt"
)

// openTemp opens a new database in the test's temporary directory.
func openTemp(t testing.TB) *DB {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "linkpatrol.db"))
}

func openAt(t testing.TB, path string) *DB {
	t.Helper()
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

var t0 = time.Date(2026, 11, 20, 3, 0, 0, 0, time.UTC)

// begin starts a pass from the given start URLs, each seeded as a page.
func begin(t testing.TB, db *DB, starts ...string) Pass {
	t.Helper()
	seeds := make([]Task, len(starts))
	for i, s := range starts {
		seeds[i] = Task{URL: s, Action: "parse"}
	}
	p, err := db.BeginPass(Pass{StartURLs: starts, Started: t0}, seeds)
	if err != nil {
		t.Fatalf("BeginPass: %v", err)
	}
	return p
}

func finish(t testing.TB, db *DB, p Pass, state PassState) Pass {
	t.Helper()
	p.State = state
	p.Finished = p.Started.Add(time.Minute)
	if err := db.UpdatePass(p); err != nil {
		t.Fatalf("UpdatePass(%d, %s): %v", p.ID, state, err)
	}
	return p
}

func commit(t testing.TB, db *DB, pass uint64, results ...Result) {
	t.Helper()
	if err := db.Commit(pass, results); err != nil {
		t.Fatalf("Commit: %v", err)
	}
}

// page is the result of a parsed page linking to targets, each on its own
// line, and queuing them.
func page(url string, targets ...string) Result {
	r := Result{Record: record(url), SetLinks: true}
	r.Record.Parsed = true
	for i, tg := range targets {
		r.Links = append(r.Links, Link{URL: tg, Line: i + 1, Tag: "a", Attr: "href"})
		r.Enqueue = append(r.Enqueue, Task{URL: tg, Action: "check", Depth: 1})
	}
	return r
}

func checked(url string, v Verdict, status int) Result {
	r := Result{Record: record(url)}
	r.Record.Action, r.Record.Verdict, r.Record.Status = "check", v, status
	return r
}

func record(url string) URLRecord {
	return URLRecord{
		URL: url, Action: "parse", Verdict: VerdictOK, Status: 200,
		ContentType: "text/html", FetchedAt: t0, FirstSeen: t0, LastGood: t0,
	}
}

// resolved lists the URLs the pass resolved, in the order ResolvedIn gives.
func resolved(t testing.TB, db *DB, pass uint64) []string {
	t.Helper()
	var urls []string
	if err := db.ResolvedIn(pass, func(u string) error { urls = append(urls, u); return nil }); err != nil {
		t.Fatalf("ResolvedIn(%d): %v", pass, err)
	}
	return urls
}

func frontierURLs(t testing.TB, db *DB) []string {
	t.Helper()
	tasks, err := db.Frontier()
	if err != nil {
		t.Fatalf("Frontier: %v", err)
	}
	urls := make([]string, len(tasks))
	for i, tk := range tasks {
		urls[i] = tk.URL
	}
	return urls
}

// site is a synthetic crawl: page i links to links pages, mostly of the same
// site, as a generated site would.
func sitePage(i, links int) Result {
	url := fmt.Sprintf("http://127.0.0.1:8080/section-%d/page-%d.html", i%50, i)
	r := Result{Record: record(url), SetLinks: true}
	r.Record.Parsed = true
	r.Record.ETag = fmt.Sprintf(`"%x"`, i*7919)
	for j := range links {
		tg := fmt.Sprintf("http://127.0.0.1:8080/section-%d/page-%d.html", (i+j)%50, (i*31+j*17)%100_000)
		if j%5 == 4 {
			tg = fmt.Sprintf("https://external-%d.example/docs/%d", j, i)
		}
		r.Links = append(r.Links, Link{URL: tg, Line: 10 + j*3, Tag: "a", Attr: "href"})
		if j < 5 {
			r.Enqueue = append(r.Enqueue, Task{URL: tg, Action: "parse", Depth: 2})
		}
	}
	return r
}

// HostState returns the bytes last stored for host. Only tests ask for one
// host; the crawler reads them all with ForEachHostState.
func (db *DB) HostState(host string) (v []byte, ok bool, err error) {
	err = db.view(func(tx *bbolt.Tx) error {
		if s := tx.Bucket(bucketHosts).Get([]byte(host)); s != nil {
			v, ok = bytes.Clone(s), true
		}
		return nil
	})
	return v, ok, err
}

// PutHostState is PutHostStates for one host.
func (db *DB) PutHostState(host string, v []byte) error {
	return db.PutHostStates(map[string][]byte{host: v})
}

// storedList returns the stored link list of the page url, found where its
// record says; it fails the test when there is none.
func storedList(t testing.TB, db *DB, url string) []byte {
	t.Helper()
	var v []byte
	err := db.readByURL(true, func(tx *bbolt.Tx, get func([]byte) ([]byte, error)) error {
		rv, err := get([]byte(url))
		if err != nil || rv == nil {
			return err
		}
		lv, err := db.pageLinks(tx.Bucket(bucketLinks), []byte(url), rv)
		v = bytes.Clone(lv)
		return err
	})
	if err != nil || len(v) == 0 {
		t.Fatalf("links of %s: %q, %v", url, v, err)
	}
	return v
}

// copyTestdata copies the file testdata/name, which an older build wrote
// with the given schema, into the test's temporary directory.
func copyTestdata(t *testing.T, name string, schema uint64) (path string, orig []byte) {
	t.Helper()
	orig, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(t.TempDir(), "old.db")
	if err := os.WriteFile(path, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := schemaOf(t, path); got != schema {
		t.Fatalf("testdata file %s has schema %d, want %d", name, got, schema)
	}
	return path, orig
}

// rawUpdate changes the closed database file at path with bbolt alone, as
// damage would.
func rawUpdate(t *testing.T, path string, fn func(tx *bbolt.Tx) error) {
	t.Helper()
	raw, err := bbolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = raw.Update(fn)
	if cerr := raw.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}
