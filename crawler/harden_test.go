package crawler_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/throttle"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/store"
)

// A web server that redirects to file: never makes the crawler read a local
// file, not even in directory mode, where file: URLs are otherwise served.
func TestRedirectToFileNeverFollowed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "secret.html"), []byte("<a href=\"/leaked\">x</a>"), 0o644); err != nil {
		t.Fatal(err)
	}
	secret := crawler.DirURL(dir) + "secret.html"
	ext := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, secret, http.StatusFound)
	}))
	defer ext.Close()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte(`<a href="`+ext.URL+`/go">go</a>`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{dir, ""} {
		start := crawler.DirURL(dir)
		cfg := crawler.Config{Roots: []string{root}}
		if root == "" {
			start, cfg = ext.URL+"/start", crawler.Config{}
		}
		r := runPass(t, cfg, start)
		u := ext.URL + "/go"
		if root == "" {
			u = start
		}
		rec := r.records[u]
		if rec.Verdict != store.VerdictBroken || rec.Error != "redirect to file:" {
			t.Errorf("root %q: %s is %s %q, want broken \"redirect to file:\"", root, u, rec.Verdict, rec.Error)
		}
		if _, ok := r.records[secret]; ok {
			t.Errorf("root %q: the redirect target was recorded", root)
		}
	}
}

