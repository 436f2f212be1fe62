package crawltest

import (
	"testing"
	"time"
)

// AtOnce's subtests run at the same time: each waits for the other to
// have started, which one after the other never would.
func TestAtOnce(t *testing.T) {
	t.Parallel()
	a, b := make(chan struct{}), make(chan struct{})
	meet := func(mine, theirs chan struct{}) func(*testing.T) {
		return func(t *testing.T) {
			close(mine)
			select {
			case <-theirs:
			case <-time.After(time.Minute):
				t.Error("the other subtest never started while this one ran")
			}
		}
	}
	AtOnce(t, Subtest{Name: "a", F: meet(a, b)}, Subtest{Name: "b", F: meet(b, a)})
}
