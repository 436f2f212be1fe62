package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"go.etcd.io/bbolt"
)

// recordEntries lists the urls bucket as stored: each key's number and the
// URL in its value, in key order, and the bucket's sequence.
func recordEntries(t *testing.T, db *DB) (nums []uint64, urls []string, seq uint64) {
	t.Helper()
	err := db.view(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketURLs)
		seq = b.Sequence()
		return b.ForEach(func(k, v []byte) error {
			url, _, err := urlEntry(k, v)
			if err != nil {
				return err
			}
			nums = append(nums, binary.BigEndian.Uint64(k))
			urls = append(urls, string(url))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return nums, urls, seq
}

// Records go under numbers in the order they are written; a URL stored
// again takes the next number and its old record goes in the same
// transaction, and the readers in URL order still give URL order.
func TestRecordsInWriteOrder(t *testing.T) {
	t.Parallel()
	const a, b, c = "http://127.0.0.1/a", "http://127.0.0.1/b", "http://127.0.0.1/c"
	db := openTemp(t)
	p1 := begin(t, db, home)
	commit(t, db, p1.ID, page(home, c, a, b))
	commit(t, db, p1.ID, checked(c, VerdictBroken, 404), checked(a, VerdictOK, 200), checked(b, VerdictOK, 200))
	finish(t, db, p1, PassComplete)
	p2 := begin(t, db, home)
	commit(t, db, p2.ID, page(home, a))
	commit(t, db, p2.ID, checked(a, VerdictBroken, 500))

	nums, urls, seq := recordEntries(t, db)
	if !slices.Equal(nums, []uint64{2, 4, 5, 6}) || !slices.Equal(urls, []string{c, b, home, a}) || seq != 6 {
		t.Errorf("urls bucket = %v %q (sequence %d), want 2, 4, 5, 6: c, b, home, a", nums, urls, seq)
	}
	if got := resolved(t, db, p1.ID); !slices.Equal(got, []string{b, c}) {
		t.Errorf("ResolvedIn(1) = %q, want b, c", got)
	}
	if got := resolved(t, db, p2.ID); !slices.Equal(got, []string{home, a}) {
		t.Errorf("ResolvedIn(2) = %q, want home, a (URL order)", got)
	}
	if rec, ok, err := db.Get(a); err != nil || !ok || rec.Pass != p2.ID || rec.Status != 500 {
		t.Errorf("Get(a) = %+v, %v, %v; want pass 2's 500", rec, ok, err)
	}
	if links, err := db.Links(home); err != nil || len(links) != 1 || links[0].URL != a {
		t.Errorf("Links(home) = %+v, %v", links, err)
	}
	var pages []string
	err := db.PageLinks(p2.ID, func(page *URLRecord, _ []Link) error {
		pages = append(pages, page.URL)
		return nil
	})
	if err != nil || !slices.Equal(pages, []string{home}) {
		t.Errorf("PageLinks(2) = %q, %v", pages, err)
	}
}

// modelRecord is what TestRecordIndexAgreesWithTheFile expects of a URL.
type modelRecord struct {
	pass   uint64
	status int
}

// The index of the records, checked against a map of what each URL's
// record must be, through commits that store URLs again (twice in one
// commit too), commits that fail inside their transaction, prunes in small
// chunks and reopenings. With 2 bits of hash the 60 URLs share 4 hashes,
// so nearly every lookup goes through a collision.
func TestRecordIndexAgreesWithTheFile(t *testing.T) {
	t.Parallel()
	for _, bits := range []int{0, 2} {
		t.Run(fmt.Sprintf("hashBits=%d", bits), func(t *testing.T) {
			t.Parallel()
			opt := Options{hashBits: bits}
			path := filepath.Join(t.TempDir(), "lp.db")
			db, err := Open(path, opt)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = db.Close() }()
			db.pruneChunk = 7
			rng := rand.New(rand.NewPCG(uint64(bits), 17))
			urls := make([]string, 60)
			for i := range urls {
				urls[i] = fmt.Sprintf("http://127.0.0.1/p%02d", i)
			}
			model := map[string]modelRecord{}
			check := func(when string) {
				t.Helper()
				for _, u := range urls {
					want, stored := model[u]
					rec, ok, err := db.Get(u)
					if err != nil || ok != stored || ok && (rec.Pass != want.pass || rec.Status != want.status) {
						t.Fatalf("%s: Get(%s) = pass %d status %d, %v, %v; want %+v, %v", when, u, rec.Pass, rec.Status, ok, err, want, stored)
					}
				}
				_, inFile, _ := recordEntries(t, db)
				if len(inFile) != len(model) {
					t.Fatalf("%s: %d records in the file, want %d", when, len(inFile), len(model))
				}
				byPass := map[uint64][]string{}
				for u, m := range model {
					byPass[m.pass] = append(byPass[m.pass], u)
				}
				for p, want := range byPass {
					slices.Sort(want)
					var got []string
					err := db.Records(p, func(r *URLRecord) error {
						got = append(got, r.URL)
						return nil
					})
					if err != nil || !slices.Equal(got, want) {
						t.Fatalf("%s: Records(%d) = %q, %v; want %q", when, p, got, err, want)
					}
				}
			}
			for round := range 6 {
				p := begin(t, db, home)
				for step := range 12 {
					var rs []Result
					for range 1 + rng.IntN(8) {
						u := urls[rng.IntN(len(urls))]
						r := checked(u, VerdictOK, 200+rng.IntN(300))
						rs = append(rs, r)
						model[u] = modelRecord{p.ID, r.Record.Status}
					}
					commit(t, db, p.ID, rs...)
					switch rng.IntN(4) {
					case 0:
						// Fails inside its transaction (the pass is not open),
						// which drops the index.
						if err := db.Commit(p.ID+1, []Result{checked(urls[0], VerdictBroken, 404)}); err == nil {
							t.Fatal("a commit to a pass not open succeeded")
						}
					case 1:
						if err := db.Close(); err != nil {
							t.Fatal(err)
						}
						if db, err = Open(path, opt); err != nil {
							t.Fatal(err)
						}
						db.pruneChunk = 7
					}
					check(fmt.Sprintf("pass %d step %d", p.ID, step))
				}
				finish(t, db, p, PassComplete)
				if round >= 2 {
					if _, err := db.Prune(context.Background(), 2); err != nil {
						t.Fatal(err)
					}
					for u, m := range model {
						if m.pass < p.ID-1 {
							delete(model, u)
						}
					}
					check(fmt.Sprintf("prune after pass %d", p.ID))
				}
			}
			// A reader of the file builds the index on its first Get.
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if db, err = Open(path, Options{ReadOnly: true, hashBits: bits}); err != nil {
				t.Fatal(err)
			}
			check("read-only")
		})
	}
}

// Gets beside a writer that stores the same URLs again and again always
// find a record: one that a commit replaced after the Get's transaction
// began is looked up again once the index is the file's. The readers spin
// for as long as the commits go on, so their CPU is the commits' wall
// time: 100 commits (each fsynced) and two readers. Without the look-up
// again, a Get fails within the first two commits.
func TestGetBesideCommits(t *testing.T) {
	t.Parallel()
	db, err := Open(filepath.Join(t.TempDir(), "lp.db"), Options{hashBits: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p := begin(t, db, home)
	urls := make([]string, 20)
	for i := range urls {
		urls[i] = fmt.Sprintf("http://127.0.0.1/g%d", i)
	}
	var rs []Result
	for _, u := range urls {
		rs = append(rs, checked(u, VerdictOK, 200))
	}
	commit(t, db, p.ID, rs...)
	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := r; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				u := urls[i%len(urls)]
				if _, ok, err := db.Get(u); err != nil || !ok {
					errs <- fmt.Errorf("Get(%s) beside commits: %v, %v", u, ok, err)
					return
				}
			}
		}()
	}
	for i := range 100 {
		if err := db.Commit(p.ID, []Result{checked(urls[i%len(urls)], VerdictOK, 201), checked(urls[(i*7)%len(urls)], VerdictOK, 202)}); err != nil {
			t.Error(err)
			break
		}
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestMigrateSchema5 opens a file the schema-5 build wrote (testdata, made
// by main 6b0950b): pass 1 complete (home linking /a, /b, /c; /a a page
// with an id, linking home and /b; /b ok, /c broken), pass 2 running with
// home (now linking /a, /b, /d) and /a (linking home, /c) resolved again,
// and /b, /d, /c queued. Read-only, its records read under their URLs and
// the file is left as it was; opened for writing, they move under numbers
// in URL order, and the pass goes on: a URL stored again replaces its
// record of pass 1.
func TestMigrateSchema5(t *testing.T) {
	t.Parallel()
	const a, b, c, d = "http://127.0.0.1/a", "http://127.0.0.1/b", "http://127.0.0.1/c", "http://127.0.0.1/d"
	path, orig := copyTestdata(t, "schema5.bolt", 5)
	same := func(what string, db *DB) {
		t.Helper()
		if got := resolved(t, db, 1); !slices.Equal(got, []string{b, c}) {
			t.Errorf("%s: ResolvedIn(1) = %q", what, got)
		}
		if got := resolved(t, db, 2); !slices.Equal(got, []string{home, a}) {
			t.Errorf("%s: ResolvedIn(2) = %q", what, got)
		}
		if rec, ok, err := db.Get(c); err != nil || !ok || rec.Pass != 1 || rec.Verdict != VerdictBroken || rec.Status != 404 {
			t.Errorf("%s: Get(c) = %+v, %v, %v", what, rec, ok, err)
		}
		if rec, ok, err := db.Get(a); err != nil || !ok || rec.Pass != 2 || !rec.Parsed || rec.IDs != nil {
			t.Errorf("%s: Get(a) = %+v, %v, %v; want pass 2's page", what, rec, ok, err)
		}
		if _, ok, err := db.Get(d); err != nil || ok {
			t.Errorf("%s: Get(d) = %v, %v; want none", what, ok, err)
		}
		if links, err := db.Links(home); err != nil || len(links) != 3 || links[2].URL != d {
			t.Errorf("%s: Links(home) = %+v, %v", what, links, err)
		}
		var pages []string
		err := db.PageLinks(2, func(page *URLRecord, links []Link) error {
			pages = append(pages, fmt.Sprintf("%s %d", page.URL, len(links)))
			return nil
		})
		if err != nil || !slices.Equal(pages, []string{home + " 3", a + " 2"}) {
			t.Errorf("%s: PageLinks(2) = %q, %v", what, pages, err)
		}
		if got := frontierURLs(t, db); !slices.Equal(got, []string{b, d, c}) {
			t.Errorf("%s: frontier = %q", what, got)
		}
		if quiet, _, err := db.Quiet(2); err != nil || quiet {
			t.Errorf("%s: Quiet = %v, %v; want busy", what, quiet, err)
		}
	}

	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only Open of a schema-5 file: %v", err)
	}
	same("read-only", ro)
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, orig) {
		t.Error("a read-only Open changed the schema-5 file")
	}

	db := openAt(t, path)
	same("migrated", db)
	if nums, urls, seq := recordEntries(t, db); !slices.Equal(nums, []uint64{1, 2, 3, 4}) || !slices.Equal(urls, []string{home, a, b, c}) || seq != 4 {
		t.Errorf("migrated records = %v %q (sequence %d), want 1-4 in URL order", nums, urls, seq)
	}
	commit(t, db, 2, checked(b, VerdictOK, 200), checked(d, VerdictOK, 200), checked(c, VerdictOK, 200))
	if quiet, _, err := db.Quiet(2); err != nil || !quiet {
		t.Errorf("Quiet after every task = %v, %v", quiet, err)
	}
	if nums, urls, _ := recordEntries(t, db); !slices.Equal(nums, []uint64{1, 2, 5, 6, 7}) || !slices.Equal(urls, []string{home, a, b, d, c}) {
		t.Errorf("records after the commit = %v %q; want pass 1's /b and /c replaced", nums, urls)
	}
	if got := resolved(t, db, 1); len(got) != 0 {
		t.Errorf("ResolvedIn(1) = %q, want none left", got)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if got := schemaOf(t, path); got != SchemaVersion {
		t.Errorf("after migration schema = %d, want %d", got, SchemaVersion)
	}
	again := openAt(t, path)
	if got := resolved(t, again, 2); !slices.Equal(got, []string{home, a, b, c, d}) {
		t.Errorf("ResolvedIn(2) after reopening = %q", got)
	}
}

// Damage to the records' layout of schema 6 is found by Open's verify, in
// the records: a second record of one URL (the index would keep one and
// the readers in URL order give both), a number above the sequence (it
// would be given again), a key that is no number, a value with no URL.
func TestOpenFindsDamagedRecordLayout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		bits   int
		damage func(b *bbolt.Bucket) error
	}{
		{"a URL twice", 0, func(b *bbolt.Bucket) error { return b.Put(be64(2), b.Get(be64(1))) }},
		{"a URL twice, sharing its hash", 1, func(b *bbolt.Bucket) error { return b.Put(be64(3), b.Get(be64(8))) }},
		{"above the sequence", 0, func(b *bbolt.Bucket) error { return b.Put(be64(b.Sequence()+1), b.Get(be64(1))) }},
		{"a key of 5 bytes", 0, func(b *bbolt.Bucket) error { return b.Put([]byte("abcde"), b.Get(be64(1))) }},
		{"no URL", 0, func(b *bbolt.Bucket) error { return b.Put(be64(1), []byte{0, recordFormat2}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "lp.db")
			db, err := Open(path, Options{hashBits: tc.bits})
			if err != nil {
				t.Fatal(err)
			}
			p := begin(t, db, home)
			var rs []Result
			for i := range 8 {
				rs = append(rs, checked(fmt.Sprintf("http://127.0.0.1/%d", i), VerdictOK, 200))
			}
			commit(t, db, p.ID, rs...)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			rawUpdate(t, path, func(tx *bbolt.Tx) error { return tc.damage(tx.Bucket(bucketURLs)) })
			if db, err := Open(path, Options{hashBits: tc.bits}); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "in the records of its URLs") {
				if err == nil {
					_ = db.Close()
				}
				t.Errorf("Open: %v, want ErrCorrupt in the records", err)
			}
			// A reader, which Open does not verify, finds it when it
			// builds the index (its first Get).
			ro, err := Open(path, Options{ReadOnly: true, hashBits: tc.bits})
			if err != nil {
				t.Fatal(err)
			}
			defer ro.Close()
			if _, _, err := ro.Get("http://127.0.0.1/0"); !errors.Is(err, ErrCorrupt) {
				t.Errorf("read-only Get: %v, want ErrCorrupt", err)
			}
		})
	}
}

