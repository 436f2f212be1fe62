package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Options tune Open.
type Options struct {
	Timeout  time.Duration // how long to wait for the file lock; default 2s
	ReadOnly bool          // report/explain: shared lock, never writes
	// SyncEvery, when positive, stops commits from waiting for fsync: a
	// commit is complete once the operating system has it, which a killed
	// process (even SIGKILL) cannot undo, and the file is fsynced at most
	// this often, beside the commits that follow (see syncIfDue), and on
	// Close. It makes small, frequent commits cheap, so a kill loses only a
	// handful of results. The price is paid on a power cut or an OS crash:
	// bbolt's NoSync writes a commit's meta page with no fsync after its
	// data pages, and reuses pages freed by commits not yet synced, so the
	// file may be left damaged (ErrCorrupt at the next open or read), not
	// merely older. Zero fsyncs every commit (bbolt's default), which
	// survives a power cut losing only the commit under way.
	SyncEvery time.Duration
	// ForwardResults makes every Commit also put its results in its outbox
	// entry: a cluster worker's database, whose results a coordinator
	// writes into the merged database.
	ForwardResults bool
	// NewPass says the caller abandons the open pass, if any, before
	// anything else (check --new-pass): its frontier is dropped unread, so
	// Open does not decode it either, and a task damaged there cannot stop
	// the history from being kept (verify, migrateFrontier).
	NewPass bool

	// noFreelistSync switches to bbolt's unsynced freelist, only so that
	// the benchmarks can compare it with the synced one used here.
	noFreelistSync bool
	// hashBits, when positive, keeps only that many bits of the hashes
	// of the records' index, only so that tests can make URLs share them.
	hashBits int
	// windowBytes, when positive, replaces the windowBytes of passRecords,
	// only so that tests can fill several windows with a few small lists.
	windowBytes int
}

const defaultTimeout = 2 * time.Second

// The sentinels every Open error wraps, so the command can pick its message
// and exit code with errors.Is.
var (
	ErrLocked      = errors.New("database is in use by another linkpatrol process")
	ErrNotDatabase = errors.New("not a linkpatrol database")
	ErrCorrupt     = errors.New("database file is damaged")
	ErrTooNew      = errors.New("database was written by a newer linkpatrol")
)

// ErrNoPass is wrapped by Pass and UpdatePass when the pass is not stored.
var ErrNoPass = errors.New("no such pass")

var (
	errClosed    = errors.New("database is closed")
	errNoBuckets = errors.New("an empty bbolt file")
)

// MaxURLLength is the longest URL the store can key a record, task or link
// list by (bbolt's key limit). Commit and BeginPass refuse longer ones; the
// crawler must shorten or drop them first.
const MaxURLLength = bbolt.MaxKeySize

var (
	bucketMeta     = []byte("meta")
	bucketPasses   = []byte("passes")
	bucketURLs     = []byte("urls")
	bucketLinks    = []byte("links")
	bucketFrontier = []byte("frontier")
	bucketHosts    = []byte("hosts")
	bucketOutbox   = []byte("outbox") // since schema 2

	allBuckets = [][]byte{bucketMeta, bucketPasses, bucketURLs, bucketLinks, bucketFrontier, bucketHosts, bucketOutbox}
	// schema1Buckets are the buckets a schema-1 file has.
	schema1Buckets = allBuckets[:6]

	keyMagic    = []byte("magic")
	keySchema   = []byte("schema")
	keyNextPass = []byte("next_pass")
	keyOpenPass = []byte("open_pass")

	magic = []byte("linkpatrol")
)

