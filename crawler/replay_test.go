package crawler_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// resetServer serves a page linking to /reset, which reads the request and
// resets the connection (SO_LINGER 0) without answering. It counts the
// requests that reach each path; wrap (nil: none) sees them first.
func resetServer(t *testing.T, wrap func(http.Handler) http.Handler) (*httptest.Server, func(path string) int) {
	t.Helper()
	var mu sync.Mutex
	hits := map[string]int{}
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		switch r.URL.Path {
		case "/":
			page(`<a href="/reset">reset</a>`)(w, r)
		case "/reset":
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			if tc, ok := conn.(*net.TCPConn); ok {
				tc.SetLinger(0) // close with RST
			}
			conn.Close()
		default:
			http.NotFound(w, r)
		}
	})
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, func(path string) int {
		mu.Lock()
		defer mu.Unlock()
		return hits[path]
	}
}

// A server that resets the connection once it has read the request gets
// at most 1 + --retries requests per URL. net/http's Transport sends an
// idempotent request again on another connection when a kept-alive one
// fails before an answer (transport.go, shouldRetryRequest): the /reset
// request, on the connection "/" was read over, cost two requests for one
// try, so --retries 2 gave 4 or 5 and --retries 0 gave 2. Such a resend is
// now a try of its own, and one past the host's retries is not sent.
func TestResetServerGetsOnePlusRetriesRequests(t *testing.T) {
	t.Parallel()
	for _, retries := range []int{0, 1, 2} {
		t.Run("retries="+string(rune('0'+retries)), func(t *testing.T) {
			t.Parallel()
			srv, hits := resetServer(t, nil)
			// One request in flight, so /reset goes over the kept-alive
			// connection that served /; a short MaxPause keeps the backoff
			// between tries short.
			s := throttle.Settings{MaxInFlight: 1, MaxRetries: retries, MaxPause: 10 * time.Millisecond}
			out, recs, _ := politeRun(t, openDB(t), srv.URL+"/", s, context.Background())
			if !out.Complete {
				t.Fatal("pass did not complete")
			}
			if n := hits("/reset"); n != 1+retries {
				t.Errorf("/reset got %d requests with %d retries, want %d", n, retries, 1+retries)
			}
			if rec := recs[srv.URL+"/reset"]; rec.Verdict != store.VerdictTransient || rec.Error != "connection reset" {
				t.Errorf("/reset: %s %q, want transient", rec.Verdict, rec.Error)
			}
		})
	}
}

// QA4 F1: net/http's resends bypassed the throttle, bursts of up to four
// identical requests within 3 ms, and --window broke. A resend now waits
// for its host like any request: with a window of one request per 300 ms,
// the server never sees two within 300 ms, the resend of /reset included.
func TestResendKeepsTheWindow(t *testing.T) {
	t.Parallel()
	var rec recorder
	srv, hits := resetServer(t, rec.wrap)
	s := throttle.Settings{MaxInFlight: 1, MaxRetries: 1, MaxPause: 10 * time.Millisecond,
		WindowMax: 1, Window: 300 * time.Millisecond}
	out, _, _ := politeRun(t, openDB(t), srv.URL+"/", s, context.Background())
	if !out.Complete {
		t.Fatal("pass did not complete")
	}
	// The resend over a new connection is the second try: no retry after.
	if n := hits("/reset"); n != 2 {
		t.Errorf("/reset got %d requests with 1 retry, want 2", n)
	}
	if n := rec.maxInWindow(s.Window); n > s.WindowMax {
		t.Errorf("the server got %d requests within %s (%q); the window allows %d", n, s.Window, rec.paths, s.WindowMax)
	}
}
