package crawler_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
)

// counter records every request a test server receives.
type counter struct {
	mu   sync.Mutex
	hits map[string]int // "METHOD /path"
}

func (c *counter) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		if c.hits == nil {
			c.hits = make(map[string]int)
		}
		c.hits[r.Method+" "+r.URL.Path]++
		c.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (c *counter) get(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits[key]
}

type passResult struct {
	db      *store.DB
	pass    store.Pass
	outcome crawler.Outcome
	records map[string]store.URLRecord
}

func runPass(t *testing.T, cfg crawler.Config, starts ...string) passResult {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "lp.db"), dbOptions)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return runPassOn(t, db, cfg, starts...)
}

func runPassOn(t *testing.T, db *store.DB, cfg crawler.Config, starts ...string) passResult {
	t.Helper()
	engine, err := rules.New(rules.Config{Start: starts})
	if err != nil {
		t.Fatal(err)
	}
	return runPassWith(t, db, cfg, engine, starts...)
}

// runPassWith is runPassOn with the rules of engine.
func runPassWith(t *testing.T, db *store.DB, cfg crawler.Config, engine *rules.Engine, starts ...string) passResult {
	t.Helper()
	c := crawler.New(cfg, engine, db)
	spec := passOf(starts...)
	spec.New = true // a new pass, whatever db holds
	pass, out, err := c.Run(context.Background(), context.Background(), spec)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	recs := make(map[string]store.URLRecord)
	err = db.Records(pass.ID, func(r *store.URLRecord) error {
		recs[r.URL] = *r
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return passResult{db: db, pass: pass, outcome: out, records: recs}
}

// passOf is the pass of starts, each a seed: resumed when db's unfinished
// pass is of starts, begun otherwise.
func passOf(starts ...string) crawler.PassSpec {
	return crawler.PassSpec{Pass: store.Pass{StartURLs: starts}, Seeds: starts}
}

func page(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}
}

// hostileStart is hostileSite's start page: links to each bad behaviour,
// spread over lines and tags as pages spread them.
const hostileStart = `<!doctype html><title>home</title>
<a href="/ok">ok</a>
<a href="/missing">missing</a>
<a
   class="x"
   href="/multi">multi-line tag</a>
<img src="/img.png" srcset="/small.png 1x,
     /gone.png 2x">
<a href="/redirect">redirect</a>
<a href="/loop1">loop</a>
<a href="/hang">hang</a>
<a href="/trickle">trickle</a>
<a href="/big-headers">big headers</a>
<a href="/bad-length">bad Content-Length</a>
<a href="/no-colon">a header line without a colon</a>
<img src="/head-no-colon.png">
<a href="/long-no-colon">a long header line without a colon</a>
<a href="/gzip-bomb">bomb</a>
<a href="/br-bomb">brotli bomb</a>
<a href="/zstd-bomb">zstd bomb</a>
<a href="/short-body">body cut short</a>
<a href="/bad-gzip">corrupt gzip</a>
<a href="/liar">lies about content type</a>
<a href="/empty">sends nothing</a>
<a href="/server-error">500</a>
<a href="/forbidden">403</a>
<a href="http://[::1">invalid</a>
<a href="mailto:a@example.com">mail</a>
<a href="javascript:void(0)">js</a>
<!-- <a href="/in-comment">commented out</a> -->
<a href="/malformed">malformed html</a>
<a href="/ok#section">same page with fragment</a>
<a href="/bad-location">redirect to an invalid URL</a>
<a href="http://localhost]/">invalid host</a>`

// hostileSite is one server with every kind of bad behaviour the issue
// lists, each behind its own path and linked from the start page.
// gzipBomb is a page that inflates to 50 MiB. Compressing 50 MiB takes
// seconds under -race, so it is 50 copies of one compressed MiB: a gzip
// stream may be several members end to end, and a client inflates them
// all, as it would one. Every test shares the one copy.
var gzipBomb = sync.OnceValue(func() []byte {
	member := func(data []byte) []byte {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(data)
		zw.Close()
		return b.Bytes()
	}
	return append(member([]byte("<html><body>")), bytes.Repeat(member(bytes.Repeat([]byte("A"), 1<<20)), 50)...)
})

// brBomb and zstdBomb are pages that decode to 8 MiB and 50 MiB (qa10 Q5:
// br and zstd are decoded now, under the same cap). A brotli stream is
// one stream, so it is compressed whole, at the fastest level; zstd, like
// gzip, decodes frames end to end.
var brBomb = sync.OnceValue(func() []byte {
	var b bytes.Buffer
	w := brotli.NewWriterLevel(&b, brotli.BestSpeed)
	w.Write([]byte("<html><body>"))
	w.Write(bytes.Repeat([]byte("A"), 8<<20))
	w.Close()
	return b.Bytes()
})

var zstdBomb = sync.OnceValue(func() []byte {
	w, _ := zstd.NewWriter(nil)
	frame := w.EncodeAll(bytes.Repeat([]byte("A"), 1<<20), nil)
	return append(w.EncodeAll([]byte("<html><body>"), nil), bytes.Repeat(frame, 50)...)
})

func hostileSite(t *testing.T, c *counter) *httptest.Server {
	t.Helper()
	bomb := gzipBomb() // before serving: building it is no part of a request's time
	bombs := map[string][]byte{"br": brBomb(), "zstd": zstdBomb()}
	mux := http.NewServeMux()
	mux.Handle("/{$}", page(hostileStart))
	mux.HandleFunc("/bad-location", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "http://[::1")
		w.WriteHeader(http.StatusFound)
	})
	mux.Handle("/ok", page(`<a href="/">home</a>`))
	mux.Handle("/multi", page(`fine`))
	mux.HandleFunc("/img.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(bytes.Repeat([]byte{0x89}, 100))
	})
	mux.HandleFunc("/small.png", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			w.WriteHeader(http.StatusMethodNotAllowed) // a server that mishandles HEAD
			return
		}
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte{0x89, 'P', 'N', 'G'})
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/redirect2", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/redirect2", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/landed", http.StatusFound)
	})
	mux.Handle("/landed", page(`<a href="/ok">ok</a>`))
	mux.HandleFunc("/loop1", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop2", http.StatusFound)
	})
	mux.HandleFunc("/loop2", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop1", http.StatusFound)
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	mux.HandleFunc("/trickle", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusOK)
		for {
			if _, err := w.Write([]byte("<")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
	mux.HandleFunc("/big-headers", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Huge", strings.Repeat("h", 1<<20))
		w.WriteHeader(http.StatusOK)
	})
	mux.HandleFunc("/gzip-bomb", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(bomb)
	})
	for enc, b := range bombs {
		mux.HandleFunc("/"+enc+"-bomb", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Encoding", enc)
			w.Write(b)
		})
	}
	mux.HandleFunc("/liar", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write(bytes.Repeat([]byte{0, 1, 2, 0xff, '<', 'a'}, 10000))
	})
	mux.HandleFunc("/short-body", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Length", "5000")
		w.Write([]byte(strings.Repeat("<p>", 13) + "x")) // 40 bytes, then the server closes
	})
	mux.HandleFunc("/bad-gzip", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write([]byte("this is not gzip at all"))
	})
	mux.HandleFunc("/bad-length", func(w http.ResponseWriter, r *http.Request) {
		hj, _ := w.(http.Hijacker)
		conn, buf, err := hj.Hijack()
		if err == nil {
			buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 12abc\r\n\r\nhello")
			buf.Flush()
			conn.Close()
		}
	})
	mux.HandleFunc("/no-colon", func(w http.ResponseWriter, r *http.Request) {
		hj, _ := w.(http.Hijacker)
		conn, buf, err := hj.Hijack()
		if err == nil {
			buf.WriteString("HTTP/1.1 200 OK\r\nBadHeaderLine\r\nContent-Type: text/html\r\nContent-Length: 5\r\n\r\nhello")
			buf.Flush()
			conn.Close()
		}
	})
	mux.HandleFunc("/head-no-colon.png", func(w http.ResponseWriter, r *http.Request) {
		// A HEAD handler's bug: GET is answered well (review10 R8).
		if r.Method != http.MethodHead {
			w.Write([]byte("png"))
			return
		}
		hj, _ := w.(http.Hijacker)
		conn, buf, err := hj.Hijack()
		if err == nil {
			buf.WriteString("HTTP/1.1 200 OK\r\nBadHeaderLine\r\nContent-Length: 3\r\n\r\n")
			buf.Flush()
			conn.Close()
		}
	})
	mux.HandleFunc("/long-no-colon", func(w http.ResponseWriter, r *http.Request) {
		hj, _ := w.(http.Hijacker)
		conn, buf, err := hj.Hijack()
		if err == nil {
			buf.WriteString("HTTP/1.1 200 OK\r\n" + strings.Repeat("x", 200000) + "\r\nContent-Length: 5\r\n\r\nhello")
			buf.Flush()
			conn.Close()
		}
	})
	mux.HandleFunc("/empty", func(w http.ResponseWriter, r *http.Request) {
		hj, _ := w.(http.Hijacker)
		conn, _, err := hj.Hijack()
		if err == nil {
			conn.Close()
		}
	})
	mux.HandleFunc("/server-error", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "oops", http.StatusInternalServerError)
	})
	mux.HandleFunc("/forbidden", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no robots", http.StatusForbidden)
	})
	mux.Handle("/malformed", page("<a href=/ok\x00 <a href='/ok'<<<>>><p <a href=\"/multi\"> <a href=\"/multi\" href=\"/dup\">\x00</div></div></td>"))
	srv := httptest.NewServer(c.wrap(mux))
	t.Cleanup(srv.Close)
	return srv
}

