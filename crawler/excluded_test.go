package crawler_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// hitLog counts every request a server gets, robots.txt included.
type hitLog struct {
	mu   sync.Mutex
	hits []string // "METHOD /path"
}

func (l *hitLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.hits = append(l.hits, r.Method+" "+r.URL.Path)
		l.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// logBuffer keeps what a run's logger writes.
type logBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

func (l *hitLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.hits...)
}

// serveOn starts h on a loopback address of its own (127.0.0.2 is another
// host than httptest's 127.0.0.1, as another site would be).
func serveOn(t *testing.T, addr string, h http.Handler) *httptest.Server {
	t.Helper()
	l, err := net.Listen("tcp", addr+":0")
	if err != nil {
		t.Skipf("listen on %s: %v", addr, err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// excludedPair is a site on 127.0.0.1 whose start page links /r (302 to
// the other host), /r301 (301 there), /hop (302 to /r: a chain through a
// URL of the site) and the other host directly; its robots.txt redirects
// to the other host's when robotsAway, and that file disallows /never,
// which the start page then links too. The other host, on 127.0.0.2,
// counts what it is asked.
func excludedPair(t *testing.T, robotsAway bool) (site, other *httptest.Server, otherHits *hitLog) {
	t.Helper()
	otherHits = &hitLog{}
	other = serveOn(t, "127.0.0.2", otherHits.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow: /never\n")
			return
		}
		page(`fine`)(w, r)
	})))
	site = serveOn(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			if robotsAway {
				http.Redirect(w, r, other.URL+"/robots.txt", http.StatusFound)
				return
			}
			http.NotFound(w, r)
		case "/r":
			http.Redirect(w, r, other.URL+"/via-302", http.StatusFound)
		case "/r301":
			http.Redirect(w, r, other.URL+"/via-301", http.StatusMovedPermanently)
		case "/hop":
			http.Redirect(w, r, "/r", http.StatusFound)
		case "/sitemap.xml":
			http.Redirect(w, r, other.URL+"/sitemap.xml", http.StatusFound)
		case "/":
			never := ""
			if robotsAway {
				never = ` <a href="/never/x">n</a>`
			}
			page(`<a href="/r">r</a> <a href="/r301">p</a> <a href="/hop">h</a> <a href="`+other.URL+`/direct">d</a>`+never)(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	return site, other, otherHits
}

// excludedRun runs a pass of site with cfg's rules (Start set here), robots.txt
// obeyed, and sitemaps read, and returns its records and what the log warned.
func excludedRun(t *testing.T, site string, cfg rules.Config, sitemaps ...string) (map[string]store.URLRecord, string) {
	t.Helper()
	cfg.Start = []string{site + "/"}
	engine, err := rules.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Unpaced (the default is 1 request a second, a pass of several
	// seconds): these tests are about which requests are made, not when.
	settings := func(host string) throttle.Settings {
		s, _ := engine.HostSettings(host, nil)
		s.Rate = 0
		return s
	}
	var log logBuffer
	db := openDB(t)
	c := crawler.New(crawler.Config{Concurrency: 4, UserAgent: "linkpatrol-test", Timeout: 5 * time.Second,
		Throttle: throttle.New(throttle.Config{Settings: settings, UserAgent: "linkpatrol-test"}), HostSettings: settings,
		Logger: log.logger(), Sitemaps: sitemaps}, engine, db)
	pass, out, err := c.Run(context.Background(), context.Background(), passOf(site+"/"))
	if err != nil || !out.Complete {
		t.Fatalf("run: %v, complete %v", err, out.Complete)
	}
	recs := make(map[string]store.URLRecord)
	if err := db.Records(pass.ID, func(r *store.URLRecord) error { recs[r.URL] = *r; return nil }); err != nil {
		t.Fatal(err)
	}
	return recs, log.String()
}

// keepOuts are the ways to tell linkpatrol never to request 127.0.0.2, each
// with what decides so (the Decision.Rule a note names), and none.
var keepOuts = []struct {
	name string
	cfg  rules.Config
	rule string // "" when the other host is requested
	did  string // what the rules do with it, as a note says
}{
	{"offline", rules.Config{Offline: true}, rules.Offline, "skipped"},
	{"exclude", rules.Config{Exclude: []string{`^http://127\.0\.0\.2`}}, `--exclude ^http://127\.0\.0\.2`, "skipped"},
	{"rule skip", rules.Config{Rules: []rules.Rule{{Source: "test", Host: "127.0.0.2", Action: "skip"}}}, "test: rule 1 (host 127.0.0.2)", "skipped"},
	{"rule ignore", rules.Config{Rules: []rules.Rule{{Source: "test", Host: "127.0.0.2", Action: "ignore"}}}, "test: rule 1 (host 127.0.0.2)", "ignored"},
	{"no rule", rules.Config{}, "", ""},
}

// A redirect to a URL the rules never request (--offline, --exclude, a
// [[rule]] that skips or ignores it) is not followed: the other host gets
// no request at all, not even for its robots.txt, and the link that
// redirects is skipped with the reason, by a 302 or a 301 and through a
// hop of the site alike (qa7 Q1). Without such a rule the other host is
// asked, which shows the count at the server sees the requests.
func TestRedirectToExcludedHostIsNotRequested(t *testing.T) {
	t.Parallel()
	for _, tc := range keepOuts {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			site, other, hits := excludedPair(t, false)
			recs, _ := excludedRun(t, site.URL, tc.cfg)
			got := hits.all()
			if tc.rule == "" {
				if len(got) == 0 {
					t.Fatalf("no rule: the other host got no request; the count at the server sees nothing")
				}
				if rec := recs[site.URL+"/r"]; rec.Verdict != store.VerdictOK {
					t.Errorf("no rule: /r %s %q (%s), want ok through the redirect", rec.Verdict, rec.Error, rec.Note)
				}
				return
			}
			if len(got) != 0 {
				t.Errorf("the other host, which %s keeps out, got %d requests: %v", tc.rule, len(got), got)
			}
			for _, l := range []struct {
				path, target string
				status       int
			}{{"/r", "/via-302", http.StatusFound}, {"/r301", "/via-301", http.StatusMovedPermanently}, {"/hop", "/via-302", http.StatusFound}} {
				rec, ok := recs[site.URL+l.path]
				if !ok {
					t.Errorf("%s: no record", l.path)
					continue
				}
				if rec.Verdict != store.VerdictSkipped || rec.Error != "" || rec.Note != "redirect not followed; its target is "+tc.did+": "+tc.rule {
					t.Errorf("%s: %s %q, note %q; want skipped, redirect not followed (%s)", l.path, rec.Verdict, rec.Error, rec.Note, tc.rule)
				}
				if rec.FinalURL != other.URL+l.target || rec.Status != l.status {
					t.Errorf("%s: ends at %s with %d, want %s%s with %d (the last answer, not the target's)", l.path, rec.FinalURL, rec.Status, other.URL, l.target, l.status)
				}
			}
			if rec := recs[site.URL+"/hop"]; len(rec.Redirects) != 2 {
				t.Errorf("/hop: redirects %v, want /hop and /r", rec.Redirects)
			}
			if _, ok := recs[other.URL+"/via-302"]; ok {
				t.Errorf("the target the rules skip is recorded as if met: %+v", recs[other.URL+"/via-302"])
			}
		})
	}
}

