package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"os"
	"slices"
	"sync"

	"go.etcd.io/bbolt"
)

// The records in the order they are written (schema 6).
//
// A record is stored under the next number of the urls bucket's sequence
// (8 bytes big-endian, from 1), its URL in the value before the record, so
// a commit's records go onto the last leaf, which bbolt fills whole. Keyed
// by URL, each of a commit's ~32 records went to a random leaf of the
// largest bucket but one; at 100,000 pages each of those leaves also
// brought a branch page of its own, and the commit's cost per page doubled
// against 10,000 (issue 17). A record that replaces an older one of its URL
// deletes it in the same transaction: in a pass that resolves URLs in
// about the order of the last one, those deletes walk the bucket from its
// front.
//
// Finding a record by URL goes through recordIndex, in memory, built from
// the bucket when the file is opened for writing (or by the first read by
// URL of a file opened read-only): the index is derived, never stored, so
// whatever a kill leaves, the index of the file that opens agrees with it.
// The readers that give records in URL order (Records, PageLinks,
// ResolvedIn; report.Merge relies on it) collect the pass's records in one
// scan of the bucket and sort them in memory (passRecords).

// numberKeyLen is the length of a key of the frontier (schema 5) and of
// the records (schema 6): a number of the bucket's sequence, big-endian.
const numberKeyLen = 8

// urlEntry splits a value stored under a number, the URL first (a task
// of schema 5, a record of schema 6), into the URL and what follows it.
func urlEntry(k, v []byte) (url, rest []byte, err error) {
	if len(k) != numberKeyLen {
		return nil, nil, fmt.Errorf("key of %d bytes: %w", len(k), errFormat)
	}
	d := decoder{b: v}
	url = d.span()
	if d.err == nil && len(url) == 0 {
		d.fail(errFormat)
	}
	if d.err != nil {
		return nil, nil, d.err
	}
	return url, d.b, nil
}

// recordEntry splits the entry k, v of the urls bucket of schema 6 into
// the URL and the record's encoding, and reads the record's pass and where
// its page's link list is.
func (db *DB) recordEntry(k, v []byte) (url, rec []byte, pass, linksAt uint64, err error) {
	url, rec, err = urlEntry(k, v)
	if err == nil {
		pass, linksAt, err = recordHead(rec)
	}
	if err != nil {
		return nil, nil, 0, 0, db.corrupt("record", k, err)
	}
	return url, rec, pass, linksAt, nil
}

// appendRecordEntry encodes r as the urls bucket holds it since schema 6:
// its URL, then the record as appendStoredRecord writes it.
func appendRecordEntry(buf []byte, r *URLRecord, linksAt uint64) ([]byte, error) {
	e := encoder{buf: buf}
	e.str(r.URL)
	return appendStoredRecord(e.bytes(), r, linksAt)
}

// recordIndex maps the URL of every record in the urls bucket to its
// number. It is keyed by one 64-bit hash of the URL: the map holds no
// pointers for the garbage collector to scan and no copy of the URLs (at
// 100,000 generated pages 110,253 records, 2.5 MiB). at holds, for each
// hash, the number of one URL with that hash; a URL whose hash another URL
// holds in at is in more, by its whole URL. Which of two URLs of one hash
// a number in at belongs to is told by the URL stored in the entry, so a
// collision costs a read, never a wrong record. A URL is in at or in
// more, never both. Numbers are never given twice, so a number found
// where a URL's was expected says whose it is.
//
// The writer (a transaction holding DB.idxMu) changes it only after its
// transaction has committed (recordsTx.apply), so that it never names a
// record that no committed transaction wrote; mu lets readers look it up
// meanwhile.
type recordIndex struct {
	mu   sync.RWMutex
	seed maphash.Seed
	mask uint64 // all ones but in tests (Options.hashBits)
	at   map[uint64]uint64
	more map[string]uint64
	// txid and file are the transaction and the file the index was built
	// from, for Open to tell whether the file changed between verify and
	// the open for writing.
	txid int
	file os.FileInfo
}

func (db *DB) newRecordIndex(n int) *recordIndex {
	x := &recordIndex{seed: maphash.MakeSeed(), mask: ^uint64(0), at: make(map[uint64]uint64, n), more: map[string]uint64{}}
	if b := db.opt.hashBits; b > 0 && b < 64 {
		x.mask = 1<<b - 1
	}
	return x
}

