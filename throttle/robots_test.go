package throttle_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkpatrol/linkpatrol/throttle"
)

const ourUA = "linkpatrol/1.0 (+https://example.invalid/bot)"

func TestParseRobotsStatus(t *testing.T) {
	body := []byte("User-agent: *\nDisallow: /\n")
	tests := []struct {
		status int
		kind   throttle.RobotsKind
		allow  bool
	}{
		{200, throttle.RobotsRules, false},
		{204, throttle.RobotsRules, true}, // an empty 2xx body has no rules
		{301, throttle.RobotsAllowAll, true},
		{401, throttle.RobotsAllowAll, true},
		{403, throttle.RobotsAllowAll, true},
		{404, throttle.RobotsAllowAll, true},
		{410, throttle.RobotsAllowAll, true},
		{429, throttle.RobotsDisallowAll, false},
		{500, throttle.RobotsDisallowAll, false},
		{503, throttle.RobotsDisallowAll, false},
		{0, throttle.RobotsDisallowAll, false},
		{100, throttle.RobotsDisallowAll, false},
		{999, throttle.RobotsDisallowAll, false},
	}
	for _, tt := range tests {
		b := body
		if tt.status == 204 {
			b = nil
		}
		r := throttle.ParseRobots(tt.status, b)
		if r.Kind() != tt.kind {
			t.Errorf("status %d: kind %q, want %q", tt.status, r.Kind(), tt.kind)
		}
		if got := r.Allowed(ourUA, "/page"); got != tt.allow {
			t.Errorf("status %d: Allowed(/page) = %v, want %v", tt.status, got, tt.allow)
		}
		if !r.Allowed(ourUA, "/robots.txt") {
			t.Errorf("status %d: /robots.txt itself must stay allowed", tt.status)
		}
	}
}

func TestRobotsGroups(t *testing.T) {
	r := throttle.ParseRobots(200, []byte(strings.Join([]string{
		"# comment",
		"Sitemap: https://example.com/sitemap.xml",
		"User-agent: *",
		"Disallow: /",
		"Crawl-delay: 10",
		"",
		"User-agent: LinkPatrol",
		"Disallow: /private",
		"Allow: /private/open",
		"Disallow: /*.pdf$",
		"Crawl-delay: 2.5",
		"Sitemap: https://example.com/news.xml",
	}, "\r\n")))
	tests := []struct {
		ua, path string
		want     bool
	}{
		{ourUA, "/", true},
		{ourUA, "", true},
		{ourUA, "/page?q=1", true},
		{ourUA, "/private", false},
		{ourUA, "/private/x", false},
		{ourUA, "/private/open/x", true},
		{ourUA, "/docs/a.pdf", false},
		{ourUA, "/docs/a.pdf?x", true},
		{"OtherBot/2.0", "/", false},
		{"OtherBot/2.0", "/robots.txt", true},
		{"", "/page", false},
	}
	for _, tt := range tests {
		if got := r.Allowed(tt.ua, tt.path); got != tt.want {
			t.Errorf("Allowed(%q, %q) = %v, want %v", tt.ua, tt.path, got, tt.want)
		}
	}
	if got := r.CrawlDelay(ourUA); got != 2500*time.Millisecond {
		t.Errorf("our Crawl-delay = %v, want 2.5s", got)
	}
	if got := r.CrawlDelay("OtherBot"); got != 10*time.Second {
		t.Errorf("* Crawl-delay = %v, want 10s", got)
	}
	want := []string{"https://example.com/sitemap.xml", "https://example.com/news.xml"}
	if got := r.Sitemaps(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Sitemaps() = %q, want %q", got, want)
	}
}

// A group names a crawler by its product token, matched whole and
// ignoring case (RFC 9309 §2.2.1): a line copied from an access log
// ("linkpatrol/0.1.0-dev") names linkpatrol, and a group for "link" or
// "linkpatrol-bot" is another crawler's, not ours (qa9 T13: "link" was
// obeyed, "linkpatrol/0.1.0-dev" ignored).
func TestRobotsGroupNamedByWholeToken(t *testing.T) {
	for _, tt := range []struct {
		agent string
		ours  bool
	}{
		{"linkpatrol", true},
		{"linkpatrol/0.1.0-dev", true},
		{"LinkPatrol/2.0", true},
		{"  LINKPATROL  # ours", true},
		{"linkpatrol-bot", false},
		{"link", false},
		{"patrol", false},
		{"l", false},
		{"*bot", false},
	} {
		r := throttle.ParseRobots(200, []byte("User-agent: *\nDisallow: /star\n\nUser-agent: "+tt.agent+"\nDisallow: /ours\n"))
		ours, star := !r.Allowed(ourUA, "/ours"), !r.Allowed(ourUA, "/star")
		if ours != tt.ours || star == tt.ours {
			t.Errorf("User-agent: %q: keeps off /ours %v, /star %v; want the group taken as ours: %v", tt.agent, ours, star, tt.ours)
		}
	}
}

