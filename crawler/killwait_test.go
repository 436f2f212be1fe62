package crawler_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// After a kill the next run waits for the dead run's requests only as
// long as they can still be out: until --timeout after the dead run could
// last have sent one, which its heartbeat (store.Pass.Alive, written every
// few seconds, busy or idle) bounds. A run begun an hour after the kill
// waits for nothing (f27: it waited the whole --timeout per host, however
// old the kill); one begun right after waits, even when the dead run had
// begun an hour before and only its heartbeat says it was still alive.
// The next run resumes the pass (the dead run's last result was never
// committed), or begins a new one, as --new-pass does (review10 R10: the
// kill was not seen then). The clock is the bubble's.
func TestKillWaitEndsWithTheDeadRunsRequests(t *testing.T) {
	t.Parallel()
	const timeout = 20 * time.Second
	for _, tc := range []struct {
		name        string
		hang, after time.Duration // the dead run's one slow request; the time from its kill to the next run
		newPass     bool
		wait        bool
	}{
		{"fresh kill", 0, 0, false, true},
		{"kill an hour ago", 0, time.Hour, false, false},
		{"an hour-long run killed now", time.Hour, 0, false, true},
		{"fresh kill then a new pass", 0, 0, true, true},
		{"kill an hour ago then a new pass", 0, time.Hour, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var slow atomic.Bool
				var mu sync.Mutex
				var first time.Time // the first request after second is set
				var second atomic.Bool
				base, tr := pipeServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if second.Load() {
						mu.Lock()
						if first.IsZero() {
							first = time.Now()
						}
						mu.Unlock()
					}
					if r.URL.Path == "/slow" && !slow.Swap(true) {
						time.Sleep(tc.hang) // the bubble's clock
					}
					page(`<a href="/slow">s</a>`)(w, r)
				}))
				start := base + "/"
				db := openDB(t)
				engine, err := rules.New(rules.Config{Start: []string{start}})
				if err != nil {
					t.Fatal(err)
				}
				var log bytes.Buffer
				newCrawler := func(s crawler.Store, timeout time.Duration) *crawler.Crawler {
					settings := func(string) throttle.Settings { return throttle.Settings{MaxRetries: 1} }
					return crawler.New(crawler.Config{Concurrency: 1, PerHost: 1, UserAgent: "linkpatrol-test", Timeout: timeout,
						Throttle: throttle.New(throttle.Config{Settings: settings, UserAgent: "linkpatrol-test",
							PerHost: 1, RequestLife: timeout}),
						HostSettings: settings, Transport: tr,
						Logger: slog.New(slog.NewTextHandler(&log, nil))}, engine, s)
				}
				if _, _, err := newCrawler(killedBefore{killedAtEnd{db}, "/slow"}, 2*tc.hang+time.Minute).Run(context.Background(), context.Background(), passOf(start)); err != nil {
					t.Fatal(err)
				}
				time.Sleep(tc.after)
				log.Reset()
				second.Store(true)
				began := time.Now()
				spec := passOf(start)
				spec.New = tc.newPass
				if _, _, err := newCrawler(db, timeout).Run(context.Background(), context.Background(), spec); err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				waited := first.Sub(began)
				mu.Unlock()
				if (waited >= timeout) != tc.wait {
					t.Errorf("the first request came %v after the run began (wait wanted: %v)", waited, tc.wait)
				}
				if said := strings.Contains(log.String(), "the run before was killed"); said != tc.wait {
					t.Errorf("the wait said: %v, want %v; log:\n%s", said, tc.wait, log.String())
				}
			})
		})
	}
}

// killedBefore is a run killed before it commits the result of the URL
// ending in last, which stays queued, and before it saves its end.
type killedBefore struct {
	killedAtEnd
	last string
}

func (k killedBefore) CommitHosts(passID uint64, results []store.Result, hosts map[string][]byte) error {
	results = slices.DeleteFunc(slices.Clone(results), func(r store.Result) bool { return strings.HasSuffix(r.Record.URL, k.last) })
	return k.DB.CommitHosts(passID, results, hosts)
}