func (x *recordIndex) hash(url []byte) uint64 { return maphash.Bytes(x.seed, url) & x.mask }

// lookup returns the numbers x has for url's hash in at and for url in
// more (0: none).
func (x *recordIndex) lookup(h uint64, url []byte) (at, more uint64) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	at = x.at[h]
	if len(x.more) > 0 {
		more = x.more[string(url)]
	}
	return at, more
}

// errStale says that the index names a record the transaction reading it
// does not hold: a commit replaced or pruned it between the reader's look
// at the index and the start of its transaction (see readByURL).
var errStale = errors.New("record index behind the transaction")

// findRecord finds the record of url in b through the numbers at and more
// that an index holds for it: its number and the record's encoding (after
// the URL), or 0 and nil when it has none.
func (db *DB) findRecord(b *bbolt.Bucket, url []byte, at, more uint64) (uint64, []byte, error) {
	if at != 0 {
		v := b.Get(be64(at))
		if v == nil {
			return 0, nil, errStale
		}
		u, rec, err := urlEntry(be64(at), v)
		if err != nil {
			return 0, nil, db.corrupt("record", be64(at), err)
		}
		if bytes.Equal(u, url) {
			return at, rec, nil
		}
	}
	if more == 0 {
		return 0, nil, nil
	}
	v := b.Get(be64(more))
	if v == nil {
		return 0, nil, errStale
	}
	u, rec, err := urlEntry(be64(more), v)
	switch {
	case err != nil:
		return 0, nil, db.corrupt("record", be64(more), err)
	case !bytes.Equal(u, url):
		return 0, nil, db.corrupt("record", be64(more), fmt.Errorf("holds %s where %s was looked for", u, url))
	}
	return more, rec, nil
}

// buildRecordIndex reads every record of the urls bucket of schema 6 into
// an index, checking each one's number against the bucket's sequence and
// that no URL has two; check, when not nil, is called with each entry too
// (verify decodes them). At 100,000 generated pages (110,253 records, a
// 27 MB bucket) it takes about 20 ms of CPU.
func (db *DB) buildRecordIndex(tx *bbolt.Tx, check func(k, v []byte) error) (*recordIndex, error) {
	b := tx.Bucket(bucketURLs)
	x := db.newRecordIndex(0)
	x.txid = tx.ID()
	seq := b.Sequence()
	err := db.scan(tx, b, func(k, v []byte) error {
		url, _, err := urlEntry(k, v)
		if err != nil {
			return db.corrupt("record", k, err)
		}
		n := binary.BigEndian.Uint64(k)
		if n > seq {
			// It would be given again, and the record overwritten.
			return db.corrupt("record", k, fmt.Errorf("above the bucket's sequence %d", seq))
		}
		if check != nil {
			if err := check(k, v); err != nil {
				return err
			}
		}
		h := x.hash(url)
		at, ok := x.at[h]
		if !ok {
			x.at[h] = n
			return nil
		}
		if other, _, err := urlEntry(be64(at), b.Get(be64(at))); err != nil || bytes.Equal(other, url) {
			return db.corrupt("record", k, fmt.Errorf("a second record of %s (the other is %d)", url, at))
		}
		if _, twice := x.more[string(url)]; twice {
			return db.corrupt("record", k, fmt.Errorf("a second record of %s", url))
		}
		x.more[string(url)] = n
		return nil
	})
	if err != nil {
		return nil, err
	}
	return x, nil
}

// recordIndexOf returns the index of the records, building it when db has
// none (a file opened read-only, or after a failed write). The caller does
// not hold idxMu.
func (db *DB) recordIndexOf() (*recordIndex, error) {
	if x := db.recs.Load(); x != nil {
		return x, nil
	}
	db.idxMu.Lock()
	defer db.idxMu.Unlock()
	return db.recordIndexLocked(nil)
}

// recordIndexLocked is recordIndexOf for a caller holding idxMu; it builds
// the index from tx when it is not nil (a write transaction that has not
// changed the urls bucket yet), else from a read transaction of its own.
func (db *DB) recordIndexLocked(tx *bbolt.Tx) (*recordIndex, error) {
	if x := db.recs.Load(); x != nil {
		return x, nil
	}
	var x *recordIndex
	build := func(tx *bbolt.Tx) (err error) {
		x, err = db.buildRecordIndex(tx, nil)
		return err
	}
	var err error
	if tx != nil {
		err = build(tx)
	} else {
		err = db.view(build)
	}
	if err != nil {
		return nil, err
	}
	db.recs.Store(x)
	return x, nil
}