func TestRobotsCrawlDelayBounded(t *testing.T) {
	r := throttle.ParseRobots(200, []byte("User-agent: *\nCrawl-delay: 1e300\n"))
	if got := r.CrawlDelay(ourUA); got != time.Hour {
		t.Errorf("Crawl-delay 1e300 = %v, want the 1h bound", got)
	}
}

// The library rejects a whole file over one bad line; RFC 9309 wants every
// rule that parses to be kept.
func TestRobotsLenient(t *testing.T) {
	r := throttle.ParseRobots(200, []byte(strings.Join([]string{
		"Disallow: /before-any-group",
		"User-agent: *",
		"Crawl-delay: soon",
		"Disallow: /private",
		"Crawl-delay: 3",
	}, "\n")))
	if r.Allowed(ourUA, "/private/a") {
		t.Error("/private/a allowed; the rule after the bad Crawl-delay was lost")
	}
	if !r.Allowed(ourUA, "/before-any-group") {
		t.Error("a rule outside any group was applied")
	}
	if got := r.CrawlDelay(ourUA); got != 3*time.Second {
		t.Errorf("Crawl-delay = %v, want 3s", got)
	}
}

func TestRobotsSizeCap(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("User-agent: *\nDisallow: /early\n")
	for b.Len() < throttle.MaxRobotsSize-100 {
		b.WriteString("# padding padding padding padding padding padding\n")
	}
	b.WriteString("#" + strings.Repeat("x", throttle.MaxRobotsSize-12-b.Len()-2) + "\n")
	// This rule straddles the cap: cut at the cap it would read
	// "Disallow: /s" and block every path starting with /s.
	b.WriteString("Disallow: /straddling-the-cap\n")
	b.WriteString("Disallow: /late\n")
	r := throttle.ParseRobots(200, b.Bytes())
	if r.Allowed(ourUA, "/early") {
		t.Error("/early allowed; the rule before the cap was lost")
	}
	for _, p := range []string{"/late", "/straddling-the-cap", "/something", "/other"} {
		if !r.Allowed(ourUA, p) {
			t.Errorf("%s disallowed; bytes past %d must be ignored", p, throttle.MaxRobotsSize)
		}
	}
}

func TestRobotsNil(t *testing.T) {
	var r *throttle.Robots
	if !r.Allowed(ourUA, "/x") || r.CrawlDelay(ourUA) != 0 || r.Sitemaps() != nil || r.Kind() != throttle.RobotsAllowAll {
		t.Error("a nil *Robots must behave like a missing robots.txt")
	}
}

func FuzzParseRobots(f *testing.F) {
	f.Add("User-agent: *\nDisallow: /private\nCrawl-delay: 2\nSitemap: https://x/s.xml\n", "/private/a")
	f.Add("Disallow: /x\nUser-agent: a\nUser-agent: b\nAllow: /*$\nCrawl-delay: nope\n", "/x")
	f.Add("User-agent: linkpatrol\r\nDisallow: /*?*$\r\n", "/a?b")
	f.Add("\xef\xbb\xbfUser-agent:*\rDisallow:\r", "")
	f.Fuzz(func(t *testing.T, body, path string) {
		r := throttle.ParseRobots(200, []byte(body))
		allowed := r.Allowed(ourUA, path)
		if d := r.CrawlDelay(ourUA); d < 0 || d > time.Hour {
			t.Fatalf("CrawlDelay = %v", d)
		}
		r.Sitemaps()
		// The stored form must parse to the same answer after a restart.
		th := throttle.New(throttle.Config{UserAgent: ourUA})
		th.SetRobots("h:80", r, time.Now())
		state, err := th.ExportState("h:80")
		if err != nil {
			t.Fatal(err)
		}
		th2 := throttle.New(throttle.Config{UserAgent: ourUA})
		if err := th2.ImportState("h:80", state); err != nil {
			t.Fatal(err)
		}
		r2, ok := th2.Robots("h:80")
		if !ok || r2.Allowed(ourUA, path) != allowed {
			t.Fatalf("after export and import: ok %v, Allowed %v, want %v", ok, r2.Allowed(ourUA, path), allowed)
		}
	})
}

