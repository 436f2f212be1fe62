package crawler_test

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/crawler/crawltest"
	"github.com/linkpatrol/linkpatrol/report"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// politeRun runs (or resumes) the pass of db from start with the throttle
// on, every host with settings s, until it ends or stop is cancelled, and
// returns its outcome, the records of the pass and the throttle's view of
// the hosts.
func politeRun(t *testing.T, db *store.DB, start string, s throttle.Settings, stop context.Context) (crawler.Outcome, map[string]store.URLRecord, []throttle.HostStats) {
	t.Helper()
	return politeRunVia(t, db, start, s, stop, nil)
}

// politeRunVia is politeRun over tr (nil: the crawler's own transport).
func politeRunVia(t *testing.T, db *store.DB, start string, s throttle.Settings, stop context.Context, tr http.RoundTripper) (crawler.Outcome, map[string]store.URLRecord, []throttle.HostStats) {
	t.Helper()
	return politeRunWithin(t, db, start, s, stop, tr, 5*time.Second)
}

// politeRunWithin is politeRunVia with a request timeout of timeout.
func politeRunWithin(t *testing.T, db *store.DB, start string, s throttle.Settings, stop context.Context, tr http.RoundTripper, timeout time.Duration) (crawler.Outcome, map[string]store.URLRecord, []throttle.HostStats) {
	t.Helper()
	engine, err := rules.New(rules.Config{Start: []string{start}})
	if err != nil {
		t.Fatal(err)
	}
	settings := func(string) throttle.Settings { return s }
	th := throttle.New(throttle.Config{Settings: settings, UserAgent: "linkpatrol-test"})
	c := crawler.New(crawler.Config{Concurrency: 8, UserAgent: "linkpatrol-test", Timeout: timeout,
		Throttle: th, HostSettings: settings, Transport: tr}, engine, db)
	pass, out, err := c.Run(stop, context.Background(), passOf(start))
	if err != nil {
		t.Fatal(err)
	}
	recs := make(map[string]store.URLRecord)
	if err := db.Records(pass.ID, func(r *store.URLRecord) error { recs[r.URL] = *r; return nil }); err != nil {
		t.Fatal(err)
	}
	return out, recs, c.Hosts()
}

// tlsRefuser accepts connections and answers every TLS handshake with a
// handshake_failure alert.
func tlsRefuser(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 512)
			c.Read(buf)
			c.Write([]byte{0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x28})
			c.Close()
		}
	}()
	return l.Addr().String()
}

// closedPort is a loopback address that refuses connections for the whole
// test: its port is bound by a socket that never listens. A port taken from
// a listener and closed again could be handed by the kernel to another
// test's server meanwhile (one whose HEAD hangs, say), and then answered.
func closedPort(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
}

