package crawler_test

import (
	"testing"

	"github.com/linkpatrol/linkpatrol/internal/testmain"
)

// The tests mostly wait: on servers that hang or trickle until a timeout,
// on backoff steps and pauses, on polite rates.
func TestMain(m *testing.M) { testmain.Exit(testmain.RunWaiting(m)) }