// DB is an open linkpatrol database. Its methods are safe for concurrent use;
// reads run in parallel with each other and with one writer.
type DB struct {
	path string
	opt  Options
	// pruneChunk bounds the keys Prune deletes per transaction, so that
	// pruning a big file does not hold all its dirty pages in memory at once.
	pruneChunk int

	// mu is held shared by every operation and exclusively by Close and
	// Compact, which swap or drop bolt.
	mu   sync.RWMutex
	bolt *bbolt.DB

	// With Options.SyncEvery the file is fsynced on a goroutine of its
	// own (see syncIfDue). syncMu guards lastSync, syncing and syncErr;
	// syncs counts the goroutine while it runs, for Close and Compact to
	// wait on; syncFile is bbolt's Sync (a test's stand-in may block or
	// fail).
	syncMu   sync.Mutex
	lastSync time.Time
	syncing  bool
	syncErr  error
	syncs    sync.WaitGroup
	syncFile func(*bbolt.DB) error

	// residentBase is what the process had of files resident right after
	// the mapped file's pages were last dropped, as statm reads it. A file
	// above releaseAbove bytes is dropped when more than mappedBudget bytes
	// have become resident since (see release.go; tests make them smaller).
	releaseAbove, mappedBudget int64
	residentBase               atomic.Int64
	statm                      statm

	// outboxReady gets a value (if it has none) after a commit adds an
	// outbox entry; see OutboxReady.
	outboxReady chan struct{}

	// schema is the file's schema: SchemaVersion, or an older one in a
	// file opened read-only, whose frontier is still keyed by URL.
	schema uint64

	// idxMu is held by the write transactions that change the frontier or
	// the records (updateIndexed). front, the index of the frontier by
	// URL, is theirs: nil until one builds it, and after one fails. recs,
	// the index of the records by URL (records.go), only changes under
	// idxMu, after the transaction that changed the records committed;
	// it is built when a file is opened for writing, or by the first read
	// by URL of a file opened read-only, and dropped when a write fails.
	idxMu sync.Mutex
	front *frontierIndex
	recs  atomic.Pointer[recordIndex]

	// passHint sizes passRecords' slices.
	passHint atomic.Pointer[passHint]
}

func boltOptions(opt Options, openFile func(string, int, os.FileMode) (*os.File, error)) *bbolt.Options {
	return &bbolt.Options{
		Timeout:  opt.Timeout,
		ReadOnly: opt.ReadOnly,
		// The freelist is written with every commit (see doc.go): a file
		// then opens without bbolt's background scan of every page, which
		// is slow on a big file and would crash, not fail, on a damaged one.
		NoFreelistSync: opt.noFreelistSync,
		NoSync:         opt.SyncEvery > 0,
		FreelistType:   bbolt.FreelistMapType,
		OpenFile:       openFile,
	}
}

// Open opens the database at path, creating it unless opt.ReadOnly. Every
// error names the path and wraps fs.ErrNotExist or one of ErrLocked,
// ErrNotDatabase, ErrCorrupt, ErrTooNew, with a hint of what to do.
func Open(path string, opt Options) (*DB, error) {
	if opt.Timeout <= 0 {
		opt.Timeout = defaultTimeout
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && opt.ReadOnly:
		return nil, fmt.Errorf("open %s: %w (no database yet: run linkpatrol check first)", path, fs.ErrNotExist)
	case errors.Is(err, fs.ErrNotExist):
		return open(path, opt, nil)
	case err != nil:
		return nil, openError(path, err)
	case st.IsDir():
		// bbolt would call it "invalid database", which sends the user
		// looking for a damaged file rather than at the flag.
		return nil, fmt.Errorf("open %s: is a directory; give a database file, such as %s", path, filepath.Join(path, "linkpatrol.db"))
	case st.Size() == 0 && opt.ReadOnly:
		// bbolt would try to initialise it, which a read-only open cannot.
		return nil, fmt.Errorf("open %s: %w (the file is empty)", path, ErrNotDatabase)
	case st.Size() == 0 || opt.ReadOnly:
		return open(path, opt, nil)
	}
	// An existing file is first checked read-only: opening someone else's
	// bbolt file for writing would let bbolt rewrite its freelist, and a
	// damaged file is safer to inspect without writing. It is read whole
	// (verify), so that damage stops a check before its first request.
	ro := opt
	ro.ReadOnly = true
	db, err := open(path, ro, nil)
	var verified *recordIndex
	switch {
	case errors.Is(err, errNoBuckets):
		// What a crash right after creating the file leaves: adopt it.
	case err != nil:
		return nil, err
	default:
		verified, err = db.verify()
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
	}
	return open(path, opt, verified)
}

