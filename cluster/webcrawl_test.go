package cluster

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/crawler/crawltest"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// webRun is one distributed pass of the real crawler over a crawltest.Web:
// a coordinator on a merged database and workers in this process, each
// running crawler.Run on its own database through its Frontier, as the
// worker command does.
type webRun struct {
	js       jetstream.JetStream
	merged   *store.DB
	rec      PassRecord
	outcomes []crawler.Outcome // one per worker, in the order they ended
	requests []int64           // HTTP requests each worker sent, by worker
	shards   [][]int           // the shards each worker owned
}

// webCrawl is how the workers of a webRun crawl.
type webCrawl struct {
	workers int
	// crawler is each worker's configuration; Frontier is set per worker.
	crawler crawler.Config
	// settings, when set, are every host's politeness limits, kept by a
	// throttle of each worker's own (as each worker process has one).
	settings *throttle.Settings
	timeout  time.Duration // how long the pass may take; default 2 minutes
	// started, when set, runs once every worker is set up, just before
	// their crawlers start (a benchmark starts its timer there).
	started func()
	// leaseTTL is the cluster's; default leaseTTL, which no test's pass
	// renews. A benchmark gives the default of the product, whose
	// renewals are part of what it measures.
	leaseTTL time.Duration
}

// splitShards divides the shards of the web's sites among n workers in
// shard order, each worker's range holding about as many sites as the
// others (a shard may hold several). Each worker owns only shards in use,
// as in web.split.
func splitShards(starts []string, n int) [][]int {
	sites := map[int]int{} // shard -> sites in it
	for _, s := range starts {
		u, _ := url.Parse(s)
		sites[Shard(u.Host)]++
	}
	out := make([][]int, n)
	before := 0
	for _, s := range slices.Sorted(maps.Keys(sites)) {
		i := before * n / len(starts)
		out[i] = append(out[i], s)
		before += sites[s]
	}
	return out
}

// crawlWeb runs one distributed pass from every site's home page on a
// fresh server and returns once every worker's crawler has returned
// Complete.
func crawlWeb(tb testing.TB, web *crawltest.Web, wc webCrawl) *webRun {
	tb.Helper()
	starts := web.StartURLs()
	engine, err := rules.New(rules.Config{Start: starts})
	if err != nil {
		tb.Fatal(err)
	}
	r := &webRun{js: connect(tb, startServer(tb)), shards: splitShards(starts, wc.workers)}
	quiet := CoordinatorConfig{onVerdict: func(Verdict) {}, Logf: func(string, ...any) {}}
	if wc.leaseTTL == 0 {
		wc.leaseTTL = leaseTTL
	}
	_, r.merged, r.rec = coordinateWith(tb, r.js, quiet, Options{LeaseTTL: wc.leaseTTL}, starts...)

	type run struct {
		out crawler.Outcome
		err error
		why string // when not complete: what the worker and its frontier say
	}
	r.requests = make([]int64, wc.workers)
	results := make(chan run, wc.workers)
	var crawlers []func()
	for i := range wc.workers {
		name := fmt.Sprintf("w%d", i+1)
		db := openDB(tb, name+".db", true)
		w, err := NewWorker(context.Background(), r.js, WorkerConfig{Name: name, Shards: r.shards[i], DB: db})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = w.Close() })
		f, err := w.Join(context.Background(), r.rec.Pass.ID)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = f.Close() })
		cfg := wc.crawler
		cfg.Frontier = f
		if wc.settings != nil {
			settings := func(string) throttle.Settings { return *wc.settings }
			cfg.Throttle = throttle.New(throttle.Config{Settings: settings})
			cfg.HostSettings = settings
		}
		cr := crawler.New(cfg, engine, db)
		crawlers = append(crawlers, func() {
			_, out, err := cr.Run(w.Context(), context.Background(), crawler.PassSpec{Pass: store.Pass{ID: r.rec.Pass.ID, StartURLs: starts}})
			r.requests[i] = cr.Progress().Requests
			res := run{out: out, err: err}
			if !out.Complete {
				res.why = fmt.Sprintf("%s: context: %v; pass ended %q", name, context.Cause(w.Context()), f.Ended())
			}
			results <- res
		})
	}
	if wc.started != nil {
		wc.started()
	}
	for _, c := range crawlers {
		go c()
	}
	timeout := wc.timeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	deadline := time.After(timeout)
	for range wc.workers {
		select {
		case res := <-results:
			if res.err != nil || !res.out.Complete {
				tb.Fatalf("worker crawl: %+v, %v (%s)", res.out, res.err, res.why)
			}
			r.outcomes = append(r.outcomes, res.out)
		case <-deadline:
			tb.Fatalf("the distributed pass did not end in %s", timeout)
		}
	}
	return r
}

// foreignHops sums the redirect hops the workers followed to hosts they
// do not own.
func (r *webRun) foreignHops() int64 {
	var n int64
	for _, o := range r.outcomes {
		n += o.ForeignHops
	}
	return n
}

// messages is the number of messages the pass published: tasks (seeds
// included) and results.
func (r *webRun) messages(tb testing.TB) (tasks, results uint64) {
	return publishedMessages(tb, r.js)
}

// publishedMessages counts what the streams took in: tasks (seeds
// included) and results.
func publishedMessages(tb testing.TB, js jetstream.JetStream) (tasks, results uint64) {
	tb.Helper()
	var n [2]uint64
	for i, name := range []string{todoStream, resStream} {
		st, err := js.Stream(context.Background(), name)
		if err != nil {
			tb.Fatal(err)
		}
		info, err := st.Info(context.Background())
		if err != nil {
			tb.Fatal(err)
		}
		n[i] = info.State.LastSeq
	}
	return n[0], n[1]
}

// urls is the number of URLs the merged database holds for the pass.
func (r *webRun) urls(tb testing.TB) int {
	tb.Helper()
	n := 0
	if err := r.merged.Records(r.rec.Pass.ID, func(*store.URLRecord) error { n++; return nil }); err != nil {
		tb.Fatal(err)
	}
	return n
}
