package crawler_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
)

// A start URL that redirects to another host makes that host the site's:
// its pages are parsed (rules.Engine.FollowStart). The pass keeps the
// host (store.Pass.SiteOrigins), so that a run killed after the redirect
// resumes parsing there: the record is built by hand as such a run leaves
// it, the redirect done and the other host's home page queued.
func TestResumedPassKeepsTheHostAStartURLRedirectedTo(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.Handle("/home", page(`<a href="/gone">gone</a>`))
	www := httptest.NewServer(mux)
	defer www.Close()
	bare := httptest.NewServer(http.RedirectHandler(www.URL+"/home", http.StatusMovedPermanently))
	defer bare.Close()
	start := bare.URL + "/"

	db := openDB(t)
	p, err := db.BeginPass(store.Pass{StartURLs: []string{start}}, []store.Task{{URL: www.URL + "/home", Action: rules.Check.String(), Depth: 1}})
	if err != nil {
		t.Fatal(err)
	}
	// A heartbeat's copy of the pass, made before the host was added,
	// must not drop it.
	if err := db.AddSiteOrigins(p.ID, []string{www.URL}); err != nil {
		t.Fatal(err)
	}
	p.State = store.PassStopped
	if err := db.UpdatePass(p); err != nil {
		t.Fatal(err)
	}

	engine, err := rules.New(rules.Config{Start: []string{start}})
	if err != nil {
		t.Fatal(err)
	}
	pass, out, err := crawler.New(crawler.Config{Concurrency: 2}, engine, db).Run(context.Background(), context.Background(), passOf(start))
	if err != nil || !out.Complete {
		t.Fatalf("run: %v, complete %v", err, out.Complete)
	}
	if len(pass.SiteOrigins) != 1 || pass.SiteOrigins[0] != www.URL {
		t.Errorf("pass's site origins %q, want [%s]", pass.SiteOrigins, www.URL)
	}
	home, ok, err := db.Get(www.URL + "/home")
	if err != nil || !ok || !home.Parsed {
		t.Errorf("%s/home: %+v, %v, %v; want it parsed, as a page of the site", www.URL, home, ok, err)
	}
	if gone, ok, _ := db.Get(www.URL + "/gone"); !ok || gone.Status != http.StatusNotFound {
		t.Errorf("%s/gone: %+v; want its 404, found on the page parsed", www.URL, gone)
	}
}
