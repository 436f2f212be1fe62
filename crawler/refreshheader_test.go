package crawler_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/report"
	"github.com/linkpatrol/linkpatrol/store"
)

// A page answered 200 with "Refresh: 0; url=/x" sends a browser to /x as a
// <meta http-equiv=refresh> does (qa9 T5): its URL is a link of the page,
// on no line of the body, resolved against the page's URL (not its
// <base>). A resource's header is not read: it is only checked.
func TestRefreshHeaderIsALinkOfThePage(t *testing.T) {
	t.Parallel()
	var c counter
	mux := http.NewServeMux()
	mux.Handle("/{$}", page(`<!doctype html>
<a href="/moved">moved</a>
<a href="/later">later</a>
<a href="/reload">reload</a>
<a href="/only">only the header</a>
<img src="/logo.png">`))
	withRefresh := func(v, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Refresh", v)
			page(body)(w, r)
		}
	}
	mux.Handle("/moved", withRefresh("0; url=/gone/refresh-header", `<p>moved</p>
<a href="/gone/refresh-header">also in the body</a>`))
	// A <base> does not apply to the header, read before the body.
	mux.Handle("/later", withRefresh("5;URL='next'", `<base href="/elsewhere/"><p>soon</p>`))
	mux.Handle("/only", withRefresh("0; url=/gone/header-only", `<p>moved</p>`))
	mux.Handle("/next", page(`<p>here</p>`))
	mux.Handle("/reload", withRefresh("30", `<p>reloads itself</p>`))
	mux.HandleFunc("/logo.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Refresh", "0; url=/gone/from-an-image")
		w.Header().Set("Content-Type", "image/png")
	})
	srv := httptest.NewServer(c.wrap(mux))
	t.Cleanup(srv.Close)

	db := openDB(t)
	recs := completePass(t, db, crawler.Config{}, srv.URL+"/")
	if got := recs[srv.URL+"/gone/refresh-header"].Verdict; got != store.VerdictBroken {
		t.Errorf("/gone/refresh-header, named by /moved's Refresh header: verdict %v, want broken", got)
	}
	if got := recs[srv.URL+"/next"].Verdict; got != store.VerdictOK {
		t.Errorf("/next, named by /later's Refresh header: verdict %v, want ok", got)
	}
	if n := c.get("GET /elsewhere/next") + c.get("HEAD /elsewhere/next"); n != 0 {
		t.Errorf("the header's URL was resolved against the body's <base> (%d requests)", n)
	}
	if n := c.get("GET /gone/from-an-image") + c.get("HEAD /gone/from-an-image"); n != 0 {
		t.Errorf("an image's Refresh header was followed (%d requests): a resource is only checked", n)
	}

	last, _, err := db.LastPass()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(db, last.ID, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var refs []report.Referrer
	for _, e := range rep.Entries {
		if e.Record.URL == srv.URL+"/gone/refresh-header" {
			refs = e.Referrers
		}
	}
	want := []report.Referrer{
		{Page: srv.URL + "/moved", Line: 0, Tag: "http-header", Attr: "refresh"},
		{Page: srv.URL + "/moved", Line: 2, Tag: "a", Attr: "href"},
	}
	if !slices.Equal(refs, want) {
		t.Errorf("referrers of /gone/refresh-header:\n got %+v\nwant %+v", refs, want)
	}
	var text bytes.Buffer
	if err := report.Write(&text, rep, "text"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{srv.URL + "/moved: Refresh header, line 2\n", srv.URL + "/only: Refresh header\n"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text report does not say %q:\n%s", want, text.String())
		}
	}
	if rep.Summary.Broken != 2 {
		t.Errorf("%d broken, want 2 (the /gone/ targets of the headers):\n%s", rep.Summary.Broken, text.String())
	}
	var raw, js bytes.Buffer
	if err := report.Write(&raw, rep, "json"); err != nil {
		t.Fatal(err)
	}
	if err := json.Compact(&js, raw.Bytes()); err != nil {
		t.Fatal(err)
	}
	if want := `{"page":"` + srv.URL + `/only","line":0,"tag":"http-header","attr":"refresh"}`; !strings.Contains(js.String(), want) {
		t.Errorf("the JSON report does not hold %s:\n%s", want, js.String())
	}
}
