package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/linkpatrol/linkpatrol/store"
)

// startServer runs a real NATS server with JetStream in the test, on a
// free loopback port, its store in the test's temporary directory.
func startServer(t testing.TB) string {
	t.Helper()
	s, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: storeDir(t),
		NoLog: true, NoSigs: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS server not ready")
	}
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	return s.ClientURL()
}

// storeDir is a directory for a test server's JetStream store: in memory
// (/dev/shm) where the machine has one, else on disk. A store on disk
// cost every stream, consumer, KV bucket and watch the tests make a
// directory, files and fsyncs of their metadata: a tenth of the
// package's CPU time was the kernel's, on an ext4 /tmp. The server runs
// the same code on either; only the kernel's part differs.
func storeDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "cluster-test-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("remove the server's store: %v", err)
		}
	})
	return dir
}

func connect(t testing.TB, url string) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

func openDB(t testing.TB, name string, forward bool) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), name), store.Options{ForwardResults: forward, SyncEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// web is a synthetic web for the cluster tests: hosts site<i>.test, each
// with pages; every page links to the next page of its site and to a page
// of the next site, so all of it is reachable from site 0 only through
// links that cross shards.
type web struct {
	hosts, pages int
	mu           sync.Mutex
	fetched      map[string]int // URL -> times any worker fetched it
}

func newWeb(hosts, pages int) *web {
	return &web{hosts: hosts, pages: pages, fetched: map[string]int{}}
}

func (w *web) url(host, page int) string {
	return fmt.Sprintf("http://site%d.test/p%d", host%w.hosts, page%w.pages)
}

func (w *web) all() []string {
	var out []string
	for h := range w.hosts {
		for p := range w.pages {
			out = append(out, w.url(h, p))
		}
	}
	return out
}

// fetch counts a fetch and returns the page's links.
func (w *web) fetch(raw string) []string {
	w.mu.Lock()
	w.fetched[raw]++
	w.mu.Unlock()
	var h, p int
	if _, err := fmt.Sscanf(raw, "http://site%d.test/p%d", &h, &p); err != nil {
		panic(raw)
	}
	return []string{w.url(h, p+1), w.url(h+1, p)}
}

func (w *web) repeated() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for u, n := range w.fetched {
		if n > 1 {
			out = append(out, u)
		}
	}
	return out
}

// simCrawler stands in for crawler.Crawler in these tests, which prove the
// cluster, not the crawler: it keeps the crawler's side of the frontier
// contract (FRONTIER.md): fetches only owned hosts, forwards the others
// with the result that found them, dedupes its own claims, calls Idle each
// time it becomes idle, and returns once idle and Done.
type simCrawler struct {
	web  *web
	db   *store.DB
	f    *Frontier
	pass uint64
}

func (c *simCrawler) run(ctx context.Context) error {
	tasks, err := c.db.Frontier()
	if err != nil {
		return err
	}
	claims := map[string]bool{}
	var queue []store.Task
	for _, t := range tasks {
		claims[t.URL] = true
		queue = append(queue, t)
	}
	if err := c.db.ResolvedIn(c.pass, func(u string) error { claims[u] = true; return nil }); err != nil {
		return err
	}
	idle := false
	for {
		if len(queue) == 0 {
			if !idle {
				idle = true
				c.f.Idle(true)
			}
			select {
			case <-ctx.Done():
				return context.Cause(ctx)
			case <-c.f.Done():
				return nil
			case batch := <-c.f.Incoming():
				for _, t := range batch {
					if !claims[t.URL] {
						claims[t.URL] = true
						queue = append(queue, t)
					}
				}
			}
			continue
		}
		if idle {
			idle = false
			c.f.Idle(false)
		}
		n := min(len(queue), 7)
		results := make([]store.Result, 0, n)
		for _, t := range queue[:n] {
			r := store.Result{Record: store.URLRecord{URL: t.URL, Action: "parse", Verdict: store.VerdictOK, Status: 200, Parsed: true}, SetLinks: true}
			for i, l := range c.web.fetch(t.URL) {
				r.Links = append(r.Links, store.Link{URL: l, Line: i + 1, Tag: "a", Attr: "href"})
				if claims[l] {
					continue
				}
				claims[l] = true
				u, _ := url.Parse(l)
				nt := store.Task{URL: l, Action: "parse", Depth: t.Depth + 1}
				if c.f.Owns(u.Host) {
					r.Enqueue = append(r.Enqueue, nt)
					queue = append(queue, nt)
				} else {
					r.Forward = append(r.Forward, nt)
				}
			}
			results = append(results, r)
		}
		queue = queue[n:]
		if err := c.db.Commit(c.pass, results); err != nil {
			return err
		}
	}
}

