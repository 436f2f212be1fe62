package crawltest

import (
	"bytes"
	"context"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/net/html"
)

func get(t *testing.T, h http.Handler, method, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec
}

func TestSameSeedSameSite(t *testing.T) {
	t.Parallel()
	opt := SiteOptions{Pages: 300, Images: 4, BrokenEvery: 7, External: "http://127.0.0.2:8081", Seed: 42}
	a, b := NewSite(opt), NewSite(opt)
	other := opt
	other.Seed = 43
	c := NewSite(other)
	for _, path := range []string{"/", "/p/1.html", "/p/6.html", "/p/150.html", "/p/299.html"} {
		pa := get(t, a, "GET", path).Body.String()
		// Render other pages in between: a page must not depend on what
		// was served before it.
		get(t, b, "GET", "/p/200.html")
		pb := get(t, b, "GET", path).Body.String()
		if pa != pb {
			t.Errorf("%s differs between two sites with the same options", path)
		}
		if pc := get(t, c, "GET", path).Body.String(); pc == pa {
			t.Errorf("%s is the same with seeds 42 and 43", path)
		}
	}
	if ea, eb := a.Expected(), b.Expected(); !equalExpected(ea, eb) {
		t.Errorf("Expected differs between two sites with the same options")
	}
}

// A site small enough to keep its pages serves each, the first time and
// every time after, as rendered afresh; a large one keeps none.
func TestKeptPagesAreThePages(t *testing.T) {
	t.Parallel()
	s := NewSite(SiteOptions{Pages: 60, Images: 2, BrokenEvery: 5, Seed: 8})
	if s.rendered == nil {
		t.Fatal("a 60-page site keeps no pages")
	}
	var wg sync.WaitGroup
	for range 3 { // the first requests at once, then again
		for i := range s.opt.Pages {
			wg.Go(func() {
				var want bytes.Buffer
				s.render(&renderer{buf: &want, line: 1}, i)
				if got := get(t, s, "GET", pagePath(i)).Body.String(); got != want.String() {
					t.Errorf("%s served differs from its rendering", pagePath(i))
				}
			})
		}
		wg.Wait()
	}
	if big := NewSite(SiteOptions{Pages: 10000}); big.rendered != nil {
		t.Error("a 10,000-page site keeps its pages")
	}
}

func equalExpected(a, b Expected) bool {
	return a.Pages == b.Pages && a.URLs == b.URLs && a.Links == b.Links &&
		slices.EqualFunc(a.Broken, b.Broken, func(x, y BrokenURL) bool {
			return x.URL == y.URL && x.Status == y.Status && slices.Equal(x.Referrers, y.Referrers)
		})
}

func TestPageSize(t *testing.T) {
	t.Parallel()
	for _, want := range []int{2000, 6000, 20000} {
		s := NewSite(SiteOptions{Pages: 100, PageBytes: want})
		for _, path := range []string{"/", "/p/50.html"} {
			n := get(t, s, "GET", path).Body.Len()
			if n < want || n > want+want/4+1500 {
				t.Errorf("PageBytes %d: %s is %d bytes", want, path, n)
			}
		}
	}
}

// pageLinks returns every URL in page's a/link[href], img/script/source[src]
// and srcset candidates, resolved against base, fragments dropped. Links in
// comments and non-HTTP schemes are not links.
func pageLinks(t *testing.T, base *url.URL, body []byte) []*url.URL {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse %s: %v", base, err)
	}
	var refs []string
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		for _, a := range n.Attr {
			switch {
			case a.Key == "href" && (n.Data == "a" || n.Data == "link"),
				a.Key == "src" && (n.Data == "img" || n.Data == "script" || n.Data == "source"):
				refs = append(refs, a.Val)
			case a.Key == "srcset":
				for cand := range strings.SplitSeq(a.Val, ",") {
					if f := strings.Fields(cand); len(f) > 0 {
						refs = append(refs, f[0])
					}
				}
			}
		}
	}
	var out []*url.URL
	for _, ref := range refs {
		u, err := base.Parse(ref)
		if err != nil {
			t.Fatalf("%s: bad link %q: %v", base, ref, err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			continue
		}
		u.Fragment = ""
		out = append(out, u)
	}
	return out
}

