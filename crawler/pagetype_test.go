package crawler_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/store"
)

// A page of the site is read as a browser reads it: with no Content-Type,
// or an empty one, its first bytes say what it is, and an XML document
// whose root is XHTML's html element is a page whatever XML type it came
// as. Such pages were listed OK with every link on them unchecked (QA8 C1).
// Types a browser does not render as a page keep their links unread.
func TestPageTypeAsBrowsersReadIt(t *testing.T) {
	t.Parallel()
	const xhtml = "<?xml version=\"1.0\"?>\n<html xmlns=\"http://www.w3.org/1999/xhtml\"><body>\n<a href=\"/gone/%s\">gone</a>\n</body></html>"
	const html = "<!doctype html>\n<p><a href=\"/gone/%s\">gone</a>"
	const feed = "<?xml version=\"1.0\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\"><link href=\"/gone/%s\"/></feed>"
	cases := []struct {
		name, contentType, body string
		parsed                  bool
	}{
		{"none-xhtml", "-", xhtml, true},
		{"empty-xhtml", "", xhtml, true},
		{"none-html", "-", html, true},
		{"text-xml-xhtml", "text/xml", xhtml, true},
		{"application-xml-xhtml", "application/xml; charset=utf-8", xhtml, true},
		{"wap-xhtml", "application/vnd.wap.xhtml+xml", xhtml, true},
		{"none-feed", "-", feed, false},
		{"text-xml-feed", "text/xml", feed, false},
		{"text-plain-html", "text/plain", html, false},
	}
	var home strings.Builder
	byPath := map[string]int{}
	for i, c := range cases {
		fmt.Fprintf(&home, "<a href=\"/x/%s\">%s</a>\n", c.name, c.name)
		byPath["/x/"+c.name] = i
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, home.String())
		case strings.HasPrefix(r.URL.Path, "/x/"):
			c := cases[byPath[r.URL.Path]]
			switch c.contentType {
			case "-":
				w.Header()["Content-Type"] = nil // net/http would sniff one for us
			default:
				w.Header()["Content-Type"] = []string{c.contentType}
			}
			fmt.Fprintf(w, c.body, c.name)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	r := runPass(t, crawler.Config{}, srv.URL+"/")
	for _, c := range cases {
		page := r.records[srv.URL+"/x/"+c.name]
		if page.Verdict != store.VerdictOK {
			t.Errorf("%s: the page is %s %q, want ok", c.name, page.Verdict, page.Error)
		}
		gone, found := r.records[srv.URL+"/gone/"+c.name]
		switch {
		case c.parsed && (!found || gone.Verdict != store.VerdictBroken):
			t.Errorf("%s (%q): the page's link /gone/%s is %v %s, want read and broken", c.name, c.contentType, c.name, found, gone.Verdict)
		case !c.parsed && found:
			t.Errorf("%s (%q): the link /gone/%s was read from a body browsers do not show as a page", c.name, c.contentType, c.name)
		}
	}
}