// open opens the file at path. verified is the index of the records that
// verify built, if any: a writer adopts it when the file has not changed
// since (another process may have written to it between the two opens).
func open(path string, opt Options, verified *recordIndex) (*DB, error) {
	// bbolt opens the file through this hook so that the descriptor, and
	// with it the lock, can be released if bbolt panics halfway through Open.
	var file *os.File
	openFile := func(name string, flag int, perm os.FileMode) (*os.File, error) {
		f, err := os.OpenFile(name, flag, perm)
		file = f
		return f, err
	}
	var bdb *bbolt.DB
	err := guard(path, func() error {
		var err error
		bdb, err = bbolt.Open(path, 0o644, boltOptions(opt, openFile))
		return err
	})
	if err != nil {
		if bdb == nil && file != nil && errors.Is(err, ErrCorrupt) {
			_ = file.Close()
		}
		return nil, openError(path, err)
	}
	db := &DB{path: path, opt: opt, pruneChunk: defaultPruneChunk, releaseAbove: releaseAbove, mappedBudget: mappedBudget, syncFile: (*bbolt.DB).Sync, bolt: bdb, outboxReady: make(chan struct{}, 1)}
	if err := db.check(); err != nil {
		_ = bdb.Close()
		return nil, err
	}
	if !opt.ReadOnly {
		if err := db.adoptRecordIndex(verified); err != nil {
			_ = bdb.Close()
			return nil, err
		}
	}
	db.statm = openStatm()
	if r, ok := db.statm.residentFile(); ok {
		db.residentBase.Store(r)
	}
	if !opt.ReadOnly {
		db.removeStaleCopies()
	}
	return db, nil
}

// removeStaleCopies deletes the copies a Compact killed halfway left next
// to the file (each as large as the database). Only a Compact holding the
// lock writes one, and this process holds the lock now, so any that exists
// is stale. A copy that cannot be removed is left for the next open.
func (db *DB) removeStaleCopies() {
	dir, prefix := filepath.Dir(db.path), filepath.Base(db.path)+compactSuffix
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) && e.Type().IsRegular() {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// openError maps bbolt's errors to ours.
func openError(path string, err error) error {
	switch {
	case errors.Is(err, ErrCorrupt):
		return err
	case errors.Is(err, bolterrors.ErrTimeout):
		return fmt.Errorf("open %s: %w (wait for it to finish, or use another database file)", path, ErrLocked)
	case errors.Is(err, bolterrors.ErrInvalid), errors.Is(err, bolterrors.ErrVersionMismatch):
		return fmt.Errorf("open %s: %w (%v; is this the right file?)", path, ErrNotDatabase, err)
	case errors.As(err, new(*fs.PathError)), errors.As(err, new(syscall.Errno)):
		// The system refused: permissions, a directory, no locks on this
		// file system. Its message says what to fix, and names the path
		// when it is ours: "open X: open X: ..." says nothing more.
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) && pe.Path == path {
			return err
		}
		return fmt.Errorf("open %s: %w", path, err)
	}
	// bbolt's other complaints (a bad checksum, a file too small for its
	// page size, ...) are about the bytes in the file.
	return fmt.Errorf("open %s: %w (%v; restore it from a backup, or move it aside to start afresh)", path, ErrCorrupt, err)
}

// check verifies, and for a new file writes, the meta bucket; a file of an
// older schema opened for writing is migrated.
func (db *DB) check() error {
	var fileSize int64
	if st, err := os.Stat(db.path); err == nil {
		fileSize = st.Size()
	}
	var schema uint64
	inspect := func(tx *bbolt.Tx) (fresh bool, err error) {
		// A file shorter than its own page count was cut short by a copy
		// or a full disk; reading the missing pages would fault.
		if fileSize > 0 && tx.Size() > fileSize {
			return false, fmt.Errorf("open %s: %w (it is %d bytes but should hold %d: a truncated copy? restore it from a backup, or move it aside to start afresh)",
				db.path, ErrCorrupt, fileSize, tx.Size())
		}
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			if k, _ := tx.Cursor().First(); k != nil {
				return false, fmt.Errorf("open %s: %w (it is a bbolt file holding other data; is this the right file?)", db.path, ErrNotDatabase)
			}
			return true, nil
		}
		if !bytes.Equal(meta.Get(keyMagic), magic) {
			return false, fmt.Errorf("open %s: %w (its meta bucket lacks the linkpatrol mark; is this the right file?)", db.path, ErrNotDatabase)
		}
		v := meta.Get(keySchema)
		if len(v) != 8 {
			return false, fmt.Errorf("open %s: %w (schema version unreadable; restore it from a backup, or move it aside to start afresh)", db.path, ErrCorrupt)
		}
		switch schema = binary.BigEndian.Uint64(v); {
		case schema > SchemaVersion:
			return false, fmt.Errorf("open %s: %w (schema %d, this build reads up to %d: upgrade linkpatrol)", db.path, ErrTooNew, schema, SchemaVersion)
		case schema < 1:
			return false, fmt.Errorf("open %s: %w (schema version %d)", db.path, ErrCorrupt, schema)
		}
		want := allBuckets
		if schema == 1 {
			want = schema1Buckets
		}
		for _, name := range want {
			if tx.Bucket(name) == nil {
				return false, fmt.Errorf("open %s: %w (bucket %q is missing; restore it from a backup, or move it aside to start afresh)", db.path, ErrCorrupt, name)
			}
		}
		return false, nil
	}
	var fresh bool
	err := db.view(func(tx *bbolt.Tx) (err error) {
		fresh, err = inspect(tx)
		return err
	})
	switch {
	case err != nil:
		return err
	case !fresh && schema < SchemaVersion && !db.opt.ReadOnly:
		if err := db.migrate(schema); err != nil {
			return err
		}
		db.schema = SchemaVersion
		return nil
	case !fresh:
		db.schema = schema
		// A reader of an older file sees the buckets it lacks as empty.
		return nil
	case db.opt.ReadOnly:
		return fmt.Errorf("open %s: %w (%w; run linkpatrol check to fill it)", db.path, ErrNotDatabase, errNoBuckets)
	}
	// Only a new file is written to here: opening an existing one must not
	// change it.
	db.schema = SchemaVersion
	db.recs.Store(db.newRecordIndex(0))
	return db.update(func(tx *bbolt.Tx) error {
		for _, name := range allBuckets {
			if _, err := tx.CreateBucket(name); err != nil {
				return fmt.Errorf("create bucket %s: %w", name, err)
			}
		}
		meta := tx.Bucket(bucketMeta)
		for _, kv := range []struct{ k, v []byte }{
			{keyMagic, magic},
			{keySchema, be64(SchemaVersion)},
			{keyNextPass, be64(1)},
			{keyOpenPass, be64(0)},
		} {
			if err := meta.Put(kv.k, kv.v); err != nil {
				return fmt.Errorf("write meta %s: %w", kv.k, err)
			}
		}
		return nil
	})
}

