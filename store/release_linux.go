package store

import (
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
