package store

import (
	"testing"

	"github.com/linkpatrol/linkpatrol/internal/testmain"
)

// Most of these tests wait on fsync, or on a child process.
func TestMain(m *testing.M) { testmain.Exit(testmain.RunWaiting(m)) }
