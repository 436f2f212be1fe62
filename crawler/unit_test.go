package crawler_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
)

// commitLog is the real store, recording the URLs and queued tasks of
// each commit.
type commitLog struct {
	*store.DB
	mu      sync.Mutex
	commits []commitSeen
}

type commitSeen struct {
	urls, queued []string
}

func (c *commitLog) CommitHosts(passID uint64, results []store.Result, hosts map[string][]byte) error {
	var seen commitSeen
	for _, r := range results {
		seen.urls = append(seen.urls, r.Record.URL)
		for _, t := range r.Enqueue {
			seen.queued = append(seen.queued, t.URL)
		}
	}
	c.mu.Lock()
	c.commits = append(c.commits, seen)
	c.mu.Unlock()
	return c.DB.CommitHosts(passID, results, hosts)
}

// A page's record marks it done: a resume never reads it again. So what
// only its reading produced (the records of the links it has that are
// skipped, or broken without a request, and the queueing its redirect
// chain's end carries) must land in the same commit, or a kill between two
// commits loses them for good (qa7 Q11). With one result a commit, every
// one of them would be a commit of its own.
func TestPageAndWhatItFoundCommitTogether(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.Handle("/{$}", page(`<a href="/skipped">s</a> <a href="http://[::1">bad</a> <a href="/moved">m</a>`))
	mux.Handle("/moved", http.RedirectHandler("/moved-to", http.StatusFound))
	mux.Handle("/moved-to", page(`<a href="/behind">b</a> <a href="/skipped-behind">s</a>`))
	mux.Handle("/behind", page(`ok`))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	start := srv.URL + "/"
	engine, err := rules.New(rules.Config{Start: []string{start}, Rules: []rules.Rule{
		{Source: "test", PathPrefix: "/skipped", Action: "skip"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	db := &commitLog{DB: openDB(t)}
	_, out, err := crawler.New(crawler.Config{BatchSize: 1}, engine, db).Run(context.Background(), context.Background(), passOf(start))
	if err != nil || !out.Complete {
		t.Fatalf("run: %v, complete %v", err, out.Complete)
	}
	// Each pair: what was found, and the record of the page whose reading
	// found it, which must be in the same commit.
	together := []struct{ found, with string }{
		{srv.URL + "/skipped", start},
		{"http://[::1", start},
		{srv.URL + "/skipped-behind", srv.URL + "/moved-to"},
	}
	commitOf := func(url string, queued bool) int {
		for i, c := range db.commits {
			list := c.urls
			if queued {
				list = c.queued
			}
			if slices.Contains(list, url) {
				return i
			}
		}
		return -1
	}
	for _, p := range together {
		got, want := commitOf(p.found, false), commitOf(p.with, false)
		if got < 0 || got != want {
			t.Errorf("%s committed in commit %d, the page that links it (%s) in %d", p.found, got, p.with, want)
		}
	}
	// /behind is queued by the chain's last hop; the link's own record
	// (/moved, which the chain ends for) must come with that queueing.
	if got, want := commitOf(srv.URL+"/behind", true), commitOf(srv.URL+"/moved", false); got < 0 || got != want {
		t.Errorf("/behind queued in commit %d, the record of the redirect that leads there in %d", got, want)
	}
	if t.Failed() {
		for i, c := range db.commits {
			t.Log(fmt.Sprint(i, c.urls, c.queued))
		}
	}
}
