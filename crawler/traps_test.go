package crawler_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/crawler/crawltest"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
)

// trapBudget is what one trap may cost behind its entry page (the first
// month, the listing without a query): "at most ~100 requests".
const trapBudget = 100

// trapSite serves a generated site with the four traps beside it; the pass
// starts at both "/" and the traps' index.
func trapSite(t *testing.T, pages int) (*crawltest.TrapSite, *httptest.Server, []string) {
	t.Helper()
	ts := crawltest.NewTrapSite(crawltest.NewSite(crawltest.SiteOptions{Pages: pages, Images: 2, BrokenEvery: 20, Seed: 11}))
	srv := httptest.NewServer(ts)
	t.Cleanup(srv.Close)
	return ts, srv, []string{srv.URL + "/", srv.URL + crawltest.TrapsPath}
}

// trapDB opens a database for a pass at starts, and rules with the
// spider-trap limits of a default run.
func trapDB(t *testing.T, starts []string) (*store.DB, *rules.Engine) {
	t.Helper()
	e, err := rules.New(rules.Config{Start: starts, Traps: rules.DefaultTraps()})
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(filepath.Join(t.TempDir(), "lp.db"), dbOptions)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, e
}

func records(t *testing.T, db *store.DB, pass uint64) map[string]store.URLRecord {
	t.Helper()
	recs := make(map[string]store.URLRecord)
	if err := db.Records(pass, func(r *store.URLRecord) error { recs[r.URL] = *r; return nil }); err != nil {
		t.Fatal(err)
	}
	return recs
}

// checkTraps holds a finished pass over a trap site to what issue 12 asks:
// each trap costs at most trapBudget requests at the server, every ordinary
// page is checked once, and what was held back is listed with its reason
// and the setting that lets it through. An ordinary URL may be requested
// more than once only if mayRepeat says so (nil: none may).
func checkTraps(t *testing.T, ts *crawltest.TrapSite, srvURL string, recs map[string]store.URLRecord, mayRepeat func(uri string) bool) {
	t.Helper()
	for name, st := range ts.Requests() {
		t.Logf("trap %s: %d requests, %d distinct URLs", name, st.Requests, st.DistinctURLs)
		if st.DistinctURLs > 1+trapBudget {
			t.Errorf("trap %s: %d distinct URLs requested, more than its entry and %d", name, st.DistinctURLs, trapBudget)
		}
	}
	// The calendar is cut by its template run, 40 months each way from its
	// first, however the pass was interrupted.
	if st, want := ts.Requests()[crawltest.TrapCalendar], 1+2*rules.DefaultTraps().MaxTemplateRun; st.DistinctURLs != want {
		t.Errorf("calendar: %d distinct months requested, want %d", st.DistinctURLs, want)
	}
	// Session ids are dropped, so the shop is its ordinary pages, once each.
	if st := ts.Requests()[crawltest.TrapSession]; st.DistinctURLs != 1+crawltest.ShopItems {
		t.Errorf("session trap: %d distinct URLs, want the shop and its %d items", st.DistinctURLs, crawltest.ShopItems)
	}

	want := ts.Site().Expected()
	parsed, held := 0, map[string]int{}
	for u, r := range recs {
		path := strings.TrimPrefix(u, srvURL)
		if !strings.HasPrefix(path, crawltest.TrapsPath) {
			if r.Verdict == store.VerdictSkipped {
				t.Errorf("ordinary URL %s skipped: %s", path, r.Note)
			}
			if r.Parsed && !strings.HasPrefix(r.ContentType, "text/css") { // the stylesheet is read too
				parsed++
			}
			continue
		}
		if r.Error != "trap" {
			continue
		}
		if !strings.HasPrefix(r.Note, "skipped: suspected trap (") || !strings.Contains(r.Note, "--max-") || !strings.Contains(r.Note, "[[rule]]") {
			t.Errorf("%s: note %q does not give the reason and the setting", path, r.Note)
		}
		rule, _, _ := strings.Cut(strings.TrimPrefix(r.Note, "skipped: suspected trap ("), ":")
		held[rule]++
	}
	if parsed != want.Pages {
		t.Errorf("%d ordinary pages parsed, want all %d", parsed, want.Pages)
	}
	for _, uri := range ts.Site().Repeated() {
		if mayRepeat == nil || !mayRepeat(uri) {
			t.Errorf("ordinary URL %s requested more than once", uri)
		}
	}
	t.Logf("held back: %v", held)
	for _, rule := range []string{"template-run", "path-repeats", "query-variants"} {
		if held[rule] == 0 {
			t.Errorf("nothing held back by %s", rule)
		}
	}
	for u := range recs {
		if strings.Contains(u, "sid=") {
			t.Errorf("a session id survived into %s", u)
		}
	}
}

