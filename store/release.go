package store

import (
	"bytes"
	"fmt"

	"go.etcd.io/bbolt"
)

// The resident set and the mapped file.
//
// bbolt reads the file through a shared, read-only mapping and writes it
// with pwrite. Every page a transaction reads stays mapped, and the kernel
// maps up to 64 KiB of cached pages around each one it faults in as well
// (fault-around), so the commits of a pass, which write keys all over the
// file, left all of it resident by the end: at 100,000 pages that was 130
// of the 230 MiB peak RSS. A scan of one bucket did the same to the whole
// file. Dropping the mapping's pages now and then (releaseMapped) bounds
// that to what was read since; the page cache keeps them, so a page read
// again costs a minor fault, not a disk read.

// mappedBudget is how much of the file may become resident through the
// mapping before a write transaction, or a scan, drops it: every drop costs
// the madvise and then a fault for each page read again, so it is done only
// when that much has come back. Issue 17 asks for a peak RSS of at most
// 150 MiB at 100,000 pages; the heap takes about 77 MiB of it (the
// collector's 64 MiB goal, cmd/linkpatrol/gc.go) and the program's text
// and data about 16. See mappedGrowth for how the resident part is
// measured.
//
// Drops used to come every 1024 pages written, whatever was resident, and
// every 128 lists PageLinks read (780 times at 100,000 pages). Against
// that, at 100,000 pages (scripts/bench.sh's check, alternated, loaded):
// peak RSS 118-120 MiB -> 127-130 with 32 MiB (40: 134-137; 48: 141-143;
// 64: 159), minor faults 266-279k -> 186-201k (40: 150-167k). In CPU
// profiles the faults (bbolt's Page.FastCheck) went from 13 to 9 us a page
// and the madvise from 7 to 3.5 with 40 MiB, yet CPU a page moved less than
// the noise between runs (+-10%): what Page.FastCheck costs at 100,000
// pages is mostly the cache misses of reading pages all over an 84 MB
// file, not the faults. So the budget keeps most of the RSS margin.
const mappedBudget = 32 << 20

// releaseAbove is the size of file below which nothing is dropped: all of
// it mapped costs no more than that, and a page read again costs a fault
// (at 30,000 pages, dropping after every 256 pages written took 90,000 more
// faults). A check of 10,000 pages, whose file is 8 MiB, drops nothing.
const releaseAbove = 32 << 20

// releaseIfDue runs release when more than db.mappedBudget of the file
// has become resident since it last did, in a file above db.releaseAbove.
// Where what is resident cannot be read (no /proc) nothing is dropped. A
// failure costs only memory, and is not worth failing a commit for.
func (db *DB) releaseIfDue(tx *bbolt.Tx) {
	if tx.Size() <= db.releaseAbove {
		return
	}
	if grown, ok := db.mappedGrowth(); ok && grown > db.mappedBudget {
		db.release(tx)
	}
}

// release drops the mapped pages and takes what is resident after it as
// the base that mappedGrowth measures from.
func (db *DB) release(tx *bbolt.Tx) {
	_ = releaseMapped(tx)
	if r, ok := db.statm.residentFile(); ok {
		db.residentBase.Store(r)
	}
}

// mappedGrowth is how much the process's resident file pages grew since
// the mapping was last dropped, and whether that could be read. Right
// after a drop what is left is the program's own text and the like, so the
// growth is, within a little, what the mapping brought back. The process
// is the unit the kernel counts in: another database open in it counts
// too, which only makes drops come sooner. When the count falls below the
// base (another file dropped, or bbolt remapped a grown file), the base
// falls with it.
func (db *DB) mappedGrowth() (int64, bool) {
	r, ok := db.statm.residentFile()
	if !ok {
		return 0, false
	}
	for {
		base := db.residentBase.Load()
		if r >= base {
			return r - base, true
		}
		if db.residentBase.CompareAndSwap(base, r) {
			return 0, true
		}
	}
}

// scanCheck is how many bytes of keys and values a scan reads between two
// looks at what is resident (a read of /proc/self/statm). The pages of one
// bucket lie all over the file, so with fault-around each one read maps up
// to sixteen: 512 KiB read maps up to about 10 MiB.
const scanCheck = 512 << 10

// scan is b.ForEach, dropping the mapped pages when more than
// db.mappedBudget of them have become resident, in a file above
// db.releaseAbove. The keys and values handed to fn earlier
// stay readable: the mapping is not removed, only its pages.
//
// bbolt hands keys over in ascending order; a damaged branch page that
// points back at pages already read makes its cursor go round for ever
// (TestDamagedPagesNeverCrash found one), so a key that is not above the
// one before ends the scan as a damaged file.
func (db *DB) scan(tx *bbolt.Tx, b *bbolt.Bucket, fn func(k, v []byte) error) error {
	return db.scanMore(tx, b, func(k, v []byte, _ func(int)) error { return fn(k, v) })
}

// pageBytes is what a read of a value elsewhere in the file counts for in
// a scan: at least the page it lies in.
const pageBytes = 4096

// scanMore is scan for an fn that reads more of the file for some keys
// (PageLinks reads each page's link list): it tells read how many bytes,
// and they count towards the next drop like the scan's own.
func (db *DB) scanMore(tx *bbolt.Tx, b *bbolt.Bucket, fn func(k, v []byte, read func(int)) error) error {
	release := tx.Size() > db.releaseAbove
	read := 0
	add := func(n int) {
		if read += n; release && read >= scanCheck {
			read = 0
			if grown, ok := db.mappedGrowth(); ok && grown > db.mappedBudget {
				db.release(tx)
			}
		}
	}
	var prev []byte
	return b.ForEach(func(k, v []byte) error {
		if prev != nil && bytes.Compare(k, prev) <= 0 {
			return fmt.Errorf("%s: %w (keys out of order after %q; restore it from a backup, or move it aside to start afresh)", db.path, ErrCorrupt, prev)
		}
		prev = k
		add(len(k) + len(v))
		return fn(k, v, add)
	})
}
