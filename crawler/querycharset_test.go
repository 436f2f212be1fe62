package crawler_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/store"
)

// A link on a page in a legacy encoding is requested as a browser requests
// it: the path in UTF-8, the query in the page's encoding (qa8 P2).
func TestQueryInThePagesEncoding(t *testing.T) {
	t.Parallel()
	var c counter
	mux := http.NewServeMux()
	legacy := func(contentType, head string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", contentType)
			w.Write([]byte(head + "<a href=\"/ok/caf\xe9?q=\xe9\">x</a>\n<a href=\"/ok/caf\xe9?q=%C3%A9&r=\xe9#\xe9\">y</a>"))
		}
	}
	mux.Handle("/", page(`<a href="/header">a</a> <a href="/meta">b</a>`))
	mux.Handle("/header", legacy("text/html; charset=windows-1252", ""))
	mux.Handle("/meta", legacy("text/html", "<meta charset=iso-8859-1>\n"))
	mux.HandleFunc("/ok/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.EscapedPath() == "/ok/caf%C3%A9" && (r.URL.RawQuery == "q=%E9" || r.URL.RawQuery == "q=%C3%A9&r=%E9") {
			w.Write([]byte("ok"))
			return
		}
		http.NotFound(w, r)
	})
	srv := httptest.NewServer(c.wrap(mux))
	defer srv.Close()
	r := runPass(t, crawler.Config{Concurrency: 2}, srv.URL+"/")
	for _, u := range []string{"/ok/caf%C3%A9?q=%E9", "/ok/caf%C3%A9?q=%C3%A9&r=%E9"} {
		rec, ok := r.records[srv.URL+u]
		if !ok || rec.Verdict != store.VerdictOK {
			t.Errorf("%s: %v %s %d; records %v", u, ok, rec.Verdict, rec.Status, keys(r.records))
		}
	}
	for p, first := range map[string]int{"/header": 1, "/meta": 2} {
		links, err := r.db.Links(srv.URL + p)
		if err != nil || len(links) != 2 || links[0].Line != first || links[1].Line != first+1 {
			t.Errorf("%s: links %+v, %v; want lines %d and %d", p, links, err, first, first+1)
		}
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
