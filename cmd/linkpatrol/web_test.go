package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler/crawltest"
	"github.com/linkpatrol/linkpatrol/report"
	"github.com/linkpatrol/linkpatrol/store"
)

// smallPages is the PageBytes of a test site whose pages' size proves
// nothing: the padding is running text after the links, so the links and
// their lines are those of the default 6,000 bytes (and the database is as
// large), while a page costs a quarter to render, send and parse under the
// race detector (a kill test's site is crawled several times over).
const smallPages = 1500

// newWeb starts a multi-host web for the test: sites on their own loopback
// ports whose pages link and redirect across hosts.
func newWeb(t *testing.T, sites, pages int) *crawltest.Web {
	t.Helper()
	w := crawltest.NewWeb(crawltest.WebOptions{Sites: sites, Site: crawltest.SiteOptions{
		Pages: pages, LinksPerPage: 8, Images: 1, BrokenEvery: 10, PeerRedirectEvery: 7, PageBytes: smallPages,
	}})
	t.Cleanup(w.Close)
	return w
}

// The single-process pass over a web finds what the web says a correct
// checker finds, asking every server for each URL once: the baseline the
// distributed passes are compared with.
func TestCheckAWebOfSites(t *testing.T) {
	t.Parallel()
	// 30 pages a site: each still has broken links (every 10th page),
	// redirects to the other sites (every 7th) and images.
	w := newWeb(t, 4, 30)
	args := append([]string{"check", "--format", "json", "--all", "--db", filepath.Join(t.TempDir(), "lp.db")}, w.StartURLs()...)
	r := runInProcess(t, args...)
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

// splitByHost deals the newest pass of the database at from between n new
// files by the site each URL is on, as a distributed pass's workers each
// hold their own shards' URLs, and returns their paths.
func splitByHost(t *testing.T, w *crawltest.Web, from, dir string, n int) []string {
	t.Helper()
	src, err := store.Open(from, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	pass, _, err := src.LastPass()
	if err != nil {
		t.Fatal(err)
	}
	links := map[string][]store.Link{}
	err = src.PageLinks(pass.ID, func(page *store.URLRecord, l []store.Link) error {
		links[page.URL] = l
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	results := make([][]store.Result, n)
	err = src.Records(pass.ID, func(rec *store.URLRecord) error {
		i := max(w.SiteOf(rec.URL), 0) % n
		l, parsed := links[rec.URL]
		results[i] = append(results[i], store.Result{Record: *rec, Links: l, SetLinks: parsed})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("w%d.db", i+1))
		db, err := store.Open(p, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		begun := pass
		begun.State, begun.Finished = "", time.Time{}
		got, err := db.BeginPass(begun, nil)
		if err != nil || got.ID != pass.ID {
			t.Fatalf("begin pass %d in %s: %v (got %d)", pass.ID, p, err, got.ID)
		}
		if err := db.Commit(got.ID, results[i]); err != nil {
			t.Fatal(err)
		}
		if err := db.UpdatePass(pass); err != nil {
			t.Fatal(err)
		}
		db.Close()
		paths = append(paths, p)
	}
	return paths
}

// report --db 'w*.db' reads the files of a distributed pass's workers as
// one: every format is the report of the single file that holds it all.
func TestReportMergesWorkerFiles(t *testing.T) {
	t.Parallel()
	// 20 pages a site: the split is by host, and each format is compared
	// whole, so every site's pages, problems and cross-host chains are in
	// it at any size.
	w := newWeb(t, 4, 20)
	dir := t.TempDir()
	full := filepath.Join(dir, "full.db")
	if r := runInProcess(t, append([]string{"check", "-q", "--db", full}, w.StartURLs()...)...); r.code != exitProblems {
		t.Fatalf("check: exit %d\n%s", r.code, r.stderr)
	}
	workers := t.TempDir()
	splitByHost(t, w, full, workers, 3)
	pattern := filepath.Join(workers, "w*.db")
	for _, format := range report.Formats() {
		one := runInProcess(t, "report", "--all", "--format", format, "--db", full)
		merged := runInProcess(t, "report", "--all", "--format", format, "--db", pattern)
		if merged.code != one.code || merged.stdout != one.stdout || one.stdout == "" {
			t.Errorf("%s: merged exit %d, one file exit %d; outputs equal: %v\n%s", format, merged.code, one.code, merged.stdout == one.stdout, merged.stderr)
		}
	}

	// A worker holds its file as long as it runs, and never finishes:
	// "wait for it to finish" could not be followed (qa4 F9).
	held, err := store.Open(filepath.Join(workers, "w1.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := runInProcess(t, "report", "--db", pattern); r.code != exitUsage || !strings.Contains(r.stderr, "stop the worker") || !strings.Contains(r.stderr, "report --nats") {
		t.Errorf("a worker's file in use: exit %d, want 2 saying to stop the worker or use report --nats\n%s", r.code, r.stderr)
	}
	held.Close()
	if r := runInProcess(t, "report", "--db", filepath.Join(workers, "none*.db")); r.code != exitUsage || !strings.Contains(r.stderr, "matches no file") {
		t.Errorf("a pattern matching nothing: exit %d\n%s", r.code, r.stderr)
	}
	// A second pass in one file only: the others lack it, and the report
	// would miss their URLs.
	if r := runInProcess(t, append([]string{"check", "-q", "--db", filepath.Join(workers, "w1.db")}, w.StartURLs()...)...); r.code != exitProblems {
		t.Fatalf("second check: exit %d\n%s", r.code, r.stderr)
	}
	if r := runInProcess(t, "report", "--db", pattern); r.code != exitUsage || !strings.Contains(r.stderr, "holds no pass 2") {
		t.Errorf("a file without the newest pass: exit %d, want 2\n%s", r.code, r.stderr)
	}
	// Another site's pass 1 is not this pass.
	other := newWeb(t, 2, 5)
	if r := runInProcess(t, append([]string{"check", "-q", "--db", filepath.Join(workers, "w4.db")}, other.StartURLs()...)...); r.code != exitOK {
		t.Fatalf("other check: exit %d\n%s", r.code, r.stderr)
	}
	if r := runInProcess(t, "report", "--db", filepath.Join(workers, "w[34].db")); r.code != exitUsage || !strings.Contains(r.stderr, "not one distributed pass") {
		t.Errorf("files of two different passes: exit %d, want 2\n%s", r.code, r.stderr)
	}
}
