// Package testmain runs and ends the test binaries of this module. It owns
// two decisions: how many tests a binary runs at once (RunWaiting,
// RunPerCPU), and how a test binary that passed exits (Exit).
//
// A binary built with -race sleeps a second before it exits 0 (the race
// runtime's atexit_sleep_ms, 1000 by default), so that a goroutine still
// running when main returns gets a second more in which a race it makes is
// reported and turns the exit code into 66. go test -race ./... runs eleven
// such binaries, each a second longer than its tests.
//
// Exit skips that second for a binary whose tests passed. What the second
// caught and Exit does not: a goroutine that outlives every test (a leak)
// and, in the second after the last test ended, makes a race or panics.
// Every race reported before m.Run returns still fails the binary: testing
// fails the test during which it was reported, or, when none was running,
// the whole run ("race detected outside of test execution"), and Exit then
// goes the usual way with a non-zero code. A goroutine left running beyond
// that second was never caught either way, nor within it in a build
// without -race. One test had leaned on the second by chance: store's
// TestUnsyncedFreelistCrashesOnDamage, whose child now waits for the
// goroutine whose crash it expects.
//
// With coverage on, Exit also goes the usual way: the coverage counters are
// written by exit hooks that only os.Exit runs.
package testmain

import (
	"os"
	"syscall"
	"testing"
)

// Exit ends the test binary with code, what m.Run returned: use it in
// place of os.Exit in TestMain, func TestMain(m *testing.M) {
// testmain.Exit(m.Run()) }.
func Exit(code int) {
	if code == 0 && raceEnabled && testing.CoverMode() == "" {
		// Straight to the exit system call: os.Exit(0) would run the race
		// runtime's finaliser and its sleep. Standard output and error
		// are unbuffered, so nothing is left unwritten.
		syscall.Exit(0)
	}
	os.Exit(code)
}
