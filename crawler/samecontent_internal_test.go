package crawler

import (
	"net/http"
	"testing"

	"github.com/linkpatrol/linkpatrol/crawler/extract"
)

// A copy of a page in another directory loses its links only if they are
// written relative to its path and no <base> fixes where they resolve:
// a single-page app's <base href="/">, or links from the root, lead to the
// same URLs from anywhere.
func TestMovesLinks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, html, refresh string
		want                bool
	}{
		{"relative path", `<a href="docs/intro">x</a>`, "", true},
		{"up a directory", `<img src="../logo.png">`, "", true},
		{"query only", `<a href="?page=2">2</a>`, "", true},
		{"from the root", `<a href="/docs/intro">x</a><script src="/app.js"></script>`, "", false},
		{"absolute and other schemes", `<a href="https://example.com/x">x</a><a href="//cdn.example/y">y</a><a href="mailto:a@example.com">m</a>`, "", false},
		{"itself", `<a href="">top</a><a href="#intro">intro</a>`, "", false},
		{"base from the root", `<base href="/"><a href="docs/intro">x</a>`, "", false},
		{"relative base", `<base href="app/"><a href="docs/intro">x</a>`, "", true},
		{"refresh header", `<p>moved</p>`, "0; url=next.html", true},
		{"no links", `<p>page</p>`, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			if tc.refresh != "" {
				h.Set("Refresh", tc.refresh)
			}
			if got := movesLinks(extract.Extract([]byte(tc.html), extract.Options{}), h); got != tc.want {
				t.Errorf("movesLinks(%s) = %v, want %v", tc.html, got, tc.want)
			}
		})
	}
}