// A host that is down, failing or unreachable is never a clean night: the
// URLs it holds back end as problems with their real cause, never as
// "skipped: robots.txt disallows it" (issue 12 §1).
func TestPassSurvivesHostileHosts(t *testing.T) {
	t.Parallel()
	verifyNoLeaks(t)
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	defer failing.Close()
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer hanging.Close()
	robots429 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3600")
		http.Error(w, "slow down", http.StatusTooManyRequests)
	}))
	defer robots429.Close()
	badLocation := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/":
			page(`<a href="/moved">moved</a> <a href="http://localhost]/">typo</a>`)(w, r)
		default:
			w.Header().Set("Location", "http://[::1")
			w.WriteHeader(http.StatusFound)
		}
	}))
	defer badLocation.Close()

	tests := []struct {
		name     string
		start    string
		url      string // the URL whose verdict is checked; start when empty
		verdict  store.Verdict
		err      string // Error must contain this
		deferred int
		retries  int           // of a URL or a robots.txt; 2 unless said (-1: none)
		timeout  time.Duration // of a request; 5s unless said
	}{
		{"500 everywhere, robots.txt too", failing.URL + "/", "", store.VerdictTransient, "robots.txt answered 500: the host is failing", 0, 0, 0},
		// Nothing there answers: no timeout is too short, and it is waited out.
		{"robots.txt never answers", hanging.URL + "/", "", store.VerdictTransient, "robots.txt could not be fetched (timeout)", 0, -1, time.Second},
		{"robots.txt answers 429 Retry-After 3600", robots429.URL + "/", "", store.VerdictTransient, "rate-limited", 1, 0, 0},
		{"TLS handshake refused", "https://" + tlsRefuser(t) + "/", "", store.VerdictBroken, "TLS handshake failed", 0, 0, 0},
		{"plain HTTP on the TLS port", "https://" + strings.TrimPrefix(failing.URL, "http://") + "/", "", store.VerdictBroken, "TLS handshake failed", 0, 0, 0},
		{"invalid host", "http://localhost]/", "", store.VerdictBroken, "invalid host", 0, 0, 0},
		{"invalid host in a link", badLocation.URL + "/", "http://localhost]/", store.VerdictBroken, "invalid host", 0, 0, 0},
		{"invalid redirect Location", badLocation.URL + "/", badLocation.URL + "/moved", store.VerdictBroken, "invalid URL", 0, 0, 0},
		{"closed port", "http://" + closedPort(t) + "/", "", store.VerdictBroken, "refused", 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			retries := 2
			if tt.retries != 0 {
				retries = max(tt.retries, 0)
			}
			timeout := cmp.Or(tt.timeout, 5*time.Second)
			out, recs, _ := politeRunWithin(t, openDB(t), tt.start, throttle.Settings{MaxPause: 10 * time.Minute, MaxRetries: retries}, context.Background(), nil, timeout)
			u := tt.url
			if u == "" {
				u = tt.start
			}
			rec, ok := recs[u]
			if !ok {
				t.Fatalf("%s: no record; have %v", u, recs)
			}
			if rec.Verdict != tt.verdict || !strings.Contains(rec.Error, tt.err) {
				t.Errorf("%s: %s %q (%s), want %s %q", u, rec.Verdict, rec.Error, rec.Note, tt.verdict, tt.err)
			}
			if out.Deferred != tt.deferred || out.Complete != (tt.deferred == 0) {
				t.Errorf("deferred %d, complete %v; want %d deferred", out.Deferred, out.Complete, tt.deferred)
			}
		})
	}
}

// A robots.txt that answers 503 with a short Retry-After is asked again
// after the pause; the host is not kept off for an hour over it.
func TestRobotsShortPauseIsWaitedFor(t *testing.T) {
	t.Parallel()
	var robots atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			if robots.Add(1) == 1 {
				w.Header().Set("Retry-After", "1")
				http.Error(w, "maintenance", http.StatusServiceUnavailable)
				return
			}
			http.NotFound(w, r)
			return
		}
		page(`fine`)(w, r)
	}))
	defer srv.Close()
	out, recs, _ := politeRun(t, openDB(t), srv.URL+"/", throttle.Settings{MaxPause: 10 * time.Minute, MaxRetries: 2}, context.Background())
	if rec := recs[srv.URL+"/"]; !out.Complete || rec.Verdict != store.VerdictOK || robots.Load() != 2 {
		t.Errorf("complete %v, start %s %q, robots.txt asked %d times; want ok after asking twice", out.Complete, rec.Verdict, rec.Error, robots.Load())
	}
}

// pauseSite serves a start page linking to ok pages, a broken one and
// /slowN pages that answer 429 Retry-After 3600, counting the requests for
// each of those.
func pauseSite(t *testing.T, c *counter, slow int, extra string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", http.NotFound)
	links := `<a href="/a">a</a><a href="/b">b</a><a href="/gone">gone</a>` + extra
	for i := range slow {
		links += `<a href="/slow` + string(rune('0'+i)) + `">slow</a>`
	}
	mux.Handle("/{$}", page(links))
	mux.Handle("/a", page(`<a href="/a/deep">deep</a>`))
	mux.Handle("/a/deep", page(`<a href="/gone-deep">gone</a>`))
	mux.Handle("/b", page(`b`))
	for _, p := range []string{"/gone", "/gone-deep"} {
		mux.HandleFunc(p, http.NotFound)
	}
	for i := range slow {
		mux.HandleFunc("/slow"+string(rune('0'+i)), func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "3600")
			http.Error(w, "too many", http.StatusTooManyRequests)
		})
	}
	srv := httptest.NewServer(c.wrap(mux))
	t.Cleanup(srv.Close)
	return srv
}

