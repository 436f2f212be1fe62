//go:build !linux

package store

import "go.etcd.io/bbolt"

// releaseMapped does nothing here: only Linux is known to drop a shared
// file mapping's pages from the resident set without losing them.
func releaseMapped(*bbolt.Tx) error { return nil }

// statm cannot be read here, and nothing is dropped anyway.
type statm struct{}

func openStatm() statm                    { return statm{} }
func (statm) residentFile() (int64, bool) { return 0, false }
func (statm) close()                      {}
