package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"go.etcd.io/bbolt"
)

// history stores five passes: 1 complete (home, about, gone), 2 complete
// (home, about), 3 abandoned (about), 4 complete (home), 5 open (ext).
func history(t *testing.T, db *DB) {
	t.Helper()
	steps := []struct {
		state   PassState
		results []Result
	}{
		{PassComplete, []Result{page(home, about, gone), page(about), checked(gone, VerdictBroken, 404)}},
		{PassComplete, []Result{page(home, about), page(about)}},
		{PassAbandoned, []Result{page(about, ext)}},
		{PassComplete, []Result{page(home)}},
		{PassRunning, []Result{checked(ext, VerdictOK, 200)}},
	}
	for _, s := range steps {
		p := begin(t, db, home)
		commit(t, db, p.ID, s.results...)
		if s.state != PassRunning {
			finish(t, db, p, s.state)
		}
	}
}

func TestPrune(t *testing.T) {
	t.Parallel()
	tests := []struct {
		keep       int
		want       PruneStats
		passesLeft []uint64
		urlsLeft   []string
	}{
		{keep: 3, want: PruneStats{}, passesLeft: []uint64{1, 2, 3, 4, 5}, urlsLeft: []string{about, ext, gone, home}},
		{keep: 5, want: PruneStats{}, passesLeft: []uint64{1, 2, 3, 4, 5}, urlsLeft: []string{about, ext, gone, home}},
		// Pass 1 goes, and gone, last resolved in it.
		{keep: 2, want: PruneStats{Passes: 1, URLs: 1}, passesLeft: []uint64{2, 3, 4, 5}, urlsLeft: []string{about, ext, home}},
		// Passes 1-3 go, and about, last resolved (with its link) in pass 3.
		{keep: 1, want: PruneStats{Passes: 3, URLs: 2, LinkLists: 1, Links: 1}, passesLeft: []uint64{4, 5}, urlsLeft: []string{ext, home}},
	}
	for _, tt := range tests {
		for _, chunk := range []int{1, defaultPruneChunk} {
			db := openTemp(t)
			db.pruneChunk = chunk
			history(t, db)
			st, err := db.Prune(context.Background(), tt.keep)
			if err != nil || st != tt.want {
				t.Errorf("Prune(%d) (chunk %d) = %+v, %v; want %+v", tt.keep, chunk, st, err, tt.want)
			}
			var passes []uint64
			for id := uint64(1); id <= 5; id++ {
				if _, err := db.Pass(id); err == nil {
					passes = append(passes, id)
				} else if !errors.Is(err, ErrNoPass) {
					t.Fatal(err)
				}
			}
			if !slices.Equal(passes, tt.passesLeft) {
				t.Errorf("Prune(%d): passes left %v, want %v", tt.keep, passes, tt.passesLeft)
			}
			var urls []string
			for id := uint64(1); id <= 5; id++ {
				urls = append(urls, resolved(t, db, id)...)
			}
			slices.Sort(urls)
			slices.Sort(tt.urlsLeft)
			if !slices.Equal(urls, tt.urlsLeft) {
				t.Errorf("Prune(%d): URLs left %q, want %q", tt.keep, urls, tt.urlsLeft)
			}
			for _, u := range []string{about, gone} {
				if !slices.Contains(urls, u) {
					if links, _ := db.Links(u); links != nil {
						t.Errorf("Prune(%d): the links of pruned %s remain", tt.keep, u)
					}
				}
			}
			if got, ok, _ := db.OpenPass(); !ok || got.ID != 5 {
				t.Errorf("Prune(%d) touched the open pass: %+v, %v", tt.keep, got, ok)
			}
		}
	}
}

func TestPruneRejectsKeepZero(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	history(t, db)
	if _, err := db.Prune(context.Background(), 0); err == nil {
		t.Error("Prune(0) succeeded")
	}
}

// bloated returns a database whose first pass, 3,000 pages with 20 links,
// has been pruned away, leaving most of the file free: a copy of one file,
// made for the package's first caller, in the test's temporary directory.
// Four tests use it, and making it costs about 0.4 CPU-s under -race.
func bloated(t *testing.T) (*DB, Pass) {
	t.Helper()
	file, p2 := bloatedFile(t)
	path := filepath.Join(t.TempDir(), "linkpatrol.db")
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	return openAt(t, path), p2
}