// One URL asking for an hour's pause holds back that URL alone: the rest of
// the site is checked, the URL is listed as rate-limited, the pass is not
// complete, and resuming it does not ask the URL again before its time
// (issue 12 §2).
func TestRetryAfterOnOneURLDefersOnlyIt(t *testing.T) {
	t.Parallel()
	verifyNoLeaks(t)
	var c counter
	srv := pauseSite(t, &c, 1, "")
	db := openDB(t)
	s := throttle.Settings{MaxPause: 10 * time.Minute, MaxRetries: 2}
	out, recs, hosts := politeRun(t, db, srv.URL+"/", s, context.Background())
	if out.Complete || out.Deferred != 1 || out.ResumeAfter.Before(time.Now().Add(50*time.Minute)) {
		t.Errorf("outcome %+v: want incomplete, 1 URL deferred for about an hour", out)
	}
	for path, want := range map[string]store.Verdict{
		"/": store.VerdictOK, "/a": store.VerdictOK, "/b": store.VerdictOK, "/a/deep": store.VerdictOK,
		"/gone": store.VerdictBroken, "/gone-deep": store.VerdictBroken, "/slow0": store.VerdictTransient,
	} {
		if rec := recs[srv.URL+path]; rec.Verdict != want {
			t.Errorf("%s: %s %q, want %s", path, rec.Verdict, rec.Error, want)
		}
	}
	if rec := recs[srv.URL+"/slow0"]; rec.Error != "rate-limited" || !strings.Contains(rec.Note, "Retry-After 1h") {
		t.Errorf("/slow0: error %q, note %q; want rate-limited, Retry-After 1h", rec.Error, rec.Note)
	}
	if len(hosts) != 1 || hosts[0].Deferred {
		t.Errorf("the host was deferred for one URL's pause: %+v", hosts)
	}
	queue, err := db.Frontier()
	if err != nil || len(queue) != 1 || queue[0].URL != srv.URL+"/slow0" {
		t.Errorf("frontier %v (%v): want the held URL, to be done on resume", queue, err)
	}

	// Resumed before the hour is up: nothing is asked again, the URL is
	// still held, the pass still not complete.
	before := c.get("GET /a")
	out, recs, _ = politeRun(t, db, srv.URL+"/", s, context.Background())
	if out.Complete || out.Deferred != 1 || recs[srv.URL+"/slow0"].Error != "rate-limited" {
		t.Errorf("resumed: outcome %+v, /slow0 %+v", out, recs[srv.URL+"/slow0"])
	}
	if n := c.get("GET /slow0"); n != 1 {
		t.Errorf("/slow0 requested %d times, want 1: a restart must not ask before the pause ends", n)
	}
	if n := c.get("GET /a"); n != before {
		t.Errorf("the resumed run fetched /a again")
	}
}

// A second distinct URL asking for a long pause shows that the pause is the
// host's: then the whole host waits, and every URL it holds is listed.
func TestRetryAfterOnTwoURLsDefersTheHost(t *testing.T) {
	t.Parallel()
	var c counter
	srv := pauseSite(t, &c, 2, "")
	out, recs, hosts := politeRun(t, openDB(t), srv.URL+"/", throttle.Settings{MaxPause: 10 * time.Minute, MaxRetries: 2, MaxInFlight: 1}, context.Background())
	if len(hosts) != 1 || !hosts[0].Deferred {
		t.Errorf("two URLs paused for an hour, host not deferred: %+v", hosts)
	}
	if out.Complete || out.Deferred < 2 {
		t.Errorf("outcome %+v: want incomplete with both slow URLs deferred", out)
	}
	for u, rec := range recs {
		if rec.Verdict == store.VerdictSkipped {
			t.Errorf("%s skipped (%s): a held URL is a problem, never skipped", u, rec.Note)
		}
		if rec.Error == "rate-limited" && rec.Verdict != store.VerdictTransient {
			t.Errorf("%s: %s, want transient on the site's own host", u, rec.Verdict)
		}
	}
}

