package store

import (
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
// its neighbours with it: 256 pages are about two commits of 32 results.
const releasePages = 256

// releaseIfDue runs releaseMapped when releasePages have been written since
// it last did. Only write transactions, which bbolt serialises, call it. A
// failure costs only memory, and is not worth failing a commit for.
func (db *DB) releaseIfDue(tx *bbolt.Tx) {
	st := db.bolt.Stats()
	written := st.TxStats.GetWrite()
	if written-db.releasedAt >= releasePages {
		_ = releaseMapped(tx)
		db.releasedAt = written
	}
}

// scanRelease is how many bytes of keys and values a scan reads between
// drops of the mapped pages. The pages of one bucket lie all over the file,
// so with fault-around each one read maps up to sixteen: 512 KiB read
// keeps about 10 MiB mapped.
const scanRelease = 512 << 10

// scan is b.ForEach, dropping the mapped pages every scanRelease bytes.
// The keys and values handed to fn earlier stay readable: the mapping is
// not removed, only its pages.
func scan(tx *bbolt.Tx, b *bbolt.Bucket, fn func(k, v []byte) error) error {
	read := 0
	return b.ForEach(func(k, v []byte) error {
		if read += len(k) + len(v); read >= scanRelease {
			_ = releaseMapped(tx)
			read = 0
		}
		return fn(k, v)
	})
}