// A site's robots.txt is read where its redirects lead, whatever the rules
// say of links to that host: RFC 9309 §2.3.1.2 says a file reached within
// five redirects must be read and obeyed, and the request is made for the
// site's sake. Taken as absent instead, --offline once fetched a page the
// site's robots.txt disallows (review7 RV2 #4). Only the file is asked for.
func TestRobotsRedirectIsFollowedWhateverTheRules(t *testing.T) {
	t.Parallel()
	for _, tc := range keepOuts {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			site, _, hits := excludedPair(t, true)
			recs, _ := excludedRun(t, site.URL, tc.cfg)
			got := hits.all()
			if len(got) == 0 || got[0] != "GET /robots.txt" {
				t.Fatalf("the other host got %v, want the site's robots.txt asked for there first", got)
			}
			if tc.rule != "" && len(got) != 1 {
				t.Errorf("the other host, which %s keeps out of the links, got %v, want only the robots.txt", tc.rule, got)
			}
			if rec := recs[site.URL+"/"]; rec.Verdict != store.VerdictOK || !rec.Parsed {
				t.Errorf("start page: %s %q (%s), parsed %v; want ok and parsed", rec.Verdict, rec.Error, rec.Note, rec.Parsed)
			}
			if rec := recs[site.URL+"/never/x"]; rec.Verdict != store.VerdictSkipped || !strings.Contains(rec.Note, "robots.txt") {
				t.Errorf("/never/x: %s %q (%s); want skipped by the robots.txt the redirect led to", rec.Verdict, rec.Error, rec.Note)
			}
		})
	}
}

// A sitemap that redirects to a host the rules never request is not read
// there, and its record says why rather than nothing.
func TestSitemapRedirectToExcludedHostIsNotFollowed(t *testing.T) {
	t.Parallel()
	site, other, hits := excludedPair(t, false)
	recs, _ := excludedRun(t, site.URL, rules.Config{Offline: true}, site.URL+"/sitemap.xml")
	if got := hits.all(); len(got) != 0 {
		t.Errorf("the other host, which --offline keeps out, got %v", got)
	}
	want := "redirect not followed; its target is skipped: " + rules.Offline
	if rec := recs[site.URL+"/sitemap.xml"]; rec.Verdict != store.VerdictSkipped || rec.Note != want || rec.FinalURL != other.URL+"/sitemap.xml" {
		t.Errorf("sitemap: %s %q, note %q, ends at %s; want skipped, %q", rec.Verdict, rec.Error, rec.Note, rec.FinalURL, want)
	}
}