// A writer killed (SIGKILL) at any moment leaves a file that opens, and
// whose index, built from it, agrees with it: Open's verify finds no URL
// twice, and every record of the pass is found by its URL. The child
// commits records of 300 URLs again and again, as a check's writer does
// (unsynced commits), and says after each commit how many it made; it is
// killed after a random number of them, five times over one file.
func TestKilledWriterLeavesAConsistentIndex(t *testing.T) {
	t.Parallel()
	if path := os.Getenv("LINKPATROL_STORE_KILLED_WRITER"); path != "" {
		killedWriter(t, path)
		return
	}
	path := filepath.Join(t.TempDir(), "lp.db")
	rng := rand.New(rand.NewPCG(7, 8))
	for round := range 5 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledWriterLeavesAConsistentIndex$")
		cmd.Env = append(os.Environ(), "LINKPATROL_STORE_KILLED_WRITER="+path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		after := 1 + rng.IntN(60)
		lines := bufio.NewScanner(out)
		n := 0
		for n < after && lines.Scan() {
			if strings.HasPrefix(lines.Text(), "committed ") {
				n++
			}
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_, _ = bytes.NewBuffer(nil).ReadFrom(out)
		_ = cmd.Wait()
		if n < after {
			t.Fatalf("round %d: the writer stopped after %d commits", round, n)
		}
		db, err := Open(path, Options{})
		if err != nil {
			t.Fatalf("round %d: Open after SIGKILL: %v", round, err)
		}
		open, ok, err := db.OpenPass()
		if err != nil || !ok {
			t.Fatalf("round %d: open pass %v, %v", round, ok, err)
		}
		var recs []URLRecord
		err = db.Records(open.ID, func(r *URLRecord) error {
			recs = append(recs, *r)
			return nil
		})
		if err != nil || len(recs) == 0 {
			t.Fatalf("round %d: Records: %d, %v", round, len(recs), err)
		}
		for _, r := range recs {
			got, ok, err := db.Get(r.URL)
			if err != nil || !ok || !reflect.DeepEqual(got, r) {
				t.Fatalf("round %d: Get(%s) = %+v, %v, %v; Records gave %+v", round, r.URL, got, ok, err, r)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// killedWriter is the child of TestKilledWriterLeavesAConsistentIndex.
func killedWriter(t *testing.T, path string) {
	db, err := Open(path, Options{SyncEvery: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	p, ok, err := db.OpenPass()
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		p = begin(t, db, home)
	}
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), 1))
	for i := 0; ; i++ {
		var rs []Result
		for range 32 {
			r := sitePage(rng.IntN(300), 10)
			r.Enqueue = nil
			r.Record.Status = 200 + i%100
			rs = append(rs, r)
		}
		if err := db.Commit(p.ID, rs); err != nil {
			t.Fatal(err)
		}
		fmt.Println("committed " + strconv.Itoa(i))
	}
}

// A window of passRecords ends at windowBytes (as far as the sizes are
// known) or at its count, whichever comes first, and holds at least one
// record however big.
func TestWindowEnd(t *testing.T) {
	t.Parallel()
	const mb = 1 << 20
	for _, c := range []struct {
		name         string
		sizes        []int
		lo, most, hi int
		bytes        int
	}{
		{"count first", []int{10, 10, 10, 10}, 0, 3, 3, 30},
		{"all fit", []int{10, 10, 10}, 0, 8, 3, 30},
		{"from lo", []int{10, 10, 10}, 1, 8, 3, 20},
		{"bytes first", []int{3 * mb, 3 * mb, 3 * mb, 3 * mb}, 0, 8, 2, 6 * mb},
		{"exactly the budget", []int{4 * mb, 4 * mb, 1}, 0, 8, 2, 8 * mb},
		{"one too big", []int{20 * mb, 1, 1}, 0, 8, 1, 20 * mb},
		{"next too big", []int{1, 20 * mb, 1}, 0, 8, 1, 1},
		{"at the end", []int{1, 1}, 2, 8, 2, 0},
	} {
		hi, bytes := windowEnd(len(c.sizes), c.lo, c.most, windowBytes, func(i int) int { return c.sizes[i] })
		if hi != c.hi || bytes != c.bytes {
			t.Errorf("%s: windowEnd(%v, %d, %d) = %d, %d; want %d, %d", c.name, c.sizes, c.lo, c.most, hi, bytes, c.hi, c.bytes)
		}
	}
}

// Pages whose lists fill several windows (QA9 M2: javadoc's 25 KB a
// page) come out whole and in URL order, written in another order, and
// the mean list size is kept for the next call's first window. The
// window is 64 KB here, not 8 MB, so that lists of javadoc's size fill
// several: with 8 MB, the 24 MB of lists this test wrote were read in
// one window (the first guesses 32 KB a list).
func TestPageLinksAcrossWindowsOfBigLists(t *testing.T) {
	t.Parallel()
	db, err := Open(filepath.Join(t.TempDir(), "lp.db"), Options{windowBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const pages, links = 24, 60
	p := begin(t, db, "http://127.0.0.1/p/00")
	want := make([][]Link, pages)
	for _, i := range rand.New(rand.NewPCG(1, 2)).Perm(pages) {
		r := Result{Record: record(fmt.Sprintf("http://127.0.0.1/p/%02d", i)), SetLinks: true}
		r.Record.Parsed = true
		for j := range links {
			// Long and unlike each other, as javadoc's are: ~400 bytes each.
			r.Links = append(r.Links, Link{URL: fmt.Sprintf("http://127.0.0.1/api/%d/%s/%d.html", i, strings.Repeat(strconv.Itoa(j), 360/len(strconv.Itoa(j))), j), Line: j + 1, Tag: "a", Attr: "href"})
		}
		want[i] = r.Links
		commit(t, db, p.ID, r)
	}
	got, lists := pageLinksOf(t, db, p.ID)
	if len(got) != pages {
		t.Fatalf("PageLinks gave %d pages, want %d", len(got), pages)
	}
	for i := range pages {
		if u := fmt.Sprintf("http://127.0.0.1/p/%02d", i); got[i] != u || !reflect.DeepEqual(lists[i], want[i]) {
			t.Errorf("page %d: %s with %d links, want %s with its %d", i, got[i], len(lists[i]), u, links)
		}
	}
	var total int
	err = db.view(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketLinks).ForEach(func(_, v []byte) error { total += len(v); return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	if total < 4*db.opt.windowBytes {
		t.Fatalf("lists take %d bytes, not several windows of %d", total, db.opt.windowBytes)
	}
	if h := db.passHint.Load(); h == nil || h.listMean != total/pages {
		t.Errorf("passHint = %+v, want a list mean of %d", h, total/pages)
	}
}
