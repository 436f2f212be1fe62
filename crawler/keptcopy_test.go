package crawler_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
)

// TestUnreadPageKeepsItsLastCopy: a page that fails with no good copy
// recent enough to follow (--ghost 0) keeps the links of its last copy in
// the store, not followed, so the report can tell what lies behind it
// from what is gone (qa7 Q5); once it answers 404 it is gone, and so are
// they.
func TestUnreadPageKeepsItsLastCopy(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	status := http.StatusOK
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<a href="/s/">s</a>`)
	})
	mux.HandleFunc("/s/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		st := status
		mu.Unlock()
		if st != http.StatusOK {
			http.Error(w, "no", st)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<a href="/s/x">x</a>`)
	})
	mux.HandleFunc("/s/x", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	start := srv.URL + "/"
	db := openDB(t)
	engine, err := rules.New(rules.Config{Start: []string{start}})
	if err != nil {
		t.Fatal(err)
	}
	pass := func(st int) store.Pass {
		t.Helper()
		mu.Lock()
		status = st
		mu.Unlock()
		p, out, err := crawler.New(crawler.Config{Ghost: 0}, engine, db).Run(context.Background(), context.Background(), passOf(start))
		if err != nil || !out.Complete {
			t.Fatalf("pass: %v, complete %v", err, out.Complete)
		}
		return p
	}
	first := pass(http.StatusOK)
	pass(http.StatusInternalServerError)
	sec, _, _ := db.Get(srv.URL + "/s/")
	if sec.Verdict != store.VerdictTransient || sec.Parsed {
		t.Errorf("/s/ answering 500: %+v, want transient, not parsed", sec)
	}
	if x, _, _ := db.Get(srv.URL + "/s/x"); x.Pass != first.ID {
		t.Errorf("/s/x was reached through a page not read (pass %d): its links must not be followed", x.Pass)
	}
	links, err := db.Links(srv.URL + "/s/")
	if err != nil || len(links) != 1 || links[0].URL != srv.URL+"/s/x" {
		t.Errorf("links kept for /s/ = %+v, %v; want its last copy's link to /s/x", links, err)
	}
	pass(http.StatusNotFound)
	if links, err := db.Links(srv.URL + "/s/"); err != nil || len(links) != 0 {
		t.Errorf("/s/ answering 404 still has links %+v, %v: a page gone loses them", links, err)
	}
}
