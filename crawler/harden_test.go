package crawler_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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