// The sizes are the shapes of the tree that makes every page reachable
// (fanout): one page; a chain (fan-out 1, with and without random links
// beside it); and a tree of fan-out 5 (the default 20 links) four levels
// deep (the root, 5, 25 and 125 pages, and 14 of the fourth level). More
// pages only add links of the same kinds, and a parse each under -race.
func TestEveryPageReachable(t *testing.T) {
	t.Parallel()
	for _, opt := range []SiteOptions{
		{Pages: 1},
		{Pages: 2, LinksPerPage: 1},
		{Pages: 40, LinksPerPage: 1},
		{Pages: 100, LinksPerPage: 3, Seed: 9},
		{Pages: 170, Images: 2, BrokenEvery: 5},
	} {
		t.Run(strconv.Itoa(opt.Pages)+"x"+strconv.Itoa(opt.LinksPerPage), func(t *testing.T) {
			s := NewSite(opt)
			base, _ := url.Parse("http://site.test/")
			seen := map[string]bool{"/": true}
			queue := []string{"/"}
			pages := 0
			for len(queue) > 0 {
				path := queue[0]
				queue = queue[1:]
				rec := get(t, s, "GET", path)
				if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
					continue
				}
				pages++
				for _, u := range pageLinks(t, base.ResolveReference(&url.URL{Path: path}), rec.Body.Bytes()) {
					if u.Host == base.Host && !seen[u.Path] {
						seen[u.Path] = true
						queue = append(queue, u.Path)
					}
				}
			}
			if pages != opt.Pages {
				t.Errorf("reached %d pages from /, want %d", pages, opt.Pages)
			}
		})
	}
}

// crawl is what a simple, correct, sequential checker finds: it parses every
// HTML page on start's host and sends HEAD to every other host.
type crawl struct {
	pages     int
	links     int
	status    map[string]int      // every URL requested
	referrers map[string][]string // broken URL → referring pages, one per link
}

func simpleCrawl(t *testing.T, client *http.Client, start string) crawl {
	t.Helper()
	root, err := url.Parse(start)
	if err != nil {
		t.Fatal(err)
	}
	c := crawl{status: map[string]int{}, referrers: map[string][]string{}}
	from := map[string][]string{}
	queue := []string{root.String()}
	c.status[root.String()] = 0
	for len(queue) > 0 {
		target := queue[0]
		queue = queue[1:]
		u, _ := url.Parse(target)
		method := "GET"
		if u.Host != root.Host {
			method = "HEAD"
		}
		req, _ := http.NewRequest(method, target, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, target, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("read %s: %v", target, err)
		}
		c.status[target] = resp.StatusCode
		if resp.StatusCode != http.StatusOK || method != "GET" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			continue
		}
		c.pages++
		for _, l := range pageLinks(t, u, body) {
			c.links++
			ls := l.String()
			from[ls] = append(from[ls], target)
			if _, ok := c.status[ls]; !ok {
				c.status[ls] = 0
				queue = append(queue, ls)
			}
		}
	}
	for u, status := range c.status {
		if status != http.StatusOK {
			c.referrers[u] = from[u]
		}
	}
	return c
}