// On a third-party host a URL held back by a long pause cannot be verified:
// that is its verdict, and the pass is complete.
func TestRetryAfterOnAThirdPartyHostIsUnverifiable(t *testing.T) {
	t.Parallel()
	var oc counter
	other := httptest.NewServer(oc.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Retry-After", "3600")
		http.Error(w, "too many", http.StatusTooManyRequests)
	})))
	defer other.Close()
	var c counter
	srv := pauseSite(t, &c, 0, `<a href="`+other.URL+`/x">x</a>`)
	out, recs, _ := politeRun(t, openDB(t), srv.URL+"/", throttle.Settings{MaxPause: 2 * time.Minute, MaxRetries: 1}, context.Background())
	if !out.Complete || out.Deferred != 0 {
		t.Errorf("outcome %+v: a third party's pause leaves the pass complete", out)
	}
	if rec := recs[other.URL+"/x"]; rec.Verdict != store.VerdictUnverifiable || rec.Error != "rate-limited" {
		t.Errorf("third-party URL: %s %q, want unverifiable rate-limited", rec.Verdict, rec.Error)
	}
}

// A refused connection is not a politeness event: no backoff, no retry
// (three links to a closed port once cost 51 s of backoff).
func TestRefusedConnectionIsNotBackedOff(t *testing.T) {
	t.Parallel()
	closed := closedPort(t)
	srv := httptest.NewServer(page(`<a href="http://` + closed + `/a">a</a><a href="http://` + closed + `/b">b</a><a href="http://` + closed + `/c">c</a>`))
	defer srv.Close()
	_, recs, hosts := politeRun(t, openDB(t), srv.URL+"/", throttle.Settings{MaxPause: 10 * time.Minute, MaxRetries: 2}, context.Background())
	for _, p := range []string{"/a", "/b", "/c"} {
		if rec := recs["http://"+closed+p]; rec.Verdict != store.VerdictBroken || rec.Error != "refused" {
			t.Errorf("%s: %s %q, want broken refused", p, rec.Verdict, rec.Error)
		}
	}
	for _, h := range hosts {
		if h.Key != closed {
			continue
		}
		// robots.txt and one HEAD per link; nothing retried.
		if h.BackoffLevel != 0 || h.Requests != 4 {
			t.Errorf("closed port: backoff level %d, %d requests; want 0 and 4", h.BackoffLevel, h.Requests)
		}
	}
}

// A redirect to a URL of the site held back by a pause holds back the
// whole chain: both URLs stay queued for the run after the pause, whether
// the redirect finds the URL held (a new pass the next night) or is itself
// the one told to wait.
func TestRedirectToAHeldURLIsHeldBack(t *testing.T) {
	t.Parallel()
	t.Run("held before", func(t *testing.T) { redirectToHeld(t, true) })
	t.Run("held by the redirect", func(t *testing.T) { redirectToHeld(t, false) })
}