// migrate brings a file of an older schema up to SchemaVersion in one
// transaction, so a crash leaves it at one schema or the other.
func (db *DB) migrate(from uint64) error {
	var migrated *recordIndex
	err := db.update(func(tx *bbolt.Tx) error {
		if from < 2 {
			// Schema 2: the outbox, empty, since no schema-1 build forwards.
			if _, err := tx.CreateBucket(bucketOutbox); err != nil {
				return fmt.Errorf("create bucket %s: %w", bucketOutbox, err)
			}
		}
		// Schema 3: link lists of format 2 from now on; those of format 1
		// are read as they are and replaced as their pages are parsed again.
		// Schema 4: the same for lists keyed by URL and records of format 1,
		// which say nothing of where their list is (see linksUnderURL).
		if from < 5 {
			// Schema 5: the frontier keyed by number (frontier.go).
			if err := db.migrateFrontier(tx); err != nil {
				return err
			}
		}
		// Schema 6: the records keyed by number (records.go).
		x, err := db.migrateRecords(tx)
		if err != nil {
			return err
		}
		migrated = x
		return tx.Bucket(bucketMeta).Put(keySchema, be64(SchemaVersion))
	})
	if err != nil {
		return fmt.Errorf("open %s: migrate from schema %d to %d: %w", db.path, from, SchemaVersion, err)
	}
	db.recs.Store(migrated)
	return nil
}

// adoptRecordIndex gives a file opened for writing its index of the
// records: the one verify built when nothing was committed since, else a
// new one. A file just created or migrated has one already.
func (db *DB) adoptRecordIndex(verified *recordIndex) error {
	if db.recs.Load() != nil {
		return nil
	}
	return db.view(func(tx *bbolt.Tx) error {
		if st, err := os.Stat(db.path); err == nil && verified != nil && verified.txid == tx.ID() && os.SameFile(st, verified.file) {
			db.recs.Store(verified)
			return nil
		}
		x, err := db.buildRecordIndex(tx, nil)
		if err != nil {
			return err
		}
		db.recs.Store(x)
		return nil
	})
}

// Close releases the file and its lock. Later calls do nothing.
func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.bolt == nil {
		return nil
	}
	db.syncs.Wait()
	var err error
	if db.opt.SyncEvery > 0 && !db.opt.ReadOnly {
		err = db.syncFailed()
		if err == nil {
			err = guard(db.path, func() error { return db.syncFile(db.bolt) })
		}
	}
	if cerr := db.bolt.Close(); err == nil {
		err = cerr
	}
	db.bolt = nil
	db.statm.close()
	if err != nil {
		return fmt.Errorf("close %s: %w", db.path, err)
	}
	return nil
}

// Path is the file name the database was opened with.
func (db *DB) Path() string { return db.path }