func TestPassSurvivesHostileServers(t *testing.T) {
	t.Parallel()
	verifyNoLeaks(t)
	var c counter
	srv := hostileSite(t, &c)
	// Every page must be answered within the pass's timeout, on a loaded
	// 2-core CI machine under -race too (1 MiB of headers or of gunzipped
	// bomb took more than 500 ms there: "timeout" instead of the verdict).
	// /hang and /trickle end only by a timeout, which the test waits out:
	// a rule's, 1 s, so that it does not wait the 5 s the others may need.
	engine, err := rules.New(rules.Config{Start: []string{srv.URL + "/"},
		Rules: []rules.Rule{{Regex: `/(hang|trickle)$`, Timeout: "1s"}}})
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(filepath.Join(t.TempDir(), "lp.db"), dbOptions)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	r := runPassWith(t, db, crawler.Config{Concurrency: 8, Timeout: 5 * time.Second, MaxSize: 1 << 20}, engine, srv.URL+"/")
	if !r.outcome.Complete {
		t.Fatal("pass did not complete")
	}
	want := []struct {
		path    string
		verdict store.Verdict
		status  int
		err     string
	}{
		{"/", store.VerdictOK, 200, ""},
		{"/ok", store.VerdictOK, 200, ""},
		{"/missing", store.VerdictBroken, 404, ""},
		{"/multi", store.VerdictOK, 200, ""},
		{"/img.png", store.VerdictOK, 200, ""},
		{"/small.png", store.VerdictOK, 200, ""},
		{"/gone.png", store.VerdictBroken, 404, ""},
		{"/redirect", store.VerdictOK, 200, ""},
		{"/loop1", store.VerdictBroken, 302, "redirect loop"},
		{"/hang", store.VerdictTransient, 0, "timeout"},
		{"/trickle", store.VerdictTransient, 200, "timeout"},
		{"/big-headers", store.VerdictBroken, 0, "headers too large"},
		{"/bad-length", store.VerdictBroken, 0, "bad Content-Length header"}, // qa9 T4: was "error"
		// Browsers skip the line and show the page: not known to be dead,
		// nor to work (qa9 T4: a bare transient "error").
		{"/no-colon", store.VerdictUnverifiable, 0, "malformed response header"},
		{"/long-no-colon", store.VerdictUnverifiable, 0, "malformed response header"},
		// Only HEAD's answer is malformed: GET is asked, as after a HEAD
		// refused (review10 R8: unverifiable, GET never asked).
		{"/head-no-colon.png", store.VerdictOK, 200, ""},
		{"/gzip-bomb", store.VerdictOK, 200, ""},
		{"/br-bomb", store.VerdictOK, 200, ""},
		{"/zstd-bomb", store.VerdictOK, 200, ""},
		{"/liar", store.VerdictOK, 200, ""},
		{"/empty", store.VerdictTransient, 0, "connection reset"},
		// Wrong words before (qa4 F7): "connection reset" and "error".
		{"/short-body", store.VerdictTransient, 200, "body cut short"},
		{"/bad-gzip", store.VerdictTransient, 200, "bad compressed body"},
		{"/server-error", store.VerdictTransient, 500, ""},
		{"/forbidden", store.VerdictUnverifiable, 403, ""},
		{"/malformed", store.VerdictOK, 200, ""},
		{"/bad-location", store.VerdictBroken, http.StatusFound, "invalid URL"}, // the redirect is kept (see keepBadLocation)
	}
	for _, w := range want {
		rec, ok := r.records[srv.URL+w.path]
		if !ok {
			t.Errorf("%s: no record", w.path)
			continue
		}
		if rec.Verdict != w.verdict || rec.Status != w.status || rec.Error != w.err {
			t.Errorf("%s: got %s/%d/%q, want %s/%d/%q", w.path, rec.Verdict, rec.Status, rec.Error, w.verdict, w.status, w.err)
		}
	}
	if rec := r.records[srv.URL+"/short-body"]; rec.Note != "the body ended after 40 of the 5000 bytes its Content-Length announced" {
		t.Errorf("/short-body: note %q, want how much of the body came", rec.Note)
	}
	if rec := r.records[srv.URL+"/bad-length"]; rec.Note != `the server sent Content-Length "12abc", which is not a length` {
		t.Errorf("/bad-length: note %q, want what the server sent", rec.Note)
	}
	if rec := r.records[srv.URL+"/no-colon"]; !strings.Contains(rec.Note, `header line that is not "Name: value" (missing colon: "BadHeaderLine")`) {
		t.Errorf("/no-colon: note %q, want what the server sent", rec.Note)
	}
	// The line is quoted clipped: a 200,000-byte one was stored whole in
	// the note of every URL it answered (review10 R9).
	if rec := r.records[srv.URL+"/long-no-colon"]; len(rec.Note) > 400 || !strings.Contains(rec.Note, `(missing colon: "xxxx`) || !strings.Contains(rec.Note, "… (2000") {
		t.Errorf("/long-no-colon: note of %d bytes %.300q, want the line's start and its length", len(rec.Note), rec.Note)
	}
	if rec := r.records["http://[::1"]; rec.Verdict != store.VerdictBroken || rec.Error != "invalid URL" {
		t.Errorf("invalid URL: got %+v", rec)
	}
	if rec := r.records["http://localhost]/"]; rec.Verdict != store.VerdictBroken || rec.Error != "invalid host" {
		t.Errorf("invalid host: got %+v", rec)
	}
	if _, ok := r.records[srv.URL+"/dup"]; ok {
		t.Error("a duplicate attribute is ignored by browsers and must be by us")
	}
	for u := range r.records {
		if strings.HasPrefix(u, "mailto:") || strings.HasPrefix(u, "javascript:") || strings.HasSuffix(u, "/in-comment") {
			t.Errorf("%s must not be recorded", u)
		}
	}
	if got := r.records[srv.URL+"/redirect"]; got.FinalURL != srv.URL+"/landed" || len(got.Redirects) != 2 {
		t.Errorf("redirect chain: final %q, hops %+v", got.FinalURL, got.Redirects)
	}
	for _, p := range []string{"/gzip-bomb", "/br-bomb", "/zstd-bomb"} {
		if got := r.records[srv.URL+p]; got.Size != 1<<20 || got.Note == "" {
			t.Errorf("%s: read %d bytes (note %q), want the 1 MiB cap", p, got.Size, got.Note)
		}
	}
	// Each URL is fetched once however many pages link to it.
	if n := c.get("GET /ok"); n != 1 {
		t.Errorf("GET /ok requested %d times, want 1", n)
	}
	if n := c.get("GET /img.png") + c.get("HEAD /img.png"); n != 1 {
		t.Errorf("/img.png requested %d times, want 1 (HEAD)", n)
	}
	if c.get("HEAD /small.png") != 1 || c.get("GET /small.png") != 1 {
		t.Errorf("HEAD refused must fall back to GET once: %v", c.hits)
	}
}

