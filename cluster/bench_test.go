package cluster

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/crawler/crawltest"
	"github.com/linkpatrol/linkpatrol/store"
)

// BenchmarkDistributed is DISTRIBUTED.md's test 9: one distributed pass of
// the real crawler over 256 sites, each on its own loopback port and
// answering after 50 ms, with W = 1, 2 and 4 workers in this process. Each
// worker may have 16 requests in flight and each host 2, so a worker's
// concurrency binds (256 hosts could take 512), not the hosts: with
// enough CPU, URLs/s grows with W.
//
// All the workers, the sites and the NATS server share this process and
// its CPUs: on one machine the curve flattens once the CPU, not the 50 ms
// wait, binds. requests/worker and requests/host say whether the work was
// spread evenly; cpu-µs/URL is the CPU the whole process spent per URL
// (workers, sites, server together), which caps one machine at
// cores/cpu-µs URLs per second whatever W is; heap-MB and anon-RSS-MB are the whole process (server,
// coordinator, workers, sites), an upper bound on the server's.
func BenchmarkDistributed(b *testing.B) {
	const (
		sites       = 256
		latency     = 50 * time.Millisecond
		concurrency = 16
	)
	web := crawltest.NewWeb(crawltest.WebOptions{Sites: sites, Site: crawltest.SiteOptions{
		Pages: 16, LinksPerPage: 3, PageBytes: 400, Latency: latency,
	}})
	b.Cleanup(web.Close)
	for _, workers := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			var urls, taskMsgs, resultMsgs int
			var cpu time.Duration
			perWorker := make([]int64, workers)
			for range b.N {
				b.StopTimer()
				web.Reset()
				var cpu0 time.Duration
				run := crawlWeb(b, web, webCrawl{
					workers:  workers,
					crawler:  crawler.Config{Concurrency: concurrency, PerHost: 2},
					timeout:  10 * time.Minute,
					leaseTTL: defaultLeaseTTL,
					started: func() {
						cpu0 = processCPU(b)
						b.StartTimer()
					},
				})
				b.StopTimer()
				cpu += processCPU(b) - cpu0
				if r := web.Repeated(); len(r) > 0 {
					b.Fatalf("%d URLs asked for twice: %q", len(r), r)
				}
				n := run.urls(b)
				tasks, results := run.messages(b)
				urls += n
				taskMsgs += int(tasks)
				resultMsgs += int(results)
				for i, r := range run.requests {
					perWorker[i] += r
				}
			}
			st := web.Stats()
			perHost := make([]int64, sites)
			for i, s := range web.Sites {
				perHost[i] = s.Stats().Requests
			}
			b.ReportMetric(float64(urls)/b.Elapsed().Seconds(), "URLs/s")
			b.ReportMetric(float64(taskMsgs)/float64(urls), "task-msgs/URL")
			b.ReportMetric(float64(resultMsgs)/float64(urls), "result-msgs/URL")
			b.ReportMetric(float64(cpu.Microseconds())/float64(urls), "cpu-µs/URL")
			b.ReportMetric(float64(slices.Min(perWorker))/float64(b.N), "min-requests/worker")
			b.ReportMetric(float64(slices.Max(perWorker))/float64(b.N), "max-requests/worker")
			b.ReportMetric(float64(st.Requests)/float64(sites), "requests/host")
			b.ReportMetric(float64(st.MaxInFlight), "max-in-flight/host")
			heap, anon, file := memory(b)
			b.ReportMetric(heap/(1<<20), "heap-MB")
			b.ReportMetric(anon/(1<<20), "anon-RSS-MB")
			b.ReportMetric(file/(1<<20), "file-RSS-MB")
		})
	}
}

// BenchmarkDistributedCoordinatorMemory is what the coordinator holds per
// URL: results for n URLs, published as workers publish them (32 per
// message, on the shards of their hosts), are written by one coordinator
// into its merged database, with no worker, crawler or site in the
// process. heap-B/URL is the growth of the live heap (after a GC) of the
// whole process, NATS server and coordinator together, and anon-RSS-B/URL
// of its anonymous resident memory; file-RSS-B/URL is the merged file's
// pages mapped by bbolt, and db-B/URL the file's size.
func BenchmarkDistributedCoordinatorMemory(b *testing.B) {
	for _, n := range []int{50_000, 200_000, 1_000_000} {
		b.Run(fmt.Sprintf("urls=%d", n), func(b *testing.B) {
			for range b.N {
				coordinatorMemory(b, n)
			}
		})
	}
}

