package crawler_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
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

func openDB(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "lp.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestRateAndWindowHoldAtTheServer(t *testing.T) {
	if testing.Short() {
		t.Skip("paced by real time")
	}
	var rec recorder
	srv := httptest.NewServer(rec.wrap(linkSite(30, 0)))
	defer srv.Close()
	s := throttle.Settings{Rate: 20, Burst: 3, WindowMax: 8, Window: 500 * time.Millisecond}
	politePass(t, openDB(t), srv.URL+"/", s, context.Background())
	// Arrivals can bunch by a scheduling delay after leaving the client on
	// time (more so under -race on a busy machine); a little slack keeps
	// that noise out of the proof.
	const slack = 20 * time.Millisecond
	if n := rec.maxInWindow(time.Second - slack); n > 20+3 {
		t.Errorf("%d requests within one second; rate 20/s with burst 3 allows 23", n)
	}
	if n := rec.maxInWindow(500*time.Millisecond - slack); n > 8 {
		t.Errorf("%d requests within 500ms; the window allows 8", n)
	}
}

func TestInFlightCapHoldsAtTheServer(t *testing.T) {
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

// A Retry-After pause holds, and holds across a restart of the process:
// the pause lives in the store, not in memory.
func TestRetryAfterPauseSurvivesRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a real pause")
	}
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
	srv := httptest.NewServer(rec.wrap(mux))
	defer srv.Close()

	db := openDB(t)
	stop, cancel := context.WithCancel(context.Background())
	stopFirst = cancel
	s := throttle.Settings{MaxInFlight: 1, MaxPause: time.Minute, MaxRetries: 2}
	if out := politePass(t, db, srv.URL+"/", s, stop); out.Complete {
		t.Fatal("first run should have been stopped")
	}
	// A new crawler and throttle, as after a restart, on the same file.
	if out := politePass(t, db, srv.URL+"/", s, context.Background()); !out.Complete {
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
	got, _, _ := db.Get(srv.URL + "/busy")
	if got.Verdict != store.VerdictOK {
		t.Errorf("/busy after the pause: %+v", got)
	}
}

// smallBuffers keeps the kernel from absorbing a body on the crawler's
// behalf, so the server's clock measures what the crawler actually read.
func smallBuffers(opt int) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, opt, 4096)
		})
		if err != nil {
			return err
		}
		return serr
	}
}

// TestBandwidthHoldsAtTheServer reads a 10-second body under a bytes/s
// budget and has the server time it: within 5% of the budget.
func TestBandwidthHoldsAtTheServer(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a 10-second body")
	}
	const budget, size = 50_000, 500_000
	var mu sync.Mutex
	var began, ended time.Time
	body := []byte("<!doctype html><p>" + strings.Repeat("x", size))
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		mu.Lock()
		began = time.Now()
		mu.Unlock()
		for b := body; len(b) > 0; {
			n := min(len(b), 4096)
			if _, err := w.Write(b[:n]); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			b = b[n:]
		}
		mu.Lock()
		ended = time.Now()
		mu.Unlock()
	})
	lc := net.ListenConfig{Control: smallBuffers(syscall.SO_SNDBUF)}
	l, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(handler)
	srv.Listener = l
	srv.Start()
	defer srv.Close()

	dialer := &net.Dialer{Control: smallBuffers(syscall.SO_RCVBUF)}
	start := srv.URL + "/"
	engine, err := rules.New(rules.Config{Start: []string{start}})
	if err != nil {
		t.Fatal(err)
	}
	settings := func(string) throttle.Settings { return throttle.Settings{BytesPerSec: budget, IgnoreRobots: true} }
	db := openDB(t)
	seeds := []store.Task{{URL: start, Action: "parse"}}
	pass, err := db.BeginPass(store.Pass{StartURLs: []string{start}}, seeds)
	if err != nil {
		t.Fatal(err)
	}
	c := crawler.New(crawler.Config{Timeout: time.Minute, Throttle: throttle.New(throttle.Config{Settings: settings}),
		HostSettings: settings, Transport: &http.Transport{DialContext: dialer.DialContext}}, engine, db)
	if _, err := c.Run(context.Background(), context.Background(), pass, seeds, nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	rate := float64(len(body)) / ended.Sub(began).Seconds()
	t.Logf("server measured %.0f bytes/s over %s (budget %d)", rate, ended.Sub(began).Round(time.Millisecond), budget)
	if rate < budget*0.95 || rate > budget*1.05 {
		t.Errorf("server measured %.0f bytes/s, want %d ±5%%", rate, budget)
	}
}
