package crawler_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkpatrol/linkpatrol/throttle"
)

// QA4 F2: every new process began with a full window, a full rate bucket
// and no gap, so two cron runs back to back sent 18 requests in 0.28 s
// with --window 10/5s. Two runs on one database, one after the other on
// the bubble's clock, against one server that counts: each limit holds
// across them as within one run.
func TestPaceHoldsAcrossRuns(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		s    throttle.Settings
		span time.Duration
		most int
	}{
		{"window", throttle.Settings{WindowMax: 10, Window: 3 * time.Second}, 3 * time.Second, 10},
		{"rate", throttle.Settings{Rate: 1, Burst: 1}, 500 * time.Millisecond, 1},
		{"crawl delay", throttle.Settings{CrawlDelay: time.Second}, time.Second, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var rec recorder
				base, tr := pipeServer(t, rec.wrap(linkSite(8, 0)))
				db := openDB(t)
				politeRunVia(t, db, base+"/", tt.s, context.Background(), tr)
				first := len(rec.paths)
				politeRunVia(t, db, base+"/", tt.s, context.Background(), tr)
				if first != 10 || len(rec.paths) != 19 { // robots.txt once, the start page and 8 pages twice
					t.Fatalf("%d requests by the first run, %d in all; want 10 and 19", first, len(rec.paths))
				}
				if n := rec.maxInWindow(tt.span); n > tt.most {
					t.Errorf("the server got %d requests within %s across the two runs; %d allowed", n, tt.span, tt.most)
				}
			})
		})
	}
}
