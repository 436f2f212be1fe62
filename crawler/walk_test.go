package crawler_test

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/crawler/crawltest"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// messySite has what real documentation sites do that a walk must get
// right: navigation in <link rel>, pages behind redirects and linked
// directly too, redirect chains, stylesheets with their own links, and
// links that are not what they look like. other counts what reaches a
// second origin that the site only preconnects to.
func messySite(t *testing.T, c, other *counter) *httptest.Server {
	t.Helper()
	preconnected := httptest.NewServer(other.wrap(http.NotFoundHandler()))
	t.Cleanup(preconnected.Close)

	mux := http.NewServeMux()
	mux.Handle("/{$}", page(`<!doctype html><title>home</title>
<link rel="next" href="/chap1/">
<link rel="preconnect" href="`+preconnected.URL+`">
<link rel="dns-prefetch" href="`+strings.Replace(preconnected.URL, "http:", "", 1)+`/x">
<link rel="stylesheet" href="/css/site.css">
<img src="/html-as-img">
<a href="/chap1/">chapter 1</a>
<a href="/sub">directory without its slash</a>
<a href="/sub/">the same directory</a>
<a href="/sub#present">a fragment behind a redirect</a>
<img src="/old.png"><img src="/new.png">
<a href="/a">a chain</a><a href="/c">its end</a>
<a href="/l1">loop</a><a href="/l2">loop</a>
<a href="/hop/15">fifteen redirects</a>
<a href="/hop/25">twenty-five redirects</a>
<a href="/notmod">304 to nothing</a>
<a href="file:///etc/hosts">a file on the author's disk</a>
<a href="/pct%zz">a stray percent</a>
<a href="/sub/#%_sec_6.2">a stray percent in a fragment</a>
<a href="/sub/#:~:text=hello">a text fragment</a>`))
	mux.Handle("/chap1/{$}", page(`<link rel="prev" href="/"><a href="/deep">deep</a>`))
	mux.Handle("/deep", page(`<a href="/deep-missing">gone</a>`))
	mux.Handle("/html-as-img", page(`<a href="/behind-img">behind</a>`))
	mux.Handle("/behind-img", page(`fine`))
	mux.HandleFunc("/sub", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/sub/", http.StatusMovedPermanently)
	})
	mux.Handle("/sub/{$}", page(`<h2 id="present">x</h2><a href="/only-from-sub">gone</a>`))
	mux.HandleFunc("/old.png", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/new.png", http.StatusMovedPermanently)
	})
	png := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG"))
	}
	mux.HandleFunc("/new.png", png)
	mux.HandleFunc("/a", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/b", http.StatusFound) })
	mux.HandleFunc("/b", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/c", http.StatusFound) })
	mux.Handle("/c", page(`end of the chain`))
	mux.HandleFunc("/l1", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/l2", http.StatusFound) })
	mux.HandleFunc("/l2", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/l1", http.StatusFound) })
	mux.HandleFunc("/hop/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		if n == 0 {
			page(`landed`)(w, r)
			return
		}
		http.Redirect(w, r, "/hop/"+strconv.Itoa(n-1), http.StatusFound)
	})
	mux.HandleFunc("/notmod", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotModified)
	})
	mux.HandleFunc("/pct%zz", func(w http.ResponseWriter, r *http.Request) { page(`stray`)(w, r) })
	mux.HandleFunc("/css/site.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		w.Write([]byte("/* site */\n@import \"more.css\";\nbody {\n  background: url(../img/bg.png);\n}\n"))
	})
	mux.HandleFunc("/css/more.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		w.Write([]byte("p { color: red }\n"))
	})
	srv := httptest.NewServer(c.wrap(mux))
	t.Cleanup(srv.Close)
	return srv
}

// walkTimeout is the request timeout of the passes over messySite.
const walkTimeout = 30 * time.Second

