package crawltest

import (
	"sync"
	"testing"
)

// Subtest is one case of AtOnce.
type Subtest struct {
	Name string
	F    func(t *testing.T)
}

// AtOnce runs each subtest of t at once, each from a goroutine of its own,
// in the slot of the package's parallel tests that t holds (t.Run may be
// called from several goroutines; it returns when its subtest has), and
// returns when all have. A failed subtest fails t, as with t.Run.
//
// For subtests that mostly wait, in place of t.Parallel in each: a parallel
// subtest waits for a slot of its own, and gets one only after every
// top-level test that was already waiting for one, so a test's subtests
// ran last in their package, whatever their length. cluster's
// TestPolitenessHeldAtTheServers's two passes, about 7.5 s each alone,
// started 25 s into a package run of 37 s (-parallel 4, loaded) and ended
// it.
func AtOnce(t *testing.T, subs ...Subtest) {
	t.Helper()
	var wg sync.WaitGroup
	for _, s := range subs {
		wg.Go(func() { t.Run(s.Name, s.F) })
	}
	wg.Wait()
}
