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

// residentFile is how many bytes of files this process has resident
// through its mappings (RssFile and RssShmem: the third field of
// /proc/self/statm, in pages), and whether it could be read. The kernel
// keeps the count, so reading it costs a few microseconds however large
// the mappings are, where /proc/self/smaps walks every page.
func residentFile() (int64, bool) {
	f, err := os.Open("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	var buf [128]byte
	n, _ := f.Read(buf[:])
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