// TestWalkSurvivesMessySites is TestPassSurvivesHostileServers for the
// walk itself: what is parsed, what a redirect ends at, what is not a link.
func TestWalkSurvivesMessySites(t *testing.T) {
	t.Parallel()
	verifyNoLeaks(t)
	var c, other counter
	srv := messySite(t, &c, &other)
	// Nothing in messySite hangs, so no test waits for the timeout: it is
	// long enough for the 25-hop chain's task (2x the timeout) on a loaded
	// machine under -race, where 2 s made /hop/15 a "timeout" (flaky.md).
	r := runPass(t, crawler.Config{Concurrency: 4, Timeout: walkTimeout, CheckFragments: true}, srv.URL+"/")
	if !r.outcome.Complete {
		t.Fatal("pass did not complete")
	}
	want := []struct {
		path     string
		verdict  store.Verdict
		status   int
		err      string
		parsed   bool
		finalURL string
	}{
		// A page first met in <link rel=next> is parsed, and so is every
		// page behind it.
		{"/chap1/", store.VerdictOK, 200, "", true, ""},
		{"/deep", store.VerdictOK, 200, "", true, ""},
		{"/deep-missing", store.VerdictBroken, 404, "", false, ""},
		// An HTML page first met in an <img> is parsed: its Content-Type says so.
		{"/html-as-img", store.VerdictOK, 200, "", true, ""},
		{"/behind-img", store.VerdictOK, 200, "", true, ""},
		// A redirect ends at its target's result; the target is recorded
		// (and parsed) under its own URL, once.
		{"/sub", store.VerdictOK, 200, "", false, "/sub/"},
		{"/sub/", store.VerdictOK, 200, "", true, ""},
		{"/only-from-sub", store.VerdictBroken, 404, "", false, ""},
		{"/old.png", store.VerdictOK, 200, "", false, "/new.png"},
		{"/new.png", store.VerdictOK, 200, "", false, ""},
		{"/a", store.VerdictOK, 200, "", false, "/c"},
		{"/b", store.VerdictOK, 200, "", false, "/c"},
		{"/c", store.VerdictOK, 200, "", true, ""},
		{"/l1", store.VerdictBroken, 302, "redirect loop", false, ""},
		{"/l2", store.VerdictBroken, 302, "redirect loop", false, ""},
		// Browsers follow 20 redirects.
		{"/hop/15", store.VerdictOK, 200, "", false, "/hop/0"},
		{"/hop/25", store.VerdictBroken, 302, "too many redirects", false, ""},
		// A 304 to a request that carried no condition gives a browser nothing.
		{"/notmod", store.VerdictBroken, 304, "304 to an unconditional request", false, ""},
		// A stray % is kept, as browsers do, as %25.
		{"/pct%25zz", store.VerdictOK, 200, "", true, ""},
		// Stylesheets on the site's own hosts are read for their links.
		{"/css/site.css", store.VerdictOK, 200, "", true, ""},
		{"/css/more.css", store.VerdictOK, 200, "", true, ""},
		{"/img/bg.png", store.VerdictBroken, 404, "", false, ""},
	}
	for _, w := range want {
		rec, ok := r.records[srv.URL+w.path]
		if !ok {
			t.Errorf("%s: no record", w.path)
			continue
		}
		if rec.Verdict != w.verdict || rec.Status != w.status || rec.Error != w.err || rec.Parsed != w.parsed {
			t.Errorf("%s: got %s/%d/%q parsed %t, want %s/%d/%q parsed %t", w.path, rec.Verdict, rec.Status, rec.Error, rec.Parsed, w.verdict, w.status, w.err, w.parsed)
		}
		if w.finalURL != "" && rec.FinalURL != srv.URL+w.finalURL {
			t.Errorf("%s: final URL %q, want %q", w.path, rec.FinalURL, srv.URL+w.finalURL)
		}
	}
	// A redirect target no page links to says where it was reached from.
	if rec := r.records[srv.URL+"/b"]; rec.Note != "reached by a redirect from "+srv.URL+"/a" {
		t.Errorf("/b: note %q", rec.Note)
	}
	// A file: link cannot be followed from a web page: it is reported.
	if rec := r.records["file:///etc/hosts"]; rec.Verdict != store.VerdictBroken || rec.Error != "file: link on a web page" {
		t.Errorf("file: link: got %+v", rec)
	}
	for u, rec := range r.records {
		if rec.Error == "invalid URL" {
			t.Errorf("%s: invalid URL, but browsers follow it", u)
		}
		if strings.HasPrefix(u, "http://"+strings.TrimPrefix(srv.URL, "http://")+"/x") {
			t.Errorf("%s: a dns-prefetch origin was recorded", u)
		}
	}
	other.mu.Lock()
	if len(other.hits) > 0 {
		t.Errorf("preconnect and dns-prefetch origins were fetched: %v", other.hits)
	}
	other.mu.Unlock()

	// The CSS file's links are its own, on its own lines, resolved
	// against its URL.
	links, err := r.db.Links(srv.URL + "/css/site.css")
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]int{}
	for _, l := range links {
		lines[strings.TrimPrefix(l.URL, srv.URL)] = l.Line
	}
	if lines["/css/more.css"] != 2 || lines["/img/bg.png"] != 4 {
		t.Errorf("stylesheet links: %v, want more.css on 2, bg.png on 4", lines)
	}

	// Each URL once per pass, redirect targets included.
	for _, k := range []string{"GET /chap1/", "GET /sub/", "GET /sub", "HEAD /new.png", "HEAD /old.png", "GET /c", "GET /b", "GET /a", "GET /l1", "GET /l2", "GET /hop/0", "GET /css/site.css"} {
		if n := c.get(k); n != 1 {
			t.Errorf("%s requested %d times, want 1", k, n)
		}
	}
	for _, k := range []string{"GET /new.png", "GET /old.png"} {
		if n := c.get(k); n != 0 {
			t.Errorf("%s requested %d times, want 0 (HEAD is enough)", k, n)
		}
	}
}

