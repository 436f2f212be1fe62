package crawler_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path"
	"path/filepath"
	"slices"
	"strconv"
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

// recorder is a test server's own account of what it received: every
// limit is proven by the side that receives the requests.
type recorder struct {
	mu          sync.Mutex
	arrivals    []time.Time
	paths       []string
	inFlight    int
	maxInFlight int
}

func (r *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.arrivals = append(r.arrivals, time.Now())
		r.paths = append(r.paths, req.URL.Path)
		r.inFlight++
		r.maxInFlight = max(r.maxInFlight, r.inFlight)
		r.mu.Unlock()
		defer func() {
			r.mu.Lock()
			r.inFlight--
			r.mu.Unlock()
		}()
		h.ServeHTTP(w, req)
	})
}

// maxInWindow is the most arrivals in any span of length w.
func (r *recorder) maxInWindow(w time.Duration) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	best := 0
	for i := range r.arrivals {
		n := 0
		for j := i; j < len(r.arrivals) && r.arrivals[j].Sub(r.arrivals[i]) < w; j++ {
			n++
		}
		best = max(best, n)
	}
	return best
}

// linkSite serves n pages, each linking to all others, after latency.
func linkSite(n int, latency time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		time.Sleep(latency) // the server's own slowness, not a wait for a condition
		w.Header().Set("Content-Type", "text/html")
		for i := range n {
			fmt.Fprintf(w, "<a href=\"/p%d\">%d</a>\n", i, i)
		}
	})
}

func politePass(t *testing.T, db *store.DB, start string, s throttle.Settings, stop context.Context) crawler.Outcome {
	t.Helper()
	out, _, _ := politeRun(t, db, start, s, stop)
	return out
}

// dbOptions opens a test's database as check does by default: a commit
// waits for no fsync, and the file is fsynced on the store's own goroutine
// once a commit interval. These tests are about the crawler, not about
// what a power cut leaves (store's tests are): an fsync in every commit
// was about 2,000 fdatasyncs a run of the package, each a wait of
// milliseconds on a busy disk.
var dbOptions = store.Options{SyncEvery: crawler.DefaultBatchInterval}

func openDB(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "lp.db"), dbOptions)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// The crawl runs in a synctest bubble (see pipeServer), so the server's
// clock is the crawler's and each limit holds exactly, with no slack for a
// busy machine. The settings make each limit the binding one at its own
// scale: over one second the rate (burst+rate = 6 < 10), over the 3 s window
// the window (10 < burst+3*rate = 14).
func TestRateAndWindowHoldAtTheServer(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		base, tr := pipeServer(t, rec.wrap(linkSite(30, 0)))
		s := throttle.Settings{Rate: 4, Burst: 2, WindowMax: 10, Window: 3 * time.Second}
		politeRunVia(t, openDB(t), base+"/", s, context.Background(), tr)
		if len(rec.paths) != 32 { // robots.txt, the start page, 30 pages
			t.Fatalf("%d requests, want 32", len(rec.paths))
		}
		perSecond := s.Burst + int(s.Rate)
		if n := rec.maxInWindow(time.Second); n > perSecond {
			t.Errorf("%d requests within one second; rate %v/s with burst %d allows %d", n, s.Rate, s.Burst, perSecond)
		}
		// Reaching the window's cap shows it is what held the crawl back.
		if n := rec.maxInWindow(s.Window); n != s.WindowMax {
			t.Errorf("at most %d requests within %s; the window allows %d and the crawl should reach it", n, s.Window, s.WindowMax)
		}
	})
}

func TestInFlightCapHoldsAtTheServer(t *testing.T) {
	t.Parallel()
	var rec recorder
	srv := httptest.NewServer(rec.wrap(linkSite(40, 5*time.Millisecond)))
	defer srv.Close()
	politePass(t, openDB(t), srv.URL+"/", throttle.Settings{MaxInFlight: 2}, context.Background())
	if rec.maxInFlight > 2 {
		t.Errorf("server saw %d requests at once; the cap is 2", rec.maxInFlight)
	}
	if len(rec.paths) != 42 { // robots.txt, the start page, 40 pages
		t.Errorf("%d requests, want 42", len(rec.paths))
	}
}

