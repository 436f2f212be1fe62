package crawler_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// silentSite serves / linking /m/0../m/29 over a pipe; after five leaves
// it hangs each request (how "hang") or drops its connection (how
// "reset") until the bubble's clock reaches back, then answers again
// (back zero: never).
func silentSite(t *testing.T, how string, back time.Duration) (base string, tr http.RoundTripper) {
	var mu sync.Mutex
	leaves := 0
	start := time.Now()
	return pipeServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/robots.txt":
			http.NotFound(w, r)
			return
		case r.URL.Path == "/":
			var b strings.Builder
			for i := range 30 {
				fmt.Fprintf(&b, `<a href="/m/%d">%d</a>`, i, i)
			}
			page(b.String())(w, r)
			return
		}
		mu.Lock()
		leaves++
		alive := leaves <= 5 || back > 0 && time.Since(start) >= back
		mu.Unlock()
		if alive {
			page("leaf")(w, r)
			return
		}
		if how == "hang" {
			<-r.Context().Done()
			return
		}
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
	}))
}

// The site's own server stops answering mid-pass without refusing
// connections: every request times out, or its connection is dropped.
// After a minute of that, through a URL's tries, the host stopped
// answering, as for refusals (qa6 Q2): its URLs are held back as "host
// down", not checked, and the pass is not complete. Before, each URL was
// backed off for minutes and ended transient on its own (the real binary
// sat ten minutes on 19 requests of 80 URLs). A server that hangs for
// 40 s and comes back is waited out, as before.
func TestSiteServerSilentMidPassIsHeldBack(t *testing.T) {
	for _, how := range []string{"hang", "reset"} {
		t.Run(how, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base, tr := silentSite(t, how, 0)
				s := throttle.Settings{MaxRetries: 2, MaxInFlight: 2}
				out, recs, _ := politeRunVia(t, openDB(t), base+"/", s, t.Context(), tr)
				if out.Complete || out.Deferred == 0 {
					t.Fatalf("outcome %+v: want the pass unfinished, URLs held back", out)
				}
				want := map[string]string{"hang": "let every request time out", "reset": "reset connections"}[how]
				down := 0
				for u, rec := range recs {
					switch {
					case rec.Verdict == store.VerdictBroken:
						t.Errorf("%s: broken %q, a dead link", u, rec.Error)
					case rec.Error == store.ErrorHostDown:
						down++
						if !strings.Contains(rec.Note, want) || rec.DownAfter == 0 || rec.DownSince.IsZero() {
							t.Errorf("%s: note %q (after %d, since %v): want %q", u, rec.Note, rec.DownAfter, rec.DownSince, want)
						}
					}
				}
				if down < 20 {
					t.Errorf("%d URLs held back as host down; want the 25 it did not answer, but for those in flight", down)
				}
			})
		})
	}
	t.Run("hangs 40s", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			base, tr := silentSite(t, "hang", 40*time.Second)
			s := throttle.Settings{MaxRetries: 2, MaxInFlight: 2}
			out, recs, _ := politeRunVia(t, openDB(t), base+"/", s, t.Context(), tr)
			if !out.Complete {
				t.Errorf("outcome %+v: want a server paused for 40 s waited out", out)
			}
			for u, rec := range recs {
				if rec.Error == store.ErrorHostDown {
					t.Errorf("%s: host down, after a 40 s pause", u)
				}
			}
		})
	})
}