// The lines are those of the links in the start page, however their
// targets answer: here every other path is a quick 404, where in
// hostileSite /hang and /trickle held the pass for its timeout
// (TestPassSurvivesHostileServers waits that out, for their verdicts).
func TestLinksKeepTheirLines(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.Handle("/{$}", page(hostileStart))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	r := runPass(t, crawler.Config{Concurrency: 4, Timeout: 5 * time.Second}, srv.URL+"/")
	links, err := r.db.Links(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]int{}
	for _, l := range links {
		path := strings.TrimPrefix(l.URL, srv.URL)
		if _, ok := lines[path]; !ok {
			lines[path] = l.Line
		}
	}
	for path, line := range map[string]int{"/ok": 2, "/missing": 3, "/multi": 6, "/img.png": 7, "/small.png": 7, "/gone.png": 8} {
		if lines[path] != line {
			t.Errorf("%s: line %d, want %d", path, lines[path], line)
		}
	}
	var frag bool
	for _, l := range links {
		if l.URL == srv.URL+"/ok" && l.Fragment == "section" {
			frag = true
		}
	}
	if !frag {
		t.Error("the link to /ok#section lost its fragment")
	}
}

// A server that never answers cannot hold a worker past the hard timeout,
// and a stopped run leaves the unfinished work in the frontier.
func TestStopLeavesUnfinishedWorkQueued(t *testing.T) {
	t.Parallel()
	verifyNoLeaks(t)
	started := make(chan struct{}, 10)
	mux := http.NewServeMux()
	mux.Handle("/", page(`<a href="/hang1">1</a><a href="/hang2">2</a>`))
	mux.HandleFunc("/hang1", func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-r.Context().Done()
	})
	mux.HandleFunc("/hang2", func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-r.Context().Done()
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	db, err := store.Open(filepath.Join(t.TempDir(), "lp.db"), dbOptions)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := srv.URL + "/"
	engine, _ := rules.New(rules.Config{Start: []string{start}})
	c := crawler.New(crawler.Config{Concurrency: 4, Timeout: time.Minute, Grace: 50 * time.Millisecond}, engine, db)
	stop, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		<-started
		cancel()
	}()
	_, out, err := c.Run(stop, context.Background(), passOf(start))
	if err != nil {
		t.Fatal(err)
	}
	if out.Complete {
		t.Fatal("a stopped pass must not be complete")
	}
	q, err := db.Frontier()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, task := range q {
		got = append(got, strings.TrimPrefix(task.URL, srv.URL))
	}
	if len(got) != 2 {
		t.Errorf("frontier after stop: %v, want /hang1 and /hang2", got)
	}
	if _, ok, _ := db.Get(start); !ok {
		t.Error("the start page finished before the stop but was not committed")
	}
}

