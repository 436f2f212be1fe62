package crawler_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/store"
)

// cookieSite has the cookie walls of real sites (qa8 D1): pages that set a
// cookie and redirect to themselves, or through a page that checks it came
// back, and answer only once it does.
func cookieSite(t *testing.T) *httptest.Server {
	t.Helper()
	has := func(r *http.Request, name string) bool { _, err := r.Cookie(name); return err == nil }
	mux := http.NewServeMux()
	mux.HandleFunc("/behind", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	mux.Handle("/", page(`<a href="/self">a</a> <a href="/check">b</a> <a href="/wall">c</a>
<a href="/same">d</a> <a href="/fresh">e</a> <a href="/crumb">f</a> <a href="/count">g</a>`))
	// Sets a cookie and redirects to itself; with it, the page.
	mux.HandleFunc("/self", func(w http.ResponseWriter, r *http.Request) {
		if has(r, "seen") {
			page(`<a href="/behind">behind the wall</a>`)(w, r)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "seen", Value: "1", Path: "/"})
		http.Redirect(w, r, "/self", http.StatusFound)
	})
	// Through a check page, which sends back where the cookie came from.
	mux.HandleFunc("/check", func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Query().Get("check") == "1" && has(r, "c2"):
			http.Redirect(w, r, "/check", http.StatusFound)
		case r.URL.Query().Get("check") == "1":
			http.Error(w, "enable cookies", http.StatusBadRequest)
		case has(r, "c2"):
			w.Write([]byte("ok"))
		default:
			http.SetCookie(w, &http.Cookie{Name: "c2", Value: "1", Path: "/"})
			http.Redirect(w, r, "/check?check=1", http.StatusFound)
		}
	})
	// Through a consent page that /fresh, linked on its own, reaches too.
	mux.HandleFunc("/wall", func(w http.ResponseWriter, r *http.Request) {
		if has(r, "consent") {
			w.Write([]byte("ok"))
			return
		}
		http.Redirect(w, r, "/consent?back=/wall", http.StatusFound)
	})
	mux.HandleFunc("/consent", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "consent", Value: "yes", Path: "/"})
		http.Redirect(w, r, r.URL.Query().Get("back"), http.StatusFound)
	})
	// Needs the cookie another link's chain got: never sent here.
	mux.HandleFunc("/fresh", func(w http.ResponseWriter, r *http.Request) {
		if has(r, "seen") || has(r, "consent") || has(r, "c2") {
			w.Write([]byte("leaked"))
			return
		}
		http.Error(w, "no cookie", http.StatusNotFound)
	})
	// The same cookie again and again: a loop.
	mux.HandleFunc("/same", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "s", Value: "1", Path: "/"})
		http.Redirect(w, r, "/same", http.StatusFound)
	})
	// A cookie for another path, never sent back: a loop.
	mux.HandleFunc("/crumb", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "k", Value: "1", Path: "/elsewhere"})
		http.Redirect(w, r, "/crumb", http.StatusFound)
	})
	// A new cookie each time: the redirect limit still ends it.
	mux.HandleFunc("/count", func(w http.ResponseWriter, r *http.Request) {
		n := 0
		if ck, err := r.Cookie("n"); err == nil {
			n, _ = strconv.Atoi(ck.Value)
		}
		http.SetCookie(w, &http.Cookie{Name: "n", Value: strconv.Itoa(n + 1), Path: "/"})
		http.Redirect(w, r, "/count", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestCookiesAlongARedirectChain(t *testing.T) {
	t.Parallel()
	srv := cookieSite(t)
	r := runPass(t, crawler.Config{Concurrency: 2}, srv.URL+"/")
	if !r.outcome.Complete {
		t.Fatal("pass did not complete")
	}
	want := []struct {
		path    string
		verdict store.Verdict
		status  int
		err     string
	}{
		{"/self", store.VerdictOK, 200, ""},
		{"/check", store.VerdictOK, 200, ""},
		{"/wall", store.VerdictOK, 200, ""},
		{"/fresh", store.VerdictBroken, 404, ""},
		{"/same", store.VerdictBroken, 302, store.ErrorRedirectLoop},
		{"/crumb", store.VerdictBroken, 302, store.ErrorRedirectLoop},
		{"/count", store.VerdictBroken, 302, store.ErrorTooManyRedirects},
	}
	for _, w := range want {
		rec, ok := r.records[srv.URL+w.path]
		if !ok {
			t.Errorf("%s: no record", w.path)
			continue
		}
		if rec.Verdict != w.verdict || rec.Status != w.status || rec.Error != w.err {
			t.Errorf("%s: %s %d %q (final %s, %d hops), want %s %d %q", w.path, rec.Verdict, rec.Status, rec.Error,
				rec.FinalURL, len(rec.Redirects), w.verdict, w.status, w.err)
		}
	}
	// The page behind the wall is read like any other: its links are the
	// site's too.
	if rec := r.records[srv.URL+"/self"]; !rec.Parsed {
		t.Errorf("/self, its own page once the cookie came back, was not parsed")
	}
	if rec, ok := r.records[srv.URL+"/behind"]; !ok || rec.Verdict != store.VerdictOK {
		t.Errorf("/behind, linked from behind the cookie wall: %v %s", ok, rec.Verdict)
	}
	// The check page, linked from no page, answers 400 to whoever comes
	// without the cookie: a target of a chain that held a cookie is not
	// the pass's answer for that URL.
	if rec, ok := r.records[srv.URL+"/check?check=1"]; ok && rec.Verdict != store.VerdictBroken {
		t.Errorf("/check?check=1 recorded %s from a chain's cookie", rec.Verdict)
	}
}

// The commonest cookie redirect is not a wall: a page sets a language,
// session or cart cookie and redirects to the real page. That page is the
// pass's like any other, recorded and parsed under its own URL, as a start
// URL and as a linked page (review8 F0: it and everything behind it went
// unchecked, "No problems found").
func TestCookieRedirectEndIsParsed(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	setAndGo := func(name, to string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			http.SetCookie(w, &http.Cookie{Name: name, Value: "1", Path: "/"})
			http.Redirect(w, r, to, http.StatusFound)
		}
	}
	// As a start URL: / sets lang and lands on /en/.
	mux.HandleFunc("/{$}", setAndGo("lang", "/en/"))
	mux.Handle("/en/{$}", page(`<a href="/en/a">a</a>
<a href="/en/gone">gone</a> <a href="/shop">shop</a> <a href="/shop/en/">shop, in english</a>`))
	mux.Handle("/en/a", page(`ok`))
	// As a linked page: /shop sets cart and lands on /shop/en/.
	mux.HandleFunc("/shop", setAndGo("cart", "/shop/en/"))
	mux.Handle("/shop/en/{$}", page(`<a href="/shop/gone">gone</a>`))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	r := runPass(t, crawler.Config{Concurrency: 2}, srv.URL+"/")
	if !r.outcome.Complete {
		t.Fatal("pass did not complete")
	}
	for _, w := range []struct {
		path    string
		verdict store.Verdict
		status  int
	}{
		{"/", store.VerdictOK, 200},
		{"/en/", store.VerdictOK, 200},
		{"/en/a", store.VerdictOK, 200},
		{"/en/gone", store.VerdictBroken, 404},
		{"/shop", store.VerdictOK, 200},
		{"/shop/en/", store.VerdictOK, 200},
		{"/shop/gone", store.VerdictBroken, 404},
	} {
		rec, ok := r.records[srv.URL+w.path]
		if !ok {
			t.Errorf("%s: no record: not checked", w.path)
			continue
		}
		if rec.Verdict != w.verdict || rec.Status != w.status {
			t.Errorf("%s: %s %d %q, want %s %d", w.path, rec.Verdict, rec.Status, rec.Error, w.verdict, w.status)
		}
	}
	// The links are the landing page's: a referrer line names it, not the
	// URL that redirected there.
	for page, want := range map[string]string{"/en/": "/en/gone", "/shop/en/": "/shop/gone"} {
		if rec := r.records[srv.URL+page]; !rec.Parsed {
			t.Errorf("%s was not parsed", page)
		}
		links, err := r.db.Links(srv.URL + page)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(links, func(l store.Link) bool { return l.URL == srv.URL+want }) {
			t.Errorf("%s's links %v lack %s", page, links, want)
		}
	}
}
