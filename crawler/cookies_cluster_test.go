package crawler_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
)

// A cookie wall on one crawler's host whose consent page is on another's
// (review8 F2): forwarded to its owner, the consent URL went without the
// cookie and both chains ended as a false "redirect loop" in the merged
// report. The chain now stops at the foreign hop after a cookie, and says
// it could not be verified; never broken.
func TestCookieChainAcrossCrawlers(t *testing.T) {
	t.Parallel()
	has := func(r *http.Request, name string) bool { _, err := r.Cookie(name); return err == nil }
	var srvs [2]*httptest.Server
	m0 := http.NewServeMux()
	m0.Handle("/", page(`<a href="/wall">c</a>`))
	m0.HandleFunc("/wall", func(w http.ResponseWriter, r *http.Request) {
		if has(r, "consent") {
			w.Write([]byte("ok"))
			return
		}
		http.Redirect(w, r, srvs[1].URL+"/consent?back="+srvs[0].URL+"/wall", http.StatusFound)
	})
	m1 := http.NewServeMux()
	m1.Handle("/", page(`nothing`))
	m1.HandleFunc("/consent", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "consent", Value: "yes", Path: "/"})
		http.Redirect(w, r, r.URL.Query().Get("back"), http.StatusFound)
	})
	srvs[0], srvs[1] = httptest.NewServer(m0), httptest.NewServer(m1)
	t.Cleanup(srvs[0].Close)
	t.Cleanup(srvs[1].Close)
	starts := []string{srvs[0].URL + "/", srvs[1].URL + "/"}
	engine, err := rules.New(rules.Config{Start: starts})
	if err != nil {
		t.Fatal(err)
	}
	r := newRelay(2)
	passes, _ := r.run(t, engine, crawler.Config{Concurrency: 2}, srvs[:], starts)
	awaiting := map[string]store.URLRecord{}
	settled := map[string]store.URLRecord{}
	for i, n := range r.nodes {
		err := n.DB.Records(passes[i].ID, func(rec *store.URLRecord) error {
			if rec.Awaits != "" {
				awaiting[rec.URL] = *rec
			} else {
				settled[rec.URL] = *rec
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	fin, err := crawler.FinishChains(awaiting, func(u string) (store.URLRecord, bool, bool, error) {
		rec, ok := settled[u]
		return rec, ok, false, nil
	}, 10)
	if err != nil {
		t.Fatal(err)
	}
	for u, rec := range fin {
		settled[u] = rec
	}
	for _, u := range []string{srvs[0].URL + "/wall", srvs[1].URL + "/consent?back=" + srvs[0].URL + "/wall"} {
		rec, ok := settled[u]
		if !ok || rec.Verdict != store.VerdictUnverifiable || rec.Note == "" {
			t.Errorf("%s: %v %s %d %q %q final %s, want unverifiable with a note", u, ok, rec.Verdict, rec.Status, rec.Error, rec.Note, rec.FinalURL)
		}
	}
}
