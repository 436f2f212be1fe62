package throttle

import (
	"sync/atomic"
	"testing"
)

// A host met as a third party's and then made one of the site's (a start
// URL redirects there, and the start host's robots.txt came through the
// same redirect) takes the site's limits from Resettle on, keeping the
// robots.txt it had; a whole site was crawled at one request a second.
func TestResettleGivesAHostItsNewLimits(t *testing.T) {
	t.Parallel()
	var own atomic.Bool
	th := New(Config{Settings: func(string) Settings {
		if own.Load() {
			return StartHostDefaults()
		}
		return Settings{Rate: 0.001, Burst: 1, MaxInFlight: 1} // a request a quarter-hour
	}})
	const host = "www.example.com:443"
	p, _, err := th.Reserve(host)
	if err != nil || p == nil {
		t.Fatalf("first request: %v, %v", p, err)
	}
	p.Done(Outcome{Status: 200})
	robots := ParseRobots(200, []byte("User-agent: *\nDisallow: /private\n"))
	th.SetRobots(host, robots, th.now())
	if _, wait, _ := th.Reserve(host); wait <= 0 {
		t.Fatalf("second request at the third-party pace: wait %v, want one", wait)
	}
	own.Store(true)
	th.Resettle(host)
	if p, wait, err := th.Reserve(host); err != nil || p == nil {
		t.Errorf("after Resettle: wait %v, err %v; want a request at once", wait, err)
	}
	if r, ok := th.Robots(host); !ok || r != robots {
		t.Errorf("after Resettle the robots.txt is %v, %v; want the one the host had", r, ok)
	}
}