// getRecord reads the record of url in tx, a read transaction: its
// encoding (after the URL in schema 6), nil when there is none. x is the
// index (schema 6). Unless the caller holds idxMu, a commit may have
// changed x after tx began, and getRecord may say so with errStale.
func (db *DB) getRecord(tx *bbolt.Tx, x *recordIndex, url []byte) ([]byte, error) {
	b := tx.Bucket(bucketURLs)
	if db.schema < 6 {
		return b.Get(url), nil
	}
	at, more := x.lookup(x.hash(url), url)
	_, rec, err := db.findRecord(b, url, at, more)
	return rec, err
}

// readByURL runs fn, a read transaction that looks records up by URL with
// get. The index is read without idxMu, beside the writer: a commit that
// changes a URL's record after fn's transaction began makes get say
// errStale, and fn runs again holding idxMu, when the index and the file
// agree. With exact, fn runs holding idxMu from the start: a record
// committed after the index was read is then never missed.
func (db *DB) readByURL(exact bool, fn func(tx *bbolt.Tx, get func(url []byte) ([]byte, error)) error) error {
	var x *recordIndex
	run := func() error {
		return db.view(func(tx *bbolt.Tx) error {
			return fn(tx, func(url []byte) ([]byte, error) { return db.getRecord(tx, x, url) })
		})
	}
	if db.schema < 6 {
		return run() // keyed by URL
	}
	if !exact {
		var err error
		if x, err = db.recordIndexOf(); err != nil {
			return err
		}
		if err := run(); !errors.Is(err, errStale) {
			return err
		}
	}
	db.idxMu.Lock()
	defer db.idxMu.Unlock()
	var err error
	if x, err = db.recordIndexLocked(nil); err != nil {
		return err
	}
	err = run()
	if errors.Is(err, errStale) {
		return fmt.Errorf("%s: %w: a record the index names is missing", db.path, ErrCorrupt)
	}
	return err
}

// recordsTx is the urls bucket inside one write transaction, which holds
// idxMu. Its changes to the index wait in at and more (0: removed) until
// the transaction commits.
type recordsTx struct {
	db       *DB
	b        *bbolt.Bucket
	idx      *recordIndex
	at       map[uint64]uint64
	more     map[string]uint64
	hasMore  bool // more has an entry
	appended bool // FillPercent set
}

func (r *recordsTx) lookup(h uint64, url []byte) (at, more uint64) {
	at, more = r.idx.lookup(h, url)
	if n, ok := r.at[h]; ok {
		at = n
	}
	if r.hasMore {
		if n, ok := r.more[string(url)]; ok {
			more = n
		}
	}
	return at, more
}

// find returns the number of url's record and its encoding (after the
// URL); 0 and nil when it has none.
func (r *recordsTx) find(url []byte) (uint64, []byte, error) {
	if r.db.schema < 6 {
		// A file is migrated before its first write; never reached.
		return 0, nil, fmt.Errorf("%s: records of schema %d written to", r.db.path, r.db.schema)
	}
	h := r.idx.hash(url)
	at, more := r.lookup(h, url)
	n, rec, err := r.db.findRecord(r.b, url, at, more)
	if errors.Is(err, errStale) {
		// The writer's own index and transaction disagree: damage.
		return 0, nil, r.db.corrupt("record", url, errors.New("the index names a record the file lacks"))
	}
	return n, rec, err
}

// put stores rec, whose URL's record is at old (0: none), under the next
// number, deleting the old one.
func (r *recordsTx) put(rec *URLRecord, old, linksAt uint64, put func(*bbolt.Bucket, string, func([]byte) ([]byte, error)) error) error {
	url := []byte(rec.URL)
	h := r.idx.hash(url)
	at, more := r.lookup(h, url)
	if old != 0 {
		if err := r.b.Delete(be64(old)); err != nil {
			return err
		}
	}
	if !r.appended {
		// Only ever appended, so full pages are right: none is split again.
		r.b.FillPercent, r.appended = 1, true
	}
	n, err := r.b.NextSequence()
	if err != nil {
		return err
	}
	if err := put(r.b, string(be64(n)), func(b []byte) ([]byte, error) { return appendRecordEntry(b, rec, linksAt) }); err != nil {
		return err
	}
	switch {
	case old != 0 && more == old:
		r.more[rec.URL], r.hasMore = n, true
	case at == 0 || at == old:
		r.at[h] = n
	default:
		r.more[rec.URL], r.hasMore = n, true
	}
	return nil
}

