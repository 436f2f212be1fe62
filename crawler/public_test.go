package crawler_test

import (
	"context"
	"fmt"
	"net/http"
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

// credSite is two origins behind one pipe server (see pipeServer): the
// start page on 127.0.0.1 links to /away, which redirects to /target on
// 127.0.0.2, and links to 127.0.0.2/direct. A rule gives 127.0.0.2 a header
// and basic auth. The first request for /target answers 429 with
// Retry-After retryAfter, so the chain that reached it is handed back to
// the dispatcher and /target becomes a task of its own.
type credSite struct {
	mu   sync.Mutex
	seen map[string][]string // path on 127.0.0.2 -> the X-Token/Authorization of each request
}

const otherOrigin = "http://127.0.0.2"

func (s *credSite) handler(retryAfter string) http.Handler {
	s.seen = map[string][]string{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		if r.Host != "127.0.0.2" {
			switch r.URL.Path {
			case "/":
				page(`<a href="/away">away</a><a href="`+otherOrigin+`/direct">direct</a>`)(w, r)
			case "/away":
				http.Redirect(w, r, otherOrigin+"/target", http.StatusFound)
			default:
				http.NotFound(w, r)
			}
			return
		}
		s.mu.Lock()
		auth := r.Header.Get("X-Token") + "|" + r.Header.Get("Authorization")
		s.seen[r.URL.Path] = append(s.seen[r.URL.Path], auth)
		first := len(s.seen[r.URL.Path]) == 1
		s.mu.Unlock()
		if r.URL.Path == "/target" && first {
			w.Header().Set("Retry-After", retryAfter)
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
		fmt.Fprint(w, "ok")
	})
}

// check says what the other origin saw: its rule's credentials on /direct
// (the rule works), none on any request for /target, which only a redirect
// from another origin reaches, and /target asked for twice (so the chain
// really was handed back).
func (s *credSite) check(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.seen["/direct"]; len(d) == 0 || d[0] == "|" {
		t.Errorf("/direct, linked from the start page, got %q: want the rule's credentials", d)
	}
	if n := len(s.seen["/target"]); n < 2 {
		t.Fatalf("/target asked for %d times: the 429 did not hand the chain back", n)
	}
	for i, a := range s.seen["/target"] {
		if a != "|" {
			t.Errorf("request %d for /target, reached only by a redirect from another origin, carried %q", i+1, a)
		}
	}
}

// credRun runs (or resumes) the pass of starts on db over tr, with a rule
// that gives 127.0.0.2 a header and basic auth, and pauses of up to a
// minute sat out.
func credRun(t *testing.T, tr http.RoundTripper, db *store.DB, starts ...string) crawler.Outcome {
	t.Helper()
	engine, err := rules.New(rules.Config{Start: starts, Rules: []rules.Rule{{
		Source: "test", Scheme: "http", Host: "127.0.0.2",
		Headers: map[string]string{"X-Token": "s3cret"}, User: "u", Password: "p",
	}}})
	if err != nil {
		t.Fatal(err)
	}
	settings := func(string) throttle.Settings {
		return throttle.Settings{MaxPause: time.Minute, MaxRetries: 2, IgnoreRobots: true}
	}
	c := crawler.New(crawler.Config{Concurrency: 4, Timeout: 5 * time.Second, Transport: tr,
		Throttle: throttle.New(throttle.Config{Settings: settings}), HostSettings: settings}, engine, db)
	_, out, err := c.Run(context.Background(), context.Background(), passOf(starts...))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return out
}

// A redirect target whose chain was handed back (a 429 on the hop) is then
// requested by a task of its own, and still as a redirect from another
// origin: without the credentials of its rule.
func TestHandedBackRedirectTargetStaysPublic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s credSite
		base, tr := pipeServer(t, s.handler("2"))
		if out := credRun(t, tr, openDB(t), base+"/"); !out.Complete {
			t.Fatalf("run: %+v", out)
		}
		s.check(t)
	})
}

// The mark is kept on the stored frontier: a target handed back, then held
// back by a pause longer than the run waits, is done by the next run of
// the pass, still without credentials.
func TestPublicMarkSurvivesResume(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s credSite
		base, tr := pipeServer(t, s.handler("120"))
		// Both origins are the site's own, so a pause defers their URLs
		// to the next run instead of giving up on them.
		starts := []string{base + "/", otherOrigin + "/"}
		db := openDB(t)
		if out := credRun(t, tr, db, starts...); out.Complete || out.Deferred == 0 {
			t.Fatalf("first run: %+v; want /target deferred by its 2-minute pause", out)
		}
		queued, err := db.Frontier()
		if err != nil {
			t.Fatal(err)
		}
		var marks []string
		for _, q := range queued {
			marks = append(marks, fmt.Sprintf("%s public=%v", q.URL, q.Public))
		}
		t.Logf("stored frontier: %s", strings.Join(marks, ", "))
		time.Sleep(3 * time.Minute) // the bubble's clock: the pause is over
		if out := credRun(t, tr, db, starts...); !out.Complete {
			t.Fatalf("second run: %+v", out)
		}
		s.check(t)
	})
}
