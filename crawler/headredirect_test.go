package crawler_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// Some servers (IIS and ASP.NET above all) answer a HEAD with a redirect to
// an error page that answers 404, while a GET of the same URL answers 200.
// The GET that confirms a failing HEAD chain starts again from the link as
// written, and the verdict is GET's; the targets only the HEAD chain went
// through are not reported, whether the chain failed in its own fetch or at
// a target another chain claimed. A real redirect to a 404 is still broken.
// Every request, HEAD, GET and the GET that starts again, keeps to
// --per-host on both hosts (qa9 T2).
func TestHeadRedirectToErrorIsAskedAgainWithGetFromTheLink(t *testing.T) {
	t.Parallel()
	var cRec, bRec recorder
	var cHits, bHits counter
	c := httptest.NewServer(cRec.wrap(cHits.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/c/fine":
			w.Write([]byte("fine"))
		default:
			http.NotFound(w, r)
		}
	}))))
	defer c.Close()
	b := httptest.NewServer(bRec.wrap(bHits.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		head := r.Method == http.MethodHead
		switch p := r.URL.Path; {
		case p == "/h/headredir" && head:
			http.Redirect(w, r, "/gone/head-only-target", http.StatusFound)
		case p == "/h/cross" && head:
			// Across hosts: HEAD to an error page on c, GET to a page there.
			http.Redirect(w, r, c.URL+"/c/err", http.StatusFound)
		case p == "/h/cross":
			http.Redirect(w, r, c.URL+"/c/fine", http.StatusFound)
		case (p == "/h/shared1" || p == "/h/shared2" || p == "/h/shared3") && head:
			// One error page for every HEAD: the chains after the first
			// find it claimed by another chain.
			http.Redirect(w, r, "/err/shared", http.StatusFound)
		case p == "/h/loop" && head:
			// A loop only HEAD gets.
			http.Redirect(w, r, "/h/loop-back", http.StatusFound)
		case p == "/h/loop-back" && head:
			http.Redirect(w, r, "/h/loop", http.StatusFound)
		case p == "/h/linked" && head:
			http.Redirect(w, r, "/gone/linked", http.StatusFound)
		case p == "/r/real":
			http.Redirect(w, r, "/gone/real", http.StatusMovedPermanently)
		case strings.HasPrefix(p, "/h/"):
			w.Write([]byte("fine"))
		default:
			http.NotFound(w, r)
		}
	}))))
	defer b.Close()
	links := []string{"/h/headredir", "/h/cross", "/h/shared1", "/h/shared2", "/h/shared3", "/h/linked", "/gone/linked", "/r/real", "/h/loop"}
	var body strings.Builder
	for _, l := range links {
		body.WriteString(`<a href="` + b.URL + l + `">x</a>` + "\n")
	}
	srv := httptest.NewServer(page(body.String()))
	defer srv.Close()

	s := throttle.Settings{MaxInFlight: 1, MaxPause: time.Minute, MaxRetries: 2}
	settings := func(string) throttle.Settings { return s }
	res := runPass(t, crawler.Config{Concurrency: 4, UserAgent: "linkpatrol-test", Timeout: 10 * time.Second,
		Throttle: throttle.New(throttle.Config{Settings: settings, UserAgent: "linkpatrol-test"}), HostSettings: settings}, srv.URL+"/")
	if !res.outcome.Complete {
		t.Fatalf("pass not complete: %+v", res.outcome)
	}
	for _, l := range []string{"/h/headredir", "/h/shared1", "/h/shared2", "/h/shared3", "/h/linked", "/h/loop"} {
		rec := res.records[b.URL+l]
		if rec.Verdict != store.VerdictOK || rec.Status != 200 || len(rec.Redirects) != 0 {
			t.Errorf("%s: %s %d %q, redirects %v; want ok 200 without redirects (GET's answer)", l, rec.Verdict, rec.Status, rec.Error, rec.Redirects)
		}
		if g := bHits.get("GET " + l); g != 1 {
			t.Errorf("%s: %d GETs, want 1", l, g)
		}
	}
	if rec := res.records[b.URL+"/h/cross"]; rec.Verdict != store.VerdictOK || rec.FinalURL != c.URL+"/c/fine" {
		t.Errorf("/h/cross: %s %d, final %q; want ok through GET's redirect to %s/c/fine", rec.Verdict, rec.Status, rec.FinalURL, c.URL)
	}
	if rec := res.records[b.URL+"/r/real"]; rec.Verdict != store.VerdictBroken || rec.Status != 404 || rec.FinalURL != b.URL+"/gone/real" {
		t.Errorf("/r/real: %s %d, final %q; want broken 404 at /gone/real (a real redirect to a 404)", rec.Verdict, rec.Status, rec.FinalURL)
	}
	if rec := res.records[b.URL+"/gone/linked"]; rec.Verdict != store.VerdictBroken {
		t.Errorf("/gone/linked, linked by the page: %s, want broken", rec.Verdict)
	}
	// The HEAD chains' error pages are requested by no link a person
	// follows: no record says they are anything.
	for _, u := range []string{b.URL + "/gone/head-only-target", b.URL + "/err/shared", c.URL + "/c/err", b.URL + "/h/loop-back"} {
		if rec, ok := res.records[u]; ok {
			t.Errorf("%s recorded (%s %d, note %q): only a HEAD redirect leads there", u, rec.Verdict, rec.Status, rec.Note)
		}
	}
	var problems []string
	for u, rec := range res.records {
		if rec.Verdict.Problem() {
			problems = append(problems, strings.TrimPrefix(u, b.URL))
		}
	}
	slices.Sort(problems)
	if want := []string{"/gone/linked", "/gone/real", "/r/real"}; !slices.Equal(problems, want) {
		t.Errorf("problems %v, want %v", problems, want)
	}
	// A HEAD chain's error page is never asked with GET: GET starts again
	// from the link.
	for _, p := range []string{"/gone/head-only-target", "/err/shared"} {
		if g := bHits.get("GET " + p); g != 0 {
			t.Errorf("GET %s sent %d times: the GET starts again from the link", p, g)
		}
	}
	if g := cHits.get("GET /c/err"); g != 0 {
		t.Errorf("GET /c/err sent %d times: the GET starts again from the link", g)
	}
	for name, r := range map[string]*recorder{"b": &bRec, "c": &cRec} {
		if r.maxInFlight > 1 {
			t.Errorf("host %s saw %d requests at once; --per-host is 1", name, r.maxInFlight)
		}
	}
}

