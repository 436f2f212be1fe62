package main

import (
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"

	"github.com/linkpatrol/linkpatrol/crawler/crawltest"
)

// TestNightlyPassFetchesOnlyWhatIsStale runs three passes over one site, as
// cron would: the second inside the recheck interval reuses the images
// (checked only), revalidates every page (and the stylesheet, whose links
// are stored too) with a conditional request answered 304 and checks the problems again; the third, with --no-reuse,
// costs only 304s and the problems too — and all three report the same
// problems with the same lines.
func TestNightlyPassFetchesOnlyWhatIsStale(t *testing.T) {
	t.Parallel()
	// Every count below is per page, image or problem: 100 pages show
	// them as well as 300 did.
	const pages = 100
	site := crawltest.NewSite(crawltest.SiteOptions{Pages: pages, Images: 2, BrokenEvery: 10, Seed: 3, ETags: true, PageBytes: smallPages})
	srv := httptest.NewServer(site)
	defer srv.Close()
	db := filepath.Join(t.TempDir(), "nightly.db")
	check := func(extra ...string) result {
		t.Helper()
		args := append([]string{"check", "--db", db, "--format", "json", "--ignore-robots"}, extra...)
		r := runInProcess(t, append(args, srv.URL+"/")...)
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
	st := site.Stats()
	// The stylesheet is read for its url()s like a page, and revalidated
	// too; so is each good image, on the site's own host, where a deploy
	// may have deleted it: one conditional HEAD each, answered 304 (F4).
	firstSum := decodeReport(t, first.stdout).Summary
	images := int64(firstSum["urls"].(float64)) - pages - 1 - int64(len(want))
	if st.NotModified != pages+1+images {
		t.Errorf("second pass: %d answers 304, want one per page, one for the stylesheet and one per image (%d): all are revalidated", st.NotModified, pages+1+images)
	}
	// Each problem is asked again (a HEAD, perhaps a GET after it).
	// Nothing else is requested.
	if again := st.Requests - st.NotModified; again < int64(len(want)) || again > 2*int64(len(want)) {
		t.Errorf("second pass sent %d requests besides the 304s, want one or two per problem (%d)", again, len(want))
	}
	if got := problems(t, second.stdout); !slices.Equal(got, want) {
		t.Errorf("second pass reports differently:\n got %q\nwant %q", got, want)
	}

	// --no-reuse is a full check: nothing reused, nothing revalidated.
	site.Reset()
	third := check("--no-reuse")
	st = site.Stats()
	if st.NotModified != 0 {
		t.Errorf("third pass, --no-reuse: %d answers 304, want none: every page is read in full", st.NotModified)
	}
	if st.Bytes < full.Bytes {
		t.Errorf("third pass, --no-reuse: read %d body bytes, less than the first pass's %d", st.Bytes, full.Bytes)
	}
	if got := problems(t, third.stdout); !slices.Equal(got, want) {
		t.Errorf("third pass reports differently:\n got %q\nwant %q", got, want)
	}
}