// node is one worker process of a test: its database, worker and crawler.
type node struct {
	name   string
	db     *store.DB
	w      *Worker
	f      *Frontier
	errc   chan error
	cancel context.CancelFunc
}

// startNode starts a worker on shards and its crawler on pass rec, as the
// worker command will, with a new database.
func startNode(t testing.TB, js jetstream.JetStream, wb *web, name string, shards []int, rec PassRecord, cfg WorkerConfig) *node {
	t.Helper()
	return restartNode(t, js, wb, name, filepath.Join(t.TempDir(), name+".db"), shards, rec, cfg)
}

// restartNode starts a worker on the database at path: a pass already
// open there (the one a killed worker left) is resumed, as the worker
// command does.
func restartNode(t testing.TB, js jetstream.JetStream, wb *web, name, path string, shards []int, rec PassRecord, cfg WorkerConfig) *node {
	t.Helper()
	db, err := store.Open(path, store.Options{ForwardResults: true, SyncEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	n := &node{name: name, db: db, errc: make(chan error, 1)}
	cfg.Name, cfg.Shards, cfg.DB = name, shards, n.db
	if cfg.DBPath == "" {
		// Where it runs, as the worker command says it: a node started
		// again on its file takes its leases back at once.
		cfg.Host, cfg.DBPath = "test", path
	}
	if cfg.Logf == nil {
		cfg.Logf = func(format string, args ...any) { t.Logf(name+": "+format, args...) }
	}
	ctx := context.Background()
	if n.w, err = NewWorker(ctx, js, cfg); err != nil {
		t.Fatalf("NewWorker(%s): %v", name, err)
	}
	if open, ok, err := db.OpenPass(); err != nil {
		t.Fatal(err)
	} else if !ok || open.ID != rec.Pass.ID {
		if _, err := n.db.BeginPass(store.Pass{ID: rec.Pass.ID, StartURLs: rec.Pass.StartURLs, Started: rec.Pass.Started}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n.f, err = n.w.Join(ctx, rec.Pass.ID); err != nil {
		t.Fatalf("Join(%s): %v", name, err)
	}
	cctx, cancel := context.WithCancel(n.w.Context())
	n.cancel = cancel
	c := &simCrawler{web: wb, db: n.db, f: n.f, pass: rec.Pass.ID}
	go func() { n.errc <- c.run(cctx) }()
	t.Cleanup(n.stop)
	return n
}

func (n *node) stop() {
	if n.cancel == nil {
		return
	}
	n.cancel()
	<-n.errc
	_ = n.f.Close()
	_ = n.w.Close()
	n.cancel = nil
}

// kill stops the node as SIGKILL would, as far as the cluster can tell:
// its crawler and frontier stop where they are, its leases are neither
// renewed nor given up, and its database file is closed as it is.
func (n *node) kill() {
	n.cancel()
	<-n.errc
	_ = n.f.Close()
	n.w.cancel(errors.New("killed"))
	<-n.w.kept
	_ = n.db.Close()
	n.cancel = nil
}

// wait waits for the node's crawler to return, as it does once the pass
// is over.
func (n *node) wait(t testing.TB) {
	t.Helper()
	select {
	case err := <-n.errc:
		n.errc <- err
		if err != nil {
			t.Fatalf("%s: crawler: %v", n.name, err)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("%s: the pass did not end", n.name)
	}
}

// coordinate starts a coordinator on a merged database and begins a pass
// seeded with start.
func coordinate(t testing.TB, js jetstream.JetStream, cfg CoordinatorConfig, start ...string) (*Coordinator, *store.DB, PassRecord) {
	t.Helper()
	return coordinateWith(t, js, cfg, Options{LeaseTTL: leaseTTL}, start...)
}

// coordinateWith is coordinate with the cluster's options.
func coordinateWith(t testing.TB, js jetstream.JetStream, cfg CoordinatorConfig, opt Options, start ...string) (*Coordinator, *store.DB, PassRecord) {
	t.Helper()
	merged := openDB(t, "merged.db", false)
	c, _ := runCoordinatorWith(t, js, merged, cfg, opt)
	seeds := make([]store.Task, len(start))
	for i, s := range start {
		seeds[i] = store.Task{URL: s, Action: "parse"}
	}
	rec, err := c.Begin(context.Background(), BeginRequest{Pass: store.Pass{StartURLs: start}, Seeds: seeds})
	if err != nil {
		t.Fatal(err)
	}
	return c, merged, rec
}

// runCoordinator runs a coordinator on merged until the test ends, or stop.
//
// Its leases live an hour: no test of a pass waits for one to lapse, and
// with a TTL of 15 s a starved machine (load 30, eight tests at once)
// failed a worker's round of 128 lease writes and it gave its shards up
// mid-pass, which is right but not what those tests are about. Renewal
// is the lease tests' (lease_test.go).
func runCoordinator(t testing.TB, js jetstream.JetStream, merged *store.DB, cfg CoordinatorConfig) (c *Coordinator, stop func()) {
	t.Helper()
	return runCoordinatorWith(t, js, merged, cfg, Options{LeaseTTL: leaseTTL})
}

// leaseTTL is the lease TTL of the tests of a pass.
const leaseTTL = time.Hour

// runCoordinatorWith is runCoordinator with the cluster's options.
func runCoordinatorWith(t testing.TB, js jetstream.JetStream, merged *store.DB, cfg CoordinatorConfig, opt Options) (c *Coordinator, stop func()) {
	t.Helper()
	return runCoordinatorOn(t, js, merged, cfg, opt, nil)
}

// runCoordinatorOn is runCoordinatorWith that calls prepare, when set,
// on the coordinator before it runs.
func runCoordinatorOn(t testing.TB, js jetstream.JetStream, merged *store.DB, cfg CoordinatorConfig, opt Options, prepare func(*Coordinator)) (c *Coordinator, stop func()) {
	t.Helper()
	cfg.DB = merged
	if cfg.onVerdict == nil {
		var last string
		cfg.onVerdict = func(v Verdict) {
			if v.Why != last {
				last = v.Why
				t.Logf("verdict: %+v", v)
			}
		}
	}
	if cfg.Logf == nil {
		cfg.Logf = func(format string, args ...any) { t.Logf("coordinator: "+format, args...) }
	}
	ctx, cancel := context.WithCancel(context.Background())
	c, err := NewCoordinator(ctx, js, opt, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if prepare != nil {
		prepare(c)
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("coordinator: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return c, stop
}

// split divides the shards of the web's hosts among n workers. A worker
// of a real cluster owns a range of all 256; here each owns only shards
// in use, since every consumer costs the test server an fsync at shutdown.
func (w *web) split(n int) [][]int {
	seen := map[int]bool{}
	for h := range w.hosts {
		seen[Shard(fmt.Sprintf("site%d.test", h))] = true
	}
	var shards []int
	for s := range Shards {
		if seen[s] {
			shards = append(shards, s)
		}
	}
	out := make([][]int, n)
	for i, s := range shards {
		out[i*n/len(shards)] = append(out[i*n/len(shards)], s)
	}
	return out
}

// mergedPass and seedsOf are what check --nats asks the coordinator for.
func mergedPass(wb *web) store.Pass { return store.Pass{StartURLs: []string{wb.url(0, 0)}} }

func seedsOf(wb *web) []store.Task { return []store.Task{{URL: wb.url(0, 0), Action: "parse"}} }
