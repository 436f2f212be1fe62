package crawler

import (
	"net/http"
	"strings"
	"testing"

	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

func TestClassifyStatus(t *testing.T) {
	t.Parallel()
	withLocation := http.Header{"Location": {"/elsewhere"}}
	for _, tt := range []struct {
		status  int
		header  http.Header
		verdict store.Verdict
		class   string
	}{
		{200, nil, store.VerdictOK, ""},
		{301, nil, store.VerdictBroken, "redirect without location"},
		{302, http.Header{}, store.VerdictBroken, "redirect without location"},
		// A Location on a status browsers do not follow is no redirect:
		// it was "redirect without location" (qa9 T3).
		{300, withLocation, store.VerdictBroken, "redirect browsers do not follow"},
		{305, withLocation, store.VerdictBroken, "redirect browsers do not follow"},
		{300, nil, store.VerdictBroken, "redirect without location"},
		{304, nil, store.VerdictBroken, "304 to an unconditional request"},
		{404, nil, store.VerdictBroken, ""},
		{403, nil, store.VerdictUnverifiable, ""},
		{503, nil, store.VerdictTransient, ""},
		{503, http.Header{"Server": {"cloudflare"}}, store.VerdictUnverifiable, "bot challenge"},
	} {
		if v, class := classifyStatus(tt.status, tt.header, nil); v != tt.verdict || class != tt.class {
			t.Errorf("classifyStatus(%d, %v) = %s %q, want %s %q", tt.status, tt.header, v, class, tt.verdict, tt.class)
		}
	}
}

// A robots.txt that could not be asked is said by what failed: a DNS
// lookup that got no answer is the resolver's failure, not the host's
// (qa9 T8), and then no robots.txt was asked, so the note does not blame
// one (qa10 Q4: "not requested: RFC 9309 keeps crawlers off a host until
// its robots.txt can be read" under "DNS lookup failed").
func TestRobotsFailureSaysWhatFailed(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		robots     *throttle.Robots
		want       string
		robots9309 bool // the note says RFC 9309 keeps crawlers off
	}{
		{throttle.UnreachableRobots("dns"), "DNS lookup failed, not the host: nothing was requested", false},
		{throttle.UnreachableRobots("timeout"), "robots.txt could not be fetched (timeout): the host is failing", true},
		{throttle.ParseRobots(500, nil), "robots.txt answered 500: the host is failing", true},
		{throttle.ParseRobots(429, nil), "robots.txt answered 429: the host is rate-limiting", true},
	} {
		class, note := robotsFailure(tt.robots)
		if class != tt.want {
			t.Errorf("robotsFailure(%q, %d) = %q, want %q", tt.robots.Cause(), tt.robots.Status(), class, tt.want)
		}
		if says := strings.Contains(note, "RFC 9309") || strings.Contains(note, "robots.txt"); says != tt.robots9309 || note == "" {
			t.Errorf("robotsFailure(%q, %d): note %q; want robots.txt blamed: %v", tt.robots.Cause(), tt.robots.Status(), note, tt.robots9309)
		}
	}
}
