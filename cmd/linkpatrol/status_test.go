package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// throttleSource shows a real throttle's hosts, as the crawler does.
type throttleSource struct {
	progress crawler.Progress
	th       *throttle.Throttle
}

func (s throttleSource) Progress() crawler.Progress  { return s.progress }
func (s throttleSource) Hosts() []throttle.HostStats { return s.th.Stats() }

const evilHost = "<script>alert(1)</script>:80"

func statusFixture(t *testing.T) (store.Pass, throttleSource) {
	t.Helper()
	th := throttle.New(throttle.Config{})
	// Two requests start; one is still running, one finished with a 503
	// asking for a pause.
	if _, _, err := th.Reserve(evilHost); err != nil {
		t.Fatal(err)
	}
	p, _, err := th.Reserve("127.0.0.1:8080")
	if err != nil {
		t.Fatal(err)
	}
	p.Done(throttle.Outcome{Status: 503, RetryAfter: "120", Bytes: 2048, Latency: 30 * time.Millisecond})
	pass := store.Pass{ID: 7, StartURLs: []string{"http://127.0.0.1:8080/?q=<b>"}, Started: time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC)}
	return pass, throttleSource{crawler.Progress{Done: 12, Pages: 3, Queued: 40, InFlight: 1, Problems: 2, Requests: 2}, th}
}

