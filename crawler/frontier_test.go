package crawler_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/crawler/crawltest"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
)

// relay is a two-crawler cluster in miniature: each node owns some hosts,
// the tasks one node forwards (committed on its results) are delivered to
// the node that owns them, and the pass is done when every node is idle and
// every task delivered has been resolved by its owner. The owner's commits
// tell it so: a node reports idle only once all its results are committed.
type relay struct {
	mu          sync.Mutex
	nodes       []*relayNode
	done        chan struct{}
	closed      bool
	outstanding int // tasks delivered to a node and not yet resolved by it
	delivered   int
}

type relayNode struct {
	*store.DB // with Commit below
	r         *relay
	hosts     map[string]bool
	in        chan []store.Task
	idle      bool
	// waiting are the URLs delivered to this node that it has not yet
	// committed; resolved are the URLs it has.
	waiting  map[string]bool
	resolved map[string]bool
}

func newRelay(n int) *relay {
	r := &relay{done: make(chan struct{})}
	for range n {
		r.nodes = append(r.nodes, &relayNode{r: r, hosts: map[string]bool{}, in: make(chan []store.Task),
			waiting: map[string]bool{}, resolved: map[string]bool{}})
	}
	return r
}

func (n *relayNode) Owns(host string) bool         { return n.hosts[host] }
func (n *relayNode) Incoming() <-chan []store.Task { return n.in }
func (n *relayNode) Done() <-chan struct{}         { return n.r.done }

func (n *relayNode) Idle(idle bool) {
	n.r.mu.Lock()
	defer n.r.mu.Unlock()
	n.idle = idle
	n.r.check()
}

// check closes done when the pass is complete everywhere; r.mu is held.
func (r *relay) check() {
	if r.closed || r.outstanding > 0 {
		return
	}
	for _, n := range r.nodes {
		if !n.idle {
			return
		}
	}
	r.closed = true
	close(r.done)
}

// CommitHosts is the node's store: it commits, then hands what the results
// forward to the hosts' owners.
func (n *relayNode) CommitHosts(passID uint64, results []store.Result, hosts map[string][]byte) error {
	if err := n.DB.CommitHosts(passID, results, hosts); err != nil {
		return err
	}
	r := n.r
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, res := range results {
		u := res.Record.URL
		n.resolved[u] = true
		if n.waiting[u] {
			delete(n.waiting, u)
			r.outstanding--
		}
	}
	batches := make(map[*relayNode][]store.Task)
	for _, res := range results {
		for _, t := range res.Forward {
			u, err := url.Parse(t.URL)
			if err != nil {
				return err
			}
			for _, o := range r.nodes {
				if o.hosts[u.Host] && !o.resolved[t.URL] && !o.waiting[t.URL] {
					o.waiting[t.URL] = true
					r.outstanding++
					r.delivered++
					batches[o] = append(batches[o], t)
				}
			}
		}
	}
	for o, b := range batches {
		// Not on the writer's goroutine: the owner may be waiting on its
		// own writer, which may be delivering to this node.
		go func() { o.in <- b }()
	}
	return nil
}

// run runs one crawler per node, node i owning the host of servers[i] and
// seeded with starts[i], all in one pass of starts, and fails t unless each
// completes.
func (r *relay) run(t *testing.T, engine crawler.Decider, cfg crawler.Config, servers []*httptest.Server, starts []string) ([]store.Pass, []*crawler.Crawler) {
	t.Helper()
	passes := make([]store.Pass, len(r.nodes))
	crawlers := make([]*crawler.Crawler, len(r.nodes))
	outs := make([]crawler.Outcome, len(r.nodes))
	errs := make([]error, len(r.nodes))
	var wg sync.WaitGroup
	for i, n := range r.nodes {
		n.hosts[hostOf(t, servers[i].URL)] = true
		n.DB = openDB(t)
		cfg.Frontier = n
		crawlers[i] = crawler.New(cfg, engine, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			spec := crawler.PassSpec{Pass: store.Pass{StartURLs: starts}, Seeds: starts[i : i+1]}
			passes[i], outs[i], errs[i] = crawlers[i].Run(context.Background(), context.Background(), spec)
		}()
	}
	wg.Wait()
	for i := range outs {
		if errs[i] != nil || !outs[i].Complete {
			t.Fatalf("crawler %d: complete %v, err %v", i, outs[i].Complete, errs[i])
		}
	}
	return passes, crawlers
}