func TestRobotsDisallowedNeverFetched(t *testing.T) {
	t.Parallel()
	var rec recorder
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<a href="/private/a">a</a><a href="/private/b">b</a><a href="/public">c</a>`)
	})
	srv := httptest.NewServer(rec.wrap(mux))
	defer srv.Close()
	db := openDB(t)
	politePass(t, db, srv.URL+"/", throttle.Settings{}, context.Background())
	for _, p := range rec.paths {
		if strings.HasPrefix(p, "/private/") {
			t.Errorf("requested disallowed %s", p)
		}
	}
	if n := slices.Index(rec.paths, "/robots.txt"); n != 0 {
		t.Errorf("robots.txt must come first, got requests %v", rec.paths)
	}
	r, _, _ := db.Get(srv.URL + "/private/a")
	if r.Verdict != store.VerdictSkipped || r.Error != "robots" {
		t.Errorf("disallowed URL recorded as %+v, want skipped: robots", r)
	}
}

// A link that writes the host in capitals is the same host, and its
// robots.txt applies: the verdict a worker reads for a target must come
// from the file of the canonical host.
func TestRobotsDisallowedWhateverTheHostCase(t *testing.T) {
	t.Parallel()
	var rec recorder
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
	})
	srv := httptest.NewServer(rec.wrap(mux))
	defer srv.Close()
	start := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/"
	upper := strings.Replace(srv.URL, "127.0.0.1", "LOCALHOST", 1)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<a href="/public">p</a><a href="%s/private/a">a</a>`, upper)
	})
	db := openDB(t)
	politePass(t, db, start, throttle.Settings{}, context.Background())
	if !slices.Contains(rec.paths, "/public") {
		t.Fatalf("the page's links were not followed: requests %v", rec.paths)
	}
	if slices.Contains(rec.paths, "/private/a") {
		t.Errorf("requested disallowed /private/a through a capitalised host: %v", rec.paths)
	}
}

// A Retry-After pause holds, and holds across a restart of the process:
// the pause lives in the store, not in memory.
func TestRetryAfterPauseSurvivesRestart(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) { retryAfterPauseSurvivesRestart(t) })
}

// retryAfterPauseSurvivesRestart runs in a synctest bubble: the pause is
// waited out on the fake clock, and "during the pause" is exact.
func retryAfterPauseSurvivesRestart(t *testing.T) {
	var rec recorder
	var mu sync.Mutex
	var pausedUntil time.Time
	var stopFirst context.CancelFunc
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", http.NotFound)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<a href="/busy">busy</a><a href="/later">later</a>`)
	})
	var once sync.Once
	mux.HandleFunc("/busy", func(w http.ResponseWriter, r *http.Request) {
		first := false
		once.Do(func() { first = true })
		if first {
			mu.Lock()
			pausedUntil = time.Now().Add(2 * time.Second)
			mu.Unlock()
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(http.StatusTooManyRequests)
			stopFirst() // "Ctrl-C" while the host is paused
			return
		}
		fmt.Fprint(w, "ok")
	})
	mux.HandleFunc("/later", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	base, tr := pipeServer(t, rec.wrap(mux))

	db := openDB(t)
	stop, cancel := context.WithCancel(context.Background())
	stopFirst = cancel
	s := throttle.Settings{MaxInFlight: 1, MaxPause: time.Minute, MaxRetries: 2}
	if out, _, _ := politeRunVia(t, db, base+"/", s, stop, tr); out.Complete {
		t.Fatal("first run should have been stopped")
	}
	// A new crawler and throttle, as after a restart, on the same file.
	if out, _, _ := politeRunVia(t, db, base+"/", s, context.Background(), tr); !out.Complete {
		t.Fatal("second run did not complete")
	}
	mu.Lock()
	defer mu.Unlock()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for i, at := range rec.arrivals {
		if at.After(pausedUntil.Add(-2*time.Second)) && at.Before(pausedUntil) && rec.paths[i] != "/busy" {
			t.Errorf("%s requested at %s, during the pause that ends %s", rec.paths[i], at.Format("15:04:05.000"), pausedUntil.Format("15:04:05.000"))
		}
	}
	got, _, _ := db.Get(base + "/busy")
	if got.Verdict != store.VerdictOK {
		t.Errorf("/busy after the pause: %+v", got)
	}
}

