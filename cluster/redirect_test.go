package cluster

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
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
	type worker struct {
		w  *Worker
		db *store.DB
	}
	var workers []worker
	for i, u := range []*url.URL{au, bu} {
		name := fmt.Sprintf("w%d", i+1)
		db := openDB(t, name+".db", true)
		w, err := NewWorker(context.Background(), js, WorkerConfig{Name: name, Shards: []int{Shard(u.Host)}, DB: db})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = w.Close() })
		workers = append(workers, worker{w, db})
	}
	// pass runs the pass rec on both workers, as the worker command does,
	// and says how many redirects they handed to each other.
	pass := func(rec PassRecord) int64 {
		results := make(chan crawler.Outcome, 2)
		errs := make(chan error, 2)
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
		for range 2 {
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
