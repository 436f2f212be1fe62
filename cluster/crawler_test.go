package cluster

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/crawler/crawltest"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
)

var _ crawler.Frontier = (*Frontier)(nil)

// verdicts reads what a database says about each URL of a pass: its
// verdict, and for a redirect where the chain ends and through which hops.
func verdicts(t *testing.T, db *store.DB, pass uint64) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := db.Records(pass, func(r *store.URLRecord) error {
		out[r.URL] = fmt.Sprintf("%s %d %s", r.Verdict, r.Status, r.Error)
		if r.FinalURL != "" || len(r.Redirects) > 0 || r.Awaits != "" {
			out[r.URL] += fmt.Sprintf(" -> %s via %v awaits %q", r.FinalURL, r.Redirects, r.Awaits)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The real crawler over the cluster: three workers, each running
// crawler.Run on its own database with a Frontier, check a web of sites
// that link and redirect across hosts; the merged database says what a
// single-process crawl of the same web says, URL by URL, redirect chains
// included, and no server is asked for a URL twice: a redirect into a host
// another worker owns is handed to that worker, never followed where it
// was met.
func TestCrawlersOverCluster(t *testing.T) {
	t.Parallel()
	web := crawltest.NewWeb(crawltest.WebOptions{Sites: 6, Site: crawltest.SiteOptions{
		Pages: 25, LinksPerPage: 6, Images: 1, BrokenEvery: 7, PeerRedirectEvery: 5, PageBytes: 800,
	}})
	t.Cleanup(web.Close)
	starts := web.StartURLs()
	engine, err := rules.New(rules.Config{Start: starts})
	if err != nil {
		t.Fatal(err)
	}

	// The baseline: one crawler alone.
	single := openDB(t, "single.db", false)
	p, out, err := crawler.New(crawler.Config{Concurrency: 4}, engine, single).Run(context.Background(), context.Background(),
		crawler.PassSpec{Pass: store.Pass{StartURLs: starts}, Seeds: starts})
	if err != nil || !out.Complete {
		t.Fatalf("single crawl: %+v, %v", out, err)
	}
	want := verdicts(t, single, p.ID)
	web.Reset()

	js := connect(t, startServer(t))
	c, merged, rec := coordinate(t, js, CoordinatorConfig{}, starts...)
	_ = c
	// The workers share the sites' shards. The sites are 127.0.0.1 on
	// random ports, so two of them may fall in one shard (about 1 run in
	// 20): each shard is dealt to one worker, never to two, which would
	// refuse the second one its lease.
	var shards [3][]int
	dealt := map[int]bool{}
	for _, s := range starts {
		u, _ := url.Parse(s)
		if sh := Shard(u.Host); !dealt[sh] {
			dealt[sh] = true
			shards[(len(dealt)-1)%3] = append(shards[(len(dealt)-1)%3], sh)
		}
	}
	type run struct {
		out crawler.Outcome
		err error
	}
	results := make(chan run, 3)
	for i := range 3 {
		name := fmt.Sprintf("w%d", i+1)
		db := openDB(t, name+".db", true)
		w, err := NewWorker(context.Background(), js, WorkerConfig{Name: name, Shards: shards[i], DB: db})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = w.Close() })
		// The worker command's order: join, then let the crawler open
		// the coordinator's pass, with no seeds of its own.
		f, err := w.Join(context.Background(), rec.Pass.ID)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = f.Close() })
		cr := crawler.New(crawler.Config{Concurrency: 4, Frontier: f}, engine, db)
		go func() {
			_, out, err := cr.Run(w.Context(), context.Background(), crawler.PassSpec{Pass: store.Pass{ID: rec.Pass.ID, StartURLs: starts}})
			results <- run{out, err}
		}()
	}
	var hops int64
	for range 3 {
		select {
		case r := <-results:
			if r.err != nil || !r.out.Complete {
				t.Fatalf("worker crawl: %+v, %v", r.out, r.err)
			}
			hops += r.out.ForeignHops
		case <-time.After(60 * time.Second):
			t.Fatal("the distributed pass did not end")
		}
	}
	got := verdicts(t, merged, rec.Pass.ID)
	taskMsgs, resultMsgs := publishedMessages(t, js)
	t.Logf("%d URLs: %d task messages (%d seeds among them), %d result messages: %.2f messages per URL",
		len(got), taskMsgs, len(starts), resultMsgs, float64(taskMsgs+resultMsgs)/float64(len(got)))
	if !maps.Equal(got, want) {
		for _, u := range slices.Sorted(maps.Keys(want)) {
			if got[u] != want[u] {
				t.Errorf("%s: merged %q, single %q", u, got[u], want[u])
			}
		}
		for _, u := range slices.Sorted(maps.Keys(got)) {
			if _, ok := want[u]; !ok {
				t.Errorf("%s: merged %q, single has none", u, got[u])
			}
		}
	}
	if hops == 0 {
		t.Error("no redirect crossed to a host another worker owns: the test proves nothing about them")
	}
	if r := web.Repeated(); len(r) > 0 {
		t.Errorf("%d URLs asked for twice (%d redirects crossed workers): %q", len(r), hops, r)
	}
}

