package crawler_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// BenchmarkManyHosts measures what per-host state costs: a pass whose start
// page links to n other hosts (each with its robots.txt, so each has state
// to keep), then a later pass of a 2,000-page site on the same database.
// Time and peak heap must grow at most linearly with n, and the later pass
// must not pay for the hosts it never meets.
//
//	go test -run '^$' -bench ManyHosts -benchtime 1x ./crawler/
func BenchmarkManyHosts(b *testing.B) {
	for _, n := range []int{1000, 10_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			tr := manyHostsSite(b, n, nil)
			var first, later time.Duration
			var peak atomic.Uint64
			for range b.N {
				db := openDB(b)
				done := make(chan struct{})
				go sampleHeap(done, &peak)
				first += hostPass(b, db, tr, "http://start.test/", nil)
				later += hostPass(b, db, tr, "http://site.test/0", nil)
				close(done)
				db.Close()
			}
			b.ReportMetric(first.Seconds()/float64(b.N), "first-s")
			b.ReportMetric(later.Seconds()/float64(b.N), "later-s")
			b.ReportMetric(float64(peak.Load())/(1<<20), "peak-MB")
		})
	}
}

// BenchmarkHostsWaiting measures what a page linking n other sites costs
// with the limits a run gives them (throttle.OtherHostDefaults: about one
// request a second each): thousands of hosts wait at once, and the CPU per
// request must stay flat from 1,000 hosts to 10,000 (qa8 S1: it grew with
// n, 0.9 ms to 3.6 ms a request, when each dispatch looked at every
// waiting host again).
//
//	go test -run '^$' -bench HostsWaiting -benchtime 1x ./crawler/
func BenchmarkHostsWaiting(b *testing.B) {
	for _, n := range []int{1000, 3000, 10_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			var requests atomic.Int64
			tr := manyHostsSite(b, n, &requests)
			var cpu time.Duration
			for range b.N {
				db := openDB(b)
				requests.Store(0)
				cpu0 := processCPU(b)
				hostPass(b, db, tr, "http://start.test/", func(host string) throttle.Settings {
					if host == "start.test" {
						return throttle.StartHostDefaults()
					}
					return throttle.OtherHostDefaults()
				})
				cpu += processCPU(b) - cpu0
				db.Close()
				if got, want := requests.Load(), int64(2*n+2); got != want {
					b.Fatalf("%d requests, want %d (robots.txt and one URL a host)", got, want)
				}
			}
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*(2*n+2)), "cpu-µs/request")
		})
	}
}

// manyHostsSite serves a start page (start.test) linking n other hosts
// (h0.test ...), a 2,000-page site (site.test), and "ok" for any other
// URL, each host with a robots.txt, on one loopback server that the
// returned transport dials for every name; requests, when set, counts the
// requests served.
func manyHostsSite(b *testing.B, n int, requests *atomic.Int64) *http.Transport {
	var links strings.Builder
	for i := range n {
		fmt.Fprintf(&links, "<a href=\"http://h%d.test/x\">%d</a>\n", i, i)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests != nil {
			requests.Add(1)
		}
		switch {
		case r.URL.Path == "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
		case r.Host == "start.test" && r.URL.Path == "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, links.String())
		case r.Host == "site.test":
			w.Header().Set("Content-Type", "text/html")
			i, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
			fmt.Fprintf(w, "<a href=\"/%d\">next</a><a href=\"/%d\">other</a>", (i+1)%2000, (i*7+3)%2000)
		default:
			fmt.Fprint(w, "ok")
		}
	}))
	b.Cleanup(srv.Close)
	// Every host name is dialled at the one loopback server.
	dialer := &net.Dialer{}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, srv.Listener.Addr().String())
		},
		MaxIdleConns: 32, MaxIdleConnsPerHost: 4, // as the crawler's own transport
	}
	b.Cleanup(tr.CloseIdleConnections)
	return tr
}

// hostPass runs a pass of start with settings for every host (nil: no
// limits) and returns how long it took.
func hostPass(b *testing.B, db *store.DB, tr http.RoundTripper, start string, settings func(string) throttle.Settings) time.Duration {
	engine, err := rules.New(rules.Config{Start: []string{start}})
	if err != nil {
		b.Fatal(err)
	}
	if settings == nil {
		settings = func(string) throttle.Settings { return throttle.Settings{} }
	}
	c := crawler.New(crawler.Config{
		Concurrency: 16, Transport: tr, BatchInterval: 50 * time.Millisecond,
		Throttle: throttle.New(throttle.Config{Settings: settings}), HostSettings: settings,
	}, engine, db)
	began := time.Now()
	spec := passOf(start)
	spec.New = true // the second pass is of another site
	_, out, err := c.Run(context.Background(), context.Background(), spec)
	took := time.Since(began)
	if err != nil || !out.Complete {
		b.Fatalf("run: %v, complete %v", err, out.Complete)
	}
	return took
}
