package crawler_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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

// Versioned docs (review11 H3): /v1/ and /v2/ built from the same sources
// are byte-identical where a page did not change, and link relatively.
// Neither copy links to the other, so both are read: /v2/'s subtree and
// the broken link in it are found, whichever version is fetched first.
// The server answers /other.html, the only way to /v2/, after /v1/ was
// read, so that /v2/ is always fetched second (before the fix it was not
// read, then: a page with the content of one read anywhere in the pass).
func TestVersionedDocsBothRead(t *testing.T) {
	t.Parallel()
	const index = `<h1>Docs</h1><a href="guide.html">guide</a>`
	v1Read := make(chan struct{})
	var once sync.Once
	mux := http.NewServeMux()
	mux.Handle("/{$}", page(`<a href="/v1/">v1</a> <a href="/other.html">other</a>`))
	mux.HandleFunc("/other.html", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-v1Read:
		case <-r.Context().Done():
		}
		page(`<a href="/v2/">v2</a>`)(w, r)
	})
	mux.Handle("/v1/{$}", page(index))
	mux.Handle("/v2/{$}", page(index))
	mux.HandleFunc("/v1/guide.html", func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(v1Read) })
		page(`<h1>Guide</h1><a href="index.html">home</a>`)(w, r)
	})
	mux.Handle("/v2/guide.html", page(`<h1>Guide</h1><a href="index.html">home</a> <a href="missing.html">new</a>`))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	res := runPass(t, crawler.Config{Concurrency: 4}, srv.URL+"/")
	if rec := res.records[srv.URL+"/v2/"]; !rec.Parsed {
		t.Errorf("/v2/ not read for links (%q): its content is /v1/'s, but /v1/ does not lead to it", rec.Note)
	}
	if rec, ok := res.records[srv.URL+"/v2/missing.html"]; !ok || rec.Verdict != store.VerdictBroken {
		t.Errorf("/v2/missing.html: found %v, %s; want it found broken", ok, rec.Verdict)
	}
}

// A page answered 304 on the next pass is not read, but it is still the
// page its links come from: a catch-all's made-up paths it links to are
// copies of it (review11 L2: the 304 path had no test).
func TestCatchAllSiteUnchangedStartPage(t *testing.T) {
	t.Parallel()
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		switch {
		case r.URL.Path == "/robots.txt", strings.Count(r.URL.Path, "/") > 3:
			http.NotFound(w, r)
			return
		case r.URL.Path == "/":
			w.Header().Set("ETag", `"app"`)
			if r.Header.Get("If-None-Match") == `"app"` {
				w.WriteHeader(http.StatusNotModified)
				return
			}
		}
		page(spaIndex)(w, r)
	}))
	t.Cleanup(srv.Close)
	db, err := store.Open(filepath.Join(t.TempDir(), "lp.db"), dbOptions)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cfg := crawler.Config{Concurrency: 4}
	runPassOn(t, db, cfg, srv.URL+"/")
	res := runPassOn(t, db, cfg, srv.URL+"/")
	if start := res.records[srv.URL+"/"]; !start.Unchanged {
		t.Fatalf("start page: unchanged %v (%q); want the 304 path", start.Unchanged, start.Note)
	}
	for _, p := range []string{"/docs/intro", "/about"} {
		if rec := res.records[srv.URL+p]; rec.Parsed || !strings.HasPrefix(rec.Note, store.SameContentNote+srv.URL+"/") {
			t.Errorf("%s: parsed %v, note %q; want a copy of the start page, not read", p, rec.Parsed, rec.Note)
		}
	}
	if len(res.records) != 5 {
		t.Errorf("%d URLs; want the 5 of the first pass", len(res.records))
	}
}

// Two empty pages (review11 H2: a section emptied by a deploy, and a page
// always empty) have one digest, but neither leads to the other: both are
// read, so the report sees the section came back empty (emptiedPage
// wants the page read) rather than a copy that lost nothing.
func TestEmptyPagesAreNotCopies(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.Handle("/{$}", page(`<a href="empty.html">e</a> <a href="sec/">s</a>`))
	mux.Handle("/empty.html", page(""))
	mux.Handle("/sec/{$}", page(""))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	res := runPass(t, crawler.Config{Concurrency: 2}, srv.URL+"/")
	for _, p := range []string{"/empty.html", "/sec/"} {
		if rec := res.records[srv.URL+p]; !rec.Parsed || rec.Note != "" || rec.Size != 0 {
			t.Errorf("%s: parsed %v, size %d, note %q; want read, empty, no note", p, rec.Parsed, rec.Size, rec.Note)
		}
	}
}