func TestExpectedMatchesSimpleCrawl(t *testing.T) {
	t.Parallel()
	// More than the 100 external targets a site links to at most, and
	// enough broken pages (10) for several referrers of each missing one
	// and for both forms of broken link (one line, several lines).
	const pages = 400
	ext := NewSite(SiteOptions{Pages: pages})
	extSrv := httptest.NewServer(ext)
	defer extSrv.Close()
	site := NewSite(SiteOptions{Pages: pages, Images: 3, BrokenEvery: 40, External: extSrv.URL, Seed: 5})
	srv := httptest.NewServer(site)
	defer srv.Close()

	got := simpleCrawl(t, srv.Client(), srv.URL+"/")
	exp := site.Expected()

	if got.pages != exp.Pages {
		t.Errorf("crawl parsed %d pages, Expected says %d", got.pages, exp.Pages)
	}
	if len(got.status) != exp.URLs {
		t.Errorf("crawl requested %d URLs, Expected says %d", len(got.status), exp.URLs)
	}
	if got.links != exp.Links {
		t.Errorf("crawl saw %d links, Expected says %d", got.links, exp.Links)
	}
	if len(exp.Broken) != pages/40/4 {
		t.Errorf("Expected lists %d broken URLs, want %d", len(exp.Broken), pages/40/4)
	}
	for _, b := range exp.Broken {
		abs := srv.URL + b.URL
		if got.status[abs] != b.Status {
			t.Errorf("%s: crawl got status %d, Expected says %d", abs, got.status[abs], b.Status)
		}
		var want []string
		for _, r := range b.Referrers {
			want = append(want, srv.URL+r.Page)
		}
		// The crawl meets referrers in BFS order, Expected lists them by page.
		slices.Sort(want)
		slices.Sort(got.referrers[abs])
		if !slices.Equal(got.referrers[abs], want) {
			t.Errorf("%s: crawl found referrers %v, Expected says %v", abs, got.referrers[abs], want)
		}
		delete(got.referrers, abs)
	}
	for u := range got.referrers {
		t.Errorf("crawl found broken %s (status %d), Expected does not list it", u, got.status[u])
	}

	// The simple crawl asks for every URL once, so the counters must say so.
	st := site.Stats()
	local := 0
	for u := range got.status {
		if strings.HasPrefix(u, srv.URL) {
			local++
		}
	}
	if st.Requests != int64(local) || st.DistinctURLs != local || st.RepeatedURLs != 0 || st.MaxPerURL != 1 {
		t.Errorf("site stats %+v, want %d requests of distinct URLs", st, local)
	}
	est := ext.Stats()
	if est.Requests != int64(len(got.status)-local) || est.ByMethod["HEAD"] != est.Requests {
		t.Errorf("external stats %+v, want %d HEAD requests", est, len(got.status)-local)
	}
}

// linkOnLine matches the URLs that can start on a line: an href, src or
// srcset attribute, or a srcset candidate continuing on its own line.
var linkOnLine = regexp.MustCompile(`(?:href|src|srcset)="([^"\s]+)|^\s+(\S+) 2x"`)

// TestLinkLines checks the line Expected gives every link, the DESIGN.md
// contract: the line where the attribute (or srcset candidate) starts.
func TestLinkLines(t *testing.T) {
	t.Parallel()
	s := NewSite(SiteOptions{Pages: 150, Images: 5, BrokenEvery: 3, External: "http://127.0.0.2:8081"})
	base, _ := url.Parse("http://site.test/")
	checked := 0
	for i := range s.opt.Pages {
		page := base.ResolveReference(&url.URL{Path: pagePath(i)})
		var buf bytes.Buffer
		rd := renderer{buf: &buf, line: 1}
		type link struct {
			target string
			line   int
		}
		var links []link
		rd.onLink = func(target string, line int) { links = append(links, link{target, line}) }
		s.render(&rd, i)
		lines := strings.Split(buf.String(), "\n")
		if rd.line != len(lines) {
			t.Fatalf("%s: renderer counted %d lines, page has %d", page, rd.line, len(lines))
		}
		for _, l := range links {
			text := lines[l.line-1]
			found := false
			for _, m := range linkOnLine.FindAllStringSubmatch(text, -1) {
				u, err := page.Parse(m[1] + m[2])
				if err != nil {
					t.Fatalf("%s line %d: %v", page, l.line, err)
				}
				u.Fragment = ""
				want := l.target
				if strings.HasPrefix(want, "/") {
					want = base.ResolveReference(&url.URL{Path: want}).String()
				}
				found = found || u.String() == want
			}
			if !found {
				t.Errorf("%s line %d is %q: no link to %s starts there", page, l.line, text, l.target)
			}
			checked++
		}
	}
	if checked < 150*20 {
		t.Errorf("checked only %d links", checked)
	}
}

