package crawler_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// sitemapSite is a site whose start page links to one page only; every
// other page is listed in sitemaps: an index naming a plain sitemap and a
// gzip'd one, and a third sitemap named only by robots.txt.
type sitemapSite struct {
	srv *httptest.Server
	c   counter
	// hang makes /sitemap2.xml.gz wait for the client to give up, and
	// reports on hanging when it starts.
	hang    atomic.Bool
	hanging chan struct{}
	// pageHit is told the path of every page the sitemaps list.
	pageHit chan string
}

const sitemap1 = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>%[1]s/hidden1</loc></url>
  <url><loc>%[1]s/hidden2</loc></url>
  <url>
    <loc>%[1]s/missing</loc>
  </url>
  <url><loc>%[1]s/linked</loc></url>
</urlset>
`

func newSitemapSite(t *testing.T) *sitemapSite {
	t.Helper()
	s := &sitemapSite{hanging: make(chan struct{}, 4), pageHit: make(chan string, 64)}
	origin := func(r *http.Request) string { return "http://" + r.Host }
	xmlDoc := func(format string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprintf(w, format, origin(r))
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "User-agent: *\nDisallow: /private/\nSitemap: %s/robots-map.xml\n", origin(r))
	})
	mux.Handle("/{$}", page(`<a href="/linked">linked</a>`))
	mux.Handle("/linked", page(`linked from the start page`))
	mux.HandleFunc("/sitemap_index.xml", xmlDoc(`<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>%[1]s/sitemap1.xml</loc></sitemap>
  <sitemap><loc>%[1]s/sitemap2.xml.gz</loc></sitemap>
</sitemapindex>`))
	mux.HandleFunc("/sitemap1.xml", xmlDoc(sitemap1))
	mux.HandleFunc("/sitemap2.xml.gz", func(w http.ResponseWriter, r *http.Request) {
		if s.hang.Load() {
			s.hanging <- struct{}{}
			<-r.Context().Done()
			return
		}
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		fmt.Fprintf(zw, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%s/hidden3</loc></url></urlset>`, origin(r))
		zw.Close()
		w.Header().Set("Content-Type", "application/x-gzip")
		w.Write(buf.Bytes())
	})
	mux.HandleFunc("/robots-map.xml", xmlDoc(`<urlset><url><loc>%s/from-robots</loc></url></urlset>`))
	listed := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			select {
			case s.pageHit <- r.URL.Path:
			default:
			}
			page(body)(w, r)
		}
	}
	mux.Handle("/hidden1", listed(`<a href="/deep">only hidden1 links here</a>`))
	mux.Handle("/hidden2", listed(`hidden 2`))
	mux.Handle("/hidden3", listed(`hidden 3, from the gzip'd sitemap`))
	mux.Handle("/deep", page(`deep`))
	mux.Handle("/from-robots", listed(`named by robots.txt only`))
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		select {
		case s.pageHit <- r.URL.Path:
		default:
		}
		http.NotFound(w, r)
	})
	s.srv = httptest.NewServer(s.c.wrap(mux))
	t.Cleanup(s.srv.Close)
	return s
}

// seededPass runs the open pass of db to its end or to stop, or begins one
// from start; it returns every record of the pass.
func seededPass(t *testing.T, db *store.DB, cfg crawler.Config, stop context.Context, start string) (crawler.Outcome, map[string]store.URLRecord) {
	t.Helper()
	engine, err := rules.New(rules.Config{Start: []string{start}})
	if err != nil {
		t.Fatal(err)
	}
	return seededPassWith(t, db, cfg, engine, stop, start)
}

// seededPassWith is seededPass with the rules of engine.
func seededPassWith(t *testing.T, db *store.DB, cfg crawler.Config, engine *rules.Engine, stop context.Context, start string) (crawler.Outcome, map[string]store.URLRecord) {
	t.Helper()
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	pass, out, err := crawler.New(cfg, engine, db).Run(stop, context.Background(), passOf(start))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	recs := make(map[string]store.URLRecord)
	if err := db.Records(pass.ID, func(r *store.URLRecord) error { recs[r.URL] = *r; return nil }); err != nil {
		t.Fatal(err)
	}
	return out, recs
}