func redirectToHeld(t *testing.T, heldBefore bool) {
	var c counter
	var redirect atomic.Bool
	srv := pauseSite(t, &c, 1, `<a href="/r">r</a>`)
	srv.Config.Handler = c.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/r" && redirect.Load():
			http.Redirect(w, r, "/slow0", http.StatusFound)
		case r.URL.Path == "/" && redirect.Load():
			page(`<a href="/r">r</a>`)(w, r)
		case r.URL.Path == "/":
			page(`<a href="/slow0">slow</a>`)(w, r)
		case r.URL.Path == "/slow0":
			w.Header().Set("Retry-After", "3600")
			http.Error(w, "too many", http.StatusTooManyRequests)
		default:
			http.NotFound(w, r)
		}
	}))
	db := openDB(t)
	s := throttle.Settings{MaxPause: 10 * time.Minute, MaxRetries: 2}
	if heldBefore {
		politeRun(t, db, srv.URL+"/", s, context.Background())
		// The next night, a new pass: /r now redirects to the URL still held.
		open, _, err := db.OpenPass()
		if err != nil {
			t.Fatal(err)
		}
		open.State = store.PassAbandoned
		if err := db.UpdatePass(open); err != nil {
			t.Fatal(err)
		}
	}
	redirect.Store(true)
	out, recs, _ := politeRun(t, db, srv.URL+"/", s, context.Background())
	for _, p := range []string{"/r", "/slow0"} {
		if rec := recs[srv.URL+p]; rec.Verdict != store.VerdictTransient || rec.Error != "rate-limited" {
			t.Errorf("%s: %s %q, want transient rate-limited", p, rec.Verdict, rec.Error)
		}
	}
	if out.Complete || out.Deferred != 2 {
		t.Errorf("outcome %+v: want both URLs of the chain deferred", out)
	}
	queue, err := db.Frontier()
	if err != nil || len(queue) != 2 {
		t.Errorf("frontier %v (%v): want /r and /slow0 kept queued", queue, err)
	}
	if n := c.get("GET /slow0"); n != 1 {
		t.Errorf("/slow0 requested %d times, want 1: it is held", n)
	}
}

// An invalid URL is broken "invalid URL" wherever it appears: a page's
// link, a redirect's Location (TestPassSurvivesHostileHosts) and a
// sitemap's entry, never skipped or dropped.
func TestInvalidSitemapEntryIsBroken(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/sitemap.xml":
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprint(w, `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>http://[::1</loc></url>
<url><loc>`+"http://"+r.Host+`/listed</loc></url>
</urlset>`)
		default:
			page(`fine`)(w, r)
		}
	}))
	defer srv.Close()
	_, recs := seededPass(t, openDB(t), crawler.Config{Sitemaps: []string{srv.URL + "/sitemap.xml"}}, context.Background(), srv.URL+"/")
	if rec := recs["http://[::1"]; rec.Verdict != store.VerdictBroken || rec.Error != "invalid URL" {
		t.Errorf("invalid sitemap entry: %+v, want broken invalid URL", rec)
	}
	if rec := recs[srv.URL+"/listed"]; rec.Verdict != store.VerdictOK {
		t.Errorf("valid entry next to it: %s %q", rec.Verdict, rec.Error)
	}
}

// A redirect to a host whose robots.txt asks for a pause is not followed
// blindly: the link is transient with that cause.
func TestRedirectToAHostWhoseRobotsAsksToWait(t *testing.T) {
	t.Parallel()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "maintenance", http.StatusServiceUnavailable)
			return
		}
		page(`fine`)(w, r)
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/r":
			http.Redirect(w, r, other.URL+"/x", http.StatusFound)
		default:
			page(`<a href="/r">r</a>`)(w, r)
		}
	}))
	defer srv.Close()
	_, recs, _ := politeRun(t, openDB(t), srv.URL+"/", throttle.Settings{MaxPause: 10 * time.Minute, MaxRetries: 2}, context.Background())
	if rec := recs[srv.URL+"/r"]; rec.Verdict != store.VerdictTransient || rec.Error != "robots.txt asked to wait" {
		t.Errorf("/r: %s %q (%s), want transient: robots.txt asked to wait", rec.Verdict, rec.Error, rec.Note)
	}
	if rec := recs[other.URL+"/x"]; !strings.Contains(rec.Note, "answered its robots.txt with 503 Service Unavailable") {
		t.Errorf("/x, the target: %s %q (%s), want a note naming the 503", rec.Verdict, rec.Error, rec.Note)
	}
}

