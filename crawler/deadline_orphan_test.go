package crawler_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// A request cut by its task's own hard deadline (twice the timeout, spent
// by the redirect chain's earlier hops) is a timeout like any other: it is
// not kept in flight for the next run as a stopped run's requests are
// (review9 R4, fixed by 73fb4ba). /r1 and /r2 each answer after 2.5 s of
// a 3 s timeout; /r3 hangs, and the task's 6 s deadline cuts it at 5 s
// into its own 3 s. With the run never stopped, the host keeps no request
// open once the pass ends: before the fix each cut /r3 stayed "open" for
// RequestLife (here an hour), counted against --per-host in this run and
// saved for the next.
func TestRequestCutByItsTaskDeadlineIsNotKeptInFlight(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var cut atomic.Int32
		base, tr := pipeServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/":
				page(`<a href="/r1">r</a>`)(w, r)
			case "/r1", "/r2":
				time.Sleep(2500 * time.Millisecond)
				next := map[string]string{"/r1": "/r2", "/r2": "/r3"}[r.URL.Path]
				http.Redirect(w, r, next, http.StatusFound)
			case "/r3":
				<-r.Context().Done()
				cut.Add(1)
			default:
				http.NotFound(w, r)
			}
		}))
		start := base + "/"
		engine, err := rules.New(rules.Config{Start: []string{start}})
		if err != nil {
			t.Fatal(err)
		}
		settings := func(string) throttle.Settings { return throttle.Settings{} }
		th := throttle.New(throttle.Config{Settings: settings, RequestLife: time.Hour, PerHost: 2})
		db := openDB(t)
		c := crawler.New(crawler.Config{Throttle: th, HostSettings: settings, PerHost: 2, Timeout: 3 * time.Second,
			Transport: tr, Logger: slog.New(slog.DiscardHandler)}, engine, db)
		pass, out, err := c.Run(context.Background(), context.Background(), passOf(start))
		if err != nil || !out.Complete {
			t.Fatalf("run: complete %v, err %v", out.Complete, err)
		}
		synctest.Wait()
		if cut.Load() == 0 {
			t.Fatal("/r3 was never cut: the test does not test the task's deadline")
		}
		var rec store.URLRecord
		if err := db.Records(pass.ID, func(r *store.URLRecord) error {
			if r.URL == base+"/r1" {
				rec = *r
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if rec.Verdict == store.VerdictOK {
			t.Fatalf("/r1 ended ok (%+v): the chain was not cut", rec)
		}
		b, err := th.ExportState("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			Open []time.Time `json:"open"`
		}
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatal(err)
		}
		if len(st.Open) != 0 {
			t.Errorf("the host keeps %d requests in flight after a pass that was never stopped (state %s), want none: a request cut by its task's deadline was taken for one the run abandoned", len(st.Open), b)
		}
	})
}