// TestBandwidthHoldsAtTheServer reads a 10-second body under a bytes/s
// budget and has the server time it. In a synctest bubble over net.Pipe,
// which buffers nothing, the server's clock is the crawler's and a write
// returns only once the crawler has read it; the only slack is what may be
// read ahead of the budget: the limiter's burst and the transport's 4 KiB
// read buffer.
func TestBandwidthHoldsAtTheServer(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const budget, size = 50_000, 500_000
		var began, ended time.Time
		handled := make(chan struct{}) // closed once began and ended are set
		body := []byte("<!doctype html><p>" + strings.Repeat("x", size))
		base, tr := pipeServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/" {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			defer close(handled)
			began = time.Now()
			for b := body; len(b) > 0; {
				n := min(len(b), 4096)
				if _, err := w.Write(b[:n]); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				b = b[n:]
			}
			ended = time.Now()
		}))
		start := base + "/"
		engine, err := rules.New(rules.Config{Start: []string{start}})
		if err != nil {
			t.Fatal(err)
		}
		settings := func(string) throttle.Settings { return throttle.Settings{BytesPerSec: budget, IgnoreRobots: true} }
		db := openDB(t)
		c := crawler.New(crawler.Config{Timeout: time.Minute, Throttle: throttle.New(throttle.Config{Settings: settings}),
			HostSettings: settings, Transport: tr}, engine, db)
		if _, _, err := c.Run(context.Background(), context.Background(), passOf(start)); err != nil {
			t.Fatal(err)
		}
		<-handled
		took := ended.Sub(began)
		const ahead = budget/20 + 4096 + 4096 // burst, the client's and the server's buffers
		fastest := time.Duration(float64(len(body)-ahead) / budget * float64(time.Second))
		slowest := time.Duration(float64(len(body)) / budget * float64(time.Second))
		t.Logf("server measured %s for %d bytes at %d bytes/s", took, len(body), budget)
		if took < fastest || took > slowest {
			t.Errorf("server measured %s for %d bytes; a budget of %d bytes/s takes %s to %s", took, len(body), budget, fastest, slowest)
		}
	})
}

// TestFollowUpWaitHoldsNoWorker: a request a task makes after its first
// (a GET after a refused HEAD, a redirect hop) that must wait for its host
// (here a minute, the host's rate) gives the task back to the dispatcher
// instead of holding the only worker for that minute: the other host's
// checks are all sent before it. Before, the worker sat out the wait and
// every other host waited with it.
func TestFollowUpWaitHoldsNoWorker(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		link   string // on the start page, before five links to b.test
		waited string // the follow-up request that waits a minute
		target string // whose record must end ok
	}{
		{"GET after HEAD", "http://a.test/x", "GET a.test/x", "http://a.test/x"},
		{"redirect hop", "http://a.test/r", "HEAD c.test/t", "http://c.test/t"},
		{"GET after HEAD at a redirect hop", "http://a.test/r2", "GET d.test/x", "http://d.test/x"},
		// An image of a.test that answers a page the rules parse: the GET
		// that reads it follows the check.
		{"GET that parses a checked page", "http://a.test/page", "GET a.test/page", "http://a.test/page"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				order, recs := followUpRun(t, tt.link)
				for _, u := range []string{tt.link, tt.target} {
					if r := recs[u]; r.Verdict != store.VerdictOK {
						t.Errorf("%s: %s %q %q, want ok", u, r.Verdict, r.Error, r.Note)
					}
				}
				if r := recs[tt.link]; strings.HasSuffix(tt.link, "/page") && !r.Parsed {
					t.Errorf("%s was not parsed: %q", tt.link, r.Note)
				}
				first := slices.Index(order, "HEAD a.test/"+path.Base(tt.link))
				if first < 0 || first > slices.Index(order, "HEAD b.test/0") {
					t.Fatalf("the check of %s was not the first sent, which the test needs; requests: %q", tt.link, order)
				}
				waited := slices.Index(order, tt.waited)
				if waited < 0 {
					t.Fatalf("no %s; requests: %q", tt.waited, order)
				}
				// Nothing is asked twice: not the request that waited, nor,
				// for a hop, the task's own URL before it.
				seen := map[string]bool{}
				for _, req := range order {
					if seen[req] {
						t.Errorf("%s was sent twice; requests: %q", req, order)
					}
					seen[req] = true
				}
				for i, req := range order {
					if strings.HasPrefix(req, "HEAD b.test/") && i > waited {
						t.Errorf("%s came after %s, which waited a minute: the wait held the worker; requests: %q", req, tt.waited, order)
					}
				}
			})
		})
	}
}