func TestResponses(t *testing.T) {
	t.Parallel()
	s := NewSite(SiteOptions{Pages: 100, Images: 1}) // an image pool of 10
	tests := []struct {
		method, path string
		status       int
		ctype        string
	}{
		{"GET", "/", 200, "text/html; charset=utf-8"},
		{"GET", "/p/1.html", 200, "text/html; charset=utf-8"},
		{"GET", "/p/99.html", 200, "text/html; charset=utf-8"},
		{"HEAD", "/p/99.html", 200, "text/html; charset=utf-8"},
		{"GET", "/p/100.html", 404, "text/html; charset=utf-8"},
		{"GET", "/p/0.html", 404, "text/html; charset=utf-8"},
		{"GET", "/p/01.html", 404, "text/html; charset=utf-8"},
		{"GET", "/p/-1.html", 404, "text/html; charset=utf-8"},
		{"GET", "/p/1.htm", 404, "text/html; charset=utf-8"},
		{"GET", "/index.html", 404, "text/html; charset=utf-8"},
		{"GET", "/img/9.png", 200, "image/png"},
		{"HEAD", "/img/0.png", 200, "image/png"},
		{"GET", "/img/10.png", 404, "text/html; charset=utf-8"},
		{"GET", "/static/site.css", 200, "text/css; charset=utf-8"},
		{"GET", "/static/site.js", 200, "text/javascript; charset=utf-8"},
		{"GET", "/robots.txt", 200, "text/plain; charset=utf-8"},
		{"GET", commentedPath, 404, "text/html; charset=utf-8"},
		{"GET", "/missing/0.html", 404, "text/html; charset=utf-8"},
		{"POST", "/", 405, "text/plain; charset=utf-8"},
	}
	for _, tt := range tests {
		rec := get(t, s, tt.method, tt.path)
		if rec.Code != tt.status || rec.Header().Get("Content-Type") != tt.ctype {
			t.Errorf("%s %s = %d %q, want %d %q", tt.method, tt.path, rec.Code, rec.Header().Get("Content-Type"), tt.status, tt.ctype)
		}
		if tt.method == "HEAD" {
			full := get(t, s, "GET", tt.path)
			if rec.Body.Len() != 0 || rec.Header().Get("Content-Length") != strconv.Itoa(full.Body.Len()) {
				t.Errorf("HEAD %s: body %d bytes, Content-Length %s; GET has %d bytes",
					tt.path, rec.Body.Len(), rec.Header().Get("Content-Length"), full.Body.Len())
			}
		}
	}
	if _, err := png.Decode(get(t, s, "GET", "/img/3.png").Body); err != nil {
		t.Errorf("image is not a PNG: %v", err)
	}
}