func startStatus(t *testing.T, public bool) string {
	t.Helper()
	pass, src := statusFixture(t)
	u, srv, err := serveStatus(t.Context(), "127.0.0.1:0", public, pass, src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return u
}

func get(t *testing.T, method, u, host string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func TestStatusPageHTML(t *testing.T) {
	u := startStatus(t, false)
	resp, body := get(t, "GET", u, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET / = %d\n%s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy %q allows more than styles", csp)
	}
	if strings.Contains(body, "<script") {
		t.Errorf("a host named %s reached the page unescaped", evilHost)
	}
	for _, want := range []string{
		"&lt;script&gt;alert(1)&lt;/script&gt;:80", // the host, as text
		"http://127.0.0.1:8080/?q=&lt;b&gt;",       // the start URL, as text
		`<meta http-equiv="refresh" content="2">`,
		"pass 7",
		"paused by the server for 2m0s",
		"2.0 kB", // bytes read from 127.0.0.1:8080
		"not fetched yet",
		`href="status.json"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// The page has no external assets: nothing is loaded from anywhere.
	for _, attr := range []string{"src=", "<link", "@import", "url("} {
		if strings.Contains(body, attr) {
			t.Errorf("page loads something: %q", attr)
		}
	}
}

func TestStatusPageJSON(t *testing.T) {
	u := startStatus(t, false)
	resp, body := get(t, "GET", u+"status.json", "")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /status.json = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if strings.Contains(body, "<script>") {
		t.Error("JSON carries a raw <script>; it should be \\u003c-escaped")
	}

	// The schema, field by field: these names are a contract.
	var doc map[string]any
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	wantKeys(t, "document", doc, "time", "pass", "progress", "totals", "hosts")
	wantKeys(t, "pass", doc["pass"], "id", "start_urls", "started", "running_seconds")
	wantKeys(t, "progress", doc["progress"], "done", "pages", "queued", "in_flight", "problems", "requests", "reused")
	wantKeys(t, "totals", doc["totals"], "hosts", "requests", "bytes", "rate", "in_flight", "paused", "deferred")
	hosts, _ := doc["hosts"].([]any)
	if len(hosts) != 2 {
		t.Fatalf("hosts = %v", doc["hosts"])
	}
	for _, h := range hosts {
		wantKeys(t, "host", h, "key", "hosts", "requests", "bytes", "rate", "in_flight", "max_in_flight",
			"gap_seconds", "latency_seconds", "paused_until", "backoff_level", "backoff_until", "deferred",
			"quota_requests_used", "quota_bytes_used", "waited_seconds", "read_wait_seconds", "ignores_robots", "robots")
	}

	var typed statusDoc
	if err := json.Unmarshal([]byte(body), &typed); err != nil {
		t.Fatal(err)
	}
	if typed.Pass.ID != 7 || typed.Progress.Done != 12 || typed.Progress.Queued != 40 {
		t.Errorf("pass and progress = %+v %+v", typed.Pass, typed.Progress)
	}
	if tt := typed.Totals; tt.Hosts != 2 || tt.Requests != 2 || tt.Bytes != 2048 || tt.InFlight != 1 || tt.Paused != 1 {
		t.Errorf("totals = %+v", tt)
	}
	byKey := map[string]statusHost{}
	for _, h := range typed.Hosts {
		byKey[h.Key] = h
	}
	if h := byKey[evilHost]; h.InFlight != 1 || h.PausedUntil != nil || len(h.Hosts) != 1 || h.Hosts[0] != evilHost {
		t.Errorf("%s = %+v", evilHost, h)
	}
	if h := byKey["127.0.0.1:8080"]; h.PausedUntil == nil || h.Bytes != 2048 || h.QuotaBytesUsed != 2048 {
		t.Errorf("127.0.0.1:8080 = %+v", h)
	}
}

func wantKeys(t *testing.T, what string, v any, keys ...string) {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Errorf("%s is %T, not an object", what, v)
		return
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Errorf("%s lacks %q: %v", what, k, m)
		}
	}
}

func TestStatusPageReadOnlyAndLoopbackOnly(t *testing.T) {
	u := startStatus(t, false)
	for _, c := range []struct {
		method, path, host string
		want               int
	}{
		{"GET", "", "", http.StatusOK},
		{"HEAD", "status.json", "", http.StatusOK},
		{"GET", "", "localhost", http.StatusOK},
		{"GET", "", "[::1]:9", http.StatusOK},
		{"POST", "", "", http.StatusMethodNotAllowed},
		{"DELETE", "status.json", "", http.StatusMethodNotAllowed},
		{"GET", "nothing", "", http.StatusNotFound},
		// A page on the web that rebinds its own name to 127.0.0.1 sends
		// its own name as Host.
		{"GET", "status.json", "attacker.example", http.StatusForbidden},
		{"GET", "", "10.0.0.1:80", http.StatusForbidden},
	} {
		resp, _ := get(t, c.method, u+c.path, c.host)
		if resp.StatusCode != c.want {
			t.Errorf("%s /%s Host %q = %d, want %d", c.method, c.path, c.host, resp.StatusCode, c.want)
		}
	}

	public := startStatus(t, true)
	if resp, _ := get(t, "GET", public, "status.example.org"); resp.StatusCode != http.StatusOK {
		t.Errorf("with --status-public any Host is served, got %d", resp.StatusCode)
	}
}

func TestStatusRefusesNonLoopback(t *testing.T) {
	pass, src := statusFixture(t)
	for _, addr := range []string{":0", "0.0.0.0:0", "[::]:0", "192.0.2.1:0", "[2001:db8::1]:0"} {
		_, _, err := serveStatus(t.Context(), addr, false, pass, src)
		if err == nil || !strings.Contains(err.Error(), "--status-public") {
			t.Errorf("serveStatus(%q) = %v, want a refusal naming --status-public", addr, err)
		}
	}
	if _, _, err := serveStatus(t.Context(), "127.0.0.1", false, pass, src); err == nil {
		t.Error("an address without a port was accepted")
	}
	for _, addr := range []string{"localhost:0", "[::1]:0", "127.0.0.2:0"} {
		u, srv, err := serveStatus(t.Context(), addr, false, pass, src)
		if err != nil {
			if addr == "[::1]:0" && strings.Contains(err.Error(), "cannot assign") {
				continue // no IPv6 loopback on this machine
			}
			t.Errorf("serveStatus(%q): %v", addr, err)
			continue
		}
		if resp, _ := get(t, "GET", u+"status.json", ""); resp.StatusCode != http.StatusOK {
			t.Errorf("%s: GET = %d", u, resp.StatusCode)
		}
		srv.Stop()
	}
}

func TestStatusStopsWithContext(t *testing.T) {
	pass, src := statusFixture(t)
	ctx, cancel := context.WithCancel(t.Context())
	u, srv, err := serveStatus(ctx, "127.0.0.1:0", false, pass, src)
	if err != nil {
		t.Fatal(err)
	}
	if resp, _ := get(t, "GET", u, ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET = %d", resp.StatusCode)
	}
	cancel()
	srv.Stop() // waits for the shutdown the cancel began; a second stop is harmless
	srv.Stop()
	if _, err := http.Get(u); err == nil {
		t.Error("the page still answers after its context ended")
	}
}

func TestStatusViewOrderAndCap(t *testing.T) {
	now := time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC)
	var hosts []throttle.HostStats
	for i := range statusRows + 20 {
		hosts = append(hosts, throttle.HostStats{Key: fmt.Sprintf("h%03d", i), Requests: int64(i)})
	}
	hosts[5].InFlight = 2
	hosts[9].Rate = 3
	hosts[118].PausedUntil = now.Add(-time.Second) // over: not a pause any more
	hosts[117].BackoffUntil, hosts[117].BackoffLevel = now.Add(1500*time.Millisecond), 2
	hosts[116].Deferred = true
	d := buildStatus(store.Pass{ID: 1}, time.Minute, crawler.Progress{}, hosts, now)
	v := newStatusView(d)
	if len(v.Rows) != statusRows || v.Hidden != 20 {
		t.Fatalf("%d rows, %d hidden", len(v.Rows), v.Hidden)
	}
	if got := []string{v.Rows[0].Key, v.Rows[1].Key, v.Rows[2].Key}; got[0] != "h005" || got[1] != "h009" || got[2] != "h119" {
		t.Errorf("busiest first: %v", got)
	}
	if d.Totals.Paused != 1 || d.Totals.Deferred != 1 || d.Hosts[118].PausedUntil != nil {
		t.Errorf("totals %+v, h118 paused until %v", d.Totals, d.Hosts[118].PausedUntil)
	}
	pauses := map[string]string{}
	for _, r := range v.Rows {
		pauses[r.Key] = r.Pause
	}
	if got := pauses["h117"]; got != "backing off (2 failures) for 1.5s" {
		t.Errorf("h117 pause = %q", got)
	}
	if got := pauses["h116"]; got != "deferred to the next pass" {
		t.Errorf("h116 pause = %q", got)
	}
	if got := pauses["h118"]; got != "" {
		t.Errorf("h118 pause = %q", got)
	}
}

func TestRobotsText(t *testing.T) {
	fetched := time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		h    statusHost
		want string
	}{
		{statusHost{}, "not fetched yet"},
		{statusHost{IgnoresRobots: true}, "ignored by configuration"},
		{statusHost{Robots: []statusRobots{{Host: "a:80", State: "rules", Status: 200, Fetched: &fetched, Fresh: true, CrawlDelaySeconds: 2}}},
			"rules (200), crawl-delay 2s"},
		{statusHost{Robots: []statusRobots{
			{Host: "a:80", State: "allow all", Status: 404, Fresh: true},
			{Host: "b:80", State: "disallow all", Status: 0},
		}}, "a:80: allow all (404); b:80: disallow all, stale"},
	} {
		if got := robotsText(c.h); got != c.want {
			t.Errorf("robotsText(%+v) = %q, want %q", c.h, got, c.want)
		}
	}
}

func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1000: "1.0 kB", 1_500_000: "1.5 MB", 3_200_000_000: "3.2 GB", 999_949: "999.9 kB", 999_950: "1.0 MB", math.MaxInt64: "9.2 EB"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// BenchmarkStatusPage renders one reload of the page and of its JSON for a
// pass that has touched 5000 hosts (a site linking out a lot).
func BenchmarkStatusPage(b *testing.B) {
	now := time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC)
	hosts := make([]throttle.HostStats, 5000)
	for i := range hosts {
		key := fmt.Sprintf("host%04d.example:443", i)
		hosts[i] = throttle.HostStats{Key: key, Hosts: []string{key}, Requests: int64(i), Bytes: int64(i) * 1000, Rate: float64(i % 7),
			Robots: []throttle.RobotsStatus{{Host: key, Kind: throttle.RobotsRules, Status: 200, Fresh: true, Fetched: now}}}
	}
	pass := store.Pass{ID: 1, StartURLs: []string{"https://www.example.org/"}}
	b.Run("html", func(b *testing.B) {
		for b.Loop() {
			if err := statusPage.Execute(io.Discard, newStatusView(buildStatus(pass, time.Minute, crawler.Progress{}, hosts, now))); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		for b.Loop() {
			if err := json.NewEncoder(io.Discard).Encode(buildStatus(pass, time.Minute, crawler.Progress{}, hosts, now)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