// A second pass that reuses a redirect walks on through its target: the
// page behind it and what only it links to stay in the pass.
func TestReusedRedirectCarriesTheWalk(t *testing.T) {
	t.Parallel()
	var c, other counter
	srv := messySite(t, &c, &other)
	db := openDB(t)
	cfg := crawler.Config{Concurrency: 4, Timeout: walkTimeout,
		Recheck: rules.Recheck{OK: time.Hour, Broken: time.Hour, Unverifiable: time.Hour}}
	first := completePass(t, db, cfg, srv.URL+"/")
	second := completePass(t, db, cfg, srv.URL+"/")
	for _, p := range []string{"/sub", "/sub/", "/only-from-sub", "/a", "/c", "/chap1/", "/deep-missing", "/behind-img", "/img/bg.png"} {
		if _, ok := second[srv.URL+p]; !ok {
			t.Errorf("%s: in the first pass (%t) but not in the second", p, first[srv.URL+p].URL != "")
		}
	}
	for u := range first {
		if _, ok := second[u]; !ok {
			t.Errorf("%s: in the first pass, not in the second", u)
		}
	}
	for u := range second {
		if _, ok := first[u]; !ok {
			t.Errorf("%s: in the second pass, not in the first", u)
		}
	}
}

// Third-party hosts that hang, and hosts whose names do not exist, never
// hold every worker: the site's own pages are all fetched while the
// third-party requests still hang, and a host that does not resolve settles
// all its URLs at once.
func TestThirdPartyHostsDoNotStarveTheSite(t *testing.T) {
	t.Parallel()
	verifyNoLeaks(t)
	if _, err := net.DefaultResolver.LookupHost(t.Context(), "nothing.invalid"); !isNotFound(err) {
		t.Skipf("the resolver here does not answer for .invalid names (%v)", err)
	}
	const ownPages = 20
	release := make(chan struct{})
	var hung sync.WaitGroup
	var slow []string
	for range 4 {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.NotFound(w, r)
				return
			}
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		t.Cleanup(srv.Close)
		slow = append(slow, srv.URL)
	}
	var ownMu sync.Mutex
	ownServed := map[string]bool{}
	allOwn := make(chan struct{})
	mux := http.NewServeMux()
	var home strings.Builder
	for i := range ownPages {
		fmt.Fprintf(&home, "<a href=\"/p/%d\">own</a>\n", i)
	}
	for _, s := range slow {
		for j := range 5 {
			fmt.Fprintf(&home, "<a href=\"%s/x%d\">slow</a>\n", s, j)
		}
	}
	for h := range 3 {
		for j := range 10 {
			fmt.Fprintf(&home, "<a href=\"http://dead%d.invalid/x%d\">dead</a>\n", h, j)
		}
	}
	mux.Handle("/{$}", page(home.String()))
	mux.HandleFunc("/p/{n}", func(w http.ResponseWriter, r *http.Request) {
		ownMu.Lock()
		ownServed[r.URL.Path] = true
		if len(ownServed) == ownPages {
			close(allOwn)
		}
		ownMu.Unlock()
		page(`own page`)(w, r)
	})
	own := httptest.NewServer(mux)
	t.Cleanup(own.Close)

	settings := func(string) throttle.Settings { return throttle.Settings{} }
	th := throttle.New(throttle.Config{Settings: settings, UserAgent: "linkpatrol-test"})
	engine, err := rules.New(rules.Config{Start: []string{own.URL + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	db := openDB(t)
	c := crawler.New(crawler.Config{Concurrency: 4, Timeout: time.Minute, Throttle: th, HostSettings: settings}, engine, db)
	done := make(chan crawler.Outcome, 1)
	hung.Add(1)
	go func() {
		defer hung.Done()
		_, out, err := c.Run(t.Context(), t.Context(), passOf(own.URL+"/"))
		if err != nil {
			t.Errorf("run: %v", err)
		}
		done <- out
	}()
	select {
	case <-allOwn:
	case <-done:
		t.Fatal("the pass ended while third-party requests hung")
	case <-time.After(time.Minute):
		t.Fatal("the site's own pages waited for hanging third-party hosts")
	}
	close(release)
	hung.Wait()
	if out := <-done; !out.Complete {
		t.Fatal("pass did not complete")
	}
	recs := records(t, db, 1) // the database's first pass
	for h := range 3 {
		for j := range 10 {
			u := fmt.Sprintf("http://dead%d.invalid/x%d", h, j)
			if rec := recs[u]; rec.Verdict != store.VerdictBroken || rec.Error != "dns" || !strings.Contains(rec.Note, "no such host") {
				t.Errorf("%s: got %s %q %q, want broken dns, no such host", u, rec.Verdict, rec.Error, rec.Note)
			}
		}
	}
}

func isNotFound(err error) bool {
	var dnsErr *net.DNSError
	return errors.As(err, &dnsErr) && dnsErr.IsNotFound
}

// The generated site with redirects and <link rel=prev/next>: every URL is
// requested once (redirect targets included), every page is parsed however
// it was met first, and the problems are exactly the site's broken links.
func TestGeneratedSiteWithRedirectsOncePerURL(t *testing.T) {
	t.Parallel()
	site := crawltest.NewSite(crawltest.SiteOptions{Pages: 400, Images: 2, BrokenEvery: 20, RedirectEvery: 3, RelNav: true, Seed: 12})
	srv := httptest.NewServer(site)
	t.Cleanup(srv.Close)
	want := site.Expected()
	r := runPass(t, crawler.Config{Concurrency: 8}, srv.URL+"/")
	if !r.outcome.Complete {
		t.Fatal("pass did not complete")
	}
	st := site.Stats()
	if st.RepeatedURLs != 0 || st.MaxPerURL > 2 {
		t.Errorf("%d URLs requested more than once with one method (most requests for one URL: %d)", st.RepeatedURLs, st.MaxPerURL)
	}
	if st.DistinctURLs != want.URLs {
		t.Errorf("%d distinct URLs requested, the site has %d", st.DistinctURLs, want.URLs)
	}
	parsed, redirects := 0, 0
	var broken []string
	for u, rec := range r.records {
		if rec.Parsed && !strings.HasPrefix(rec.ContentType, "text/css") {
			parsed++
		}
		if strings.Contains(u, "/r/") {
			redirects++
			if rec.Verdict != store.VerdictOK || rec.FinalURL == "" {
				t.Errorf("%s: %s, final %q", u, rec.Verdict, rec.FinalURL)
			}
		}
		if rec.Verdict.Problem() {
			broken = append(broken, strings.TrimPrefix(u, srv.URL))
		}
	}
	if parsed != want.Pages {
		t.Errorf("%d pages parsed, want all %d", parsed, want.Pages)
	}
	if redirects == 0 {
		t.Error("the site has no redirects")
	}
	var wantBroken []string
	for _, b := range want.Broken {
		wantBroken = append(wantBroken, b.URL)
	}
	slices.Sort(broken)
	if !slices.Equal(broken, wantBroken) {
		t.Errorf("problems %q, want the site's broken links %q", broken, wantBroken)
	}
}

// dnsFailer answers every request to a host under .invalid with "no such
// host", as the resolver does once it answers at all, and counts them.
type dnsFailer struct {
	mu    sync.Mutex
	tries map[string]int
}

func (f *dnsFailer) RoundTrip(r *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(r.URL.Hostname(), ".invalid") {
		return http.DefaultTransport.RoundTrip(r)
	}
	f.mu.Lock()
	f.tries[r.URL.Hostname()]++
	f.mu.Unlock()
	return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: r.URL.Hostname(), IsNotFound: true}}
}

