package store

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/bbolt"
)

func TestOpenCreatesAndReopens(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "lp.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if db.Path() != path {
		t.Errorf("Path() = %q, want %q", db.Path(), path)
	}
	p := begin(t, db, "http://127.0.0.1/")
	commit(t, db, p.ID, page("http://127.0.0.1/", "http://127.0.0.1/a"))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, _, err := db.Get("http://127.0.0.1/"); err == nil {
		t.Error("Get after Close succeeded")
	}

	for _, ro := range []bool{false, true} {
		db, err := Open(path, Options{ReadOnly: ro})
		if err != nil {
			t.Fatalf("reopen (read-only %v): %v", ro, err)
		}
		if _, ok, err := db.Get("http://127.0.0.1/"); !ok || err != nil {
			t.Errorf("reopen (read-only %v): Get = %v, %v", ro, ok, err)
		}
		if got := frontierURLs(t, db); len(got) != 1 || got[0] != "http://127.0.0.1/a" {
			t.Errorf("reopen (read-only %v): frontier = %q", ro, got)
		}
		if ro {
			if err := db.PutHostState("h", []byte("x")); err == nil {
				t.Error("PutHostState on a read-only database succeeded")
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// Opening and closing an existing database, for reading or writing, must
// leave the file as it was: a report run must not disturb a backup's mtime
// or bytes, and a check only writes what it commits.
func TestOpenDoesNotWriteAnExistingFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "lp.db")
	db := openAt(t, path)
	p := begin(t, db, home)
	commit(t, db, p.ID, page(home, about))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	for _, ro := range []bool{true, false} {
		db, err := Open(path, Options{ReadOnly: ro})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
			t.Errorf("Open and Close (read-only %v) changed the file", ro)
		}
	}
}

func TestOpenReadOnlyNeedsAnExistingDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := Open(filepath.Join(dir, "missing.db"), Options{ReadOnly: true})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: err = %v, want fs.ErrNotExist", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.db")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("a read-only Open created the file")
	}

	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(empty, Options{ReadOnly: true}); !errors.Is(err, ErrNotDatabase) {
		t.Errorf("empty file, read-only: err = %v, want ErrNotDatabase", err)
	}
	// Written to, an empty file simply becomes a new database.
	db := openAt(t, empty)
	if _, ok, err := db.LastPass(); ok || err != nil {
		t.Errorf("LastPass of a new database = %v, %v", ok, err)
	}
}

// bbolt locks with flock, which conflicts between two open file descriptions
// even in one process, so a second Open here behaves as another process would.
func TestOpenLocked(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "lp.db")
	openAt(t, path)
	for _, ro := range []bool{false, true} {
		db, err := Open(path, Options{Timeout: 50 * time.Millisecond, ReadOnly: ro})
		if !errors.Is(err, ErrLocked) {
			t.Errorf("second Open (read-only %v): err = %v, want ErrLocked", ro, err)
		}
		if db != nil {
			t.Errorf("second Open (read-only %v) returned a DB", ro)
		}
	}
}

func TestOpenReadOnlySharesTheLock(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "lp.db")
	db := openAt(t, path)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	a, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(path, Options{ReadOnly: true, Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("second read-only Open: %v", err)
	}
	defer b.Close()
	if _, err := Open(path, Options{Timeout: 50 * time.Millisecond}); !errors.Is(err, ErrLocked) {
		t.Errorf("writer while readers hold the file: err = %v, want ErrLocked", err)
	}
}

// filledDB writes a database with enough pages that cutting it short loses
// data, and returns its bytes and how many of them its pages use. The
// file is made once for each opt, by its first caller (six tests ask for
// one, five with the same opt), and each caller gets a copy of its own.
func filledDB(t *testing.T, opt Options) (content []byte, used int) {
	t.Helper()
	filledOnce.Lock()
	defer filledOnce.Unlock() // t.Fatal included: the next caller tries again
	f, ok := filledOnce.files[opt]
	if !ok {
		f.content, f.used = fillDB(t, opt)
		if filledOnce.files == nil {
			filledOnce.files = map[Options]filled{}
		}
		filledOnce.files[opt] = f
	}
	return bytes.Clone(f.content), f.used
}

