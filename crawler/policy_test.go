package crawler_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
)

// TestCredentialsStayOnTheirHost: a rule's header and basic auth reach the
// host it names and no other, not even when that host redirects there.
func TestCredentialsStayOnTheirHost(t *testing.T) {
	t.Parallel()
	type seen struct{ path, token, auth string }
	var mu sync.Mutex
	var other []seen
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		other = append(other, seen{r.URL.Path, r.Header.Get("X-Token"), r.Header.Get("Authorization")})
		mu.Unlock()
		fmt.Fprint(w, "ok")
	}))
	defer elsewhere.Close()
	var staging []seen
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		staging = append(staging, seen{r.URL.Path, r.Header.Get("X-Token"), r.Header.Get("Authorization")})
		mu.Unlock()
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<a href="/away">away</a><a href="%s/direct">direct</a>`, elsewhere.URL)
		case "/away":
			http.Redirect(w, r, elsewhere.URL+"/redirected", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()

	rulesPass(t, crawler.Config{Timeout: 5 * time.Second}, site.URL+"/", rules.Rule{
		Source: "test", Scheme: "http", Host: site.Listener.Addr().String(),
		Headers: map[string]string{"X-Token": "s3cret"}, User: "u", Password: "p",
	})
	mu.Lock()
	defer mu.Unlock()
	if len(staging) == 0 || len(other) != 2 {
		t.Fatalf("requests: %d to the site, %d elsewhere (want 2 elsewhere)", len(staging), len(other))
	}
	for _, s := range staging {
		if s.token != "s3cret" || s.auth == "" {
			t.Errorf("site %s: token %q, auth %q; the rule's credentials are missing", s.path, s.token, s.auth)
		}
	}
	for _, s := range other {
		if s.token != "" || s.auth != "" {
			t.Errorf("other host %s got token %q, auth %q", s.path, s.token, s.auth)
		}
	}
}

// TestGhostPageKeepsItsLinksFollowed: an index page that was good last
// pass and fails now still has its old links followed, and says so.
func TestGhostPageKeepsItsLinksFollowed(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	down := false
	var c counter
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		d := down
		mu.Unlock()
		if d {
			http.Error(w, "oops", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<a href="/a">a</a><a href="/gone">gone</a>`)
	})
	mux.HandleFunc("/a", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	srv := httptest.NewServer(c.wrap(mux))
	defer srv.Close()
	start := srv.URL + "/"
	db := openDB(t)
	engine, err := rules.New(rules.Config{Start: []string{start}})
	if err != nil {
		t.Fatal(err)
	}
	pass := func() store.Pass {
		t.Helper()
		cr := crawler.New(crawler.Config{Ghost: 7 * 24 * time.Hour}, engine, db)
		p, out, err := cr.Run(context.Background(), context.Background(), passOf(start))
		if err != nil || !out.Complete || p.State != store.PassComplete {
			t.Fatalf("pass: %v, complete %v, state %s", err, out.Complete, p.State)
		}
		return p
	}
	pass()
	mu.Lock()
	down = true
	mu.Unlock()
	second := pass()

	home, _, _ := db.Get(start)
	if home.Verdict != store.VerdictTransient || home.Note == "" {
		t.Errorf("failing index: %+v, want transient with a ghost note", home)
	}
	for _, path := range []string{"/a", "/gone"} {
		rec, ok, _ := db.Get(srv.URL + path)
		if !ok || rec.Pass != second.ID {
			t.Errorf("%s was not checked in the second pass through the ghost page: %+v", path, rec)
		}
	}
	if n := c.get("GET /a"); n != 2 {
		t.Errorf("/a fetched %d times over two passes, want 2", n)
	}
}

// rulesPass runs one pass from start with the given rules to its end and
// returns the records of the pass.
func rulesPass(t *testing.T, cfg crawler.Config, start string, rs ...rules.Rule) map[string]store.URLRecord {
	t.Helper()
	engine, err := rules.New(rules.Config{Start: []string{start}, Rules: rs})
	if err != nil {
		t.Fatal(err)
	}
	db := openDB(t)
	pass, out, err := crawler.New(cfg, engine, db).Run(context.Background(), context.Background(), passOf(start))
	if err != nil || !out.Complete {
		t.Fatalf("run: %v, complete %v", err, out.Complete)
	}
	recs := make(map[string]store.URLRecord)
	if err := db.Records(pass.ID, func(r *store.URLRecord) error { recs[r.URL] = *r; return nil }); err != nil {
		t.Fatal(err)
	}
	return recs
}

// TestRuleTimeoutApplies: a rule's timeout is the timeout of the requests
// to the URLs it matches, shorter or longer than the run's. The server
// answers /slow after two seconds of the bubble's clock: within the run's
// 3s, beyond the rule's 200ms; and /patient after five: beyond the run's
// 3s, within the rule's 40s.
func TestRuleTimeoutApplies(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		mux := http.NewServeMux()
		mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<a href="/slow">slow</a><a href="/patient">patient</a>`)
		})
		answerAfter := func(d time.Duration) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-time.After(d):
					fmt.Fprint(w, "ok")
				case <-r.Context().Done():
				}
			}
		}
		mux.HandleFunc("/slow", answerAfter(2*time.Second))
		mux.HandleFunc("/patient", answerAfter(5*time.Second))
		base, tr := pipeServer(t, mux)
		recs := rulesPass(t, crawler.Config{Timeout: 3 * time.Second, Transport: tr}, base+"/",
			rules.Rule{Source: "slow", Path: "/slow", Timeout: "200ms"},
			rules.Rule{Source: "patient", Path: "/patient", Timeout: "40s"})
		if r := recs[base+"/slow"]; r.Verdict != store.VerdictTransient || r.Error != "timeout" {
			t.Errorf("/slow under a rule of 200ms: %s %q %q, want transient timeout", r.Verdict, r.Error, r.Note)
		}
		if r := recs[base+"/patient"]; r.Verdict != store.VerdictOK {
			t.Errorf("/patient under a rule of 40s, the run's 3s: %s %q %q, want ok", r.Verdict, r.Error, r.Note)
		}
	})
}
