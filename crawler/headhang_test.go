package crawler_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// A HEAD that never answers is the commonest way a server mishandles HEAD
// (an app server waiting for a body): after it timed out, the URL's next
// try is a GET, spending a try it would have spent on HEAD again (qa8 P3).
func TestHeadThatHangsIsRetriedAsGet(t *testing.T) {
	t.Parallel()
	var c counter
	other := httptest.NewServer(c.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/robots.txt":
			http.NotFound(w, r)
		case r.Method == http.MethodHead:
			<-r.Context().Done() // hangs until the client gives up
		case r.URL.Path == "/slow.zip" && c.get("GET /slow.zip") == 1:
			<-r.Context().Done() // and so does the first GET of this one
		default:
			w.Write([]byte("zip"))
		}
	})))
	defer other.Close()
	srv := httptest.NewServer(page(`<a href="` + other.URL + `/file.zip">zip</a> <a href="` + other.URL + `/slow.zip">slow</a>`))
	defer srv.Close()
	// The timeout is waited out once, so it is short, but long enough
	// for a loaded machine under -race to answer the GET.
	db, cr := headPass(t, srv.URL+"/", 2*time.Second)
	// A GET that timed out too is tried again as a GET: HEAD is known not
	// to answer.
	for path, gets := range map[string]int{"/file.zip": 1, "/slow.zip": 2} {
		rec, ok, err := db.Get(other.URL + path)
		if err != nil || !ok {
			t.Fatalf("no record of %s: %v", path, err)
		}
		if rec.Verdict != store.VerdictOK || rec.Status != 200 {
			t.Errorf("%s: %s %d %q, want ok 200 (GET after the HEAD timed out)", path, rec.Verdict, rec.Status, rec.Error)
		}
		if h, g := c.get("HEAD "+path), c.get("GET "+path); h != 1 || g != gets {
			t.Errorf("%s got %d HEAD and %d GET, want 1 and %d", path, h, g, gets)
		}
	}
	for _, h := range cr.Hosts() {
		// robots.txt, the HEADs and the GETs: each counted once.
		if want := c.get("GET /robots.txt") + c.get("HEAD /file.zip") + c.get("GET /file.zip") + c.get("HEAD /slow.zip") + c.get("GET /slow.zip"); h.Key == other.Listener.Addr().String() && h.Requests != int64(want) {
			t.Errorf("host %s: %d requests counted, the server got %d", h.Key, h.Requests, want)
		}
	}
}

// Some servers limit or refuse HEAD alone: a 429 or 503 to HEAD (with a
// Retry-After) is waited for and the try after it is a GET; a 999 (a bot
// wall) is asked again with GET at once. All three links work in a
// browser; they were unverifiable or transient every night, one after
// seven HEADs over two minutes (qa9 T10).
func TestHeadRefusedByStatusIsRetriedAsGet(t *testing.T) {
	t.Parallel()
	var c counter
	other := httptest.NewServer(c.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/robots.txt":
			http.NotFound(w, r)
		case r.Method == http.MethodHead && r.URL.Path == "/limited":
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		case r.Method == http.MethodHead && r.URL.Path == "/busy":
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
		case r.Method == http.MethodHead && r.URL.Path == "/walled":
			w.WriteHeader(999)
		default:
			w.Write([]byte("fine"))
		}
	})))
	defer other.Close()
	srv := httptest.NewServer(page(`<a href="` + other.URL + `/limited">a</a> <a href="` + other.URL + `/busy">b</a> <a href="` + other.URL + `/walled">c</a>`))
	defer srv.Close()
	db, _ := headPass(t, srv.URL+"/", 10*time.Second)
	for _, path := range []string{"/limited", "/busy", "/walled"} {
		rec, ok, err := db.Get(other.URL + path)
		if err != nil || !ok {
			t.Fatalf("no record of %s: %v", path, err)
		}
		if rec.Verdict != store.VerdictOK || rec.Status != 200 {
			t.Errorf("%s: %s %d %q, want ok 200 (GET after the HEAD's answer)", path, rec.Verdict, rec.Status, rec.Error)
		}
		if h, g := c.get("HEAD "+path), c.get("GET "+path); h != 1 || g != 1 {
			t.Errorf("%s got %d HEAD and %d GET, want 1 and 1", path, h, g)
		}
	}
}

// headPass runs one complete pass from start with a throttle that retries
// twice, and returns the database and the crawler it ran.
func headPass(t *testing.T, start string, timeout time.Duration) (*store.DB, *crawler.Crawler) {
	t.Helper()
	s := throttle.Settings{MaxPause: 10 * time.Minute, MaxRetries: 2}
	settings := func(string) throttle.Settings { return s }
	engine, err := rules.New(rules.Config{Start: []string{start}})
	if err != nil {
		t.Fatal(err)
	}
	db := openDB(t)
	cr := crawler.New(crawler.Config{Concurrency: 2, UserAgent: "linkpatrol-test", Timeout: timeout,
		Throttle: throttle.New(throttle.Config{Settings: settings, UserAgent: "linkpatrol-test"}), HostSettings: settings}, engine, db)
	_, out, err := cr.Run(context.Background(), context.Background(), passOf(start))
	if err != nil || !out.Complete {
		t.Fatalf("run: %v, %+v", err, out)
	}
	return db, cr
}