// filledOnce holds filledDB's files once made, by their options.
var filledOnce struct {
	sync.Mutex
	files map[Options]filled
}

type filled struct {
	content []byte
	used    int
}

// fillDB writes filledDB's file.
func fillDB(t *testing.T, opt Options) (content []byte, used int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "real.db")
	db, err := Open(path, opt)
	if err != nil {
		t.Fatal(err)
	}
	p := begin(t, db, "http://127.0.0.1:8080/")
	results := make([]Result, 400)
	for i := range results {
		results[i] = sitePage(i, 20)
	}
	commit(t, db, p.ID, results...)
	if err := db.PutHostState("127.0.0.1:8080", []byte("state")); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bdb, err := bbolt.Open(path, 0, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	err = bdb.View(func(tx *bbolt.Tx) error { used = int(tx.Size()); return nil })
	if err != nil {
		t.Fatal(err)
	}
	return b, used
}

func TestOpenRejectsOtherFiles(t *testing.T) {
	t.Parallel()
	real, used := filledDB(t, Options{})
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 64<<10)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	tests := []struct {
		name    string
		content []byte
		want    error
	}{
		{"random bytes", random, ErrNotDatabase},
		{"text file", bytes.Repeat([]byte("not a database, just some notes\n"), 300), ErrNotDatabase},
		{"short text file", []byte("hello\n"), ErrNotDatabase},
		{"first page only", real[:4096], ErrCorrupt},
		{"truncated to half", real[:used/2], ErrCorrupt},
		{"last page missing", real[:used-4096], ErrCorrupt},
	}
	for _, tt := range tests {
		for _, ro := range []bool{false, true} {
			path := filepath.Join(t.TempDir(), "lp.db")
			if err := os.WriteFile(path, tt.content, 0o644); err != nil {
				t.Fatal(err)
			}
			db, err := Open(path, Options{ReadOnly: ro})
			if !errors.Is(err, tt.want) {
				t.Errorf("%s (read-only %v): err = %v, want %v", tt.name, ro, err, tt.want)
			}
			if db != nil {
				_ = db.Close()
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(after, tt.content) {
				t.Errorf("%s (read-only %v): Open changed the file", tt.name, ro)
			}
		}
	}
}

// boltFile writes a bbolt file with fn and returns its path.
func boltFile(t *testing.T, fn func(*bbolt.Tx) error) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "other.db")
	b, err := bbolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Update(fn); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOpenRejectsSomeoneElsesBoltFile(t *testing.T) {
	t.Parallel()
	path := boltFile(t, func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucket([]byte("sessions"))
		if err != nil {
			return err
		}
		return b.Put([]byte("alice"), []byte("token"))
	})
	before, _ := os.ReadFile(path)
	for _, ro := range []bool{false, true} {
		if _, err := Open(path, Options{ReadOnly: ro}); !errors.Is(err, ErrNotDatabase) {
			t.Errorf("read-only %v: err = %v, want ErrNotDatabase", ro, err)
		}
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Error("Open changed someone else's file")
	}
}

// rewriteMeta changes one key of the meta bucket of a closed database.
func rewriteMeta(t *testing.T, path string, key, value []byte) {
	t.Helper()
	b, err := bbolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	err = b.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketMeta).Put(key, value) })
	if err != nil {
		t.Fatal(err)
	}
}