func coordinatorMemory(b *testing.B, n int) {
	b.StopTimer()
	url := startServer(b)
	js := connect(b, url)
	// A seed whose shard has no owner keeps the pass running while the
	// results are written.
	c, merged, rec := coordinate(b, js, CoordinatorConfig{onVerdict: func(Verdict) {}, Logf: func(string, ...any) {}}, "http://nobody.test/")
	_ = c
	nc, err := nats.Connect(url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	heap0, anon0, file0 := memory(b)
	b.StartTimer()
	const batch = 32
	var msgs []*nats.Msg
	for i := 0; i < n; i += batch {
		e := store.OutboxEntry{Pass: rec.Pass.ID}
		host := fmt.Sprintf("site%d.test", i/batch%4096)
		for j := i; j < min(i+batch, n); j++ {
			u := fmt.Sprintf("http://%s/section/%d/page-%d.html", host, j%97, j)
			e.Results = append(e.Results, store.Result{
				Record: store.URLRecord{URL: u, Pass: rec.Pass.ID, Action: "parse", Verdict: store.VerdictOK,
					Status: 200, Parsed: true, ContentType: "text/html"},
				SetLinks: true,
				Links: []store.Link{
					{URL: fmt.Sprintf("http://%s/section/%d/page-%d.html", host, (j+1)%97, j+1), Line: 12, Tag: "a", Attr: "href"},
					{URL: fmt.Sprintf("http://%s/img/%d.png", host, j%50), Line: 20, Tag: "img", Attr: "src"},
				},
			})
		}
		data, err := e.MarshalBinary()
		if err != nil {
			b.Fatal(err)
		}
		m := nats.NewMsg(resSubject(Shard(host)))
		m.Data = data
		msgs = append(msgs, m)
		if len(msgs) == 256 {
			if err := publishAll(context.Background(), js, msgs); err != nil {
				b.Fatal(err)
			}
			msgs = msgs[:0]
		}
	}
	if err := publishAll(context.Background(), js, msgs); err != nil {
		b.Fatal(err)
	}
	cons, err := js.Consumer(context.Background(), resStream, resultsConsumer)
	if err != nil {
		b.Fatal(err)
	}
	for {
		info, err := cons.Info(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if info.NumPending == 0 && info.NumAckPending == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond) // polling the server's own count, not waiting out a guess
	}
	b.StopTimer()
	heap1, anon1, file1 := memory(b)
	got := 0
	if err := merged.Records(rec.Pass.ID, func(*store.URLRecord) error { got++; return nil }); err != nil {
		b.Fatal(err)
	}
	if got != n {
		b.Fatalf("the merged database holds %d URLs, want %d", got, n)
	}
	fi, err := os.Stat(merged.Path())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds()*float64(b.N), "URLs/s")
	b.ReportMetric((heap1-heap0)/float64(n), "heap-B/URL")
	b.ReportMetric((anon1-anon0)/float64(n), "anon-RSS-B/URL")
	b.ReportMetric((file1-file0)/float64(n), "file-RSS-B/URL")
	b.ReportMetric(heap1/(1<<20), "heap-MB")
	b.ReportMetric(anon1/(1<<20), "anon-RSS-MB")
	b.ReportMetric(float64(fi.Size())/float64(n), "db-B/URL")
	b.StartTimer()
}

// processCPU is the CPU time (user and system) the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// memory is the live heap after a collection, and the process's resident
// set (VmRSS) split into anonymous memory (heaps, stacks, the server's
// caches) and file pages (bbolt maps its file: clean pages the kernel may
// drop under pressure), in bytes.
func memory(b *testing.B) (heap, anon, file float64) {
	b.Helper()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) < 2 {
			continue
		}
		kb, err := strconv.ParseFloat(string(f[1]), 64)
		switch string(f[0]) {
		case "RssAnon:":
			anon = kb * 1024
		case "RssFile:":
			file = kb * 1024
		default:
			continue
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	return float64(ms.HeapAlloc), anon, file
}