// A redirect to a host whose robots.txt could not be fetched (it timed
// out, and the throttle asks to try again later) says so: nothing asked to
// wait (qa7: a network unreachable was reported as "robots.txt asked to
// wait").
func TestRedirectToAHostWhoseRobotsTimesOut(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		base, tr := pipeServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.Host == "127.0.0.2" && r.URL.Path == "/robots.txt":
				<-r.Context().Done() // never answers
			case r.Host == "127.0.0.2":
				page(`fine`)(w, r)
			case r.URL.Path == "/robots.txt":
				http.NotFound(w, r)
			case r.URL.Path == "/r":
				http.Redirect(w, r, "http://127.0.0.2/x", http.StatusFound)
			default:
				page(`<a href="/r">r</a>`)(w, r)
			}
		}))
		_, recs, _ := politeRunVia(t, openDB(t), base+"/", throttle.Settings{MaxPause: 10 * time.Minute, MaxRetries: 2}, context.Background(), tr)
		if rec := recs[base+"/r"]; rec.Verdict != store.VerdictTransient || rec.Error != "robots.txt could not be fetched (timeout)" {
			t.Errorf("/r: %s %q (%s), want transient: robots.txt could not be fetched (timeout)", rec.Verdict, rec.Error, rec.Note)
		}
	})
}

// A host whose robots.txt asks for a pause longer than this run waits holds
// back a redirect to it exactly as a link straight to it: the same
// verdict, the same cause, and the Retry-After on the link the page has,
// whichever reached the host first (review7 RV2 #5: "transient, the host
// is failing" or "robots.txt asked to wait" by redirect, "unverifiable,
// rate-limited" directly).
func TestRedirectToAHostWhoseRobotsPausesPastMaxPause(t *testing.T) {
	t.Parallel()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.Header().Set("Retry-After", "3600")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
		page(`fine`)(w, r)
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/go", "/docs/":
			http.Redirect(w, r, other.URL+r.URL.Path+"x", http.StatusMovedPermanently)
		default:
			page(`<a href="/go">go</a> <a href="`+other.URL+`/y">y</a> <a href="/docs/">docs</a>`)(w, r)
		}
	}))
	defer srv.Close()
	_, recs, _ := politeRun(t, openDB(t), srv.URL+"/", throttle.Settings{MaxPause: 10 * time.Minute, MaxRetries: 2}, context.Background())
	for _, u := range []string{other.URL + "/y", srv.URL + "/go", srv.URL + "/docs/"} {
		rec := recs[u]
		if rec.Verdict != store.VerdictUnverifiable || rec.Error != store.ErrorRateLimited || !strings.Contains(rec.Note, "Retry-After 1h") {
			t.Errorf("%s: %s %q (%s), want unverifiable rate-limited with the Retry-After", u, rec.Verdict, rec.Error, rec.Note)
		}
	}
}

// "Retry-After: 0" and a date in the past say "come back now": a comeback
// like "1", which spends none of the link's retries. Taken as unusable, a
// third-party link refused twice that way ended unverifiable after two
// requests, where "Retry-After: 1" came back and ended OK (qa8 R3).
func TestRetryAfterNowIsAComeback(t *testing.T) {
	t.Parallel()
	var subs []crawltest.Subtest
	for _, ra := range []string{"0", "Sat, 01 Jan 1990 00:00:00 GMT"} {
		subs = append(subs, crawltest.Subtest{Name: ra, F: func(t *testing.T) {
			var asked atomic.Int64
			var oc counter
			other := httptest.NewServer(oc.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/robots.txt" {
					http.NotFound(w, r)
					return
				}
				if asked.Add(1) <= 2 {
					w.Header().Set("Retry-After", ra)
					http.Error(w, "too many", http.StatusTooManyRequests)
					return
				}
				fmt.Fprint(w, "ok")
			})))
			defer other.Close()
			var c counter
			srv := pauseSite(t, &c, 0, `<a href="`+other.URL+`/x">x</a>`)
			_, recs, _ := politeRun(t, openDB(t), srv.URL+"/", throttle.Settings{MaxPause: 2 * time.Minute, MaxRetries: 1}, context.Background())
			if rec := recs[other.URL+"/x"]; rec.Verdict != store.VerdictOK {
				t.Errorf("third-party URL told Retry-After %q twice: %s %q, want OK on its third request", ra, rec.Verdict, rec.Error)
			}
		}})
	}
	crawltest.AtOnce(t, subs...)
}

