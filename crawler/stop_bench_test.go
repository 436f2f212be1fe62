package crawler_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/rules"
)

// BenchmarkStopOnHugePage measures what one page with very many links
// costs: the pass is stopped the moment the page has been served, and
// stop-s is how long Run then takes to return (the grace period is 2s);
// peak-MB is the largest heap seen meanwhile. Both must grow at most
// linearly with the link count, and stop-s must stay near the grace
// period whatever the page holds.
//
//	go test -run '^$' -bench StopOnHugePage -benchtime 1x ./crawler/
func BenchmarkStopOnHugePage(b *testing.B) {
	for _, n := range []int{10_000, 50_000, 200_000, 1_000_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			var body strings.Builder
			body.WriteString("<html><body>\n")
			for i := range n {
				fmt.Fprintf(&body, "<a href=\"/p/%d\">%d</a>\n", i, i)
			}
			page := body.String()
			served := make(chan struct{}, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				if r.URL.Path != "/" {
					fmt.Fprint(w, "<p>leaf</p>")
					return
				}
				fmt.Fprint(w, page)
				select {
				case served <- struct{}{}:
				default:
				}
			}))
			defer srv.Close()
			var stopTotal time.Duration
			var peak atomic.Uint64
			for range b.N {
				db := openDB(b)
				ctx, stop := context.WithCancel(context.Background())
				done := make(chan struct{})
				go sampleHeap(done, &peak)
				var stopped time.Time
				go func() {
					<-served
					stopped = time.Now()
					stop()
				}()
				start := srv.URL + "/"
				engine, err := rules.New(rules.Config{Start: []string{start}})
				if err != nil {
					b.Fatal(err)
				}
				c := crawler.New(crawler.Config{MaxSize: 64 << 20}, engine, db)
				_, out, err := c.Run(ctx, context.Background(), passOf(start))
				stopTotal += time.Since(stopped)
				close(done)
				if err != nil || out.Complete {
					b.Fatalf("run: %v, complete %v; want stopped", err, out.Complete)
				}
				db.Close()
			}
			b.ReportMetric(stopTotal.Seconds()/float64(b.N), "stop-s")
			b.ReportMetric(float64(peak.Load())/(1<<20), "peak-MB")
		})
	}
}

func sampleHeap(done <-chan struct{}, peak *atomic.Uint64) {
	var ms runtime.MemStats
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		runtime.ReadMemStats(&ms)
		if ms.HeapInuse > peak.Load() {
			peak.Store(ms.HeapInuse)
		}
		select {
		case <-done:
			return
		case <-t.C:
		}
	}
}
