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

	other := slowHost + ": robots.txt asks for Crawl-delay 1h, more than the host's max pause: kept at 2m, so at most 30 requests an hour to it; it is another site's: max_pause in a [[host]] for it lowers the cap"
	if _, log := crawlUntilWarned(t, openDB(t), fast.URL+"/", nil); !strings.Contains(log, other) {
		t.Errorf("another site's host: log\n%s\nwant the warning %q", log, other)
	}

	zero := []rules.HostRule{{Match: slowHost, CrawlDelay: "0s"}}
	if out, log := crawlUntilWarned(t, openDB(t), slow.URL+"/", zero); !out.Complete || strings.Contains(log, "Crawl-delay") {
		t.Errorf("crawl_delay 0s for the site's own host: complete %v, log\n%s\nwant a complete pass and no warning", out.Complete, log)
	}
}

// crawlUntilWarned runs a pass of start with the rules' per-host settings
// until it ends or the crawler logs a warning, and returns its outcome
// and what was logged.
func crawlUntilWarned(t *testing.T, db *store.DB, start string, hosts []rules.HostRule) (crawler.Outcome, string) {
	t.Helper()
	engine, err := rules.New(rules.Config{Start: []string{start}, Hosts: hosts})
	if err != nil {
		t.Fatal(err)
	}
	settings := func(host string) throttle.Settings { s, _ := engine.HostSettings(host, nil); return s }
	// The minute only keeps a run that never warns from waiting an hour.
	stop, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w := &warned{cancel: cancel}
	c := crawler.New(crawler.Config{Concurrency: 4, UserAgent: "linkpatrol-test", Timeout: 5 * time.Second,
		Throttle: throttle.New(throttle.Config{Settings: settings, UserAgent: "linkpatrol-test"}), HostSettings: settings,
		Logger: slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))}, engine, db)
	_, out, err := c.Run(stop, context.Background(), passOf(start))
	if err != nil {
		t.Fatal(err)
	}
	return out, w.String()
}

// warned keeps what a logger writes and stops the run at the first line.
type warned struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	cancel context.CancelFunc
}

func (w *warned) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cancel()
	return w.buf.Write(b)
}

func (w *warned) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
