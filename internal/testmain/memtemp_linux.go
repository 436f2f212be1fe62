package testmain

import (
	"os"
	"syscall"
)

// memTempRoom is the free space /dev/shm must have for the tests' files to
// go there: a container's default /dev/shm of 64 MiB would fill up (store's
// tests alone write files of 16 MiB, several at once).
const memTempRoom = 1 << 30

// tempInMemory points TMPDIR at a new directory in /dev/shm, and returns
// what removes it, unless TMPDIR is set or /dev/shm lacks the room.
func tempInMemory() (cleanup func()) {
	if _, set := os.LookupEnv("TMPDIR"); set {
		return func() {}
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs("/dev/shm", &st); err != nil || st.Bavail*uint64(st.Bsize) < memTempRoom {
		return func() {}
	}
	dir, err := os.MkdirTemp("/dev/shm", "linkpatrol-test-")
	if err != nil {
		return func() {}
	}
	if err := os.Setenv("TMPDIR", dir); err != nil {
		os.Remove(dir)
		return func() {}
	}
	return func() {
		os.Unsetenv("TMPDIR")
		os.RemoveAll(dir)
	}
}
