package cluster

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/nats-io/nats.go/jetstream"
)

// A redirect from one worker's site into another worker's is handed to
// the owner of the target, which asks for it once, as the redirect would
// have: without the header the rules give both sites (as -H gives the
// start hosts), because the redirect left its origin. The target's own
// links still carry it. The merged record of the redirecting URL says where
// it leads and how the chain ends (a 404), as one process would, and the
// next pass carries its history on.
func TestCrossShardRedirectIsHandedOverWithoutCredentials(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string][]string{} // path on site b -> X-Token of each request
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path] = append(seen[r.URL.Path], r.Header.Get("X-Token"))
		mu.Unlock()
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<a href="/direct">direct</a>`)
		case "/direct":
			fmt.Fprint(w, "ok")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(b.Close)
	bu, _ := url.Parse(b.URL)
	// Site a must fall in another shard than b (they are 127.0.0.1 on
	// two ports, one shard in 256 alike).
	var a *httptest.Server
	for range 10 {
		a = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/":
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprint(w, `<a href="/away">away</a>`)
			case "/away":
				http.Redirect(w, r, b.URL+"/target", http.StatusMovedPermanently)
			default:
				http.NotFound(w, r)
			}
		}))
		t.Cleanup(a.Close)
		if au, _ := url.Parse(a.URL); Shard(au.Host) != Shard(bu.Host) {
			break
		}
	}
	au, _ := url.Parse(a.URL)
	if Shard(au.Host) == Shard(bu.Host) {
		t.Fatal("no two servers in two shards")
	}
	starts := []string{a.URL + "/", b.URL + "/"}
	var rs []rules.Rule
	for _, u := range []*url.URL{au, bu} {
		rs = append(rs, rules.Rule{Source: "test", Scheme: "http", Host: u.Host, Headers: map[string]string{"X-Token": "s3cret"}})
	}
	engine, err := rules.New(rules.Config{Start: starts, Rules: rs})
	if err != nil {
		t.Fatal(err)
	}

	js := connect(t, startServer(t))
	c, merged, rec := coordinate(t, js, CoordinatorConfig{onVerdict: func(Verdict) {}, Logf: t.Logf}, starts...)
	workers := shardWorkers(t, js, au, bu)
	pass := func(rec PassRecord) int64 { return shardPass(t, workers, engine, rec, starts) }
	check := func(n int) {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		if d := seen["/direct"]; len(d) != n || d[n-1] != "s3cret" {
			t.Errorf("/direct, linked from b's own page: %q, want a request a pass, with the rules' header", d)
		}
		if tg := seen["/target"]; len(tg) != n || tg[n-1] != "" {
			t.Errorf("/target, reached only by a redirect from a: %q, want a request a pass, without the header", tg)
		}
	}
	awayOf := func() store.URLRecord {
		t.Helper()
		away, ok, err := merged.Get(a.URL + "/away")
		if err != nil || !ok {
			t.Fatalf("merged record of /away: %v, %v", ok, err)
		}
		return away
	}

	if hops := pass(rec); hops != 1 {
		t.Errorf("%d redirects handed to another worker, want 1", hops)
	}
	check(1)
	away := awayOf()
	want := fmt.Sprintf("broken 404 -> %s/target via [{%s/away 301}] awaits \"\"; failures 1, before: \"\" 0", b.URL, a.URL)
	show := func(r store.URLRecord) string {
		return fmt.Sprintf("%s %d -> %s via %v awaits %q; failures %d, before: %q %d",
			r.Verdict, r.Status, r.FinalURL, r.Redirects, r.Awaits, r.Failures, r.PrevVerdict, r.PrevPass)
	}
	if got := show(away); got != want {
		t.Errorf("merged /away:\n got %s\nwant %s", got, want)
	}

	// The next night: the worker that owns /away knows only that its
	// chain went on elsewhere; the merged record still says it was
	// broken then too, its second failure in a row.
	first := rec.Pass.ID
	rec, err = c.Begin(context.Background(), BeginRequest{Pass: store.Pass{StartURLs: starts}, Seeds: []store.Task{{URL: starts[0], Action: "parse"}, {URL: starts[1], Action: "parse"}}})
	if err != nil || rec.Pass.ID == first {
		t.Fatalf("second pass: %+v, %v", rec, err)
	}
	pass(rec)
	check(2)
	want = fmt.Sprintf("broken 404 -> %s/target via [{%s/away 301}] awaits \"\"; failures 2, before: \"broken\" %d", b.URL, a.URL, first)
	if got := show(awayOf()); got != want {
		t.Errorf("merged /away, second pass:\n got %s\nwant %s", got, want)
	}
	if later := awayOf(); !later.FirstBroken.Equal(away.FirstBroken) {
		t.Errorf("first broken %s, then %s: the run of failures started again", away.FirstBroken, later.FirstBroken)
	}
}

// shardWorker is one worker of a test cluster and its database.
type shardWorker struct {
	w  *Worker
	db *store.DB
}

// shardWorkers starts a worker for the shard of each host, named w1, w2, ...
func shardWorkers(t *testing.T, js jetstream.JetStream, hosts ...*url.URL) []shardWorker {
	t.Helper()
	var workers []shardWorker
	for i, u := range hosts {
		name := fmt.Sprintf("w%d", i+1)
		db := openDB(t, name+".db", true)
		w, err := NewWorker(context.Background(), js, WorkerConfig{Name: name, Shards: []int{Shard(u.Host)}, DB: db})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = w.Close() })
		workers = append(workers, shardWorker{w, db})
	}
	return workers
}

// shardPass runs the pass rec on every worker, as the worker command does,
// and says how many redirects they handed to each other.
func shardPass(t *testing.T, workers []shardWorker, engine *rules.Engine, rec PassRecord, starts []string) int64 {
	t.Helper()
	results := make(chan crawler.Outcome, len(workers))
	errs := make(chan error, len(workers))
	for _, w := range workers {
		f, err := w.w.Join(context.Background(), rec.Pass.ID)
		if err != nil {
			t.Fatal(err)
		}
		cr := crawler.New(crawler.Config{Concurrency: 2, Frontier: f}, engine, w.db)
		go func() {
			defer f.Close()
			_, out, err := cr.Run(w.w.Context(), context.Background(), crawler.PassSpec{Pass: store.Pass{ID: rec.Pass.ID, StartURLs: starts}})
			if err == nil && !out.Complete {
				err = fmt.Errorf("not complete: %+v", out)
			}
			results <- out
			errs <- err
		}()
	}
	var hops int64
	for range workers {
		select {
		case out := <-results:
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
			hops += out.ForeignHops
		case <-time.After(time.Minute):
			t.Fatal("the distributed pass did not end")
		}
	}
	return hops
}

// twoShards starts a server for handler a and one for b in another shard
// than a's (they are 127.0.0.1 on two ports, one shard in 256 alike).
func twoShards(t *testing.T, a, b http.Handler) (as, bs *httptest.Server, au, bu *url.URL) {
	t.Helper()
	bs = httptest.NewServer(b)
	t.Cleanup(bs.Close)
	bu, _ = url.Parse(bs.URL)
	for range 10 {
		as = httptest.NewServer(a)
		t.Cleanup(as.Close)
		if au, _ = url.Parse(as.URL); Shard(au.Host) != Shard(bu.Host) {
			return as, bs, au, bu
		}
	}
	t.Fatal("no two servers in two shards")
	return
}

// A redirect target the rules skip is not followed by any worker, as in
// one process (qa7 Q1): not by the worker that meets it on its own site,
// nor by the one a chain was handed to. The excluded server counts no
// request at all, and the merged records of the links that redirect there
// are skipped with the rule, the handed-off chain whole.
func TestRedirectToExcludedHostIsNotFollowedByAnyWorker(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var excludedHits []string
	var target string // b's /target, once b is up
	excluded := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		excludedHits = append(excludedHits, r.Method+" "+r.URL.Path)
		mu.Unlock()
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(excluded.Close)
	a, b, au, bu := twoShards(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<a href="/away">away</a> <a href="/out">out</a>`)
		case "/away":
			mu.Lock()
			to := target
			mu.Unlock()
			http.Redirect(w, r, to, http.StatusMovedPermanently)
		case "/out":
			http.Redirect(w, r, excluded.URL+"/y", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `nothing`)
		case "/target":
			http.Redirect(w, r, excluded.URL+"/x", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	mu.Lock()
	target = b.URL + "/target"
	mu.Unlock()
	rule := "--exclude ^" + regexp.QuoteMeta(excluded.URL)
	starts := []string{a.URL + "/", b.URL + "/"}
	engine, err := rules.New(rules.Config{Start: starts, Exclude: []string{strings.TrimPrefix(rule, "--exclude ")}})
	if err != nil {
		t.Fatal(err)
	}
	js := connect(t, startServer(t))
	_, merged, rec := coordinate(t, js, CoordinatorConfig{onVerdict: func(Verdict) {}, Logf: t.Logf}, starts...)
	if hops := shardPass(t, shardWorkers(t, js, au, bu), engine, rec, starts); hops != 1 {
		t.Errorf("%d redirects handed to another worker, want 1 (/away to b's /target)", hops)
	}
	mu.Lock()
	if len(excludedHits) != 0 {
		t.Errorf("the excluded host got %v, want no request", excludedHits)
	}
	mu.Unlock()
	for _, l := range []struct{ url, final string }{{a.URL + "/away", excluded.URL + "/x"}, {a.URL + "/out", excluded.URL + "/y"}} {
		r, ok, err := merged.Get(l.url)
		if err != nil || !ok {
			t.Fatalf("merged record of %s: %v, %v", l.url, ok, err)
		}
		if r.Verdict != store.VerdictSkipped || r.Note != "redirect not followed; its target is skipped: "+rule || r.FinalURL != l.final || r.Awaits != "" {
			t.Errorf("merged %s: %s %q, note %q, ends at %s, awaits %q; want skipped, not followed (%s), ending at %s",
				l.url, r.Verdict, r.Error, r.Note, r.FinalURL, r.Awaits, rule, l.final)
		}
	}
}
