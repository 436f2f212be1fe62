package crawler_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/rules"
)

// blockingDecider is the rules, except that deciding the URL of path
// block waits until release is closed: it holds the worker that is parsing
// the page that links to it.
type blockingDecider struct {
	crawler.Decider
	block   string
	release <-chan struct{}
}

func (d blockingDecider) Decide(u *url.URL) rules.Decision {
	if u.Path == d.block {
		<-d.release
	}
	return d.Decider.Decide(u)
}

// A task gives its request slot back once its last request is answered,
// so that the next request goes out while its page is parsed. With one
// request in flight at most, /b is asked for while the worker parsing /a
// is still deciding /a's link. Were the slot held through the parse, /b
// would wait for that worker, which waits for /b: everything in the
// bubble would block, its clock would jump the minute, and the test fail.
func TestNextRequestWhilePageIsParsed(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		askedB := make(chan struct{})
		mux := http.NewServeMux()
		mux.Handle("/{$}", page(`<a href="/a">a</a> <a href="/b">b</a>`))
		mux.Handle("/a", page(`<a href="/a-child">child</a>`))
		mux.Handle("/a-child", page(`child`))
		mux.HandleFunc("/b", func(w http.ResponseWriter, r *http.Request) {
			close(askedB) // a second request for /b panics: asked once
			page(`b`)(w, r)
		})
		base, tr := pipeServer(t, rec.wrap(mux))
		start := base + "/"
		engine, err := rules.New(rules.Config{Start: []string{start}})
		if err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		go func() {
			select {
			case <-askedB:
			case <-time.After(time.Minute):
				t.Error("/b was not asked for while /a was parsed: the worker kept its request slot through the parse")
			}
			close(release)
		}()
		c := crawler.New(crawler.Config{Concurrency: 1, PerHost: 1, Timeout: 5 * time.Second, Transport: tr},
			blockingDecider{Decider: engine, block: "/a-child", release: release}, openDB(t))
		if _, _, err := c.Run(context.Background(), context.Background(), passOf(start)); err != nil {
			t.Fatal(err)
		}
		want := []string{"/", "/a", "/b", "/a-child"}
		if got := slices.DeleteFunc(slices.Clone(rec.paths), func(p string) bool { return p == "/robots.txt" }); !slices.Equal(got, want) {
			t.Errorf("requests %q, want %q", got, want)
		}
		if rec.maxInFlight > 1 {
			t.Errorf("the server saw %d requests at once; the concurrency is 1", rec.maxInFlight)
		}
	})
}