// A name whose lookup before its first request did not settle it (the
// resolver timed out under load, or another transport does the lookups)
// and whose first request then finds it does not exist settles the rest of
// its URLs at once: not one request each, at the third-party rate (seen:
// 121 links to a name that does not resolve took two minutes).
func TestRequestThatFindsNoSuchHostSettlesItsHost(t *testing.T) {
	t.Parallel()
	var home strings.Builder
	for j := range 12 {
		fmt.Fprintf(&home, "<a href=\"http://gone.invalid/x%d\">dead</a>\n", j)
	}
	srv := httptest.NewServer(page(home.String()))
	t.Cleanup(srv.Close)
	f := &dnsFailer{tries: map[string]int{}}
	r := runPass(t, crawler.Config{Concurrency: 4, PerHost: 1, Transport: f}, srv.URL+"/")
	if !r.outcome.Complete {
		t.Fatal("pass did not complete")
	}
	for j := range 12 {
		u := fmt.Sprintf("http://gone.invalid/x%d", j)
		if rec := r.records[u]; rec.Verdict != store.VerdictBroken || rec.Error != "dns" {
			t.Errorf("%s: got %s %q, want broken dns", u, rec.Verdict, rec.Error)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := f.tries["gone.invalid"]; n != 1 {
		t.Errorf("%d requests to a host the first request found does not exist, want 1", n)
	}
}

// A stylesheet of the site is read for its url()s whichever way it is
// met, so it is fetched once, with GET: not checked with HEAD first and
// fetched again when it answers CSS (seen on every page of the generated
// site and of Sphinx docs: the one URL requested twice).
func TestSiteStylesheetIsRequestedOnce(t *testing.T) {
	t.Parallel()
	var c counter
	mux := http.NewServeMux()
	mux.Handle("/{$}", page(`<link rel="stylesheet" href="/s.css"><link rel="icon" href="/i.ico"><a href="/p">p</a>`))
	mux.Handle("/p", page(`<link rel="alternate stylesheet" href="/s.css">`))
	mux.HandleFunc("/s.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		fmt.Fprint(w, "body { background: url(/bg.png) }")
	})
	mux.HandleFunc("/bg.png", func(w http.ResponseWriter, r *http.Request) { w.Header().Set("Content-Type", "image/png") })
	mux.HandleFunc("/i.ico", func(w http.ResponseWriter, r *http.Request) { w.Header().Set("Content-Type", "image/x-icon") })
	srv := httptest.NewServer(c.wrap(mux))
	t.Cleanup(srv.Close)
	r := runPass(t, crawler.Config{Concurrency: 4}, srv.URL+"/")
	if !r.outcome.Complete {
		t.Fatal("pass did not complete")
	}
	if g, h := c.get("GET /s.css"), c.get("HEAD /s.css"); g != 1 || h != 0 {
		t.Errorf("the stylesheet got %d GET and %d HEAD, want one GET", g, h)
	}
	if h, g := c.get("HEAD /i.ico"), c.get("GET /i.ico"); h != 1 || g != 0 {
		t.Errorf("the icon got %d HEAD and %d GET, want one HEAD", h, g)
	}
	if rec := r.records[srv.URL+"/bg.png"]; rec.Verdict != store.VerdictOK {
		t.Errorf("the stylesheet's url() was not checked: %+v", rec)
	}
	if rec := r.records[srv.URL+"/s.css"]; rec.Verdict != store.VerdictOK || !rec.Parsed {
		t.Errorf("the stylesheet: %s, parsed %v", rec.Verdict, rec.Parsed)
	}
}

// A redirect to a URL an earlier run of the same pass resolved takes that
// URL's stored result, without requesting it again.
func TestRedirectToURLResolvedBeforeResume(t *testing.T) {
	t.Parallel()
	var c counter
	mux := http.NewServeMux()
	mux.Handle("/{$}", page(`<a href="/old">old</a>`))
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/gone", http.StatusMovedPermanently)
	})
	srv := httptest.NewServer(c.wrap(mux))
	t.Cleanup(srv.Close)
	db := openDB(t)
	start, old, gone := srv.URL+"/", srv.URL+"/old", srv.URL+"/gone"
	pass, err := db.BeginPass(store.Pass{StartURLs: []string{start}, Started: time.Now()}, []store.Task{{URL: start, Action: "parse"}})
	if err != nil {
		t.Fatal(err)
	}
	// The first run resolved the start page and /gone (linked from some
	// other page), and was stopped with /old still queued.
	err = db.Commit(pass.ID, []store.Result{
		{Record: store.URLRecord{URL: start, Pass: pass.ID, Action: "parse", Verdict: store.VerdictOK, Status: 200, Parsed: true},
			SetLinks: true, Links: []store.Link{{URL: old, Line: 1, Tag: "a", Attr: "href"}}, Enqueue: []store.Task{{URL: old, Action: "parse"}}},
		{Record: store.URLRecord{URL: gone, Pass: pass.ID, Action: "parse", Verdict: store.VerdictBroken, Status: 404}},
	})
	if err != nil {
		t.Fatal(err)
	}
	engine, err := rules.New(rules.Config{Start: []string{start}})
	if err != nil {
		t.Fatal(err)
	}
	_, out, err := crawler.New(crawler.Config{Concurrency: 2}, engine, db).Run(t.Context(), t.Context(), passOf(start))
	if err != nil || !out.Complete {
		t.Fatalf("run: complete %v, %v", out.Complete, err)
	}
	recs := records(t, db, pass.ID)
	if rec := recs[old]; rec.Verdict != store.VerdictBroken || rec.Status != 404 || rec.FinalURL != gone {
		t.Errorf("/old: %s %d final %q, want broken 404 at /gone", rec.Verdict, rec.Status, rec.FinalURL)
	}
	if n := c.get("GET /gone") + c.get("HEAD /gone"); n != 0 {
		t.Errorf("/gone requested %d times, want 0: it was resolved before the resume", n)
	}
}