func TestRefusedConnection(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String() + "/"
	l.Close()
	srv := httptest.NewServer(page(`<a href="` + dead + `x">dead host</a>`))
	defer srv.Close()
	r := runPass(t, crawler.Config{Timeout: 5 * time.Second}, srv.URL+"/")
	rec := r.records[dead+"x"]
	if rec.Verdict != store.VerdictBroken || rec.Error != "refused" || rec.Action != "check" {
		t.Errorf("refused host: %+v", rec)
	}
}

func TestDirectoryServedAsStaticHost(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := mkdirWrite(p, body); err != nil {
			t.Fatal(err)
		}
	}
	write("index.html", "<a href=\"about/\">about</a>\n<a href=\"/nowhere.html\">x</a>\n<a href=\"/empty/\">dir without index</a>")
	write("about/index.html", "<a href=\"../index.html\">home</a>")
	write("empty/readme.txt", "no index here")
	root := crawler.DirURL(dir)
	r := runPass(t, crawler.Config{Roots: []string{dir}}, root)
	for u, v := range map[string]store.Verdict{
		"":             store.VerdictOK,
		"about/":       store.VerdictOK,
		"nowhere.html": store.VerdictBroken,
		"empty/":       store.VerdictBroken,
	} {
		if got := r.records[root+u].Verdict; got != v {
			t.Errorf("%s: %s, want %s (%+v)", u, got, v, r.records[root+u])
		}
	}
}