// followUpRun crawls s.test, whose page links to link and five pages of
// b.test, with one worker, and returns the requests in the order the
// server got them, and the records. a.test refuses HEAD for /x, redirects
// /r to c.test/t and /r2 to d.test/x, which refuses HEAD, and answers /page
// with a page the rules parse (linked as an image, so checked first);
// a.test, c.test and d.test allow one request a minute after their first
// two, one and two; b.test's robots.txt takes a
// second, so that the check of link is the first task a worker takes.
func followUpRun(t *testing.T, link string) ([]string, map[string]store.URLRecord) {
	var mu sync.Mutex
	var order []string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		order = append(order, r.Method+" "+r.Host+r.URL.Path)
		mu.Unlock()
		switch {
		case r.Host == "b.test" && r.URL.Path == "/robots.txt":
			time.Sleep(time.Second)
			http.NotFound(w, r)
		case r.URL.Path == "/robots.txt":
			http.NotFound(w, r)
		case r.Host == "s.test":
			w.Header().Set("Content-Type", "text/html")
			if strings.HasSuffix(link, "/page") {
				fmt.Fprintf(w, `<img src="%s">`, link)
			} else {
				fmt.Fprintf(w, `<a href="%s">x</a>`, link)
			}
			for i := range 5 {
				fmt.Fprintf(w, `<a href="http://b.test/%d">b</a>`, i)
			}
		case r.Host == "a.test" && r.URL.Path == "/page":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<p>a page</p>`)
		case r.Host == "a.test" && r.URL.Path == "/r":
			http.Redirect(w, r, "http://c.test/t", http.StatusFound)
		case r.Host == "a.test" && r.URL.Path == "/r2":
			http.Redirect(w, r, "http://d.test/x", http.StatusFound)
		case (r.Host == "a.test" || r.Host == "d.test") && r.Method == http.MethodHead:
			w.WriteHeader(http.StatusMethodNotAllowed)
		default:
			fmt.Fprint(w, "ok")
		}
	})
	_, tr := pipeServer(t, h)
	settings := func(host string) throttle.Settings {
		switch host {
		case "a.test":
			return throttle.Settings{Rate: 1.0 / 60, Burst: 2} // robots.txt and the HEAD
		case "c.test":
			return throttle.Settings{Rate: 1.0 / 60, Burst: 1} // robots.txt
		case "d.test":
			return throttle.Settings{Rate: 1.0 / 60, Burst: 2} // robots.txt and the HEAD
		}
		return throttle.Settings{}
	}
	th := throttle.New(throttle.Config{Settings: settings})
	cfg := crawler.Config{Concurrency: 1, Timeout: 5 * time.Minute, Throttle: th, HostSettings: settings, Transport: tr}
	// a.test/page is the site's too: parsed.
	recs := rulesPass(t, cfg, "http://s.test/", rules.Rule{Host: "a.test", Path: "/page", Action: "parse"})
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(order), recs
}