// bloatedOnce holds the bytes of bloated's file once made.
var bloatedOnce struct {
	sync.Mutex
	file []byte
	pass Pass
}

func bloatedFile(t *testing.T) ([]byte, Pass) {
	t.Helper()
	bloatedOnce.Lock()
	defer bloatedOnce.Unlock() // t.Fatal included: the next caller tries again
	if bloatedOnce.file != nil {
		return bloatedOnce.file, bloatedOnce.pass
	}
	db := openTemp(t)
	p := begin(t, db, home)
	results := make([]Result, 0, 500)
	for i := range 3000 {
		results = append(results, sitePage(i, 20))
		if len(results) == cap(results) {
			commit(t, db, p.ID, results...)
			results = results[:0]
		}
	}
	finish(t, db, p, PassComplete)
	p2 := begin(t, db, home)
	commit(t, db, p2.ID, page(home, about))
	p2 = finish(t, db, p2, PassComplete)
	if _, err := db.Prune(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(db.Path())
	if err != nil {
		t.Fatal(err)
	}
	bloatedOnce.file, bloatedOnce.pass = file, p2
	return file, p2
}

func TestCompact(t *testing.T) {
	t.Parallel()
	db, p2 := bloated(t)
	path := db.Path()
	before, after, err := db.Compact(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if after >= before/2 || after != db.Size() {
		t.Errorf("Compact: %d -> %d bytes (Size %d); most of the file was free", before, after, db.Size())
	}
	if got := resolved(t, db, p2.ID); !slices.Equal(got, []string{home}) {
		t.Errorf("after Compact the pass resolved %q", got)
	}
	if links, err := db.Links(home); err != nil || len(links) != 1 || links[0].URL != about {
		t.Errorf("after Compact Links = %+v, %v", links, err)
	}
	// The lock moved to the new file with it.
	if _, err := Open(path, Options{Timeout: 50 * time.Millisecond}); !errors.Is(err, ErrLocked) {
		t.Errorf("Open during the compacted DB's life: err = %v, want ErrLocked", err)
	}
	p3 := begin(t, db, home)
	commit(t, db, p3.ID, page(home, ext))
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("Compact left files behind: %v", entries)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openAt(t, path)
	if got := resolved(t, db, p3.ID); !slices.Equal(got, []string{home}) {
		t.Errorf("after reopening the compacted file, pass 3 resolved %q", got)
	}

	// Done once, a second compaction is not worth it.
	before, after, err = db.Compact(context.Background())
	if err != nil || before != after {
		t.Errorf("second Compact = %d, %d, %v; want no rewrite", before, after, err)
	}
}

// A file can have a quarter of its pages free and still come out of a copy
// just as large: bbolt sizes a small file to a power of two. The end of
// every first pass of a 10,000-page check was such a copy, 16 MiB to 16 MiB.
func TestCompactOnlyWhenTheFileShrinks(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	value := make([]byte, 40<<10)
	put := func(prefix string, n int) {
		t.Helper()
		err := db.bolt.Update(func(tx *bbolt.Tx) error {
			for i := range n {
				if err := tx.Bucket(bucketLinks).Put([]byte(fmt.Sprintf("%s%04d", prefix, i)), value); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	put("kept", 125) // 5 MiB of data: a copy is a file of 8 MiB
	put("gone", 50)
	err := db.bolt.Update(func(tx *bbolt.Tx) error {
		for i := range 50 {
			if err := tx.Bucket(bucketLinks).Delete([]byte(fmt.Sprintf("gone%04d", i))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(db.Path())
	if err != nil {
		t.Fatal(err)
	}
	s := db.bolt.Stats()
	free := int64(s.FreePageN+s.PendingPageN) * int64(db.bolt.Info().PageSize)
	if info.Size() != 8<<20 || free < compactMinFree || free*compactMinShare < info.Size() {
		t.Fatalf("the test needs a file of 8 MiB with a quarter of it free: %d bytes, %d free", info.Size(), free)
	}
	before, after, err := db.Compact(context.Background())
	if err != nil || before != after {
		t.Errorf("Compact = %d, %d, %v; want no rewrite", before, after, err)
	}
	if now, _ := os.Stat(db.Path()); !os.SameFile(info, now) {
		t.Error("Compact copied a file into one of the same size")
	}
}

// copySize says how large a file Compact's copy makes, near enough to tell
// whether the copy is worth it.
func TestCopySize(t *testing.T) {
	t.Parallel()
	db, _ := bloated(t)
	var inUse, data int64
	err := db.bolt.View(func(tx *bbolt.Tx) error {
		s := db.bolt.Stats()
		inUse = tx.Size() - int64(s.FreePageN+s.PendingPageN)*int64(db.bolt.Info().PageSize)
		return tx.ForEach(func(_ []byte, b *bbolt.Bucket) error {
			st := b.Stats()
			data += int64(st.BranchInuse + st.LeafInuse + st.InlineBucketInuse)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	// The copy's file is the size copySize says, mapped that large from
	// the start (as Compact does) or grown by bbolt from nothing.
	size := copySize(inUse, data, int64(db.bolt.AllocSize))
	for _, mapped := range []int64{size, 0} {
		dst, tmp, err := db.copyTo(context.Background(), 0o600, mapped)
		if err != nil {
			t.Fatal(err)
		}
		if err := dst.Close(); err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(tmp)
		if err != nil {
			t.Fatal(err)
		}
		if size != info.Size() {
			t.Errorf("copySize(%d, %d) = %d, but the copy mapped at %d is %d bytes", inUse, data, size, mapped, info.Size())
		}
		if err := os.Remove(tmp); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct{ inUse, data, want int64 }{
		{0, 0, 32 << 10},
		{12 << 20, 8 << 20, 16 << 20},  // the copy's pages come to more than 8 MiB
		{12 << 20, 7 << 20, 8 << 20},   // ... and here to less
		{40 << 20, 20 << 20, 40 << 20}, // a big file grows page by page
	} {
		if got := copySize(tt.inUse, tt.data, 16<<20); got != tt.want {
			t.Errorf("copySize(%d, %d) = %d, want %d", tt.inUse, tt.data, got, tt.want)
		}
	}
}

func TestCompactCancelled(t *testing.T) {
	t.Parallel()
	db, p2 := bloated(t)
	info, err := os.Stat(db.Path())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := db.Compact(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Compact with a cancelled context: err = %v", err)
	}
	now, err := os.Stat(db.Path())
	if err != nil || !os.SameFile(info, now) {
		t.Error("a cancelled Compact replaced the file")
	}
	if entries, _ := os.ReadDir(filepath.Dir(db.Path())); len(entries) != 1 {
		t.Errorf("a cancelled Compact left files behind: %v", entries)
	}
	if got := resolved(t, db, p2.ID); !slices.Equal(got, []string{home}) {
		t.Errorf("after a cancelled Compact the pass resolved %q", got)
	}
}

func TestCompactSmallFileIsLeftAlone(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	history(t, db)
	info, _ := os.Stat(db.Path())
	before, after, err := db.Compact(context.Background())
	if err != nil || before != after || before != info.Size() {
		t.Errorf("Compact = %d, %d, %v; want no rewrite of a %d-byte file", before, after, err, info.Size())
	}
	if now, _ := os.Stat(db.Path()); !os.SameFile(info, now) {
		t.Error("Compact replaced a file it had nothing to gain from")
	}
}

// A prune stopped between its transactions leaves a consistent file and
// says why it stopped; the next prune finishes the work.
func TestPruneStops(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	history(t, db)
	db.pruneChunk = 1
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := db.Prune(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("Prune with a stop: %v, want context.Canceled", err)
	}
	st, err := db.Prune(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := (PruneStats{Passes: 3, URLs: 2, LinkLists: 1, Links: 1}); st != want {
		t.Errorf("Prune after a stop: %+v, want %+v", st, want)
	}
}

// The copy a Compact killed halfway leaves is removed when the database is
// next opened for writing, never by a reader, and nothing else is touched.
func TestStaleCompactCopyRemoved(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	path := db.Path()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(path)
	stale := path + compactSuffix + "123456"
	other := filepath.Join(dir, "other.db"+compactSuffix+"1")
	for _, f := range []string{stale, other} {
		if err := os.WriteFile(f, make([]byte, 1<<16), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	ro.Close()
	if _, err := os.Stat(stale); err != nil {
		t.Fatalf("a read-only open removed the copy: %v", err)
	}
	rw, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale copy still there: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another database's copy was removed: %v", err)
	}
}
