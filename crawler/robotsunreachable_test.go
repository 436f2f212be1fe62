package crawler_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// qa9 T12: a robots.txt that answered 503 (or whose connection died) in
// one run was saved with the host's state, and every run in the hour after
// kept off the host without a request: "I fixed it, let me check again"
// was told the site is down. A new run asks robots.txt again (one request)
// before deciding. The site's own host and another site's are both
// checked in run 2, once their robots.txt answers 404.
func TestRobotsUnreachableIsAskedAgainNextRun(t *testing.T) {
	t.Parallel()
	for _, whose := range []string{"own", "other"} {
		for _, how := range []string{"503", "reset"} {
			t.Run(whose+"/"+how, func(t *testing.T) {
				t.Parallel()
				var failing atomic.Bool
				failing.Store(true)
				robots := func(fails bool) http.HandlerFunc {
					return func(w http.ResponseWriter, r *http.Request) {
						switch {
						case !fails || !failing.Load():
							http.NotFound(w, r)
						case how == "503":
							http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
						default: // the connection dies without an answer (status 0)
							conn, _, err := w.(http.Hijacker).Hijack()
							if err != nil {
								t.Error(err)
								return
							}
							conn.Close()
						}
					}
				}
				var otherRec recorder
				other := http.NewServeMux()
				other.HandleFunc("/robots.txt", robots(whose == "other"))
				other.HandleFunc("/", page(`other`))
				otherSrv := httptest.NewServer(otherRec.wrap(other))
				defer otherSrv.Close()
				var rec recorder
				own := http.NewServeMux()
				own.HandleFunc("/robots.txt", robots(whose == "own"))
				own.HandleFunc("/", page(`<a href="/public">p</a><a href="`+otherSrv.URL+`/x">x</a>`))
				srv := httptest.NewServer(rec.wrap(own))
				defer srv.Close()
				start := srv.URL + "/"
				held := start // the URL run 1 holds back
				if whose == "other" {
					held = otherSrv.URL + "/x"
				}
				requested := func(r *recorder) []string {
					r.mu.Lock()
					defer r.mu.Unlock()
					paths := r.paths
					r.paths = nil
					return paths
				}
				s := throttle.Settings{MaxRetries: 1}

				db := openDB(t)
				_, recs, _ := politeRun(t, db, start, s, context.Background())
				if r := recs[held]; r.Verdict != store.VerdictTransient || r.Error == "" {
					t.Fatalf("run 1: %s recorded as %+v, want held back by its failing robots.txt", held, r)
				}
				if paths := append(requested(&rec), requested(&otherRec)...); slices.Contains(paths, "/") && whose == "own" ||
					slices.Contains(paths, "/x") {
					t.Fatalf("run 1: requested a page of a host whose robots.txt failed: %v", paths)
				}

				failing.Store(false) // the server is fixed
				_, recs, _ = politeRun(t, db, start, s, context.Background())
				for _, u := range []string{start, srv.URL + "/public", otherSrv.URL + "/x"} {
					if r := recs[u]; r.Verdict != store.VerdictOK {
						t.Errorf("run 2: %s recorded as %+v, want ok", u, r)
					}
				}
				r := &rec
				if whose == "other" {
					r = &otherRec
				}
				if paths := requested(r); !slices.Contains(paths, "/robots.txt") {
					t.Errorf("run 2: robots.txt not asked again (requests %v): run 1's failure was kept", paths)
				}
			})
		}
	}
}
