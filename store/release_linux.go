package store

import (
	"bytes"
	"os"
	"strconv"
	"syscall"

	"go.etcd.io/bbolt"
)

// releaseMapped drops this process's mapping of the file's pages (madvise
// MADV_DONTNEED); the next read maps them again from the page cache. The
// mapping is read-only, so no write is lost. It runs inside a transaction:
// bbolt remaps the file only in a write transaction's commit, after every
// read transaction has ended, so the address and size stay valid.
func releaseMapped(tx *bbolt.Tx) error {
	_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, tx.DB().Info().Data, uintptr(tx.Size()), syscall.MADV_DONTNEED)
	if errno != 0 {
		return errno
	}
	return nil
}

// statm reads what the process has of files resident through its
// mappings (RssFile and RssShmem: the third field of /proc/self/statm, in
// pages). The kernel keeps the count, so a read costs a few microseconds
// however large the mappings are, where /proc/self/smaps walks every page;
// the file stays open because opening it cost five times the read (31 us
// against 6.5, loaded).
type statm struct{ f *os.File }

// openStatm opens /proc/self/statm; without it (no /proc) residentFile
// says it cannot tell.
func openStatm() statm {
	f, err := os.Open("/proc/self/statm")
	if err != nil {
		return statm{}
	}
	return statm{f}
}

// residentFile is the count in bytes, and whether it could be read.
func (s statm) residentFile() (int64, bool) {
	if s.f == nil {
		return 0, false
	}
	var buf [128]byte
	n, err := s.f.ReadAt(buf[:], 0)
	if n == 0 && err != nil {
		return 0, false
	}
	// size resident shared text lib data dt
	fields := bytes.Fields(buf[:n])
	if len(fields) < 3 {
		return 0, false
	}
	pages, err := strconv.ParseInt(string(fields[2]), 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * int64(os.Getpagesize()), true
}

func (s statm) close() {
	if s.f != nil {
		_ = s.f.Close()
	}
}