// Two crawlers that each own one of two sites linking to each other, and
// hand each other the links they do not own, fetch every URL exactly once
// and record together what one crawler records alone.
func TestTwoCrawlersShareAPassByHost(t *testing.T) {
	t.Parallel()
	sites := make([]*crawltest.Site, 2)
	srvs := make([]*httptest.Server, 2)
	for i := range srvs {
		srvs[i] = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { sites[i].ServeHTTP(w, r) }))
		t.Cleanup(srvs[i].Close)
	}
	for i := range sites {
		sites[i] = crawltest.NewSite(crawltest.SiteOptions{Pages: 150, Images: 2, BrokenEvery: 15, RedirectEvery: 4,
			External: srvs[1-i].URL, Seed: int64(7 + i)})
	}
	starts := []string{srvs[0].URL + "/", srvs[1].URL + "/"}
	engine, err := rules.New(rules.Config{Start: starts})
	if err != nil {
		t.Fatal(err)
	}

	r := newRelay(2)
	// Tasks go from one crawler to the other when the sender commits: at
	// 50ms, not the default second, the exchange does not wait on the clock.
	passes, _ := r.run(t, engine, crawler.Config{Concurrency: 4, BatchInterval: 50 * time.Millisecond}, srvs, starts)
	union := make(map[string]store.URLRecord)
	for i, n := range r.nodes {
		err := n.DB.Records(passes[i].ID, func(rec *store.URLRecord) error {
			if _, dup := union[rec.URL]; dup && rec.Verdict != store.VerdictSkipped {
				t.Errorf("%s recorded by both crawlers", rec.URL)
			}
			union[rec.URL] = *rec
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if r.delivered < 50 {
		t.Errorf("only %d tasks went from one crawler to the other", r.delivered)
	}
	var together []crawltest.Stats
	for _, s := range sites {
		st := s.Stats()
		together = append(together, st)
		if st.RepeatedURLs != 0 {
			t.Errorf("%d URLs requested more than once with one method", st.RepeatedURLs)
		}
		s.Reset()
	}

	single := runPass(t, crawler.Config{Concurrency: 4}, starts...)
	if !single.outcome.Complete {
		t.Fatal("the single crawler's pass did not complete")
	}
	for i, s := range sites {
		st := s.Stats()
		if st.DistinctURLs != together[i].DistinctURLs || st.Requests != together[i].Requests {
			t.Errorf("site %d: %d requests for %d URLs from one crawler, %d for %d from two",
				i, st.Requests, st.DistinctURLs, together[i].Requests, together[i].DistinctURLs)
		}
	}
	if len(union) != len(single.records) {
		t.Errorf("two crawlers recorded %d URLs, one %d", len(union), len(single.records))
	}
	for u, want := range single.records {
		got, ok := union[u]
		switch {
		case !ok:
			t.Errorf("%s: not recorded by either crawler", u)
		case got.Verdict != want.Verdict || got.Status != want.Status || got.Action != want.Action ||
			got.Parsed != want.Parsed || got.FinalURL != want.FinalURL || got.Seed != want.Seed:
			t.Errorf("%s: %+v from two crawlers, %+v from one", u, got, want)
		}
	}
}

func hostOf(t *testing.T, s string) string {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// waitingFrontier owns every host; the test sends its work and closes Done.
type waitingFrontier struct {
	in   chan []store.Task
	idle chan bool
	done chan struct{}
}

func (f *waitingFrontier) Owns(string) bool              { return true }
func (f *waitingFrontier) Incoming() <-chan []store.Task { return f.in }
func (f *waitingFrontier) Done() <-chan struct{}         { return f.done }
func (f *waitingFrontier) Idle(idle bool)                { f.idle <- idle }

// A crawler with nothing left to do waits for the frontier: work that
// comes in is done (and committed before it says it is idle again), and it
// returns only when the frontier says the pass is done everywhere.
func TestIdleCrawlerWaitsForTheFrontier(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.Handle("/", page(`<a href="/a">a</a>`))
	mux.Handle("/a", page(`ok`))
	mux.Handle("/later", page(`<a href="/b">b</a>`))
	mux.Handle("/b", page(`ok`))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	db, err := store.Open(filepath.Join(t.TempDir(), "lp.db"), dbOptions)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	engine, err := rules.New(rules.Config{Start: []string{srv.URL + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	f := &waitingFrontier{in: make(chan []store.Task), idle: make(chan bool), done: make(chan struct{})}
	c := crawler.New(crawler.Config{Concurrency: 2, Frontier: f}, engine, db)
	type ran struct {
		pass store.Pass
		out  crawler.Outcome
		err  error
	}
	returned := make(chan ran, 1)
	go func() {
		pass, out, err := c.Run(context.Background(), context.Background(), passOf(srv.URL+"/"))
		returned <- ran{pass, out, err}
	}()

	committed := func(u string) bool {
		rec, ok, err := db.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		return ok && rec.Pass == 1 // the database's first pass
	}
	if !<-f.idle {
		t.Fatal("Idle(false) before the crawler was ever idle")
	}
	if !committed(srv.URL+"/a") || committed(srv.URL+"/b") {
		t.Fatal("idle before its results were committed, or with work it was never given")
	}
	select {
	case r := <-returned:
		t.Fatalf("Run returned while the frontier was not done: %+v", r)
	default:
	}

	f.in <- []store.Task{{URL: srv.URL + "/later", Action: "parse", Depth: 1}}
	if <-f.idle {
		t.Fatal("work came in, and the crawler did not say it was busy")
	}
	if !<-f.idle {
		t.Fatal("Idle(false) twice")
	}
	if !committed(srv.URL+"/later") || !committed(srv.URL+"/b") {
		t.Error("idle again before the work that came in (and what it found) was committed")
	}
	select {
	case r := <-returned:
		t.Fatalf("Run returned while the frontier was not done: %+v", r)
	default:
	}
	close(f.done)
	r := <-returned
	if r.err != nil || !r.out.Complete || r.pass.State != store.PassComplete {
		t.Fatalf("complete %v, state %s, err %v", r.out.Complete, r.pass.State, r.err)
	}
}

// A redirect to a host another crawler owns is not followed here: the
// target is forwarded to its owner, which requests and records it (and
// follows its links), and the chain's records here await its result. Put
// together (as a cluster's coordinator does, with FinishChain), they say
// what one crawler says: also for a chain that goes from one crawler to
// the other and back.
func TestForeignRedirectHopIsHandedToItsOwner(t *testing.T) {
	t.Parallel()
	var srvA *httptest.Server
	var mu sync.Mutex
	asked := map[string]int{}
	count := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			asked[r.Host+r.URL.Path]++
			mu.Unlock()
			h.ServeHTTP(w, r)
		})
	}
	muxB := http.NewServeMux()
	muxB.Handle("/", page(`home`))
	muxB.HandleFunc("/hop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, srvA.URL+"/y", http.StatusFound)
	})
	muxB.Handle("/x", page(`<a href="/y">y</a>`))
	muxB.Handle("/y", page(`ok`))
	srvB := httptest.NewServer(count(muxB))
	t.Cleanup(srvB.Close)
	muxA := http.NewServeMux()
	muxA.Handle("/", page(`<a href="/go">go</a><a href="/y">y</a><a href="/back">back</a>`))
	muxA.HandleFunc("/go", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, srvB.URL+"/x", http.StatusFound)
	})
	muxA.HandleFunc("/back", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, srvB.URL+"/hop", http.StatusFound)
	})
	muxA.Handle("/y", page(`ok`))
	srvA = httptest.NewServer(count(muxA))
	t.Cleanup(srvA.Close)
	starts := []string{srvA.URL + "/", srvB.URL + "/"}
	engine, err := rules.New(rules.Config{Start: starts})
	if err != nil {
		t.Fatal(err)
	}
	r := newRelay(2)
	passes, crawlers := r.run(t, engine, crawler.Config{Concurrency: 2}, []*httptest.Server{srvA, srvB}, starts)
	if a, b := crawlers[0].Progress().ForeignHops, crawlers[1].Progress().ForeignHops; a != 2 || b != 1 {
		t.Errorf("foreign hops %d and %d, want 2 (/go, /back) and 1 (/hop)", a, b)
	}
	get := func(i int, u string) (store.URLRecord, bool) {
		rec, ok, err := r.nodes[i].DB.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		return rec, ok && rec.Pass == passes[i].ID
	}
	awaiting := []struct {
		node       int
		url, waits string
	}{{0, srvA.URL + "/go", srvB.URL + "/x"}, {0, srvA.URL + "/back", srvB.URL + "/hop"}, {1, srvB.URL + "/hop", srvA.URL + "/y"}}
	for _, a := range awaiting {
		if rec, ok := get(a.node, a.url); !ok || rec.Awaits != a.waits || rec.FinalURL != a.waits || len(rec.Redirects) != 1 {
			t.Errorf("%s awaits %q, final %q, %d hops (recorded: %v); want it to await %s", a.url, rec.Awaits, rec.FinalURL, len(rec.Redirects), ok, a.waits)
		}
	}
	for _, u := range []string{"/x", "/hop"} {
		if _, ok := get(0, srvB.URL+u); ok {
			t.Errorf("%s was recorded by the crawler that does not own it", u)
		}
	}
	for _, u := range []string{"/x", "/y"} {
		if rec, ok := get(1, srvB.URL+u); !ok || rec.Verdict != store.VerdictOK {
			t.Errorf("%s on its owner: %+v (recorded: %v)", u, rec, ok)
		}
	}
	mu.Lock()
	for u, n := range asked {
		if n > 1 {
			t.Errorf("%s asked for %d times", u, n)
		}
	}
	mu.Unlock()
	// Put together: /hop from A's /y, then /back from /hop, /go from /x.
	hop, _ := get(1, srvB.URL+"/hop")
	y, _ := get(0, srvA.URL+"/y")
	crawler.FinishChain(&hop, &y, 0)
	back, _ := get(0, srvA.URL+"/back")
	crawler.FinishChain(&back, &hop, 0)
	if back.Verdict != store.VerdictOK || back.Status != 200 || back.FinalURL != srvA.URL+"/y" || len(back.Redirects) != 2 || back.Awaits != "" {
		t.Errorf("the chain through the other host, put together: %+v", back)
	}
	goRec, _ := get(0, srvA.URL+"/go")
	x, _ := get(1, srvB.URL+"/x")
	crawler.FinishChain(&goRec, &x, 0)
	if goRec.Verdict != store.VerdictOK || goRec.FinalURL != srvB.URL+"/x" {
		t.Errorf("the redirect's record, put together: %+v", goRec)
	}
}

// A stop while the crawler waits on the frontier ends the run, stopped:
// the pass is not complete while the frontier has not said so.
func TestStopWhileWaitingOnTheFrontier(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(page(`ok`))
	t.Cleanup(srv.Close)
	engine, err := rules.New(rules.Config{Start: []string{srv.URL + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	f := &waitingFrontier{in: make(chan []store.Task), idle: make(chan bool), done: make(chan struct{})}
	c := crawler.New(crawler.Config{Concurrency: 2, Frontier: f}, engine, openDB(t))
	stop, cancel := context.WithCancel(context.Background())
	go func() {
		<-f.idle
		cancel()
	}()
	pass, out, err := c.Run(stop, context.Background(), passOf(srv.URL+"/"))
	if err != nil || out.Complete || pass.State != store.PassStopped {
		t.Fatalf("complete %v, state %s, err %v; want stopped", out.Complete, pass.State, err)
	}
}