// A start URL that a page of another shard links to is still a seed when
// its own seed message comes only after the link was followed: the worker
// queues the seeds of its shards before it hands its crawler any task, as
// one process does. Here one worker owns both sites; the seed message of
// site B is held until B's home page has been asked for, so without that
// B is reached first by A's link, at depth 1, and recorded as no seed
// (TestDistributedEqualsSingle saw "seeds": 5 of 6 under load).
func TestStartURLLinkedBeforeItsSeedCame(t *testing.T) {
	t.Parallel()
	reachedB := make(chan struct{})
	var once sync.Once
	var a, b *httptest.Server
	for {
		b = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/" {
				once.Do(func() { close(reachedB) })
				fmt.Fprint(w, "<html><body>B</body></html>")
				return
			}
			http.NotFound(w, r)
		}))
		t.Cleanup(b.Close)
		a = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/" {
				fmt.Fprintf(w, `<html><body><a href="%s/">B</a></body></html>`, b.URL)
				return
			}
			http.NotFound(w, r)
		}))
		t.Cleanup(a.Close)
		// Two shards, so two seed messages (one per shard).
		if Shard(hostOf(t, a.URL)) != Shard(hostOf(t, b.URL)) {
			break
		}
	}
	starts := []string{a.URL + "/", b.URL + "/"}
	engine, err := rules.New(rules.Config{Start: starts})
	if err != nil {
		t.Fatal(err)
	}
	js := connect(t, startServer(t))
	_, merged, rec := coordinate(t, js, CoordinatorConfig{}, starts...)
	shardB := Shard(hostOf(t, b.URL))
	db := openDB(t, "w1.db", true)
	// A's message is committed before the crawler opens the pass, so the
	// crawler finds it on the database's frontier as well.
	ackedA := make(chan struct{})
	var ackOnce sync.Once
	w, err := NewWorker(context.Background(), js, WorkerConfig{Name: "w1", Shards: []int{Shard(hostOf(t, a.URL)), shardB}, DB: db,
		beforeCommit: func(ctx context.Context, shard int) {
			if shard != shardB {
				return
			}
			select {
			case <-reachedB:
			case <-ctx.Done():
			}
		},
		// Only A's message can be acked before B was asked for.
		afterAck: func(context.Context) { ackOnce.Do(func() { close(ackedA) }) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	// The worker command's order: the pass is open in the worker's
	// database before it joins.
	if _, err := db.BeginPass(store.Pass{ID: rec.Pass.ID, StartURLs: starts}, nil); err != nil {
		t.Fatal(err)
	}
	f, err := w.Join(context.Background(), rec.Pass.ID)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	select {
	case <-ackedA:
	case <-time.After(time.Minute):
		t.Fatal("the seed message of site A was not acked")
	}
	_, out, err := crawler.New(crawler.Config{Concurrency: 2, Frontier: f}, engine, db).Run(w.Context(), context.Background(),
		crawler.PassSpec{Pass: store.Pass{ID: rec.Pass.ID, StartURLs: starts}})
	if err != nil || !out.Complete {
		t.Fatalf("crawl: %+v, %v", out, err)
	}
	for name, d := range map[string]*store.DB{"worker": db, "merged": merged} {
		seeds := map[string]bool{}
		if err := d.Records(rec.Pass.ID, func(r *store.URLRecord) error {
			seeds[r.URL] = r.Seed
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for _, s := range starts {
			if !seeds[s] {
				t.Errorf("%s database: %s is no seed (records: %v)", name, s, seeds)
			}
		}
	}
}

func hostOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}
