package crawler_test

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// A URL that keeps timing out gets 1+N requests in its pass, not in each
// run of it: the tries a stopped (or killed) run used are kept with its
// queued task, and the resumed run gives it only what is left (qa10 Q6:
// 7 requests over kill, kill, finish at --retries 2). The clock is the
// bubble's.
func TestResumedRunKeepsTheTriesUsed(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var slow atomic.Int64
		base, tr := pipeServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/slow" {
				slow.Add(1)
				select { // past every timeout, on the bubble's clock
				case <-r.Context().Done():
					return
				case <-time.After(time.Hour):
				}
			}
			page(`<a href="/slow">s</a>`)(w, r)
		}))
		start := base + "/"
		db := openDB(t)
		engine, err := rules.New(rules.Config{Start: []string{start}})
		if err != nil {
			t.Fatal(err)
		}
		newCrawler := func() *crawler.Crawler {
			settings := func(string) throttle.Settings { return throttle.Settings{MaxRetries: 2} }
			return crawler.New(crawler.Config{Concurrency: 1, UserAgent: "linkpatrol-test", Timeout: 10 * time.Second,
				Throttle: throttle.New(throttle.Config{Settings: settings, UserAgent: "linkpatrol-test"}), HostSettings: settings,
				Transport: tr, Logger: slog.New(slog.DiscardHandler)}, engine, db)
		}
		// The first run is stopped at once when /slow's second request
		// comes: its first try timed out.
		ctx, stop := context.WithCancel(context.Background())
		go func() {
			for slow.Load() < 2 {
				time.Sleep(100 * time.Millisecond) // the bubble's clock
			}
			stop()
		}()
		if _, _, err := newCrawler().Run(ctx, ctx, passOf(start)); err != nil && ctx.Err() == nil {
			t.Fatal(err)
		}
		before := slow.Load()
		if _, _, err := newCrawler().Run(context.Background(), context.Background(), passOf(start)); err != nil {
			t.Fatal(err)
		}
		// One try failed, one was cut by the stop (not a failed try): two
		// of 1+2 are left.
		if got := slow.Load() - before; got != 2 {
			t.Errorf("the resumed run asked /slow %d times, want 2 (1+2 in the pass, 1 failed before)", got)
		}
	})
}
