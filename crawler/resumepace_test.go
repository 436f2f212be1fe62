package crawler_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkpatrol/linkpatrol/throttle"
)

// A pass resumed after a clean stop (--max-time, Ctrl-C) honours the
// waits its last run saved as the absolute times they end: once they
// are over, long ago, the resumed run asks its hosts at once. The run
// saved every request it made, so none is assumed unrecorded: that is
// for a run resumed after a kill (Throttle.Resume). Assumed anyway, the
// slower pace a failing host's refusals taught began again from the
// resume at every run, up to a minute before its first request each
// night (qa11 Q10).
func TestResumeAfterACleanStopWaitsOnlyForWhatIsLeft(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		var mu sync.Mutex
		failing, refused := true, 0
		stop, cancel := context.WithCancel(context.Background())
		mux := http.NewServeMux()
		mux.HandleFunc("/robots.txt", http.NotFound)
		mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/" {
				mu.Lock()
				defer mu.Unlock()
				if failing {
					if refused++; refused == 4 {
						cancel() // --max-time, while the host refuses
					}
					w.Header().Set("Retry-After", "5")
					w.WriteHeader(http.StatusServiceUnavailable)
					return
				}
			}
			w.Header().Set("Content-Type", "text/html")
			for i := range 6 {
				fmt.Fprintf(w, "<a href=\"/p%d\">%d</a>\n", i, i)
			}
		})
		base, tr := pipeServer(t, rec.wrap(mux))
		db := openDB(t)
		s := throttle.Settings{MaxInFlight: 1, MaxPause: 10 * time.Minute, MaxRetries: 2}
		if out, _, hosts := politeRunVia(t, db, base+"/", s, stop, tr); out.Complete || hosts[0].Gap == 0 {
			t.Fatalf("the first run: complete %v, gap %v; want stopped, with the host slowed down", out.Complete, hosts[0].Gap)
		}
		time.Sleep(time.Hour) // the next night, as far as the host knows
		mu.Lock()
		failing = false
		mu.Unlock()
		rec.mu.Lock()
		before := len(rec.arrivals)
		rec.mu.Unlock()
		resumed := time.Now()
		if out, _, _ := politeRunVia(t, db, base+"/", s, context.Background(), tr); !out.Complete {
			t.Fatal("the resumed run did not complete")
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if first := rec.arrivals[before].Sub(resumed); first > 0 {
			t.Errorf("the resumed run's first request waited %v; the host's waits ended an hour ago", first)
		}
	})
}
