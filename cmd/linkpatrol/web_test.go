package main

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/linkpatrol/linkpatrol/crawler/crawltest"
)

// newWeb starts a multi-host web for the test: sites on their own loopback
// ports whose pages link and redirect across hosts.
func newWeb(t *testing.T, sites, pages int) *crawltest.Web {
	t.Helper()
	w := crawltest.NewWeb(crawltest.WebOptions{Sites: sites, Site: crawltest.SiteOptions{
		Pages: pages, LinksPerPage: 8, Images: 1, BrokenEvery: 10, PeerRedirectEvery: 7, PageBytes: 1500,
	}})
	t.Cleanup(w.Close)
	return w
}

// The single-process pass over a web finds what the web says a correct
// checker finds, asking every server for each URL once: the baseline the
// distributed passes are compared with.
func TestCheckAWebOfSites(t *testing.T) {
	t.Parallel()
	w := newWeb(t, 4, 60)
	args := append([]string{"check", "--format", "json", "--all", "--db", filepath.Join(t.TempDir(), "lp.db")}, w.StartURLs()...)
	r := runBinary(t, args...)
	if r.code != exitProblems {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	rep := decodeReport(t, r.stdout)
	exp := w.Expected()
	var broken []string
	for _, u := range rep.URLs {
		if u.Broken {
			broken = append(broken, u.URL)
		}
	}
	var want []string
	for _, b := range exp.Broken {
		want = append(want, b.URL)
	}
	slices.Sort(broken)
	if !slices.Equal(broken, want) {
		t.Errorf("broken %v\nwant %v", broken, want)
	}
	if len(rep.URLs) != exp.URLs {
		t.Errorf("report lists %d URLs, the web has %d", len(rep.URLs), exp.URLs)
	}
	if rep := w.Repeated(); len(rep) > 0 {
		t.Errorf("URLs asked for twice: %v", rep)
	}
}