func mkdirWrite(path, body string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(body), 0o644)
}

// A URL too long to be a database key is a reported problem, not a failed
// commit that stops the pass.
func TestOverlongURL(t *testing.T) {
	t.Parallel()
	long := "/" + strings.Repeat("a", store.MaxURLLength+10)
	srv := httptest.NewServer(page(`<a href="` + long + `">long</a><a href="/x">x</a>`))
	defer srv.Close()
	r := runPass(t, crawler.Config{}, srv.URL+"/")
	if !r.outcome.Complete {
		t.Fatal("pass did not complete")
	}
	var found bool
	for u, rec := range r.records {
		if len(u) == store.MaxURLLength && rec.Error == "URL too long" && rec.Verdict == store.VerdictBroken {
			found = true
		}
	}
	if !found {
		t.Error("the overlong URL was not reported as too long")
	}
}

// In a site on disk, a page reachable at two URLs (index.html and its
// directory) is parsed once, and a scheme-relative link is checked over
// the network, not as a local file.
func TestDirectoryPageParsedOnce(t *testing.T) {
	t.Parallel()
	ext := httptest.NewServer(page("ok"))
	defer ext.Close()
	dir := t.TempDir()
	if err := mkdirWrite(filepath.Join(dir, "index.html"), "<a href=\"index.html\">self</a>\n<a href=\"missing.html\">x</a>\n<a href=\"sub\">sub</a>\n<a href=\""+strings.TrimPrefix(ext.URL, "http:")+"/cdn.js\">cdn</a>"); err != nil {
		t.Fatal(err)
	}
	if err := mkdirWrite(filepath.Join(dir, "sub", "index.html"), "<a href=\"../missing.html\">x</a>"); err != nil {
		t.Fatal(err)
	}
	root := crawler.DirURL(dir)
	r := runPass(t, crawler.Config{Roots: []string{dir}}, root)
	var parsed []string
	err := r.db.PageLinks(r.pass.ID, func(p *store.URLRecord, links []store.Link) error {
		for _, l := range links {
			if strings.HasSuffix(l.URL, "/missing.html") {
				parsed = append(parsed, p.URL)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(parsed)
	if want := []string{root, root + "sub/"}; !slices.Equal(parsed, want) {
		t.Errorf("pages that link missing.html: %v, want %v (each page once)", parsed, want)
	}
	if rec, ok := r.records["http://"+strings.TrimPrefix(ext.URL, "http://")+"/cdn.js"]; ok {
		t.Errorf("a scheme-relative link became http, want https: %+v", rec)
	}
	if _, ok := r.records["https://"+strings.TrimPrefix(ext.URL, "http://")+"/cdn.js"]; !ok {
		t.Error("the scheme-relative link was not checked as https")
	}
}
