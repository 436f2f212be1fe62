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
			var links strings.Builder
			for i := range n {
				fmt.Fprintf(&links, "<a href=\"http://h%d.test/x\">%d</a>\n", i, i)
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
			defer srv.Close()
			// Every host name is dialled at the one loopback server.
			dialer := &net.Dialer{}
			tr := &http.Transport{
				DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
					return dialer.DialContext(ctx, network, srv.Listener.Addr().String())
				},
				MaxIdleConns: 32, MaxIdleConnsPerHost: 4, // as the crawler's own transport
			}
			defer tr.CloseIdleConnections()
			var first, later time.Duration
			var peak atomic.Uint64
			for range b.N {
				db := openDB(b)
				done := make(chan struct{})
				go sampleHeap(done, &peak)
				first += hostPass(b, db, tr, "http://start.test/")
				later += hostPass(b, db, tr, "http://site.test/0")
				close(done)
				db.Close()
			}
			b.ReportMetric(first.Seconds()/float64(b.N), "first-s")
			b.ReportMetric(later.Seconds()/float64(b.N), "later-s")
			b.ReportMetric(float64(peak.Load())/(1<<20), "peak-MB")
		})
	}
}

func hostPass(b *testing.B, db *store.DB, tr http.RoundTripper, start string) time.Duration {
	engine, err := rules.New(rules.Config{Start: []string{start}})
	if err != nil {
		b.Fatal(err)
	}
	settings := func(string) throttle.Settings { return throttle.Settings{} }
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