// A URL of the site held back by its long Retry-After, asked again in a
// later run of the same pass once that pause has run out, that asks for
// another long pause is final for the pass: unverifiable, with why, no
// longer queued, so the pass completes; else each run resumed the pass to
// ask that URL alone, and the rest of the site was never checked again
// (qa8 R2). The first run still holds it back, so a short outage is
// waited out. The clock of the second run is two hours on.
func TestRetryAfterAgainAfterThePauseIsFinal(t *testing.T) {
	t.Parallel()
	var c counter
	srv := pauseSite(t, &c, 1, "")
	db := openDB(t)
	s := throttle.Settings{MaxPause: 10 * time.Minute, MaxRetries: 2}
	run := func(offset time.Duration) (crawler.Outcome, map[string]store.URLRecord) {
		t.Helper()
		engine, err := rules.New(rules.Config{Start: []string{srv.URL + "/"}})
		if err != nil {
			t.Fatal(err)
		}
		now := func() time.Time { return time.Now().Add(offset) }
		settings := func(string) throttle.Settings { return s }
		th := throttle.New(throttle.Config{Settings: settings, UserAgent: "linkpatrol-test", Now: now})
		cr := crawler.New(crawler.Config{Concurrency: 8, UserAgent: "linkpatrol-test", Timeout: 5 * time.Second,
			Throttle: th, HostSettings: settings, Now: now}, engine, db)
		pass, out, err := cr.Run(context.Background(), context.Background(), passOf(srv.URL+"/"))
		if err != nil {
			t.Fatal(err)
		}
		recs := make(map[string]store.URLRecord)
		if err := db.Records(pass.ID, func(r *store.URLRecord) error { recs[r.URL] = *r; return nil }); err != nil {
			t.Fatal(err)
		}
		return out, recs
	}
	slow := srv.URL + "/slow0"
	out, recs := run(0)
	if rec := recs[slow]; out.Complete || out.Deferred != 1 || !rec.HeldOwn() {
		t.Fatalf("first run: outcome %+v, /slow0 %s %q: want it held back, the pass not complete", out, rec.Verdict, rec.Error)
	}
	// Before the pause is over, it is still held, and not asked.
	out, recs = run(30 * time.Minute)
	if rec := recs[slow]; out.Complete || !rec.HeldOwn() || c.get("GET /slow0") != 1 {
		t.Fatalf("resumed within the pause: outcome %+v, /slow0 %s %q, asked %d times", out, rec.Verdict, rec.Error, c.get("GET /slow0"))
	}
	out, recs = run(2 * time.Hour)
	rec := recs[slow]
	if !out.Complete || out.Deferred != 0 {
		t.Errorf("resumed after the pause: outcome %+v, want the pass complete", out)
	}
	if rec.Verdict != store.VerdictUnverifiable || rec.Error != store.ErrorRateLimited || rec.HeldOwn() ||
		!strings.Contains(rec.Note, "asked again after the pause") ||
		!strings.Contains(rec.Note, "not checked this pass") {
		t.Errorf("/slow0: %s %q %q; want unverifiable, rate-limited, saying it was asked again", rec.Verdict, rec.Error, rec.Note)
	}
	if n := c.get("GET /slow0"); n != 2 {
		t.Errorf("/slow0 requested %d times, want 2", n)
	}
	if queue, err := db.Frontier(); err != nil || len(queue) != 0 {
		t.Errorf("frontier %v (%v): want empty", queue, err)
	}
	// The report says the pass checked only part of the site (exit 5
	// when nothing worse applies), never INCOMPLETE.
	last, ok, err := db.LastPass()
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	rep, err := report.Build(db, last.ID, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if line := rep.HeldBack(); rep.Pass.State != store.PassComplete || !strings.HasPrefix(line, "PARTLY CHECKED: 1 link could not be verified (rate-limited)") {
		t.Errorf("report: pass %s, first line %q; want complete and partly checked", rep.Pass.State, line)
	}
}
