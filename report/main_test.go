package report

import (
	"testing"

	"github.com/linkpatrol/linkpatrol/internal/testmain"
)

// Some of these tests wait on a browser or on fsync.
func TestMain(m *testing.M) { testmain.Exit(testmain.RunWaiting(m)) }
