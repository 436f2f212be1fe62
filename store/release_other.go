//go:build !linux

package store

import "go.etcd.io/bbolt"

// releaseMapped does nothing here: only Linux is known to drop a shared
// file mapping's pages from the resident set without losing them.
func releaseMapped(*bbolt.Tx) error { return nil }

// residentFile cannot be read here: releaseIfDue falls back to counting
// the pages written.
func residentFile() (int64, bool) { return 0, false }
