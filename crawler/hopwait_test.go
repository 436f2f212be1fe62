package crawler_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// A redirect hop waits for its host's pace in linkpatrol's own queue, not
// at the server: that wait is never the server's timeout (qa9 T1). A page
// links 60 URLs of another site that redirect within it and 60 plain
// ones; the host gets a request a second, so the hops, queued behind the
// host's other URLs, waited far longer than the task's deadline (twice the
// 3 s timeout). Every hop is requested, ahead of the links not yet asked
// (with the fix at most one is asked in between; behind all of them, up to
// 119 were), every link ends fine, and the host's own record shows it was
// never asked faster than its pace (rate 1/s, burst 2: at most 2+T
// requests start in any T seconds). The bubble's clock is the server's,
// so the pace holds exactly.
func TestHopWaitingForItsHostsPaceIsNotATimeout(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const n = 60
		const maxAhead = 10
		var links strings.Builder
		for i := range n {
			fmt.Fprintf(&links, `<a href="http://127.0.0.2/r/%d">r</a> <a href="http://127.0.0.2/p/%d">p</a>`, i, i)
		}
		got := pacedCheck(t, links.String(), func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/r/") {
				http.Redirect(w, r, "/ok/"+strings.TrimPrefix(r.URL.Path, "/r/"), http.StatusFound)
				return
			}
			page("")(w, r)
		})
		for i := range n {
			for _, u := range []string{fmt.Sprintf("http://127.0.0.2/r/%d", i), fmt.Sprintf("http://127.0.0.2/p/%d", i)} {
				if rec := got.recs[u]; rec.Verdict != store.VerdictOK {
					t.Errorf("%s: %v %q %q (final %s), want ok", u, rec.Verdict, rec.Error, rec.Note, rec.FinalURL)
				}
			}
			for _, p := range []string{fmt.Sprintf("/r/%d", i), fmt.Sprintf("/p/%d", i), fmt.Sprintf("/ok/%d", i)} {
				if got.asked[p] != 1 {
					t.Errorf("%s asked %d times, want once", p, got.asked[p])
				}
			}
			// A hop continues a request already under way: once its host
			// allows, it goes ahead of the links not yet asked.
			hop, target := slices.Index(got.order, fmt.Sprintf("/r/%d", i)), slices.Index(got.order, fmt.Sprintf("/ok/%d", i))
			newer := 0
			for _, p := range got.order[hop+1 : max(target, hop+1)] {
				if !strings.HasPrefix(p, "/ok/") {
					newer++
				}
			}
			if newer > maxAhead {
				t.Errorf("/ok/%d was asked after %d links not yet asked when /r/%d redirected to it; want at most %d", i, newer, i, maxAhead)
			}
		}
	})
}

// pacedRun is what pacedCheck saw: the pass's records, and what the other
// host was asked, how often and in which order.
type pacedRun struct {
	recs  map[string]store.URLRecord
	asked map[string]int
	order []string
}

// pacedCheck crawls, inside a synctest bubble, a start page of links to
// 127.0.0.2, another site, which serve answers at the default pace of
// another site (rate 1/s, burst 2) with a 3 s timeout. The pass must
// complete, and the other host's own record of request starts must keep
// that pace exactly (at most 2+T in any T seconds: the bubble's clock is
// the server's).
func pacedCheck(t *testing.T, links string, serve http.HandlerFunc) pacedRun {
	t.Helper()
	site := page(links)
	var mu sync.Mutex
	var at []time.Time
	got := pacedRun{asked: map[string]int{}, recs: map[string]store.URLRecord{}}
	base, tr := pipeServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host != "127.0.0.2" {
			site(w, r)
			return
		}
		mu.Lock()
		at = append(at, time.Now())
		got.asked[r.URL.Path]++
		got.order = append(got.order, r.URL.Path)
		mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		serve(w, r)
	}))
	start := base + "/"
	engine, err := rules.New(rules.Config{Start: []string{start}})
	if err != nil {
		t.Fatal(err)
	}
	settings := func(host string) throttle.Settings { s, _ := engine.HostSettings(host, nil); return s }
	if s := settings("127.0.0.2"); s.Rate != 1 || s.Burst != 2 {
		t.Fatalf("another site's pace is %v; the test assumes rate 1/s, burst 2", s)
	}
	db := openDB(t)
	c := crawler.New(crawler.Config{Concurrency: 4, UserAgent: "linkpatrol-test", Timeout: 3 * time.Second,
		Throttle: throttle.New(throttle.Config{Settings: settings, UserAgent: "linkpatrol-test"}), HostSettings: settings,
		Transport: tr, Logger: slog.New(slog.DiscardHandler)}, engine, db)
	pass, out, err := c.Run(context.Background(), context.Background(), passOf(start))
	if err != nil {
		t.Fatal(err)
	}
	if !out.Complete {
		t.Errorf("the pass is not complete")
	}
	if err := db.Records(pass.ID, func(r *store.URLRecord) error { got.recs[r.URL] = *r; return nil }); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
	for i := range at {
		for j := i + 1; j < len(at); j++ {
			if d := at[j].Sub(at[i]); float64(j-i+1) > 2+d.Seconds() {
				t.Fatalf("%d requests started within %v: faster than 1/s with a burst of 2", j-i+1, d)
			}
		}
	}
	return got
}
