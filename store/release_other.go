//go:build !linux

package store

import "go.etcd.io/bbolt"

// releaseMapped does nothing here: only Linux is known to drop a shared
// file mapping's pages from the resident set without losing them.
func releaseMapped(*bbolt.Tx) error { return nil }