func TestSitemapsSeedUnlinkedPages(t *testing.T) {
	t.Parallel()
	verifyNoLeaks(t)
	s := newSitemapSite(t)
	base := s.srv.URL
	db := openDB(t)
	out, recs := seededPass(t, db, crawler.Config{Sitemaps: []string{base + "/sitemap_index.xml"}}, context.Background(), base+"/")
	if !out.Complete {
		t.Fatal("pass did not complete")
	}
	for path, want := range map[string]struct {
		verdict store.Verdict
		action  string
	}{
		"/sitemap_index.xml": {store.VerdictOK, "sitemap"},
		"/sitemap1.xml":      {store.VerdictOK, "sitemap"},
		"/sitemap2.xml.gz":   {store.VerdictOK, "sitemap"},
		"/hidden1":           {store.VerdictOK, "parse"},
		"/hidden2":           {store.VerdictOK, "parse"},
		"/hidden3":           {store.VerdictOK, "parse"},
		"/deep":              {store.VerdictOK, "parse"}, // linked only from a page the sitemap listed
		"/missing":           {store.VerdictBroken, "parse"},
		"/linked":            {store.VerdictOK, "parse"},
	} {
		rec, ok := recs[base+path]
		if !ok {
			t.Errorf("%s: not crawled", path)
			continue
		}
		if rec.Verdict != want.verdict || rec.Action != want.action {
			t.Errorf("%s: %s/%s, want %s/%s (%+v)", path, rec.Verdict, rec.Action, want.verdict, want.action, rec)
		}
	}
	if _, ok := recs[base+"/from-robots"]; ok {
		t.Error("robots.txt's sitemap was read without RobotsSitemaps")
	}
	if !recs[base+"/hidden1"].Parsed || recs[base+"/sitemap1.xml"].Parsed {
		t.Error("a page from a sitemap is parsed; the sitemap itself is not a page")
	}
	for _, key := range []string{"GET /sitemap_index.xml", "GET /sitemap1.xml", "GET /sitemap2.xml.gz", "GET /linked"} {
		if n := s.c.get(key); n != 1 {
			t.Errorf("%s: %d requests, want 1", key, n)
		}
	}
	// The sitemap's entries are its links, with their lines, so the report
	// can say where a broken URL was listed.
	links, err := db.Links(base + "/sitemap1.xml")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range links {
		got = append(got, fmt.Sprintf("%s:%d:%s/%s", strings.TrimPrefix(l.URL, base), l.Line, l.Tag, l.Attr))
	}
	if want := "/hidden1:3:url/loc /hidden2:4:url/loc /missing:6:url/loc /linked:8:url/loc"; strings.Join(got, " ") != want {
		t.Errorf("sitemap1's links: %s, want %s", strings.Join(got, " "), want)
	}
	links, _ = db.Links(base + "/sitemap_index.xml")
	if len(links) != 2 || links[0].Tag != "sitemap" {
		t.Errorf("index links %+v, want two tagged sitemap", links)
	}
}

func TestSitemapLimit(t *testing.T) {
	t.Parallel()
	s := newSitemapSite(t)
	base := s.srv.URL
	_, recs := seededPass(t, openDB(t), crawler.Config{Sitemaps: []string{base + "/sitemap_index.xml"}, SitemapLimit: 2}, context.Background(), base+"/")
	taken := 0
	for _, p := range []string{"/hidden1", "/hidden2", "/hidden3", "/missing"} {
		if _, ok := recs[base+p]; ok {
			taken++
		}
	}
	if taken > 2 {
		t.Errorf("%d URLs taken from sitemaps, the limit is 2", taken)
	}
	if !strings.Contains(recs[base+"/sitemap1.xml"].Note, "lists 2 entries more than the most a pass takes from sitemaps (2, --sitemap-limit)") {
		t.Errorf("sitemap1 lists 4 URLs and the limit is 2, but its note says %q", recs[base+"/sitemap1.xml"].Note)
	}
	// Every entry not taken is counted on its sitemap's record, for the
	// report's PARTLY CHECKED line (qa5 N10): those past the limit in the
	// file (never stored) and those over the pass's total.
	notTaken := 0
	for _, rec := range recs {
		notTaken += rec.NotTaken
	}
	t.Logf("not taken: sitemap1 %d, sitemap2 %d", recs[base+"/sitemap1.xml"].NotTaken, recs[base+"/sitemap2.xml.gz"].NotTaken)
	if recs[base+"/sitemap1.xml"].NotTaken < 2 || notTaken < 2 {
		t.Errorf("%d entries counted as not taken (sitemap1: %d), want at least the 2 past sitemap1's limit", notTaken, recs[base+"/sitemap1.xml"].NotTaken)
	}
	if _, ok := recs[base+"/linked"]; !ok {
		t.Error("the limit must not stop pages found by links")
	}
}

func TestRobotsSitemaps(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		robots   bool
		throttle bool
		ignore   bool // the host's robots.txt rules are ignored; its Sitemap: lines are still read
		want     bool
	}{
		{"off", false, true, false, false},
		{"on", true, true, false, true},
		{"on, robots.txt ignored", true, true, true, true},
		{"on, no throttle", true, false, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSitemapSite(t)
			cfg := crawler.Config{RobotsSitemaps: tt.robots, UserAgent: "linkpatrol-test"}
			if tt.throttle {
				settings := func(string) throttle.Settings { return throttle.Settings{IgnoreRobots: tt.ignore} }
				cfg.Throttle = throttle.New(throttle.Config{Settings: settings, UserAgent: cfg.UserAgent})
				cfg.HostSettings = settings
			}
			out, recs := seededPass(t, openDB(t), cfg, context.Background(), s.srv.URL+"/")
			if !out.Complete {
				t.Fatal("pass did not complete")
			}
			if _, got := recs[s.srv.URL+"/from-robots"]; got != tt.want {
				t.Errorf("page from robots.txt's sitemap crawled: %v, want %v", got, tt.want)
			}
			if n := s.c.get("GET /robots.txt"); tt.robots && n != 1 {
				t.Errorf("robots.txt fetched %d times, want once", n)
			}
			if n := s.c.get("GET /robots-map.xml"); (n == 1) != tt.want {
				t.Errorf("robots.txt's sitemap fetched %d times", n)
			}
		})
	}
}