// A page's cost is bounded by its links: past the most a page may hold,
// the rest is not read, and the record says so, as for a page over
// --max-size. (BenchmarkStopOnHugePage measures time and memory.) The
// bound is 1,000 here: the same code cuts at any bound, and a page of the
// real 100,000 took a second of CPU under -race; cmd's
// TestCutPageIsCountedAndListed crawls a page past the real one.
func TestPageLinksBounded(t *testing.T) {
	t.Parallel()
	const most = 1000
	var b strings.Builder
	for i := range most + 10 {
		fmt.Fprintf(&b, "<a href=\"/#%d\">%d</a>\n", i, i)
	}
	srv := httptest.NewServer(page(b.String()))
	defer srv.Close()
	r := runPass(t, crawler.WithMaxLinks(crawler.Config{}, most), srv.URL+"/")
	rec := r.records[srv.URL+"/"]
	if !strings.Contains(rec.Note, "page has more than 1000 links: only the first 1000 were checked") {
		t.Errorf("note %q does not say the page was cut", rec.Note)
	}
	if rec.Cut&store.CutLinks == 0 {
		t.Errorf("cut %v, want the links bound among its reasons", rec.Cut)
	}
	links, err := r.db.Links(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	if len(links) != most {
		t.Errorf("%d links stored, want the first %d", len(links), most)
	}
	for i, l := range links {
		if l.Fragment != strconv.Itoa(i) || l.Line != i+1 {
			t.Fatalf("link %d is #%s on line %d: not the page's first links", i, l.Fragment, l.Line)
		}
	}
}

// hostWrites is the real store, recording which hosts' state each save
// wrote.
type hostWrites struct {
	*store.DB
	mu     sync.Mutex
	writes [][]string
}

func (h *hostWrites) PutHostStates(states map[string][]byte) error {
	h.record(states)
	return h.DB.PutHostStates(states)
}

func (h *hostWrites) CommitHosts(passID uint64, results []store.Result, states map[string][]byte) error {
	h.record(states)
	return h.DB.CommitHosts(passID, results, states)
}

func (h *hostWrites) record(states map[string][]byte) {
	if len(states) == 0 {
		return
	}
	h.mu.Lock()
	h.writes = append(h.writes, slices.Sorted(maps.Keys(states)))
	h.mu.Unlock()
}

// Per-host state is saved only for hosts whose state changed, all in one
// transaction per commit, and state that no pass needs any more (no pause
// left, robots.txt stale, quota of an old pass) is forgotten.
// BenchmarkManyHosts measures time and memory against the host count.
func TestHostStateSavedWhenChangedAndPruned(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(page(`<a href="/a">a</a>`))
	defer srv.Close()
	db := openDB(t)
	settings := func(string) throttle.Settings { return throttle.Settings{} }
	old := throttle.New(throttle.Config{Settings: settings})
	old.StartPass(1)
	now := time.Now()
	old.SetRobots("stale.test:80", nil, now.Add(-30*24*time.Hour))
	old.SetRobots("fresh.test:80", nil, now.Add(-time.Hour))
	for _, h := range []string{"stale.test:80", "fresh.test:80"} {
		b, err := old.ExportState(h)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.PutHostStates(map[string][]byte{h: b}); err != nil {
			t.Fatal(err)
		}
	}
	start := srv.URL + "/"
	engine, err := rules.New(rules.Config{Start: []string{start}})
	if err != nil {
		t.Fatal(err)
	}
	rec := &hostWrites{DB: db}
	c := crawler.New(crawler.Config{Throttle: throttle.New(throttle.Config{Settings: settings}), HostSettings: settings}, engine, rec)
	if _, _, err := c.Run(context.Background(), context.Background(), passOf(start)); err != nil {
		t.Fatal(err)
	}
	site := strings.TrimPrefix(srv.URL, "http://")
	for _, w := range rec.writes {
		for _, h := range w {
			if h != site && h != "stale.test:80" {
				t.Errorf("saved %s, which this pass never met", h)
			}
		}
	}
	stored := map[string]bool{}
	if err := db.ForEachHostState(func(h string, _ []byte) error { stored[h] = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if stored["stale.test:80"] || !stored["fresh.test:80"] || !stored[site] {
		t.Errorf("stored host state %v: want the site and fresh.test, not stale.test", stored)
	}
}

// A redirect whose Location Go's URL parser refuses (a bad escape, a
// space in the host) used to be dropped by http.Client, and the report
// said only "invalid URL; never worked". A stray "%" or a space is now
// escaped and followed, as a browser does and as in a link; a Location no
// resolver takes is a broken link whose note says that the server
// redirected, and to what.
func TestRedirectToUnparsableLocationSaysSo(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<a href="/stray">stray</a> <a href="/space">space</a> <a href="/host">host</a>`)
		case "/stray":
			w.Header().Set("Location", "/behind/a b%zz")
			w.WriteHeader(http.StatusFound)
		case "/space":
			w.Header().Set("Location", "/behind/a b")
			w.WriteHeader(http.StatusFound)
		case "/host":
			w.Header().Set("Location", "http://a b/x")
			w.WriteHeader(http.StatusFound)
		case "/behind/a b", "/behind/a b%zz":
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	r := runPass(t, crawler.Config{}, srv.URL+"/")
	for _, p := range []string{"/stray", "/space"} {
		if rec := r.records[srv.URL+p]; rec.Verdict != store.VerdictOK || !strings.Contains(rec.FinalURL, "/behind/a%20b") {
			t.Errorf("%s: %s %q %q final %q, want ok, followed to /behind/a%%20b...", p, rec.Verdict, rec.Error, rec.Note, rec.FinalURL)
		}
	}
	bad := r.records[srv.URL+"/host"]
	if bad.Verdict != store.VerdictBroken || bad.Error != "invalid URL" || bad.Status != http.StatusFound ||
		!strings.Contains(bad.Note, "not a valid URL") || !strings.Contains(bad.Note, "http://a b/x") {
		t.Errorf("/host: %s %q status %d note %q; want broken \"invalid URL\", 302, a note naming the Location", bad.Verdict, bad.Error, bad.Status, bad.Note)
	}
}

// A server that sends two differing Content-Length headers, a chunk that
// is not one, or a transfer coding the request did not offer gets the
// cause named, not a bare "error".
func TestBadFramingNamed(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const html = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n"
	answers := map[string]string{
		"/":      html + "Content-Length: 61\r\n\r\n<a href=/dup>d</a> <a href=/chunk>c</a> <a href=/te>t</a>    ",
		"/te":    html + "Transfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"/dup":   "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nContent-Length: 7\r\nConnection: close\r\n\r\nhello",
		"/chunk": html + "Transfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
	}
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				req, err := http.ReadRequest(bufio.NewReader(conn))
				if err != nil {
					return
				}
				a, ok := answers[req.URL.Path]
				switch {
				case !ok:
					a = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
				case req.Method == http.MethodHead && req.URL.Path == "/chunk":
					// A page: read next with a GET, whose body is bad.
					a = html + "Content-Length: 0\r\n\r\n"
				}
				io.WriteString(conn, a)
			}()
		}
	}()
	site := "http://" + l.Addr().String()
	r := runPass(t, crawler.Config{Timeout: 5 * time.Second}, site+"/")
	for p, want := range map[string]string{"/dup": "duplicate Content-Length header", "/chunk": "malformed chunked encoding", "/te": "unsupported transfer encoding"} {
		if rec := r.records[site+p]; rec.Error != want {
			t.Errorf("%s: %s %q (status %d), want %q", p, rec.Verdict, rec.Error, rec.Status, want)
		}
	}
	if note := r.records[site+"/te"].Note; !strings.Contains(note, `Transfer-Encoding "gzip, chunked"`) || !strings.Contains(note, "did not offer") {
		t.Errorf("/te: note %q, want one naming the Transfer-Encoding the request did not offer", note)
	}
}

// A robots.txt that redirects with no usable Location (none, or a bad
// escape) is unavailable (RFC 9309: allow all), asked for once: an empty
// Location resolved to robots.txt itself, which was asked for again until
// the redirect limit.
func TestRobotsRedirectWithoutUsableLocation(t *testing.T) {
	t.Parallel()
	for _, loc := range []string{"", "/a%zz"} {
		var robots atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				robots.Add(1)
				if loc != "" {
					w.Header().Set("Location", loc)
				}
				w.WriteHeader(http.StatusFound)
				return
			}
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<p>hi</p>")
		}))
		recs, _ := excludedRun(t, srv.URL, rules.Config{})
		srv.Close()
		if rec := recs[srv.URL+"/"]; rec.Verdict != store.VerdictOK {
			t.Errorf("Location %q: the start page is %s %q, want ok (robots.txt unavailable: allow all)", loc, rec.Verdict, rec.Error)
		}
		if n := robots.Load(); n != 1 {
			t.Errorf("Location %q: robots.txt requested %d times, want 1", loc, n)
		}
	}
}

// A run stopped with requests still out (Ctrl-C, --max-time) saves them
// as in flight, as a kill leaves them: the server may go on serving them,
// and the next run counts them against --per-host until they would have
// timed out (review8 F4; throttle.Outcome.Abandoned).
func TestStoppedRunSavesItsRequestsStillOut(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{}, 2)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			page(`<a href="/a">a</a> <a href="/b">b</a>`)(w, r)
		case "/a", "/b":
			arrived <- struct{}{}
			<-release
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	defer close(release)
	db := openDB(t)
	settings := func(string) throttle.Settings { return throttle.Settings{} }
	th := throttle.New(throttle.Config{Settings: settings, RequestLife: time.Minute, PerHost: 2})
	start := srv.URL + "/"
	engine, err := rules.New(rules.Config{Start: []string{start}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	hard, stopHard := context.WithCancel(context.Background())
	go func() {
		<-arrived
		<-arrived
		stop()
		stopHard()
	}()
	c := crawler.New(crawler.Config{Throttle: th, HostSettings: settings, PerHost: 2}, engine, db)
	if _, out, err := c.Run(ctx, hard, passOf(start)); err != nil || out.Complete {
		t.Fatalf("run: complete %v, err %v; want a stopped pass", out.Complete, err)
	}
	site := strings.TrimPrefix(srv.URL, "http://")
	var open int
	err = db.ForEachHostState(func(h string, v []byte) error {
		if h == site {
			var st struct {
				Open []time.Time `json:"open"`
			}
			if err := json.Unmarshal(v, &st); err != nil {
				return err
			}
			open = len(st.Open)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if open != 2 {
		t.Errorf("saved %d requests in flight for %s, want the 2 the stop left at the server", open, site)
	}
}