// robots.txt's Crawl-delay is a gap between request starts, at most the
// host's MaxPause, as a Retry-After beyond it is not waited for; the
// owner's own crawl delay for a host of the site takes its place, and
// robots.txt ignored keeps none (qa5 N11: Crawl-delay 3600 held a
// six-page site for six hours).
func TestRobotsCrawlDelayCappedAndOverridden(t *testing.T) {
	t.Parallel()
	hour := throttle.ParseRobots(200, []byte("User-agent: *\nCrawl-delay: 3600\n"))
	for _, tt := range []struct {
		name string
		set  throttle.Settings
		kept time.Duration // CrawlDelay's second answer
		wait time.Duration // between two request starts
		// deferred: the second request is not waited for but deferred
		// (ErrDeferred), until an hour after the first started.
		deferred bool
	}{
		{"the site's own capped at max pause", throttle.Settings{MaxPause: 10 * time.Minute, CapCrawlDelay: true}, 10 * time.Minute, 10 * time.Minute, false},
		{"no cap without max pause", throttle.Settings{CapCrawlDelay: true}, time.Hour, time.Hour, false},
		{"the owner's delay in its place", throttle.Settings{MaxPause: 10 * time.Minute, CapCrawlDelay: true, CrawlDelay: time.Second, OwnCrawlDelay: true}, 0, time.Second, false},
		{"the owner's delay of none", throttle.Settings{MaxPause: 10 * time.Minute, CapCrawlDelay: true, OwnCrawlDelay: true}, 0, 0, false},
		// review6 B: another site's is never shortened; longer than the
		// pause the run may wait, it defers the host.
		{"another site's kept in full and deferred", throttle.Settings{MaxPause: 2 * time.Minute, CrawlDelay: time.Second}, time.Hour, 0, true},
		{"another site's kept in full without max pause", throttle.Settings{CrawlDelay: time.Second}, time.Hour, time.Hour, false},
		{"robots.txt ignored", throttle.Settings{MaxPause: 10 * time.Minute, IgnoreRobots: true}, 0, 0, false},
	} {
		synctest.Test(t, func(t *testing.T) {
			th := throttle.New(fixed(tt.set))
			th.SetRobots(host, hour, time.Now())
			if asked, kept := th.CrawlDelay(host); asked != time.Hour || kept != tt.kept {
				t.Errorf("%s: CrawlDelay = %v, %v; want 1h, %v", tt.name, asked, kept, tt.kept)
			}
			first := time.Now()
			acquire(t, th, host).Done(throttle.Outcome{Status: 200})
			if tt.deferred {
				if p, wait, err := th.Reserve(host); !errors.Is(err, throttle.ErrDeferred) {
					t.Errorf("%s: second request: permit %v, wait %v, err %v; want ErrDeferred", tt.name, p != nil, wait, err)
				}
				if until, ok := th.Deferred(host, "http://"+host+"/b"); !ok || !until.Equal(first.Add(time.Hour)) {
					t.Errorf("%s: Deferred = %v, %v; want true until an hour after the first request", tt.name, until, ok)
				}
				return
			}
			if tt.wait == 0 {
				if p, wait, err := th.Reserve(host); p == nil || err != nil {
					t.Errorf("%s: second request waits %v (%v), want none", tt.name, wait, err)
				}
				return
			}
			mustWait(t, th, host, tt.wait)
		})
	}
}

// Another site's Crawl-delay within its max pause is waited for, in full.
func TestOtherSitesCrawlDelayWithinMaxPauseIsWaitedFor(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{MaxPause: 2 * time.Minute}))
		th.SetRobots(host, throttle.ParseRobots(200, []byte("User-agent: *\nCrawl-delay: 90\n")), time.Now())
		acquire(t, th, host).Done(throttle.Outcome{Status: 200})
		mustWait(t, th, host, 90*time.Second)
	})
}

// RFC 9309 §2.2.2: a rule and a path are compared in one form: escapes of
// unreserved characters decoded, octets outside ASCII percent-encoded as
// UTF-8, other escapes (%2F, %3F) kept as they are. And of an Allow and a
// Disallow rule of equal length, the Allow rule wins (§2.2.2: SHOULD).
func TestRobotsPathEncoding(t *testing.T) {
	r := throttle.ParseRobots(200, []byte(strings.Join([]string{
		"User-agent: *",
		"Disallow: /%7Ejoe/",
		"Disallow: /café",
		"Disallow: /foo/bar/%62%61%7A",
		"Disallow: /a%2Fb",
		"Disallow: /%e2%82%ac",
		"Disallow: /x",
		"Allow: /x",
		"Disallow: /y/",
		"Allow: /y/",
		"Disallow: /p*q",
		"Allow: /p*q",
		"Disallow: /z",
		"",
		"User-agent: tiebot",
		"Disallow: /",
		"Allow: /",
	}, "\n")))
	tests := []struct {
		path string
		want bool
	}{
		{"/~joe/x", false},
		{"/%7Ejoe/x", false},
		{"/%7ejoe/x", false},
		{"/caf%C3%A9/1", false},
		{"/caf%c3%a9/1", false},
		{"/café/2", false},
		{"/cafe/2", true},
		{"/foo/bar/baz", false},
		{"/foo/bar/%62az", false},
		{"/a%2Fb", false},
		{"/a%2fb/c", false},
		{"/a/b", true}, // %2F is a reserved escape: not a slash
		{"/€", false},
		{"/%E2%82%AC", false},
		{"/x", true},
		{"/x/1", true},
		{"/y/1", true},
		{"/pq", true},
		{"/other", true},
		{"/z", false},
	}
	for _, tt := range tests {
		if got := r.Allowed(ourUA, tt.path); got != tt.want {
			t.Errorf("Allowed(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
	if !r.Allowed("tiebot/1", "/any") {
		t.Error("Disallow: / + Allow: / keeps tiebot off /any; the Allow rule should win")
	}
}
