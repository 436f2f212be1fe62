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

// releasePages is how many pages the write transactions write between two
// drops of the mapped pages. Each page written was read first, and brought
// its neighbours with it. Every drop costs the madvise and then a fault for
// each page read again: at 100,000 pages a CPU profile put 20-30 µs of the
// 250-290 µs a page costs on them, the largest part of what a page costs
// more there than at 10,000. Doubling the interval saves little of it:
// with link lists of schema 3 and the two alternated nine times (the
// check scripts/bench.sh -pages 100000 runs, loaded), 1024 gave 127 MiB peak RSS,
// 330,000 minor faults and 235-289 µs a page; 2048 gave 139-143 MiB,
// 263,000 faults and 234-264 µs, 8 µs less a page on average with a
// spread of 18 between pairs. Without dropping: 173 MiB, 115,000 faults,
// 221-235 µs. 1024 keeps the peak well under the 150 MiB of issue 17.
// (Before schema 3: 256 gave 110 MiB, 1024 131 MiB, 2048 145 MiB, none
// 227 MiB.) With link lists keyed in write order (schema 4) fewer pages
// are written a page, so drops come less often: 1024 gave 118-120 MiB,
// 266-282k faults and 197-220 µs a page, 2048 125 MiB, 231-236k faults
// and 200-202 µs (two alternated pairs, loaded): no gain clear of the
// noise for 6 MiB, so 1024 stays.
const releasePages = 1024

// releaseAbove is the size of file below which nothing is dropped: all of
// it mapped costs no more than that, and a page read again costs a fault
// (at 30,000 pages, dropping after every 256 pages written took 90,000 more
// faults). A check of 10,000 pages, whose file is 16 MiB, drops nothing.
const releaseAbove = 32 << 20

// releaseIfDue runs releaseMapped when db.releasePages have been written
// since it last did, in a file above db.releaseAbove. Only write transactions,
// which bbolt serialises, call it. A failure costs only memory, and is not
// worth failing a commit for.
func (db *DB) releaseIfDue(tx *bbolt.Tx) {
	st := db.bolt.Stats()
	written := st.TxStats.GetWrite()
	if written-db.releasedAt >= db.releasePages && tx.Size() > db.releaseAbove {
		_ = releaseMapped(tx)
		db.releasedAt = written
	}
}

// scanRelease is how many bytes of keys and values a scan reads between
// drops of the mapped pages. The pages of one bucket lie all over the file,
// so with fault-around each one read maps up to sixteen: 512 KiB read
// keeps about 10 MiB mapped.
const scanRelease = 512 << 10

// scan is b.ForEach, dropping the mapped pages every scanRelease bytes in
// a file above db.releaseAbove. The keys and values handed to fn earlier
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
		if read += n; release && read >= scanRelease {
			_ = releaseMapped(tx)
			read = 0
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
