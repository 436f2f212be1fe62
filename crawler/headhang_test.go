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
		default:
			w.Write([]byte("zip"))
		}
	})))
	defer other.Close()
	srv := httptest.NewServer(page(`<a href="` + other.URL + `/file.zip">zip</a>`))
	defer srv.Close()
	s := throttle.Settings{MaxPause: 10 * time.Minute, MaxRetries: 2}
	settings := func(string) throttle.Settings { return s }
	engine, err := rules.New(rules.Config{Start: []string{srv.URL + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	// The timeout is waited out once, so it is short, but long enough
	// for a loaded machine under -race to answer the GET.
	db := openDB(t)
	cr := crawler.New(crawler.Config{Concurrency: 2, UserAgent: "linkpatrol-test", Timeout: 2 * time.Second,
		Throttle: throttle.New(throttle.Config{Settings: settings, UserAgent: "linkpatrol-test"}), HostSettings: settings}, engine, db)
	_, out, err := cr.Run(context.Background(), context.Background(), passOf(srv.URL+"/"))
	if err != nil || !out.Complete {
		t.Fatalf("run: %v, %+v", err, out)
	}
	rec, ok, err := db.Get(other.URL + "/file.zip")
	if err != nil || !ok {
		t.Fatalf("no record of /file.zip: %v", err)
	}
	if rec.Verdict != store.VerdictOK || rec.Status != 200 {
		t.Errorf("/file.zip: %s %d %q, want ok 200 (GET after the HEAD timed out)", rec.Verdict, rec.Status, rec.Error)
	}
	if h, g := c.get("HEAD /file.zip"), c.get("GET /file.zip"); h != 1 || g != 1 {
		t.Errorf("/file.zip got %d HEAD and %d GET, want one of each", h, g)
	}
	for _, h := range cr.Hosts() {
		// robots.txt, the HEAD and the GET: each counted once.
		if want := c.get("GET /robots.txt") + c.get("HEAD /file.zip") + c.get("GET /file.zip"); h.Key == other.Listener.Addr().String() && h.Requests != int64(want) {
			t.Errorf("host %s: %d requests counted, the server got %d", h.Key, h.Requests, want)
		}
	}
}