// remove deletes the record of url at n.
func (r *recordsTx) remove(url []byte, n uint64) error {
	h := r.idx.hash(url)
	switch at, more := r.lookup(h, url); n {
	case at:
		r.at[h] = 0
	case more:
		r.more[string(url)], r.hasMore = 0, true
	default:
		return r.db.corrupt("record", be64(n), fmt.Errorf("of %s, which the index does not know", url))
	}
	return r.b.Delete(be64(n))
}

// apply makes the transaction's changes the index's, once it committed.
func (r *recordsTx) apply() {
	if len(r.at) == 0 && len(r.more) == 0 {
		return
	}
	r.idx.mu.Lock()
	defer r.idx.mu.Unlock()
	for h, n := range r.at {
		if n == 0 {
			delete(r.idx.at, h)
		} else {
			r.idx.at[h] = n
		}
	}
	for u, n := range r.more {
		if n == 0 {
			delete(r.idx.more, u)
		} else {
			r.idx.more[u] = n
		}
	}
}

// passRecords calls fn, in URL order, with the URL and the encoding of
// every record of pass passID (after the URL in schema 6), where its
// page's link list is and, when lists is the links bucket, the list (nil
// when it has none); url, rec and list are valid only during the call.
//
// One scan of the bucket collects the pass's records: their URLs copied
// together, sorted, and where each record lies in the mapping. They are
// then read a window at a time in URL order (a window bounded by
// windowBytes as well as by count, so a site of long lists does not hold
// hundreds of MB at once), each window's records (and lists) copied out
// in the order they lie, one sweep of the bucket from
// its front; a record and its page's list are written by one commit, so
// the lists are read in about their order too. Read one by one in URL
// order, each record was a page fault of its own once the mapping had
// been dropped: at 100,000 generated pages 140,000 faults and 9 us a page
// in the report's two scans (Records and PageLinks). A file of schema 5 or
// older, keyed by URL, takes the same way, its records already in order.
func (db *DB) passRecords(tx *bbolt.Tx, passID uint64, lists *bbolt.Bucket, fn func(url, rec, list []byte) error) error {
	type found struct {
		rec        []byte // in the mapping
		linksAt    uint64
		start, end int // of its URL in urls, which grows in bucket order
	}
	// Grown from nothing, the two slices were copied over and over: a
	// tenth of a report's CPU at 100,000 pages. The last call's sizes are
	// the likely ones (the report reads the same pass several times).
	var hint passHint
	if h := db.passHint.Load(); h != nil {
		hint = *h
	}
	var (
		all  = make([]found, 0, hint.n)
		urls = make([]byte, 0, hint.bytes)
		read func(int)
	)
	listMean := hint.listMean
	defer func() { db.passHint.Store(&passHint{len(all), len(urls), listMean}) }()
	err := db.scanMore(tx, tx.Bucket(bucketURLs), func(k, v []byte, r func(int)) error {
		read = r
		url, rec := k, v
		var p, at uint64
		var err error
		if db.schema < 6 {
			if p, at, err = recordHead(v); err != nil {
				return db.corrupt("record", k, err)
			}
		} else if url, rec, p, at, err = db.recordEntry(k, v); err != nil {
			return err
		}
		if p == passID {
			all = append(all, found{rec: rec, linksAt: at, start: len(urls), end: len(urls) + len(url)})
			urls = append(urls, url...)
		}
		return nil
	})
	if err != nil || len(all) == 0 {
		return err
	}
	slices.SortFunc(all, func(a, b found) int { return bytes.Compare(urls[a.start:a.end], urls[b.start:b.end]) })
	window, limit := recordsWindow, windowBytes
	if db.opt.windowBytes > 0 {
		limit = db.opt.windowBytes
	}
	if lists != nil {
		window /= 2 // room for the lists, ~300 bytes a page
	}
	// A list's size is only known once read: each window is sized by
	// the mean of the lists read so far (the last call's to begin with).
	guess := listMean
	if guess == 0 {
		guess = firstListMean
	}
	var (
		order          []int
		copies, listed [][]byte
		arena          []byte
		listBytes      int
		listCount      int
	)
	for lo, hi := 0, 0; lo < len(all); lo = hi {
		var size int
		hi, size = windowEnd(len(all), lo, window, limit, func(i int) int {
			n := len(all[i].rec)
			if lists != nil && all[i].linksAt != linksNone {
				n += guess
			}
			return n
		})
		win := all[lo:hi]
		order = order[:0]
		for i := range win {
			order = append(order, i)
		}
		slices.SortFunc(order, func(a, b int) int { return win[a].start - win[b].start })
		// Grown by append, the arena's earlier arrays stayed alive through
		// the window (the copies point into them): twice the window's bytes.
		copies, arena = slices.Grow(copies[:0], len(win))[:len(win)], slices.Grow(arena[:0], size)
		if lists != nil {
			listed = slices.Grow(listed[:0], len(win))[:len(win)]
		}
		for _, i := range order {
			f := &win[i]
			read(max(len(f.rec), pageBytes))
			start := len(arena)
			arena = append(arena, f.rec...)
			copies[i] = arena[start:len(arena):len(arena)]
			if lists == nil {
				continue
			}
			listed[i] = nil
			if f.linksAt == linksNone {
				continue
			}
			v := lists.Get(linksKey(urls[f.start:f.end], f.linksAt))
			if v == nil {
				continue // a record of format 1 whose page had no list
			}
			read(max(len(v), pageBytes))
			listBytes += len(v)
			listCount++
			start = len(arena)
			arena = append(arena, v...)
			listed[i] = arena[start:len(arena):len(arena)]
		}
		if listCount > 0 {
			listMean = listBytes / listCount
			guess = listMean
		}
		for i := range win {
			f := &win[i]
			var list []byte
			if lists != nil {
				list = listed[i]
			}
			if err := fn(urls[f.start:f.end:f.end], copies[i], list); err != nil {
				return err
			}
		}
	}
	return nil
}

