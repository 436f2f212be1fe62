package crawler_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/store"
)

// depthSite is a site whose pages are 0 to 3 links from "/"; what lies
// beyond depth 2 is only ever requested by a pass that parses depth 2.
func depthSite(t *testing.T, c *counter) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/{$}", page(`<a href="/a">a</a> <a href="/r1">r1</a>`))
	// Depth 1: parsed under --max-depth 1.
	mux.Handle("/a", page(`<a href="/b">b</a> <a href="/broken-deep">x</a> <a href="/r2">r2</a> <img src="/imgpage">`))
	mux.Handle("/r1", http.RedirectHandler("/mid", http.StatusFound))
	mux.Handle("/mid", page(`<a href="/m2">m2</a>`))
	// Depth 2: checked, never parsed.
	mux.Handle("/b", page(`<a href="/c">c</a>`))
	mux.Handle("/r2", http.RedirectHandler("/end", http.StatusFound))
	mux.Handle("/end", page(`<a href="/e2">e2</a>`))
	mux.Handle("/imgpage", page(`<a href="/c2">c2</a>`))
	mux.Handle("/m2", page(`<a href="/m3">m3</a>`))
	// Depth 3.
	for _, p := range []string{"/c", "/e2", "/c2", "/m3"} {
		mux.Handle(p, page(`deep`))
	}
	srv := httptest.NewServer(c.wrap(mux))
	t.Cleanup(srv.Close)
	return srv
}

func TestMaxDepthChecksButDoesNotParse(t *testing.T) {
	t.Parallel()
	var c counter
	srv := depthSite(t, &c)
	r := runPass(t, crawler.Config{Concurrency: 4, Timeout: 5 * time.Second, MaxDepth: 1}, srv.URL+"/")

	for _, p := range []string{"/", "/a", "/mid"} {
		if rec := r.records[srv.URL+p]; !rec.Parsed {
			t.Errorf("%s (depth <= 1): not parsed: %+v", p, rec)
		}
	}
	// Beyond the depth each page is checked, its status known, its links
	// not followed; the redirect's end and a page met as an image alike.
	for p, want := range map[string]store.Verdict{"/b": store.VerdictOK, "/broken-deep": store.VerdictBroken,
		"/r2": store.VerdictOK, "/end": store.VerdictOK, "/imgpage": store.VerdictOK, "/m2": store.VerdictOK} {
		rec, ok := r.records[srv.URL+p]
		if !ok {
			t.Errorf("%s (depth 2): not checked", p)
			continue
		}
		if rec.Verdict != want || rec.Parsed {
			t.Errorf("%s (depth 2): verdict %v, parsed %t; want %v, not parsed", p, rec.Verdict, rec.Parsed, want)
		}
	}
	if rec := r.records[srv.URL+"/broken-deep"]; rec.Status != http.StatusNotFound {
		t.Errorf("/broken-deep: status %d, want 404", rec.Status)
	}
	if n := c.get("GET /b"); n != 0 {
		t.Errorf("/b (depth 2) was read with GET %d times; a checked page is asked with HEAD", n)
	}
	for _, p := range []string{"/c", "/e2", "/c2", "/m3"} {
		if n := c.get("GET "+p) + c.get("HEAD "+p); n != 0 {
			t.Errorf("%s (depth 3) requested %d times", p, n)
		}
		if _, ok := r.records[srv.URL+p]; ok {
			t.Errorf("%s (depth 3) has a record", p)
		}
	}
	// The broken link is reported with its referrer.
	links, err := r.db.Links(srv.URL + "/a")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range links {
		found = found || l.URL == srv.URL+"/broken-deep"
	}
	if !found {
		t.Error("/a does not list its link to /broken-deep")
	}
}

// Without a limit the same site is walked to the end: the test above is
// not passing for want of links.
func TestNoMaxDepthWalksEverything(t *testing.T) {
	t.Parallel()
	var c counter
	srv := depthSite(t, &c)
	r := runPass(t, crawler.Config{Concurrency: 4, Timeout: 5 * time.Second}, srv.URL+"/")
	for _, p := range []string{"/c", "/e2", "/c2", "/m3"} {
		if _, ok := r.records[srv.URL+p]; !ok {
			t.Errorf("%s: not checked without --max-depth", p)
		}
	}
}