// A file: link on a web page is broken unless the user said otherwise:
// --exclude (or a rule that skips or ignores it) silences it like any other
// URL. Debian's Python docs carry a file: canonical link on every page,
// and `--exclude '^file:'` left 526 of them broken.
func TestExcludedFileLinkOnWebPageIsSkipped(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(page(`<link rel=canonical href="file:///usr/share/doc/x.html"><a href="file:///etc/hosts">h</a>`))
	t.Cleanup(srv.Close)
	start := srv.URL + "/"
	engine, err := rules.New(rules.Config{Start: []string{start}, Exclude: []string{`^file:///usr/`}})
	if err != nil {
		t.Fatal(err)
	}
	db := openDB(t)
	pass, out, err := crawler.New(crawler.Config{Concurrency: 2}, engine, db).Run(t.Context(), t.Context(), passOf(start))
	if err != nil || !out.Complete {
		t.Fatalf("run: complete %v, %v", out.Complete, err)
	}
	recs := records(t, db, pass.ID)
	if rec := recs["file:///usr/share/doc/x.html"]; rec.Verdict != store.VerdictSkipped {
		t.Errorf("excluded file: link: got %s %q, want skipped", rec.Verdict, rec.Error)
	}
	if rec := recs["file:///etc/hosts"]; rec.Verdict != store.VerdictBroken || rec.Error != "file: link on a web page" {
		t.Errorf("file: link not excluded: got %s %q, want broken", rec.Verdict, rec.Error)
	}
}