// TestRepeatedKeepsEachSpelling: the site's own pages and images are counted
// apart from other URIs (see counters), yet every URI is still the URI as
// requested: a query or another spelling of a page's number is a URI of its
// own, and Repeated names each by its spelling.
func TestRepeatedKeepsEachSpelling(t *testing.T) {
	t.Parallel()
	s := NewSite(SiteOptions{Pages: 5, Images: 1})
	for _, r := range []struct{ method, uri string }{
		{"GET", "/p/1.html"}, {"GET", "/p/1.html"}, {"GET", "/p/1.html?x"},
		{"HEAD", "/img/0.png"}, {"GET", "/img/0.png"},
		{"GET", "/p/01.html"}, {"GET", "/p/01.html"},
		{"GET", "/"}, {"HEAD", "/"}, {"HEAD", "/"},
	} {
		get(t, s, r.method, r.uri)
	}
	st := s.Stats()
	if want := []string{"/", "/p/01.html", "/p/1.html"}; !slices.Equal(s.Repeated(), want) || st.RepeatedURLs != 3 {
		t.Errorf("Repeated %q (%d), want %q", s.Repeated(), st.RepeatedURLs, want)
	}
	if st.DistinctURLs != 5 || st.MaxPerURL != 3 {
		t.Errorf("%d distinct URIs, at most %d requests for one; want 5 and 3", st.DistinctURLs, st.MaxPerURL)
	}
	s.Reset()
	if st := s.Stats(); len(s.Repeated()) != 0 || st.DistinctURLs != 0 || st.MaxPerURL != 0 {
		t.Errorf("after Reset: Repeated %q, %+v", s.Repeated(), st)
	}
}

func TestCountersUnderConcurrency(t *testing.T) {
	t.Parallel()
	s := NewSite(SiteOptions{Pages: 50, Images: 1})
	srv := httptest.NewServer(s)
	defer srv.Close()
	paths := []string{"/", "/p/1.html", "/p/2.html", "/img/0.png", "/nowhere", "/p/3.html?q=1"}
	// Sixteen clients at once make the races; more rounds only repeat them.
	const workers, rounds = 16, 4

	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		bytes int64
	)
	for range workers {
		wg.Go(func() {
			var n int64
			for range rounds {
				for _, p := range paths {
					for _, m := range []string{"GET", "HEAD"} {
						req, _ := http.NewRequest(m, srv.URL+p, nil)
						resp, err := srv.Client().Do(req)
						if err != nil {
							t.Error(err)
							return
						}
						k, _ := io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						n += k
					}
				}
			}
			mu.Lock()
			bytes += n
			mu.Unlock()
		})
	}
	wg.Wait()

	st := s.Stats()
	perMethod := int64(workers * rounds * len(paths))
	want := Stats{
		Requests:     2 * perMethod,
		ByMethod:     map[string]int64{"GET": perMethod, "HEAD": perMethod},
		Bytes:        bytes,
		MaxInFlight:  st.MaxInFlight,
		DistinctURLs: len(paths),
		RepeatedURLs: len(paths),
		MaxPerURL:    2 * workers * rounds,
	}
	if st.Requests != want.Requests || st.Bytes != want.Bytes || st.DistinctURLs != want.DistinctURLs ||
		st.RepeatedURLs != want.RepeatedURLs || st.MaxPerURL != want.MaxPerURL ||
		st.ByMethod["GET"] != perMethod || st.ByMethod["HEAD"] != perMethod || len(st.ByMethod) != 2 {
		t.Errorf("stats %+v, want %+v", st, want)
	}
	if st.MaxInFlight < 1 || st.MaxInFlight > workers {
		t.Errorf("MaxInFlight %d, want 1..%d", st.MaxInFlight, workers)
	}

	s.Reset()
	if st := s.Stats(); st.Requests != 0 || st.Bytes != 0 || st.DistinctURLs != 0 || len(st.ByMethod) != 0 || st.MaxInFlight != 0 || st.MeanInFlight != 0 {
		t.Errorf("after Reset: %+v", st)
	}
}

