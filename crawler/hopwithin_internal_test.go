package crawler

import (
	"context"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/rules"
)

// A hop waits for its host's permit at most maxHopWait, and not at all
// when the wait would leave its request less than its own timeout (the
// rule's, else the run's) before the task's deadline (qa9 T1): handed off,
// it gets its full timeout.
func TestHopWithinLeavesTheRequestItsTimeout(t *testing.T) {
	t.Parallel()
	c := &Crawler{cfg: Config{Timeout: time.Second}}
	slow := &rules.Policy{Timeout: 3 * time.Second}
	for _, tc := range []struct {
		name     string
		deadline time.Duration // from now; 0: none
		policy   *rules.Policy
		want     time.Duration
	}{
		{"no deadline", 0, nil, maxHopWait},
		{"far deadline", time.Hour, slow, maxHopWait},
		{"the rule's timeout past the deadline", 2 * time.Second, slow, 0}, // the run's would leave a second
		{"deadline passed", -time.Second, nil, 0},
	} {
		ctx := context.Background()
		if tc.deadline != 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, tc.deadline)
			defer cancel()
		}
		if got := c.hopWithin(ctx, tc.policy); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
