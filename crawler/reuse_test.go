package crawler_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/crawler/crawltest"
	"github.com/linkpatrol/linkpatrol/report"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
)

// A result reused without a request is marked with the pass that fetched
// it, and it is not one more failed pass: --report-after counts passes
// that really fetched the URL. The page is revalidated every pass (a 304),
// since Recheck.Pages is not set.
func TestReusedProblemIsNotAnotherFailure(t *testing.T) {
	t.Parallel()
	var c counter
	srv := fragmentSite(t, &c)
	db := openDB(t)
	gone := srv.URL + "/gone"

	first := completePass(t, db, crawler.Config{}, srv.URL+"/")
	if r := first[gone]; r.Failures != 1 || r.ReusedFrom != 0 {
		t.Fatalf("first pass: failures %d, reused from %d; want 1, 0", r.Failures, r.ReusedFrom)
	}

	reuse := crawler.Config{Recheck: rules.Recheck{Broken: time.Hour, OK: time.Hour}}
	second := completePass(t, db, reuse, srv.URL+"/")
	if r := second[gone]; r.Failures != 1 || r.ReusedFrom != 1 {
		t.Errorf("second pass, reused: failures %d, reused from %d; want 1 (not fetched again), 1", r.Failures, r.ReusedFrom)
	}
	if n := c.get("GET /"); n != 2 {
		t.Errorf("the start page was fetched %d times over two passes, want 2: pages are revalidated", n)
	}
	if r := second[srv.URL+"/"]; r.ReusedFrom != 0 {
		t.Errorf("the revalidated page is marked reused from pass %d", r.ReusedFrom)
	}

	third := completePass(t, db, reuse, srv.URL+"/")
	if r := third[gone]; r.Failures != 1 || r.ReusedFrom != 1 {
		t.Errorf("third pass, reused again: failures %d, reused from %d; want 1, 1 (the pass that fetched it)", r.Failures, r.ReusedFrom)
	}

	fourth := completePass(t, db, crawler.Config{}, srv.URL+"/")
	if r := fourth[gone]; r.Failures != 2 || r.ReusedFrom != 0 {
		t.Errorf("fourth pass, fetched: failures %d, reused from %d; want 2, 0", r.Failures, r.ReusedFrom)
	}
}

// Refetch (--no-reuse) fetches every URL in full: a stored result young
// enough to reuse is not reused, and a page with an ETag is not revalidated
// with If-None-Match, so no answer is a 304 and every page is read again.
func TestRefetchSendsNoConditionalRequest(t *testing.T) {
	t.Parallel()
	site := crawltest.NewSite(crawltest.SiteOptions{Pages: 30, Images: 2, BrokenEvery: 5, ETags: true, Seed: 3})
	srv := httptest.NewServer(site)
	t.Cleanup(srv.Close)
	db := openDB(t)

	completePass(t, db, crawler.Config{}, srv.URL+"/")
	first := site.Stats()
	site.Reset()

	refetch := crawler.Config{Refetch: true, RulesRecheck: true,
		Recheck: rules.Recheck{OK: time.Hour, Pages: time.Hour, Broken: time.Hour}}
	recs := completePass(t, db, refetch, srv.URL+"/")
	second := site.Stats()
	if second.NotModified != 0 {
		t.Errorf("%d pages answered 304 to a pass that fetches everything", second.NotModified)
	}
	if second.Requests != first.Requests || second.Bytes != first.Bytes {
		t.Errorf("second pass: %d requests, %d bytes; first: %d, %d; want the same",
			second.Requests, second.Bytes, first.Requests, first.Bytes)
	}
	for u, r := range recs {
		if r.ReusedFrom != 0 {
			t.Errorf("%s reused from pass %d", u, r.ReusedFrom)
		}
	}
}

// A second pass over an unchanged site with ETags reads no page: every page
// answers 304. The summary must not call them parsed.
func TestUnchangedPagesAreNotCalledParsed(t *testing.T) {
	t.Parallel()
	site := crawltest.NewSite(crawltest.SiteOptions{Pages: 12, ETags: true, Seed: 5})
	srv := httptest.NewServer(site)
	t.Cleanup(srv.Close)
	db := openDB(t)

	completePass(t, db, crawler.Config{}, srv.URL+"/")
	site.Reset()
	completePass(t, db, crawler.Config{}, srv.URL+"/")
	if n := site.Stats().NotModified; n < 12 {
		t.Fatalf("%d answers were 304, want one for every page at least", n)
	}
	last, _, err := db.LastPass()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(db, last.ID, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := rep.Summary.Pages
	if u := rep.Summary.Unchanged; n < 12 || u != n {
		t.Errorf("summary: %d pages, %d unchanged; want every page (12 at least) unchanged", n, u)
	}
	want := fmt.Sprintf("0 pages parsed and %d unchanged (answered 304, stored links followed), ", n)
	if got := rep.Counts(); !strings.HasPrefix(got, want) {
		t.Errorf("summary says %q, want it to start %q", got, want)
	}
}

// An image of the site's own host deleted since the last run is reported
// broken on the next, however young its good result (Recheck.OK): the
// site's own resources are revalidated each run, as its pages are. One of
// another host within Recheck.OK is still reused without a request.
func TestOwnResourcesAreRevalidatedOthersReused(t *testing.T) {
	t.Parallel()
	var own, other counter
	var deleted atomic.Bool
	third := httptest.NewServer(other.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "image/png")
	})))
	t.Cleanup(third.Close)
	mux := http.NewServeMux()
	mux.Handle("/{$}", page(`<img src="/logo.png"><img src="`+third.URL+`/badge.png">`))
	mux.HandleFunc("/logo.png", func(w http.ResponseWriter, r *http.Request) {
		if deleted.Load() {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "image/png")
	})
	srv := httptest.NewServer(own.wrap(mux))
	t.Cleanup(srv.Close)
	db := openDB(t)
	cfg := crawler.Config{Recheck: rules.Recheck{OK: 20 * time.Hour}}

	first := completePass(t, db, cfg, srv.URL+"/")
	logo, badge := srv.URL+"/logo.png", third.URL+"/badge.png"
	if first[logo].Verdict != store.VerdictOK || first[badge].Verdict != store.VerdictOK {
		t.Fatalf("first pass: logo %s, badge %s; want both ok", first[logo].Verdict, first[badge].Verdict)
	}
	deleted.Store(true)
	before := other.get("HEAD /badge.png") + other.get("GET /badge.png")
	second := completePass(t, db, cfg, srv.URL+"/")
	if r := second[logo]; r.Verdict != store.VerdictBroken || r.ReusedFrom != 0 {
		t.Errorf("the deleted own image: %s, reused from pass %d; want broken, fetched", r.Verdict, r.ReusedFrom)
	}
	if r := second[badge]; r.Verdict != store.VerdictOK || r.ReusedFrom != first[badge].Pass {
		t.Errorf("the other host's image: %s, reused from pass %d; want ok, reused from pass %d", r.Verdict, r.ReusedFrom, first[badge].Pass)
	}
	if after := other.get("HEAD /badge.png") + other.get("GET /badge.png"); after != before {
		t.Errorf("the other host's image was requested again within Recheck.OK (%d requests, %d before)", after, before)
	}
}
