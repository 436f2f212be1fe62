package crawler_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/store"
)

// The site's own images and downloads, revalidated every run, are asked
// with the validators of their last answer (If-None-Match,
// If-Modified-Since): a server that keeps them answers 304 and sends the
// file again only when it changed, also to the GET that follows a refused
// HEAD, and a 304 to such a request is the resource still there, not
// "304 to an unconditional request" (F4 left, Q8).
func TestOwnResourcesAreRevalidatedConditionally(t *testing.T) {
	t.Parallel()
	var full, notModified atomic.Int64
	var logoTag atomic.Value
	logoTag.Store(`"v1"`)
	const docDate = "Mon, 23 Nov 2026 08:00:00 GMT"
	mux := http.NewServeMux()
	mux.Handle("/{$}", page(`<img src="/logo.png"> <a href="/doc.pdf">doc</a>`))
	mux.HandleFunc("/logo.png", func(w http.ResponseWriter, r *http.Request) {
		tag := logoTag.Load().(string)
		if r.Header.Get("If-None-Match") == tag {
			notModified.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		full.Add(1)
		w.Header().Set("ETag", tag)
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("png"))
	})
	mux.HandleFunc("/doc.pdf", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			http.Error(w, "no HEAD here", http.StatusMethodNotAllowed)
			return
		}
		if r.Header.Get("If-Modified-Since") == docDate {
			notModified.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		full.Add(1)
		w.Header().Set("Last-Modified", docDate)
		w.Header().Set("Content-Type", "application/pdf")
		w.Write(make([]byte, 64<<10))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	db := openDB(t)
	logo, doc := srv.URL+"/logo.png", srv.URL+"/doc.pdf"

	first := completePass(t, db, crawler.Config{}, srv.URL+"/")
	if first[logo].Verdict != store.VerdictOK || first[doc].Verdict != store.VerdictOK || full.Load() != 2 {
		t.Fatalf("first pass: logo %s, doc %s, %d full answers; want both ok, 2", first[logo].Verdict, first[doc].Verdict, full.Load())
	}

	second := completePass(t, db, crawler.Config{}, srv.URL+"/")
	for _, u := range []string{logo, doc} {
		if r := second[u]; r.Verdict != store.VerdictOK || r.ReusedFrom != 0 || !r.FetchedAt.After(first[u].FetchedAt) {
			t.Errorf("%s on the second pass: %s %q, reused from %d, fetched %v; want ok, revalidated now", u, r.Verdict, r.Error, r.ReusedFrom, r.FetchedAt)
		}
	}
	if full.Load() != 2 || notModified.Load() != 2 {
		t.Errorf("second pass: %d full answers and %d 304s in all; want 2 and 2: nothing changed, nothing sent again", full.Load(), notModified.Load())
	}

	logoTag.Store(`"v2"`)
	third := completePass(t, db, crawler.Config{}, srv.URL+"/")
	if r := third[logo]; r.Verdict != store.VerdictOK || r.ETag != `"v2"` || full.Load() != 3 {
		t.Errorf("changed logo: %s, ETag %s, %d full answers; want ok, \"v2\", 3", r.Verdict, r.ETag, full.Load())
	}
}