// A stylesheet another stylesheet (or a <style> element) imports is read
// for its own url()s too, so it is fetched once, with GET, like one a
// <link rel=stylesheet> names: Sphinx's pydoctheme.css imports default.css,
// which imports classic.css, which imports basic.css, and each of those
// cost a HEAD and then a GET. A resource on a server that refuses HEAD
// still falls back to GET.
func TestImportedStylesheetIsRequestedOnce(t *testing.T) {
	t.Parallel()
	var c counter
	mux := http.NewServeMux()
	mux.Handle("/{$}", page(`<link rel="stylesheet" href="/a.css"><style>@import "/s.css";</style><img src="/nohead.png">`))
	css := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/css")
			fmt.Fprint(w, body)
		}
	}
	mux.Handle("/a.css", css(`@import url("b.css"); @import 'c.css' print; body { background: url(bg.png) }`))
	mux.Handle("/b.css", css(`p { background: url(/b.png) }`))
	mux.Handle("/c.css", css(`p { color: red }`))
	mux.Handle("/s.css", css(`p { color: blue }`))
	mux.HandleFunc("/bg.png", func(w http.ResponseWriter, r *http.Request) { w.Header().Set("Content-Type", "image/png") })
	mux.HandleFunc("/b.png", func(w http.ResponseWriter, r *http.Request) { w.Header().Set("Content-Type", "image/png") })
	mux.HandleFunc("/nohead.png", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "image/png")
	})
	srv := httptest.NewServer(c.wrap(mux))
	t.Cleanup(srv.Close)
	r := runPass(t, crawler.Config{Concurrency: 4}, srv.URL+"/")
	if !r.outcome.Complete {
		t.Fatal("pass did not complete")
	}
	for _, s := range []string{"/a.css", "/b.css", "/c.css", "/s.css"} {
		if g, h := c.get("GET "+s), c.get("HEAD "+s); g != 1 || h != 0 {
			t.Errorf("%s got %d GET and %d HEAD, want one GET", s, g, h)
		}
		if rec := r.records[srv.URL+s]; rec.Verdict != store.VerdictOK || !rec.Parsed {
			t.Errorf("%s: %s, parsed %v", s, rec.Verdict, rec.Parsed)
		}
	}
	for _, p := range []string{"/bg.png", "/b.png"} {
		if h, g := c.get("HEAD "+p), c.get("GET "+p); h != 1 || g != 0 {
			t.Errorf("%s got %d HEAD and %d GET, want one HEAD", p, h, g)
		}
	}
	if h, g := c.get("HEAD /nohead.png"), c.get("GET /nohead.png"); h != 1 || g != 1 {
		t.Errorf("an image whose server refuses HEAD got %d HEAD and %d GET, want one of each", h, g)
	}
	if rec := r.records[srv.URL+"/nohead.png"]; rec.Verdict != store.VerdictOK {
		t.Errorf("the image whose server refuses HEAD: %+v", rec)
	}
}