// passHint is the size of what the last passRecords collected, and the
// mean size of the lists it read (0: none read yet).
type passHint struct{ n, bytes, listMean int }

// recordsWindow is how many records passRecords reads at once at most:
// their copies take about 3 MB on a generated site, and as much again
// for the lists of half as many pages.
const recordsWindow = 16384

// windowBytes bounds what a window of passRecords copies out. Counted
// in records alone, a window of 8,192 pages of javadoc (112 links, 25 KB
// of list a page) held 205 MB at once: a third of the check's peak.
const windowBytes = 8 << 20

// firstListMean is the size of list a first window expects: big enough
// that a site of long lists does not fill its first window past
// windowBytes many times over (at 4 KB javadoc's first window held 49
// MB), small enough that a generated site's first window (300 bytes a
// list) is still a few hundred pages before the next ones grow.
const firstListMean = 32 << 10

// windowEnd returns the end of the window of records that starts at lo:
// at most most records, and no more bytes (size(i), as far as known)
// than limit, but at least one record; and the bytes it expects.
func windowEnd(n, lo, most, limit int, size func(i int) int) (hi, bytes int) {
	for hi = lo; hi < n && hi-lo < most; hi++ {
		s := size(hi)
		if bytes+s > limit && hi > lo {
			break
		}
		bytes += s
	}
	return hi, bytes
}

// migrateRecords moves the records of a urls bucket keyed by URL (schema
// 5 and older) under numbers, in URL order, the only order such a file
// knows, each one's bytes as they are after its URL, and builds the index.
func (db *DB) migrateRecords(tx *bbolt.Tx) (*recordIndex, error) {
	type entry struct{ url, rec []byte }
	var entries []entry
	err := db.scan(tx, tx.Bucket(bucketURLs), func(k, v []byte) error {
		entries = append(entries, entry{bytes.Clone(k), bytes.Clone(v)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	b, err := clearBucket(tx, bucketURLs)
	if err != nil {
		return nil, err
	}
	b.FillPercent = 1 // only ever appended, as in put
	x := db.newRecordIndex(len(entries))
	for _, e := range entries {
		n, err := b.NextSequence()
		if err != nil {
			return nil, err
		}
		enc := encoder{}
		enc.strBytes(e.url)
		if err := b.Put(be64(n), append(enc.bytes(), e.rec...)); err != nil {
			return nil, fmt.Errorf("move record %s: %w", e.url, err)
		}
		// Keys were unique, so a hash held already is another URL's.
		if h := x.hash(e.url); x.at[h] == 0 {
			x.at[h] = n
		} else {
			x.more[string(e.url)] = n
		}
	}
	return x, nil
}