func TestFailingSitemapsAreRecorded(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.Handle("/{$}", page(`home`))
	mux.Handle("/page", page(`<a href="/">a page, not a sitemap</a>`))
	mux.Handle("/listed", page(`listed before the syntax error`))
	mux.HandleFunc("/broken.xml", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "<urlset>\n<url><loc>http://%s/listed</loc></url>\n<url><loc>http://%s/never</lo></url>\n", r.Host, r.Host)
	})
	mux.HandleFunc("/hang.xml", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	maps := []string{srv.URL + "/gone.xml", srv.URL + "/page", srv.URL + "/broken.xml", srv.URL + "/hang.xml"}
	// The pass's timeout must be long enough for every answer on a loaded
	// machine, beside the other tests; /hang.xml waits out a rule's, 1 s.
	engine, err := rules.New(rules.Config{Start: []string{srv.URL + "/"},
		Rules: []rules.Rule{{Regex: `/hang\.xml$`, Timeout: "1s"}}})
	if err != nil {
		t.Fatal(err)
	}
	out, recs := seededPassWith(t, openDB(t), crawler.Config{Sitemaps: maps, Timeout: 5 * time.Second}, engine, context.Background(), srv.URL+"/")
	if !out.Complete {
		t.Fatal("pass did not complete")
	}
	for _, tt := range []struct {
		path    string
		verdict store.Verdict
		err     string
		note    string
	}{
		{"/gone.xml", store.VerdictBroken, "", ""},
		{"/page", store.VerdictBroken, "not a sitemap", "not a sitemap"},
		{"/broken.xml", store.VerdictBroken, "bad sitemap", "XML syntax error on line 3"},
		{"/hang.xml", store.VerdictTransient, "timeout", ""},
		{"/listed", store.VerdictOK, "", ""},
	} {
		rec := recs[srv.URL+tt.path]
		if rec.Verdict != tt.verdict || rec.Error != tt.err || !strings.Contains(rec.Note, tt.note) {
			t.Errorf("%s: %s %q %q, want %s %q %q", tt.path, rec.Verdict, rec.Error, rec.Note, tt.verdict, tt.err, tt.note)
		}
	}
	if _, ok := recs[srv.URL+"/never"]; ok {
		t.Error("an entry inside the syntax error was taken")
	}
}

// A resumed pass reads only the sitemaps it had not read, and the limit on
// URLs from sitemaps counts what the stopped run took.
func TestSitemapResume(t *testing.T) {
	t.Parallel()
	verifyNoLeaks(t)
	s := newSitemapSite(t)
	base := s.srv.URL
	db := openDB(t)
	cfg := crawler.Config{Sitemaps: []string{base + "/sitemap_index.xml"}, SitemapLimit: 4, Grace: 50 * time.Millisecond, Concurrency: 2}
	s.hang.Store(true)
	stop, cancel := context.WithCancel(context.Background())
	go func() {
		// Stop once sitemap2 hangs and a page of sitemap1 was requested:
		// sitemap1's result, and what it listed, reached the dispatcher.
		<-s.hanging
		<-s.pageHit
		cancel()
	}()
	out, _ := seededPass(t, db, cfg, stop, base+"/")
	if out.Complete {
		t.Fatal("the first run should have been stopped")
	}
	queue, err := db.Frontier()
	if err != nil {
		t.Fatal(err)
	}
	var sitemapQueued bool
	for _, task := range queue {
		if task.URL == base+"/sitemap2.xml.gz" && task.Action == "sitemap" {
			sitemapQueued = true
		}
	}
	if !sitemapQueued {
		t.Fatalf("the unread sitemap is not in the frontier as a sitemap: %+v", queue)
	}

	s.hang.Store(false)
	out, recs := seededPass(t, db, cfg, context.Background(), base+"/")
	if !out.Complete {
		t.Fatal("the resumed run did not complete")
	}
	for _, key := range []string{"GET /sitemap_index.xml", "GET /sitemap1.xml"} {
		if n := s.c.get(key); n != 1 {
			t.Errorf("%s: %d requests over both runs, want 1", key, n)
		}
	}
	if n := s.c.get("GET /sitemap2.xml.gz"); n != 2 {
		t.Errorf("the sitemap cut short was requested %d times, want 2", n)
	}
	// sitemap1 listed 4 URLs, the limit: hidden3 from sitemap2 is one too many.
	if _, ok := recs[base+"/hidden3"]; ok {
		t.Error("the resumed run took a URL past the limit the first run had reached")
	}
	if note := recs[base+"/sitemap2.xml.gz"].Note; !strings.Contains(note, "not taken") {
		t.Errorf("sitemap2's note %q does not say its URL was not taken", note)
	}
	for _, p := range []string{"/hidden1", "/hidden2", "/missing", "/deep"} {
		if _, ok := recs[base+p]; !ok {
			t.Errorf("%s: not crawled over the two runs", p)
		}
	}
}