func TestLatencyAndPeakInFlight(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := NewSite(SiteOptions{Pages: 10, Latency: 20 * time.Millisecond})
		start := time.Now()
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				if rec := get(t, s, "GET", pagePath(i)); rec.Code != http.StatusOK {
					t.Errorf("%s: %d", pagePath(i), rec.Code)
				}
			})
		}
		synctest.Wait() // all eight are waiting out their latency
		if st := s.Stats(); st.MaxInFlight != 8 || st.Requests != 8 || st.Bytes != 0 {
			t.Errorf("while waiting: %+v, want 8 in flight and nothing written", st)
		}
		wg.Wait()
		if d := time.Since(start); d != 20*time.Millisecond {
			t.Errorf("eight concurrent requests took %v, want one latency of 20ms", d)
		}
		get(t, s, "GET", "/")
		if st := s.Stats(); st.MaxInFlight != 8 || st.Requests != 9 {
			t.Errorf("after a lone request: %+v, want peak 8 of 9 requests", st)
		}
		// Nine requests of 20ms each over 40ms: 4.5 in flight on average.
		if st := s.Stats(); st.MeanInFlight != 4.5 {
			t.Errorf("mean in flight %v, want 4.5", st.MeanInFlight)
		}

		// A client that gives up during the latency gets nothing, and the
		// site stops counting it as in flight.
		ctx, cancel := context.WithCancel(context.Background())
		rec := httptest.NewRecorder()
		done := make(chan struct{})
		go func() {
			s.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, "GET", "/", nil))
			close(done)
		}()
		synctest.Wait()
		cancel()
		<-done
		if rec.Body.Len() != 0 || s.counts.inFlight.Load() != 0 {
			t.Errorf("cancelled request: %d bytes written, %d in flight", rec.Body.Len(), s.counts.inFlight.Load())
		}
	})
}

// FuzzServePath checks that no request path panics the site and that a page
// is only ever served under its one canonical URL.
func FuzzServePath(f *testing.F) {
	for _, p := range []string{"/", "/p/1.html", "/p/01.html", "/img/3.png", "/p/99999999999999999999.html", "/p/.html", "/%00"} {
		f.Add(p)
	}
	s := NewSite(SiteOptions{Pages: 100, Images: 2, PageBytes: 500})
	f.Fuzz(func(t *testing.T, path string) {
		s.Reset() // fuzzing sends millions of distinct paths
		req := &http.Request{Method: "GET", URL: &url.URL{Path: path}, Header: http.Header{}}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req.WithContext(context.Background()))
		if rec.Code != http.StatusOK && rec.Code != http.StatusNotFound {
			t.Fatalf("%q: status %d", path, rec.Code)
		}
		if i, ok := s.pageIndex(path); ok && pagePath(i) != path {
			t.Fatalf("%q served as page %d, whose URL is %s", path, i, pagePath(i))
		}
	})
}

func BenchmarkServePage(b *testing.B) {
	s := NewSite(SiteOptions{Pages: 10000, Images: 3, BrokenEvery: 100})
	req := httptest.NewRequest("GET", "/p/4321.html", nil)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	b.SetBytes(int64(rec.Body.Len()))
	b.ReportAllocs()
	for b.Loop() {
		rec.Body.Reset()
		s.ServeHTTP(rec, req)
	}
}

// BenchmarkServeEachOnce serves every page of a site once, as a crawl asks
// for them: the harness's own cost per page must not grow with the site, or
// scripts/bench.sh's 100,000-page wall would charge the checker for it.
func BenchmarkServeEachOnce(b *testing.B) {
	for _, pages := range []int{10000, 100000} {
		b.Run(strconv.Itoa(pages), func(b *testing.B) {
			for b.Loop() {
				s := NewSite(SiteOptions{Pages: pages, BrokenEvery: 100})
				for i := range pages {
					s.ServeHTTP(discardResponse{http.Header{}}, httptest.NewRequest("GET", pagePath(i), nil))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*pages), "us/page")
		})
	}
}

// discardResponse is a ResponseWriter that keeps nothing, so that only the
// site's cost is measured.
type discardResponse struct{ h http.Header }

func (d discardResponse) Header() http.Header         { return d.h }
func (d discardResponse) Write(b []byte) (int, error) { return len(b), nil }
func (d discardResponse) WriteHeader(int)             {}

func BenchmarkExpected(b *testing.B) {
	s := NewSite(SiteOptions{Pages: 10000, Images: 3, BrokenEvery: 100})
	for b.Loop() {
		s.Expected()
	}
}