func TestOpenChecksTheMark(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		key, value []byte
		want       error
	}{
		{"newer schema", keySchema, binary.BigEndian.AppendUint64(nil, SchemaVersion+1), ErrTooNew},
		{"schema zero", keySchema, binary.BigEndian.AppendUint64(nil, 0), ErrCorrupt},
		{"schema unreadable", keySchema, []byte("v1"), ErrCorrupt},
		{"other magic", keyMagic, []byte("someoneelse"), ErrNotDatabase},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "lp.db")
			if err := openAt(t, path).Close(); err != nil {
				t.Fatal(err)
			}
			rewriteMeta(t, path, tt.key, tt.value)
			for _, ro := range []bool{false, true} {
				if _, err := Open(path, Options{ReadOnly: ro}); !errors.Is(err, tt.want) {
					t.Errorf("read-only %v: err = %v, want %v", ro, err, tt.want)
				}
			}
		})
	}
}

func TestOpenEmptyBoltFile(t *testing.T) {
	t.Parallel()
	// A bbolt file without buckets is what a crash right after creating the
	// file leaves: a writer adopts it, a reader has nothing to read.
	path := boltFile(t, func(*bbolt.Tx) error { return nil })
	if _, err := Open(path, Options{ReadOnly: true}); !errors.Is(err, ErrNotDatabase) {
		t.Errorf("read-only: err = %v, want ErrNotDatabase", err)
	}
	db := openAt(t, path)
	if _, err := db.BeginPass(Pass{StartURLs: []string{"http://127.0.0.1/"}}, nil); err != nil {
		t.Errorf("BeginPass on an adopted file: %v", err)
	}
}

// TestDamagedPagesNeverCrash overwrites runs of pages of a real database with
// garbage and reads everything back: every failure must be a clear error, no
// panic and no fault, in Open or any later read.
func TestDamagedPagesNeverCrash(t *testing.T) {
	t.Parallel()
	real, used := filledDB(t, Options{})
	const pageSize = 4096
	pages := used / pageSize
	rng := rand.New(rand.NewPCG(3, 4))
	sentinels := []error{ErrCorrupt, ErrNotDatabase, ErrTooNew}
	for trial := range 60 {
		damaged := bytes.Clone(real)
		first := 2 + rng.IntN(pages-2)
		n := 1 + rng.IntN(3)
		for i := first * pageSize; i < min(len(damaged), (first+n)*pageSize); i++ {
			switch trial % 3 {
			case 0:
				damaged[i] = byte(rng.Uint32())
			case 1:
				damaged[i] = 0xff
			case 2:
				if rng.IntN(64) == 0 {
					damaged[i] ^= 1 << rng.IntN(8)
				}
			}
		}
		path := filepath.Join(t.TempDir(), "lp.db")
		if err := os.WriteFile(path, damaged, 0o644); err != nil {
			t.Fatal(err)
		}
		err := readEverything(path, Options{})
		if err != nil && !errorsIsAny(err, sentinels) {
			t.Errorf("trial %d (pages %d..%d): err = %v, want one of the sentinels", trial, first, first+n-1, err)
		}
		// Damage a later read or write meets is found by Open already:
		// a check finds it before its first request (verify).
		if db, openErr := Open(path, Options{}); openErr == nil {
			_ = db.Close()
			if err != nil {
				t.Errorf("trial %d (pages %d..%d): Open found nothing, then: %v", trial, first, first+n-1, err)
			}
		}
	}
}

func errorsIsAny(err error, targets []error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}

// readEverything opens the file and reads all it holds through the API.
func readEverything(path string, opt Options) error {
	db, err := Open(path, opt)
	if err != nil {
		return err
	}
	defer db.Close()
	p, _, err := db.OpenPass()
	if err != nil {
		return err
	}
	if _, err := db.Frontier(); err != nil {
		return err
	}
	var urls []string
	if err := db.ResolvedIn(p.ID, func(u string) error { urls = append(urls, u); return nil }); err != nil {
		return err
	}
	if err := db.Records(p.ID, func(*URLRecord) error { return nil }); err != nil {
		return err
	}
	if err := db.PageLinks(p.ID, func(*URLRecord, []Link) error { return nil }); err != nil {
		return err
	}
	for _, u := range urls {
		if _, _, err := db.Get(u); err != nil {
			return err
		}
		if _, err := db.Links(u); err != nil {
			return err
		}
	}
	if err := db.ForEachHostState(func(string, []byte) error { return nil }); err != nil {
		return err
	}
	// Writing into a damaged file must fail cleanly too.
	return db.Commit(p.ID, []Result{sitePage(1, 20), sitePage(100_001, 20)})
}

