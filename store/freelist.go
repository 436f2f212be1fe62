package store

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"os"

	"go.etcd.io/bbolt"
)

// bbolt's layout of the pages checkFreelist reads (v1.5.0,
// internal/common): a page starts with a 16-byte header (id uint64, flags
// uint16, count uint16, overflow uint32); a meta page's body is magic,
// version, page size and flags (uint32 each), the root bucket (root page
// and sequence), the freelist's page, the high water mark, the
// transaction, then an FNV-64a checksum of the body before it. All little
// endian on the machines bbolt writes on.
const (
	boltHeader       = 16
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	boltFreelistFlag = 0x10
	boltNoFreelist   = ^uint64(0)
	metaFreelist     = boltHeader + 32
	metaPgid         = boltHeader + 40
	metaTxid         = boltHeader + 48
	metaChecksum     = boltHeader + 56
)

// checkFreelist reads the freelist page of tx's meta from the file itself
// and checks that bbolt can load it: Tx.Check loads it first, on a
// goroutine of bbolt's where guard does not apply, and a count that runs
// past the page makes it read outside the mapping (a fault that kills the
// process) or allocate a slice of that count (out of memory). review8 F3:
// `fatal error: fault` where an earlier build said the file was damaged.
// It also checks each free page is a page of the file, which is what the
// next commits would write to.
func (db *DB) checkFreelist(tx *bbolt.Tx) error {
	damaged := func(format string, a ...any) error {
		return fmt.Errorf("%s: %w (%s)", db.path, ErrCorrupt, fmt.Sprintf(format, a...))
	}
	f, err := os.Open(db.path)
	if err != nil {
		return fmt.Errorf("check %s: %w", db.path, err)
	}
	defer f.Close()
	pageSize := int64(tx.DB().Info().PageSize)
	read := func(off, n int64) ([]byte, error) {
		b := make([]byte, n)
		if _, err := f.ReadAt(b, off); err != nil {
			if err == io.EOF {
				return nil, damaged("the file ends at byte %d of %d", off, off+n)
			}
			return nil, fmt.Errorf("check %s: %w", db.path, err)
		}
		return b, nil
	}
	// The meta bbolt reads: the valid one of the higher transaction, else
	// the other (DB.meta).
	var meta []byte
	for _, off := range []int64{0, pageSize} {
		m, err := read(off, metaChecksum+8)
		if err != nil {
			return err
		}
		h := fnv.New64a()
		h.Write(m[boltHeader:metaChecksum])
		if binary.LittleEndian.Uint32(m[boltHeader:]) != boltMagic ||
			binary.LittleEndian.Uint32(m[boltHeader+4:]) != boltVersion ||
			binary.LittleEndian.Uint64(m[metaChecksum:]) != h.Sum64() {
			continue
		}
		if meta == nil || binary.LittleEndian.Uint64(m[metaTxid:]) > binary.LittleEndian.Uint64(meta[metaTxid:]) {
			meta = m
		}
	}
	pgid := uint64(tx.Size() / pageSize)
	if meta == nil || binary.LittleEndian.Uint64(meta[metaTxid:]) != uint64(tx.ID()) || binary.LittleEndian.Uint64(meta[metaPgid:]) != pgid {
		return damaged("its meta pages do not say what bbolt read from them")
	}
	free := binary.LittleEndian.Uint64(meta[metaFreelist:])
	if free == boltNoFreelist {
		// bbolt rebuilds the list from the pages the walk has read; this
		// package always writes it.
		return nil
	}
	if free < 2 || free >= pgid {
		return damaged("the list is said to be at page %d, of %d", free, pgid)
	}
	hdr, err := read(int64(free)*pageSize, boltHeader+8)
	if err != nil {
		return err
	}
	flags, overflow := binary.LittleEndian.Uint16(hdr[8:]), uint64(binary.LittleEndian.Uint32(hdr[12:]))
	if flags != boltFreelistFlag {
		return damaged("page %d should hold the list, but its flags are %#x", free, flags)
	}
	if free+overflow >= pgid {
		return damaged("the list at page %d runs over %d more pages, past the last one, %d", free, overflow, pgid-1)
	}
	// A count of 0xFFFF means the count is the list's first word.
	idx, count := uint64(0), uint64(binary.LittleEndian.Uint16(hdr[10:]))
	if count == 0xFFFF {
		idx, count = 1, binary.LittleEndian.Uint64(hdr[boltHeader:])
	}
	if room := (uint64(overflow+1)*uint64(pageSize) - boltHeader) / 8; count > room || idx+count > room {
		return damaged("the list at page %d says it holds %d pages, but it has room for %d", free, count, room-idx)
	}
	ids, err := read(int64(free)*pageSize+boltHeader+int64(8*idx), int64(8*count))
	if err != nil {
		return err
	}
	for i := range count {
		// Pages 0 and 1 are the meta pages, never free.
		if id := binary.LittleEndian.Uint64(ids[8*i:]); id < 2 || id >= pgid {
			return damaged("page %d is on the list of free pages, but the file has pages 2 to %d", id, pgid-1)
		}
	}
	return nil
}
