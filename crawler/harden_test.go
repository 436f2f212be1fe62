package crawler_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/store"
)

// A web server that redirects to file: never makes the crawler read a local
// file, not even in directory mode, where file: URLs are otherwise served.
func TestRedirectToFileNeverFollowed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "secret.html"), []byte("<a href=\"/leaked\">x</a>"), 0o644); err != nil {
		t.Fatal(err)
	}
	ext := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file:///secret.html", http.StatusFound)
	}))
	defer ext.Close()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte(`<a href="`+ext.URL+`/go">go</a>`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{dir, ""} {
		start := "file:///"
		if root == "" {
			start = ext.URL + "/start"
		}
		r := runPass(t, crawler.Config{Root: root}, start)
		u := ext.URL + "/go"
		if root == "" {
			u = start
		}
		rec := r.records[u]
		if rec.Verdict != store.VerdictBroken || rec.Error != "redirect to file:" {
			t.Errorf("root %q: %s is %s %q, want broken \"redirect to file:\"", root, u, rec.Verdict, rec.Error)
		}
		if _, ok := r.records["file:///secret.html"]; ok {
			t.Errorf("root %q: the redirect target was recorded", root)
		}
	}
}

// A page's cost is bounded by its links: past the most a page may hold,
// the rest is not read, and the record says so, as for a page over
// --max-size. (BenchmarkStopOnHugePage measures time and memory.)
func TestPageLinksBounded(t *testing.T) {
	t.Parallel()
	const n = 100_010
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "<a href=\"/#%d\">%d</a>\n", i, i)
	}
	srv := httptest.NewServer(page(b.String()))
	defer srv.Close()
	r := runPass(t, crawler.Config{}, srv.URL+"/")
	rec := r.records[srv.URL+"/"]
	if !strings.Contains(rec.Note, "more than 100000 links") {
		t.Errorf("note %q does not say the page was cut", rec.Note)
	}
	links, err := r.db.Links(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	if len(links) != 100_000 {
		t.Errorf("%d links stored, want the first 100000", len(links))
	}
}