// Size is the size of the file on disk in bytes, 0 if it cannot be read.
func (db *DB) Size() int64 {
	st, err := os.Stat(db.path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// callerPanic marks a panic raised by a caller's callback, so guard passes
// it on instead of blaming the file.
type callerPanic struct{ value any }

// guard runs fn, which reads or writes the mapped file, and turns a panic or
// memory fault inside bbolt into an error wrapping ErrCorrupt: bbolt trusts
// the bytes on disk and dereferences whatever a damaged page points at.
func guard(path string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if cp, ok := r.(callerPanic); ok {
			panic(cp.value)
		}
		err = fmt.Errorf("%s: %w (%v; restore it from a backup, or move it aside to start afresh)", path, ErrCorrupt, r)
	}()
	return fn()
}

// callback runs a caller's function inside a transaction, marking its panics
// as the caller's own.
func callback(fn func() error) error {
	defer func() {
		if r := recover(); r != nil {
			panic(callerPanic{r})
		}
	}()
	return fn()
}

func (db *DB) view(fn func(*bbolt.Tx) error) error {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.bolt == nil {
		return fmt.Errorf("%s: %w", db.path, errClosed)
	}
	return guard(db.path, func() error { return db.bolt.View(fn) })
}

func (db *DB) update(fn func(*bbolt.Tx) error) error {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.bolt == nil {
		return fmt.Errorf("%s: %w", db.path, errClosed)
	}
	if db.opt.ReadOnly {
		return fmt.Errorf("%s: opened read-only", db.path)
	}
	if err := db.syncFailed(); err != nil {
		return err
	}
	err := guard(db.path, func() error {
		return db.bolt.Update(func(tx *bbolt.Tx) error {
			db.releaseIfDue(tx)
			return fn(tx)
		})
	})
	if err != nil {
		return err
	}
	return db.syncIfDue()
}

// syncIfDue starts an fsync of the file when SyncEvery has passed since
// the last one ended and none is running. It runs on a goroutine of its
// own, so that the commits after it do not wait for the disk: at 100,000
// pages an fsync took 80 ms (median, loaded) and the crawl stood still
// meanwhile, since the crawler hands every result to its one writer. A
// kill is unaffected (the kernel has every commit); a power cut may
// damage the file, as it could when the writer waited, since bbolt runs
// with NoSync here (see doc.go, "bbolt settings"). A failed fsync is
// returned by every later write and by Close (see syncFailed). The caller
// holds db.mu shared, so Close and Compact, which wait for the goroutine,
// cannot have dropped db.bolt under it.
func (db *DB) syncIfDue() error {
	if db.opt.SyncEvery <= 0 {
		return nil
	}
	db.syncMu.Lock()
	defer db.syncMu.Unlock()
	if db.syncing || time.Since(db.lastSync) < db.opt.SyncEvery {
		return nil
	}
	db.syncing = true
	db.syncs.Add(1)
	b := db.bolt
	go func() {
		defer db.syncs.Done()
		err := guard(db.path, func() error { return db.syncFile(b) })
		db.syncMu.Lock()
		defer db.syncMu.Unlock()
		db.syncing, db.lastSync = false, time.Now()
		if err != nil && db.syncErr == nil {
			db.syncErr = err
		}
	}()
	return nil
}

// syncFailed is the error of a background fsync that failed, wrapped. After
// one the file may have lost writes the kernel had accepted, so nothing
// more is written through db.
func (db *DB) syncFailed() error {
	db.syncMu.Lock()
	defer db.syncMu.Unlock()
	if db.syncErr != nil {
		return fmt.Errorf("sync %s: %w", db.path, db.syncErr)
	}
	return nil
}

func be64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// corrupt reports a stored value that does not decode.
func (db *DB) corrupt(what string, key []byte, err error) error {
	if errors.Is(err, errFormat) {
		// A value this build cannot read may be one a newer build wrote
		// (a field or format it added without a schema change), not damage.
		return fmt.Errorf("%s: %w, or %w: %s %q: %v", db.path, ErrCorrupt, ErrTooNew, what, key, err)
	}
	return fmt.Errorf("%s: %w: %s %q: %v", db.path, ErrCorrupt, what, key, err)
}

// metaUint reads one of the counters in the meta bucket.
func (db *DB) metaUint(tx *bbolt.Tx, key []byte) (uint64, error) {
	v := tx.Bucket(bucketMeta).Get(key)
	if len(v) != 8 {
		return 0, db.corrupt("meta", key, errShort)
	}
	return binary.BigEndian.Uint64(v), nil
}
