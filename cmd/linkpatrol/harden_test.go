package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkpatrol/linkpatrol/store"
)

// A redirect to a URL longer than the store can key is a result of its
// own ("URL too long"), not a commit that fails and makes every run of
// the pass exit 2.
func TestOverlongRedirectTargetIsAResult(t *testing.T) {
	t.Parallel()
	long := "/" + strings.Repeat("a", store.MaxURLLength+100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/r":
			http.Redirect(w, r, long, http.StatusFound)
		default:
			// Every other path is a page, the long one included, so a
			// followed redirect would queue it.
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<a href="/r">r</a>`)
		}
	}))
	defer srv.Close()
	db := filepath.Join(t.TempDir(), "lp.db")
	for run := range 2 {
		r := runBinary(t, "check", "--db", db, "--format", "json", srv.URL+"/")
		if r.code != exitProblems {
			t.Fatalf("run %d: exit %d, want 1\n%s", run+1, r.code, r.stderr)
		}
		rep := decodeReport(t, r.stdout)
		if !rep.Pass.Complete || len(rep.URLs) != 1 || rep.URLs[0].URL != srv.URL+"/r" || rep.URLs[0].Error != "URL too long" {
			t.Errorf("run %d: complete %v, problems %+v; want /r as URL too long", run+1, rep.Pass.Complete, rep.URLs)
		}
	}
}
