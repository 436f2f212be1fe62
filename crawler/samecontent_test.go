package crawler_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
)

// spaIndex is a single-page app's one page: relative links, which resolve
// against whatever path it was served at.
const spaIndex = `<!doctype html><title>app</title>
<script src="static/app.js"></script>
<a href="docs/intro">intro</a> <a href="about">about</a>
<img src="img/missing.png">`

// catchAll serves a single-page app as nginx's try_files $uri $uri/
// /index.html; does: its one script, and spaIndex for any other path,
// made up or not. So that the test ends before the fix too, paths of
// more than three segments are missing. hold, when set, is called before
// any path but / and /robots.txt is answered.
func catchAll(t *testing.T, requests *atomic.Int64, hold func(*http.Request)) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		switch {
		case r.URL.Path == "/robots.txt", strings.Count(r.URL.Path, "/") > 3:
			http.NotFound(w, r)
			return
		case r.URL.Path == "/static/app.js":
			w.Header().Set("Content-Type", "text/javascript")
			w.Write([]byte("app()"))
			return
		case r.URL.Path != "/" && hold != nil:
			hold(r)
		}
		page(spaIndex)(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A catch-all site answers every made-up path with its one page, whose
// relative links lead to more made-up paths: the crawl went on for ever
// (QA: 250,000 pages in three minutes). A page with the content of one
// already read is checked, not read for links: the pass ends at the pages
// the start page links to, each saying which page it is the same as. The
// start page's own copy (/index.html) loses nothing.
func TestCatchAllSiteEnds(t *testing.T) {
	t.Parallel()
	var requests atomic.Int64
	srv := catchAll(t, &requests, nil)
	res := runPass(t, crawler.Config{Concurrency: 4}, srv.URL+"/", srv.URL+"/index.html")
	if !res.outcome.Complete {
		t.Fatalf("outcome %+v: want the pass complete", res.outcome)
	}
	start := res.records[srv.URL+"/"]
	if !start.Parsed || start.Digest == 0 {
		t.Errorf("start page: parsed %v, digest %x; want read, with a digest", start.Parsed, start.Digest)
	}
	// A start URL is read even when a copy: not reading it fails the night.
	if rec := res.records[srv.URL+"/index.html"]; !rec.Parsed {
		t.Errorf("/index.html, a start URL: not read (%q)", rec.Note)
	}
	// Whichever start page was read first is the first of the content.
	// In another directory, its relative links lead elsewhere: lost.
	for p, moved := range map[string]string{"/docs/intro": store.SameContentMoved, "/about": "", "/img/missing.png": store.SameContentMoved} {
		notes := []string{store.SameContentNote + srv.URL + "/" + moved, store.SameContentNote + srv.URL + "/index.html" + moved}
		rec := res.records[srv.URL+p]
		if rec.Verdict != store.VerdictOK || rec.Status != 200 || rec.Parsed || !slices.Contains(notes, rec.Note) {
			t.Errorf("%s: %s %d parsed %v note %q; want ok 200, not parsed, note one of %q", p, rec.Verdict, rec.Status, rec.Parsed, rec.Note, notes)
		}
	}
	if len(res.records) != 6 || requests.Load() > 8 {
		t.Errorf("%d URLs, %d requests; want the 6 the start pages link to (and themselves), about as many requests", len(res.records), requests.Load())
	}
}

// A pass stopped after the start page was read and resumed: the pages read
// before the stop are known by their stored digests, so a made-up path met
// after the resume is not read as a first page of its content, which would
// set the walk off again one level deeper.
func TestCatchAllSiteResumedKnowsPagesRead(t *testing.T) {
	t.Parallel()
	var requests atomic.Int64
	held := make(chan struct{}, 8)
	var holding atomic.Bool
	holding.Store(true)
	srv := catchAll(t, &requests, func(r *http.Request) {
		if holding.Load() {
			held <- struct{}{}
			<-r.Context().Done()
		}
	})
	db, err := store.Open(filepath.Join(t.TempDir(), "lp.db"), dbOptions)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := srv.URL + "/"
	engine, err := rules.New(rules.Config{Start: []string{start}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := crawler.Config{Concurrency: 4, Grace: time.Millisecond}
	stop, cancel := context.WithCancel(context.Background())
	go func() {
		<-held // the start page was read: its links are being fetched
		cancel()
	}()
	if _, out, err := crawler.New(cfg, engine, db).Run(stop, context.Background(), passOf(start)); err != nil || out.Complete {
		t.Fatalf("stopped run: %+v, %v; want it stopped", out, err)
	}
	holding.Store(false)
	pass, out, err := crawler.New(cfg, engine, db).Run(context.Background(), context.Background(), passOf(start))
	if err != nil || !out.Complete {
		t.Fatalf("resumed run: %+v, %v; want the pass complete", out, err)
	}
	n := 0
	err = db.Records(pass.ID, func(rec *store.URLRecord) error {
		n++
		if rec.URL != start && rec.Parsed {
			t.Errorf("%s read for links after the resume: the same content as %s", rec.URL, start)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 5 {
		t.Errorf("%d URLs in the pass; want the 5 the start page links to, and itself", n)
	}
}
