package crawltest

import (
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// webCrawl is what a simple, correct, sequential checker started from every
// site of w finds: it GETs every URL once, parses every page of the web and
// follows no redirect (a 301 is a URL of its own).
func webCrawl(t *testing.T, w *Web) (c crawl, crossLinks int) {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	c = crawl{status: map[string]int{}, referrers: map[string][]string{}}
	from := map[string][]string{}
	queue := w.StartURLs()
	for _, s := range queue {
		c.status[s] = 0
	}
	for len(queue) > 0 {
		target := queue[0]
		queue = queue[1:]
		resp, err := client.Get(target)
		if err != nil {
			t.Fatalf("GET %s: %v", target, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("read %s: %v", target, err)
		}
		c.status[target] = resp.StatusCode
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			continue
		}
		c.pages++
		u, _ := url.Parse(target)
		for _, l := range pageLinks(t, u, body) {
			c.links++
			if l.Host != u.Host {
				crossLinks++
			}
			ls := l.String()
			from[ls] = append(from[ls], target)
			if _, ok := c.status[ls]; !ok {
				c.status[ls] = 0
				queue = append(queue, ls)
			}
		}
	}
	for u, status := range c.status {
		if status != http.StatusOK && status != http.StatusMovedPermanently {
			c.referrers[u] = from[u]
		}
	}
	return c, crossLinks
}

func TestWebMatchesItsExpected(t *testing.T) {
	t.Parallel()
	const sites, pages = 4, 120
	w := NewWeb(WebOptions{Sites: sites, Site: SiteOptions{Pages: pages, LinksPerPage: 8, Images: 1, BrokenEvery: 10, PeerRedirectEvery: 7, PageBytes: 1500}})
	defer w.Close()

	got, cross := webCrawl(t, w)
	exp := w.Expected()
	if got.pages != sites*pages || exp.Pages != sites*pages {
		t.Errorf("crawl parsed %d pages, Expected says %d, want %d", got.pages, exp.Pages, sites*pages)
	}
	if len(got.status) != exp.URLs || got.links != exp.Links {
		t.Errorf("crawl: %d URLs, %d links; Expected: %d URLs, %d links", len(got.status), got.links, exp.URLs, exp.Links)
	}
	// Every page links to a peer, and every seventh page redirects to one.
	if cross < sites*pages {
		t.Errorf("%d links cross hosts, want at least one a page (%d)", cross, sites*pages)
	}
	if len(exp.Broken) == 0 {
		t.Fatal("Expected lists no broken URL")
	}
	for _, b := range exp.Broken {
		if w.SiteOf(b.URL) < 0 {
			t.Errorf("broken %s is on no site of the web", b.URL)
		}
		if got.status[b.URL] != b.Status {
			t.Errorf("%s: crawl got %d, Expected says %d", b.URL, got.status[b.URL], b.Status)
		}
		var want []string
		for _, r := range b.Referrers {
			want = append(want, r.Page)
		}
		slices.Sort(want)
		slices.Sort(got.referrers[b.URL])
		if !slices.Equal(got.referrers[b.URL], want) {
			t.Errorf("%s: crawl found referrers %v, Expected says %v", b.URL, got.referrers[b.URL], want)
		}
		delete(got.referrers, b.URL)
	}
	for u := range got.referrers {
		t.Errorf("crawl found broken %s (status %d), Expected does not list it", u, got.status[u])
	}

	// The counters of every site saw each URL once, and together every URL.
	st := w.Stats()
	if st.Requests != int64(exp.URLs) || st.DistinctURLs != exp.URLs || st.RepeatedURLs != 0 || len(w.Repeated()) != 0 {
		t.Errorf("web stats %+v, want %d distinct requests, none repeated", st, exp.URLs)
	}
	for i, s := range w.Sites {
		if n := s.Stats().Requests; n < pages {
			t.Errorf("site %d (%s) got %d requests, want at least its %d pages", i, w.URL(i), n, pages)
		}
	}
	w.Reset()
	if st := w.Stats(); st.Requests != 0 {
		t.Errorf("after Reset: %+v", st)
	}
}

func TestPeerRedirectLeavesTheHost(t *testing.T) {
	t.Parallel()
	w := NewWeb(WebOptions{Sites: 3, Site: SiteOptions{Pages: 30, PeerRedirectEvery: 2}})
	defer w.Close()
	rec := get(t, w.Sites[0], "GET", "/x/4")
	loc := rec.Header().Get("Location")
	if rec.Code != http.StatusMovedPermanently || w.SiteOf(loc) <= 0 || !strings.HasSuffix(loc, "/p/4.html") {
		t.Errorf("/x/4: %d to %q, want 301 to page 4 of another site", rec.Code, loc)
	}
	if rec := get(t, w.Sites[0], "GET", "/x/30"); rec.Code != http.StatusNotFound {
		t.Errorf("/x/30 past the last page: %d, want 404", rec.Code)
	}
	if w.SiteOf(w.URL(2)+"/p/1.html") != 2 || w.SiteOf(w.URL(2)+"0/") != -1 || w.SiteOf("http://elsewhere.test/") != -1 {
		t.Error("SiteOf does not match by scheme, host and port")
	}
}

func TestMaxStartsIn(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := NewSite(SiteOptions{Pages: 2})
		if n := s.MaxStartsIn(time.Second); n != 0 {
			t.Errorf("no request yet: %d", n)
		}
		// Arrivals at 0, 0, 1s, 2.5s, 2.9s.
		for _, wait := range []time.Duration{0, 0, time.Second, 1500 * time.Millisecond, 400 * time.Millisecond} {
			time.Sleep(wait) // the fake clock of the bubble: no real wait
			get(t, s, "GET", "/")
		}
		for _, c := range []struct {
			window time.Duration
			want   int
		}{
			{time.Nanosecond, 2},         // the two at 0
			{time.Second, 2},             // a span shorter than 1s never holds 0 and 1s
			{time.Second + 1, 3},         // 0, 0, 1s
			{1500 * time.Millisecond, 3}, // 0, 0, 1s
			{2 * time.Second, 3},         // 0, 0, 1s, or 1s, 2.5s, 2.9s
			{2900 * time.Millisecond, 4},
			{time.Hour, 5},
		} {
			if n := s.MaxStartsIn(c.window); n != c.want {
				t.Errorf("MaxStartsIn(%v) = %d, want %d", c.window, n, c.want)
			}
		}
		s.Reset()
		if n := s.MaxStartsIn(time.Hour); n != 0 {
			t.Errorf("after Reset: %d", n)
		}
	})
}