// A HEAD answer that would make a link a problem, from a server that may
// mishandle HEAD, is asked again with GET before any verdict: /hN answers
// HEAD with N and GET with 200, as some servers do (406: content
// negotiation done wrongly on HEAD, qa6 Q5).
func TestRefusedHeadFallsBackToGet(t *testing.T) {
	t.Parallel()
	statuses := []int{
		http.StatusBadRequest,
		http.StatusForbidden,
		http.StatusNotFound,
		http.StatusMethodNotAllowed,
		http.StatusNotAcceptable,
		http.StatusGone,
		http.StatusInternalServerError,
		http.StatusNotImplemented,
	}
	var c counter
	other := http.NewServeMux() // another site: its links are checked, not read
	other.HandleFunc("/{h}", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(strings.TrimPrefix(r.PathValue("h"), "h"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "image/png")
		if r.Method == http.MethodHead {
			w.WriteHeader(n)
		}
	})
	ext := httptest.NewServer(c.wrap(other))
	t.Cleanup(ext.Close)
	var links strings.Builder
	for _, s := range statuses {
		fmt.Fprintf(&links, `<a href="%s/h%d">%d</a>`, ext.URL, s, s)
	}
	mux := http.NewServeMux()
	mux.Handle("/{$}", page(links.String()))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	r := runPass(t, crawler.Config{Concurrency: 4}, srv.URL+"/")
	if !r.outcome.Complete {
		t.Fatal("pass did not complete")
	}
	for _, s := range statuses {
		p := fmt.Sprintf("/h%d", s)
		if h, g := c.get("HEAD "+p), c.get("GET "+p); h != 1 || g != 1 {
			t.Errorf("HEAD %d: %d HEAD and %d GET, want one of each", s, h, g)
		}
		if rec := r.records[ext.URL+p]; rec.Verdict != store.VerdictOK {
			t.Errorf("HEAD %d, GET 200: %s (%d), want ok", s, rec.Verdict, rec.Status)
		}
	}
}

