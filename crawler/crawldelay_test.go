package crawler_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// A robots.txt that asks for an hour between requests is said at once,
// with what it costs and what changes it, rather than leaving a run idle
// and silent for hours (qa5 N11); the owner's crawl delay for the site's
// own host takes its place.
func TestLongCrawlDelayIsSaidAtOnce(t *testing.T) {
	t.Parallel()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: *\nCrawl-delay: 3600\n")
			return
		}
		page(`<a href="/a">a</a>`)(w, r)
	}))
	defer slow.Close()
	fast := httptest.NewServer(page(`<a href="` + slow.URL + `/b">their page</a>`))
	defer fast.Close()
	slowHost := strings.TrimPrefix(slow.URL, "http://")

	own := slowHost + ": robots.txt asks for Crawl-delay 1h, more than the host's max pause: kept at 10m, so at most 6 requests an hour to it; --crawl-delay (crawl_delay in a [[host]] for it) sets the site's own delay in its place, --max-pause raises the cap"
	db := openDB(t)
	// The run is stopped by the warning itself: it must come before the
	// first wait, not after it.
	out, log := crawlUntilWarned(t, db, slow.URL+"/", nil)
	if !strings.Contains(log, own) || out.Complete {
		t.Errorf("the site's own host: complete %v, log\n%s\nwant the warning %q", out.Complete, log, own)
	}
	// Resumed, its robots.txt comes from the database: said again.
	if _, log := crawlUntilWarned(t, db, slow.URL+"/", nil); !strings.Contains(log, own) {
		t.Errorf("resumed: log\n%s\nwant the warning again", log)
	}

	other := slowHost + ": robots.txt asks for Crawl-delay 1h, longer than its max pause 2m: another site's is not shortened, so its links are not checked this pass (unverifiable); max_pause in a [[host]] for it raises the wait"
	if _, log := crawlUntilWarned(t, openDB(t), fast.URL+"/", nil); !strings.Contains(log, other) {
		t.Errorf("another site's host: log\n%s\nwant the warning %q", log, other)
	}

	zero := []rules.HostRule{{Match: slowHost, CrawlDelay: "0s"}}
	if out, log := crawlUntilWarned(t, openDB(t), slow.URL+"/", zero); !out.Complete || strings.Contains(log, "Crawl-delay") {
		t.Errorf("crawl_delay 0s for the site's own host: complete %v, log\n%s\nwant a complete pass and no warning", out.Complete, log)
	}
}

// Another site's Crawl-delay is kept in full, never cut to its max pause
// (review6 B): one longer than the pause the run may wait is not answered
// by asking sooner, but by holding the host's links back, unverifiable
// with the reason, as for a Retry-After that long. The host sees its
// robots.txt asked for, and nothing else.
func TestAnotherSitesLongCrawlDelayHoldsItsLinksBack(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var asked []string
		site := page(`<a href="http://127.0.0.2/b">b</a> <a href="http://127.0.0.2/c">c</a>`)
		base, tr := pipeServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Host != "127.0.0.2" {
				site(w, r)
				return
			}
			mu.Lock()
			asked = append(asked, r.URL.Path)
			mu.Unlock()
			if r.URL.Path == "/robots.txt" {
				io.WriteString(w, "User-agent: *\nCrawl-delay: 300\n")
				return
			}
			page("")(w, r)
		}))
		start := base + "/"
		engine, err := rules.New(rules.Config{Start: []string{start}})
		if err != nil {
			t.Fatal(err)
		}
		settings := func(host string) throttle.Settings { s, _ := engine.HostSettings(host, nil); return s }
		db := openDB(t)
		c := crawler.New(crawler.Config{Concurrency: 4, UserAgent: "linkpatrol-test", Timeout: 5 * time.Second,
			Throttle: throttle.New(throttle.Config{Settings: settings, UserAgent: "linkpatrol-test"}), HostSettings: settings,
			Transport: tr, Logger: slog.New(slog.DiscardHandler)}, engine, db)
		pass, out, err := c.Run(context.Background(), context.Background(), passOf(start))
		if err != nil {
			t.Fatal(err)
		}
		if !out.Complete {
			t.Errorf("the pass is not complete: another site's links held back settle as unverifiable")
		}
		const note = "robots.txt asks for Crawl-delay 5m, longer than max_pause 2m: not checked this pass"
		recs := make(map[string]store.URLRecord)
		if err := db.Records(pass.ID, func(r *store.URLRecord) error { recs[r.URL] = *r; return nil }); err != nil {
			t.Fatal(err)
		}
		for _, u := range []string{"http://127.0.0.2/b", "http://127.0.0.2/c"} {
			rec, ok := recs[u]
			if !ok {
				t.Fatalf("%s: no record", u)
			}
			if rec.Verdict != store.VerdictUnverifiable || rec.Note != note {
				t.Errorf("%s: %v %q, want unverifiable %q", u, rec.Verdict, rec.Note, note)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if len(asked) != 1 || asked[0] != "/robots.txt" {
			t.Errorf("the other host was asked for %q, want only its robots.txt", asked)
		}
	})
}

// crawlUntilWarned runs a pass of start with the rules' per-host settings
// until it ends or the crawler logs a warning, and returns its outcome
// and what was logged.
func crawlUntilWarned(t *testing.T, db *store.DB, start string, hosts []rules.HostRule) (crawler.Outcome, string) {
	t.Helper()
	return crawlUntilLogged(t, db, start, hosts, slog.LevelWarn, "")
}

// crawlUntilLogged is crawlUntilWarned for the first line at level or
// above that holds want.
func crawlUntilLogged(t *testing.T, db *store.DB, start string, hosts []rules.HostRule, level slog.Level, want string) (crawler.Outcome, string) {
	t.Helper()
	engine, err := rules.New(rules.Config{Start: []string{start}, Hosts: hosts})
	if err != nil {
		t.Fatal(err)
	}
	settings := func(host string) throttle.Settings { s, _ := engine.HostSettings(host, nil); return s }
	// The minute only keeps a run that never warns from waiting an hour.
	stop, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w := &warned{cancel: cancel, want: want}
	c := crawler.New(crawler.Config{Concurrency: 4, UserAgent: "linkpatrol-test", Timeout: 5 * time.Second,
		Throttle: throttle.New(throttle.Config{Settings: settings, UserAgent: "linkpatrol-test"}), HostSettings: settings,
		Logger: slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))}, engine, db)
	_, out, err := c.Run(stop, context.Background(), passOf(start))
	if err != nil {
		t.Fatal(err)
	}
	return out, w.String()
}

// warned keeps what a logger writes and stops the run at the first line
// that holds want.
type warned struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	cancel context.CancelFunc
	want   string
}

func (w *warned) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if bytes.Contains(b, []byte(w.want)) {
		w.cancel()
	}
	return w.buf.Write(b)
}

func (w *warned) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
