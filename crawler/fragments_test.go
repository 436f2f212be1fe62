package crawler_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/report"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
)

func fragmentSite(t *testing.T, c *counter) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/{$}", page(`<!doctype html>
<p id="intro">intro</p>
<a href="#intro">here</a>
<a href="#top">top</a>
<a href="/doc#install">install</a>
<a href="/doc#nowhere">nowhere</a>
<a href="/doc#caf%C3%A9">café</a>
<a href="/big#end">the end of a big page</a>
<a href="/gone#x">a broken page</a>
<a href="/old#install">checked where the redirect ends</a>
<a href="/old#nothere">missing where the redirect ends</a>
<a href="/doc#:~:text=Install">a text fragment</a>
<a href="/doc#install:~:text=again">an anchor and a text fragment</a>`))
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/doc", http.StatusMovedPermanently)
	})
	mux.Handle("/doc", page(`<h2 id="install">Install</h2><a name="café"></a><p id="install">again</p>`))
	mux.Handle("/big", page(`<p id="start">`+strings.Repeat("x", 4096)+`<p id="end">`))
	srv := httptest.NewServer(c.wrap(mux))
	t.Cleanup(srv.Close)
	return srv
}

// completePass runs a pass to its end, which closes it complete.
func completePass(t *testing.T, db *store.DB, cfg crawler.Config, start string) map[string]store.URLRecord {
	t.Helper()
	out, recs := seededPass(t, db, cfg, context.Background(), start)
	if !out.Complete {
		t.Fatal("pass did not complete")
	}
	if _, open, err := db.OpenPass(); err != nil || open {
		t.Fatalf("the complete pass is still open (%v)", err)
	}
	return recs
}

func TestFragmentsCheckedAgainstParsedPages(t *testing.T) {
	t.Parallel()
	var c counter
	srv := fragmentSite(t, &c)
	db := openDB(t)
	recs := completePass(t, db, crawler.Config{CheckFragments: true, MaxSize: 2048}, srv.URL+"/")
	if got := recs[srv.URL+"/doc"].IDs; !slices.Equal(got, []string{"café", "install"}) {
		t.Errorf("/doc anchors %q, want café and install, sorted, once each", got)
	}
	if got := recs[srv.URL+"/big"].IDs; got != nil {
		t.Errorf("/big was cut at the size cap, so its anchors are unknown, not %q", got)
	}

	last, _, err := db.LastPass()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(db, last.ID, report.Options{CheckFragments: true})
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, m := range rep.Fragments {
		for _, ref := range m.Referrers {
			missing = append(missing, strings.TrimPrefix(m.Link(), srv.URL)+" line "+strconv.Itoa(ref.Line))
		}
	}
	if want := []string{"/doc#nowhere line 6", "/old#nothere line 11"}; !slices.Equal(missing, want) {
		t.Errorf("missing fragments %q, want %q", missing, want)
	}
	if !rep.HasBroken() {
		t.Error("a missing fragment must make the exit code 1")
	}
}

// Pages stored before fragment checks were on have no anchors: with the
// checks on they are fetched again instead of reused, and reused after
// (pages are reused only when asked for, with Recheck.Pages).
func TestFragmentChecksRefetchPagesWithoutAnchors(t *testing.T) {
	t.Parallel()
	var c counter
	srv := fragmentSite(t, &c)
	db := openDB(t)
	cfg := crawler.Config{Recheck: rules.Recheck{OK: time.Hour, Pages: time.Hour}}
	if recs := completePass(t, db, cfg, srv.URL+"/"); recs[srv.URL+"/doc"].IDs != nil {
		t.Fatal("anchors stored without CheckFragments")
	}
	cfg.CheckFragments = true
	recs := completePass(t, db, cfg, srv.URL+"/")
	if n := c.get("GET /doc"); n != 2 {
		t.Errorf("/doc fetched %d times over two passes, want 2: its anchors were missing", n)
	}
	if len(recs[srv.URL+"/doc"].IDs) != 2 {
		t.Errorf("/doc anchors after the refetch: %q", recs[srv.URL+"/doc"].IDs)
	}
	recs = completePass(t, db, cfg, srv.URL+"/")
	if n := c.get("GET /doc"); n != 2 {
		t.Errorf("/doc fetched %d times over three passes, want 2: the third reuses it", n)
	}
	if len(recs[srv.URL+"/doc"].IDs) != 2 {
		t.Errorf("the reused record lost its anchors: %q", recs[srv.URL+"/doc"].IDs)
	}
}

// TestMissingFragmentOnAPageNotReadIsNotDropped is QA7's Q9: night 1,
// /p6 links /p5#nope and /p5 has no such anchor; night 2, /p5 answers 503
// (followed from its last good copy or not at all); night 3 it is back.
// The missing fragment must be listed every night, fail the run each
// night, and not be new the night /p5 comes back.
func TestMissingFragmentOnAPageNotReadIsNotDropped(t *testing.T) {
	t.Parallel()
	for _, ghost := range []time.Duration{time.Hour, 0} {
		t.Run("ghost="+ghost.String(), func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			down := false
			mux := http.NewServeMux()
			mux.Handle("/{$}", page(`<a href="/p5">p5</a><a href="/p6">p6</a>`))
			mux.Handle("/p6", page(`<a href="/p5#nope">nope</a>`))
			mux.HandleFunc("/p5", func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				d := down
				mu.Unlock()
				if d {
					http.Error(w, "down", http.StatusServiceUnavailable)
					return
				}
				page(`<p id="here">p5</p>`)(w, r)
			})
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)
			db := openDB(t)
			night := func(d bool) *report.Report {
				t.Helper()
				mu.Lock()
				down = d
				mu.Unlock()
				completePass(t, db, crawler.Config{CheckFragments: true, Ghost: ghost}, srv.URL+"/")
				last, _, err := db.LastPass()
				if err != nil {
					t.Fatal(err)
				}
				rep, err := report.Build(db, last.ID, report.Options{CheckFragments: true})
				if err != nil {
					t.Fatal(err)
				}
				// As check does: the pass keeps its tally for the next.
				tally := rep.Tally()
				last.Tally = &tally
				if err := db.UpdatePass(last); err != nil {
					t.Fatal(err)
				}
				return rep
			}
			link := srv.URL + "/p5#nope"
			listed := func(rep *report.Report) []string {
				var got []string
				for _, m := range rep.Fragments {
					got = append(got, strings.TrimPrefix(m.Link(), srv.URL)+" "+string(m.Change))
				}
				return got
			}
			// Two nights down: the second does not know which pass last
			// read the page, so it names none.
			lastChecked := "NOT CHECKED this pass: its page could not be read: 503 Service Unavailable; missing when last checked"
			for i, want := range []struct {
				down         bool
				listed, text string
			}{
				{false, "/p5#nope new", ""},
				{true, "/p5#nope unchecked", lastChecked + " (pass 1, "},
				{true, "/p5#nope unchecked", lastChecked + " linked from:"},
				{false, "/p5#nope still", ""},
			} {
				rep := night(want.down)
				if got := listed(rep); !slices.Equal(got, []string{want.listed}) {
					t.Errorf("night %d: missing fragments %q, want %q", i+1, got, want.listed)
				}
				if !rep.HasBroken() {
					t.Errorf("night %d: %s is missing (or was, when last checked): the exit code must be 1", i+1, link)
				}
				if want.text != "" {
					var b strings.Builder
					if err := report.Write(&b, rep, "text"); err != nil {
						t.Fatal(err)
					}
					text := strings.Join(strings.Fields(b.String()), " ") // unwrapped
					if !strings.Contains(text, want.text) {
						t.Errorf("night %d's text report does not say %q:\n%s", i+1, want.text, b.String())
					}
				}
			}
		})
	}
}
