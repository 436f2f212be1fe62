package main

import (
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"

	"github.com/linkpatrol/linkpatrol/crawler/crawltest"
)

// TestNightlyPassFetchesOnlyWhatIsStale runs three passes over one site, as
// cron would: the second inside the recheck interval costs no request, the
// third, after it, costs only conditional requests answered 304 (for the
// pages and the stylesheet, whose links are stored too) — and all
// three report the same problems with the same lines.
func TestNightlyPassFetchesOnlyWhatIsStale(t *testing.T) {
	const pages = 300
	site := crawltest.NewSite(crawltest.SiteOptions{Pages: pages, Images: 2, BrokenEvery: 10, Seed: 3, ETags: true})
	srv := httptest.NewServer(site)
	defer srv.Close()
	db := filepath.Join(t.TempDir(), "nightly.db")
	check := func(extra ...string) result {
		t.Helper()
		args := append([]string{"check", "--db", db, "--format", "json", "--ignore-robots"}, extra...)
		r := runBinary(t, append(args, srv.URL+"/")...)
		if r.code != exitProblems {
			t.Fatalf("check %v: exit %d\n%s", extra, r.code, r.stderr)
		}
		return r
	}

	first := check()
	want := problems(t, first.stdout)
	full := site.Stats()
	if full.Requests == 0 || len(want) == 0 {
		t.Fatalf("first pass: %d requests, %d problems", full.Requests, len(want))
	}

	site.Reset()
	second := check()
	if st := site.Stats(); st.Requests != 0 {
		t.Errorf("second pass inside the recheck interval sent %d requests, want 0", st.Requests)
	}
	if got := problems(t, second.stdout); !slices.Equal(got, want) {
		t.Errorf("second pass reports differently:\n got %q\nwant %q", got, want)
	}

	site.Reset()
	third := check("--no-reuse")
	st := site.Stats()
	// The stylesheet is read for its url()s like a page.
	if st.NotModified != pages+1 {
		t.Errorf("third pass: %d answers 304, want one per page and one for the stylesheet (%d)", st.NotModified, pages+1)
	}
	if st.Bytes*10 > full.Bytes {
		t.Errorf("third pass read %d body bytes, more than 10%% of the first pass's %d", st.Bytes, full.Bytes)
	}
	if got := problems(t, third.stdout); !slices.Equal(got, want) {
		t.Errorf("third pass reports differently:\n got %q\nwant %q", got, want)
	}
}
