package crawler_test

import (
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/rules"
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