// TestUnsyncedFreelistCrashesOnDamage is why the store syncs the freelist
// (see doc.go): without it, opening a file for writing makes bbolt rebuild
// the freelist on a goroutine of its own, where a damaged page panics beyond
// any recover and kills the process. The crash happens in a child process;
// TestDamagedPagesNeverCrash is the same damage with the freelist synced.
func TestUnsyncedFreelistCrashesOnDamage(t *testing.T) {
	t.Parallel()
	if path := os.Getenv("LINKPATROL_STORE_DAMAGED"); path != "" {
		// Straight to the read-write open: Open's read-only verify, which
		// reads every page before, finds the damage first.
		db, err := open(path, Options{noFreelistSync: true}, nil)
		if err == nil {
			err = db.Close()
		}
		// bbolt's scan can go on after Open has returned, on its own
		// goroutine, and crash there: wait for the scan to end, not only
		// for Open. The race runtime's second before exit used to give it
		// that time by chance; internal/testmain.Exit no longer waits.
		for deadline := time.Now().Add(time.Minute); bboltScanning() && time.Now().Before(deadline); {
			<-time.After(10 * time.Millisecond) // polling a condition: another goroutine's end
		}
		t.Logf("survived: %v", err)
		return
	}
	real, used := filledDB(t, Options{noFreelistSync: true})
	damaged := bytes.Clone(real)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := used / 2; i < used; i++ {
		damaged[i] = byte(rng.Uint32())
	}
	path := filepath.Join(t.TempDir(), "lp.db")
	if err := os.WriteFile(path, damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestUnsyncedFreelistCrashesOnDamage$", "-test.v")
	cmd.Env = append(os.Environ(), "LINKPATROL_STORE_DAMAGED="+path)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "freepages") {
		t.Errorf("bbolt no longer crashes on a damaged file with an unsynced freelist (err %v); "+
			"NoFreelistSync could be reconsidered. Output:\n%s", err, out)
	}
}

// bboltScanning says whether a goroutine is still in bbolt's scan of a
// file for its free pages (DB.freepages).
func bboltScanning() bool {
	buf := make([]byte, 1<<20)
	return bytes.Contains(buf[:runtime.Stack(buf, true)], []byte("bbolt.(*DB).freepages"))
}

// The messages of a wrong --db: a directory is named as one (not as a
// damaged database), and a missing directory names the path once.
func TestOpenErrorsSayWhatIsWrong(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, "no", "such", "x.db")
	for _, tc := range []struct {
		name, path, want string
	}{
		{"directory", dir, "open " + dir + ": is a directory; give a database file, such as " + filepath.Join(dir, "linkpatrol.db")},
		{"missing parent", missing, "open " + missing + ": no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := Open(tc.path, Options{})
			if err == nil {
				db.Close()
				t.Fatal("opened")
			}
			if err.Error() != tc.want {
				t.Errorf("error %q, want %q", err, tc.want)
			}
		})
	}
}

// A file TestDamagedPagesNeverCrash once damaged so that bbolt's cursor went
// round for ever in the links bucket (CI hung for 10 minutes): reading it
// must end, with ErrCorrupt or another sentinel.
func TestDamagedCycleEnds(t *testing.T) {
	t.Parallel()
	gz, err := os.ReadFile(filepath.Join("testdata", "cycle.bolt.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "lp.db")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := readEverything(path, Options{}); err == nil || !errorsIsAny(err, []error{ErrCorrupt, ErrNotDatabase, ErrTooNew}) {
		t.Errorf("err = %v, want a sentinel", err)
	}
}