// TestTrapsCostBoundedRequests is the trap site of issue 12 §4: an endless
// calendar, a session-id trap, a growing relative path and a faceted
// listing beside an ordinary site.
func TestTrapsCostBoundedRequests(t *testing.T) {
	t.Parallel()
	verifyNoLeaks(t)
	ts, srv, starts := trapSite(t, 300)
	db, engine := trapDB(t, starts)
	c := crawler.New(crawler.Config{Concurrency: 8}, engine, db)
	pass, out, err := c.Run(context.Background(), context.Background(), passOf(starts...))
	if err != nil || !out.Complete {
		t.Fatalf("run: complete %v, %v", out.Complete, err)
	}
	checkTraps(t, ts, srv.URL, records(t, db, pass.ID), nil)
	if c.Progress().Traps == 0 {
		t.Error("Progress counts no pages held back")
	}
}

// TestTrapStateSurvivesResume stops a pass in the middle of the faceted
// listing and the calendar and resumes it from the store: the counts go on
// where they were, so the traps cost no more than in one run.
//
// The stop has no grace, so the requests in flight at that moment are cut
// and their URLs are neither resolved nor committed: the resume must send
// them again, and the server sees them twice. What the stopped run did
// commit must not be requested again.
func TestTrapStateSurvivesResume(t *testing.T) {
	t.Parallel()
	verifyNoLeaks(t)
	ts, srv, starts := trapSite(t, 100)
	stop, cancel := context.WithCancel(context.Background())
	var once sync.Once
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ts.Requests()[crawltest.TrapFacets].DistinctURLs >= trapBudget/3 {
			once.Do(cancel)
		}
		ts.ServeHTTP(w, r)
	})
	db, engine := trapDB(t, starts)
	cfg := crawler.Config{Concurrency: 4, Grace: time.Nanosecond}
	pass, out, err := crawler.New(cfg, engine, db).Run(stop, context.Background(), passOf(starts...))
	if err != nil {
		t.Fatal(err)
	}
	atStop := ts.Requests()
	t.Logf("stopped at %v", atStop)
	if out.Complete || atStop[crawltest.TrapFacets].DistinctURLs > trapBudget/2 || atStop[crawltest.TrapCalendar].DistinctURLs > 40 {
		t.Fatal("the pass was not stopped inside the traps, which the test needs")
	}
	committed := records(t, db, pass.ID)
	_, out, err = crawler.New(cfg, engine, db).Run(context.Background(), context.Background(), passOf(starts...))
	if err != nil || !out.Complete {
		t.Fatalf("resume: complete %v, %v", out.Complete, err)
	}
	checkTraps(t, ts, srv.URL, records(t, db, pass.ID), func(uri string) bool {
		_, done := committed[srv.URL+uri]
		if !done {
			t.Logf("%s requested again: the stop cut it", uri)
		}
		return !done
	})
}

// TestTrapThroughResourceLinks: a chain of pages that link each other only
// as images. Each is checked, answers HTML and so is parsed after all; the
// template run still ends the chain, where the last one is checked but not
// parsed, with the reason on its record.
func TestTrapThroughResourceLinks(t *testing.T) {
	t.Parallel()
	verifyNoLeaks(t)
	var mu sync.Mutex
	highest := 0
	mux := http.NewServeMux()
	mux.Handle("/{$}", page(`<img src="/c/1">`))
	mux.HandleFunc("/c/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.PathValue("n"))
		if err != nil || n > 200 { // a regression ends here rather than never
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		highest = max(highest, n)
		mu.Unlock()
		page(fmt.Sprintf(`<img src="/c/%d">`, n+1))(w, r)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	db, engine := trapDB(t, []string{srv.URL + "/"})
	pass, out, err := crawler.New(crawler.Config{Concurrency: 2}, engine, db).Run(context.Background(), context.Background(), passOf(srv.URL+"/"))
	if err != nil || !out.Complete {
		t.Fatalf("run: complete %v, %v", out.Complete, err)
	}
	// /c/1 is found on "/" (run 0); /c/41 is the 40th of its template in
	// a row and parsed; /c/42 is checked, not parsed, and /c/43 never seen.
	last := 2 + rules.DefaultTraps().MaxTemplateRun
	if highest != last {
		t.Errorf("the chain was followed to /c/%d, want /c/%d", highest, last)
	}
	rec := records(t, db, pass.ID)[fmt.Sprintf("%s/c/%d", srv.URL, last)]
	if rec.Verdict != store.VerdictOK || rec.Parsed || !strings.HasPrefix(rec.Note, "not parsed: suspected trap (template-run:") {
		t.Errorf("/c/%d: %s, parsed %v, note %q", last, rec.Verdict, rec.Parsed, rec.Note)
	}
}
