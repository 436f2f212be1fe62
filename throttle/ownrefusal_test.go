package throttle_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkpatrol/linkpatrol/throttle"
)

// A URL refused again after it waited the Retry-After it was given is
// held on its own, and its host left alone, only when the host served a
// request sent after its last refusal and refused no other URL since: a
// limiter refuses whichever requests find it full, and a host refusing
// everything serves nothing, so their refusals pause the host as ever
// (qa11 Q7).
func TestURLRefusedAgainIsHeldAloneOnlyWhenTheHostServesTheRest(t *testing.T) {
	t.Parallel()
	search := throttle.Outcome{Status: 429, RetryAfter: "3", Key: "/search"}
	ok := func(key string) throttle.Outcome { return throttle.Outcome{Status: 200, Key: key} }
	tests := []struct {
		name string
		// between are the answers to requests sent after the search's
		// first comeback was refused, before it comes back again.
		between []throttle.Outcome
		own     bool
	}{
		{"nothing sent since: the host's, paused", nil, false},
		{"the host served another URL since: the URL's own", []throttle.Outcome{ok("/a")}, true},
		{"served one, refused another: a limiter's, paused",
			[]throttle.Outcome{ok("/a"), {Status: 429, RetryAfter: "3", Key: "/b"}}, false},
		{"refused everything since: the host's, paused",
			[]throttle.Outcome{{Status: 429, RetryAfter: "3", Key: "/b"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				th := throttle.New(fixed(throttle.Settings{MaxPause: 10 * time.Minute, MaxRetries: 2}))
				o := search
				for range 2 { // refused, then refused again after it waited
					d := acquire(t, th, host).Done(o)
					o.Comebacks.Add(d.Comeback)
				}
				for _, b := range tt.between {
					acquire(t, th, host).Done(b)
				}
				time.Sleep(6 * time.Second) // as long as it was held
				d := acquire(t, th, host).Done(o)
				_, wait, _ := th.Reserve(host)
				switch {
				case tt.own && (wait > 0 || d.Hold != 3*time.Second || d.Comeback != 0 || !d.Retry):
					t.Errorf("host waits %v; the URL held %v, comeback %v, retry %v; want the host free, the URL held 3s on a retry", wait, d.Hold, d.Comeback, d.Retry)
				case !tt.own && (wait < 3*time.Second || d.Comeback != 3*time.Second):
					t.Errorf("host waits %v after the refusal, comeback %v; want the host paused its Retry-After, 3s, and the URL back then", wait, d.Comeback)
				}
			})
		})
	}
}
