package crawler_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// killedAtEnd is a store whose run is killed just before it saves the
// pass at its end: what a SIGKILL leaves.
type killedAtEnd struct{ *store.DB }

func (k killedAtEnd) UpdatePass(p store.Pass) error {
	if p.State != store.PassRunning {
		return nil
	}
	return k.DB.UpdatePass(p)
}

// killedCrawler crawls from start, one request at a time, into db as a run
// killed at its end.
func killedCrawler(t *testing.T, tr http.RoundTripper, start string, timeout time.Duration, db *store.DB) *crawler.Crawler {
	t.Helper()
	engine, err := rules.New(rules.Config{Start: []string{start}})
	if err != nil {
		t.Fatal(err)
	}
	settings := func(string) throttle.Settings { return throttle.Settings{MaxRetries: 1} }
	return crawler.New(crawler.Config{Concurrency: 1, UserAgent: "linkpatrol-test", Timeout: timeout,
		Throttle: throttle.New(throttle.Config{Settings: settings, UserAgent: "linkpatrol-test"}), HostSettings: settings,
		Transport: tr, Logger: slog.New(slog.DiscardHandler)}, engine, killedAtEnd{db})
}

// A run killed part way keeps most of its working time in the pass: the
// report of a pass resumed after kills said only the last run's time
// (review7 RV1: elapsed_seconds 5.0 after 18 kills of 7 s).
func TestKilledRunKeepsItsTime(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const pages, each = 30, time.Second
		var home strings.Builder
		for i := range pages {
			fmt.Fprintf(&home, `<a href="/p/%d">p</a> `, i)
		}
		base, tr := pipeServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/" {
				time.Sleep(each) // the bubble's clock
			}
			page(home.String())(w, r)
		}))
		start := base + "/"
		db := openDB(t)
		c := killedCrawler(t, tr, start, 5*time.Second, db)
		began := time.Now()
		pass, _, err := c.Run(context.Background(), context.Background(), passOf(start))
		if err != nil {
			t.Fatal(err)
		}
		ran := time.Since(began)
		stored, err := db.Pass(pass.ID)
		if err != nil {
			t.Fatal(err)
		}
		if ran < pages*each {
			t.Fatalf("the run took %v of the bubble's clock; the test needs at least %v", ran, pages*each)
		}
		if stored.Elapsed < ran-10*time.Second || stored.Elapsed > ran {
			t.Errorf("the killed run kept %v of its %v in the pass, want all but the last few seconds", stored.Elapsed, ran)
		}
	})
}

// A run whose last seconds get no answer at all (every host waiting out a
// Retry-After, or requests slower than a tick) keeps that time too: an
// idle tick used to skip storing it (review8 F7).
func TestKilledRunKeepsItsIdleTime(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const hang, killAt = 50 * time.Second, 40 * time.Second
		base, tr := pipeServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/" {
				time.Sleep(hang) // the bubble's clock
			}
			page(`<a href="/slow">s</a>`)(w, r)
		}))
		start := base + "/"
		db := openDB(t)
		c := killedCrawler(t, tr, start, 2*hang, db)
		atKill := make(chan store.Pass, 1)
		go func() {
			time.Sleep(killAt) // while the only request hangs
			p, _, err := db.OpenPass()
			if err != nil {
				t.Error(err)
			}
			atKill <- p
		}()
		if _, _, err := c.Run(context.Background(), context.Background(), passOf(start)); err != nil {
			t.Fatal(err)
		}
		if p := <-atKill; p.Elapsed < killAt-10*time.Second {
			t.Errorf("a kill at %v, while nothing answered, would keep %v of the pass's time", killAt, p.Elapsed)
		}
	})
}