// The next pass reads an unchanged page's links from the store, where a
// <link> to a stylesheet looks like one to an icon. A stylesheet the last
// pass read is still read with one conditional GET: a 304 when unchanged,
// its new body when changed, not a HEAD and then a GET.
func TestStoredStylesheetIsRequestedOnce(t *testing.T) {
	t.Parallel()
	var c counter
	var mu sync.Mutex
	bodies := map[string]string{
		"/":      `<link rel="stylesheet" href="/a.css"><link rel="icon" href="/i.ico">`,
		"/a.css": `@import "b.css";`,
		"/b.css": `p { color: red }`,
		"/i.ico": "ico",
	}
	types := map[string]string{"/": "text/html", "/a.css": "text/css", "/b.css": "text/css", "/i.ico": "image/x-icon"}
	srv := httptest.NewServer(c.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		body, ok := bodies[r.URL.Path]
		mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", types[r.URL.Path])
		w.Header().Set("ETag", strconv.Quote(strconv.Itoa(len(body))))
		if r.Header.Get("If-None-Match") == w.Header().Get("ETag") {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		fmt.Fprint(w, body)
	})))
	t.Cleanup(srv.Close)
	db := openDB(t)
	completePass(t, db, crawler.Config{}, srv.URL+"/")
	c.mu.Lock()
	c.hits = nil
	c.mu.Unlock()
	mu.Lock()
	bodies["/a.css"] = `@import "b.css"; body { background: url(bg.png) }`
	bodies["/b.css"] = `p { color: blue; font-weight: bold }`
	mu.Unlock()
	recs := completePass(t, db, crawler.Config{}, srv.URL+"/")
	if rec := recs[srv.URL+"/"]; !rec.Unchanged {
		t.Fatalf("the page did not answer 304: %+v", rec)
	}
	for _, s := range []string{"/a.css", "/b.css"} {
		if g, h := c.get("GET "+s), c.get("HEAD "+s); g != 1 || h != 0 {
			t.Errorf("%s, changed, got %d GET and %d HEAD, want one GET", s, g, h)
		}
		if rec := recs[srv.URL+s]; !rec.Parsed {
			t.Errorf("%s not read again: %+v", s, rec)
		}
	}
	if h, g := c.get("HEAD /i.ico"), c.get("GET /i.ico"); h != 1 || g != 0 {
		t.Errorf("the icon got %d HEAD and %d GET, want one HEAD", h, g)
	}
	if rec := recs[srv.URL+"/bg.png"]; rec.Verdict != store.VerdictBroken {
		t.Errorf("the changed stylesheet's new url() was not checked: %+v", rec)
	}
}