// The same at another site's default pace (rate 1/s, burst 2), where a
// HEAD chain's hop often waits past what a worker holds on for and is left
// to a task of its own, and most chains find the one error page claimed by
// another: every link ends with GET's answer, the error pages are neither
// recorded nor asked with GET, and the host's own record of request starts
// keeps its pace exactly (see pacedCheck).
func TestHeadRedirectToErrorAtTheHostsPace(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const n = 12
		var links strings.Builder
		for i := range n {
			fmt.Fprintf(&links, `<a href="http://127.0.0.2/shared/%d">s</a> <a href="http://127.0.0.2/own/%d">o</a>`, i, i)
		}
		got := pacedCheck(t, links.String(), func(w http.ResponseWriter, r *http.Request) {
			switch p := r.URL.Path; {
			case r.Method == http.MethodHead && strings.HasPrefix(p, "/shared/"):
				http.Redirect(w, r, "/error.aspx", http.StatusFound)
			case r.Method == http.MethodHead && strings.HasPrefix(p, "/own/"):
				http.Redirect(w, r, "/error.aspx?aspxerrorpath="+p, http.StatusFound)
			case p == "/error.aspx":
				http.NotFound(w, r)
			default:
				page("")(w, r)
			}
		})
		for i := range n {
			for _, p := range []string{fmt.Sprintf("/shared/%d", i), fmt.Sprintf("/own/%d", i)} {
				if rec := got.recs["http://127.0.0.2"+p]; rec.Verdict != store.VerdictOK || len(rec.Redirects) != 0 {
					t.Errorf("%s: %v %d %q, redirects %v; want ok without redirects (GET's answer)", p, rec.Verdict, rec.Status, rec.Error, rec.Redirects)
				}
			}
		}
		for u, rec := range got.recs {
			if strings.Contains(u, "/error.aspx") {
				t.Errorf("%s recorded (%s %d, note %q): only HEAD redirects lead there", u, rec.Verdict, rec.Status, rec.Note)
			}
		}
	})
}

// Where one HEAD chain was led astray (to an error page GET does not
// reach), the next chains that reach it are asked again with GET at once:
// N links whose HEAD all redirect to one error page ask it once or twice,
// not once a link (review10 R4: 24 times for 23 links), every link ends
// with GET's answer, each asked with HEAD and GET once, and the host's
// pace holds (see pacedCheck).
func TestHeadChainsLedAstrayAskTheErrorPageOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const n = 20
		var links strings.Builder
		for i := range n {
			fmt.Fprintf(&links, `<a href="http://127.0.0.2/y/%d">y</a>`, i)
		}
		links.WriteString(`<a href="http://127.0.0.2/dead">d</a>`)
		got := pacedCheck(t, links.String(), func(w http.ResponseWriter, r *http.Request) {
			switch p := r.URL.Path; {
			case r.Method == http.MethodHead && strings.HasPrefix(p, "/y/"):
				http.Redirect(w, r, "/err", http.StatusFound)
			case p == "/dead":
				http.Redirect(w, r, "/err404", http.StatusFound)
			case p == "/err", p == "/err404":
				http.NotFound(w, r)
			default:
				page("")(w, r)
			}
		})
		for i := range n {
			p := fmt.Sprintf("/y/%d", i)
			if rec := got.recs["http://127.0.0.2"+p]; rec.Verdict != store.VerdictOK || len(rec.Redirects) != 0 {
				t.Errorf("%s: %v %d %q, redirects %v; want ok without redirects (GET's answer)", p, rec.Verdict, rec.Status, rec.Error, rec.Redirects)
			}
			if a := got.asked[p]; a != 2 {
				t.Errorf("%s asked %d times, want 2 (HEAD, then GET)", p, a)
			}
		}
		if a := got.asked["/err"]; a > 2 {
			t.Errorf("/err, where every HEAD chain leads, asked %d times for %d links; want at most 2", a, n)
		}
		if rec := got.recs["http://127.0.0.2/dead"]; rec.Verdict != store.VerdictBroken || rec.FinalURL != "http://127.0.0.2/err404" {
			t.Errorf("/dead: %v %d final %q; want broken at /err404 (a real redirect to a 404)", rec.Verdict, rec.Status, rec.FinalURL)
		}
		if rec, ok := got.recs["http://127.0.0.2/err"]; ok {
			t.Errorf("/err recorded (%s %d, note %q): only HEAD redirects lead there", rec.Verdict, rec.Status, rec.Note)
		}
	})
}
