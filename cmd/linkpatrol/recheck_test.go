package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// editableSite is a one-page site whose page and targets the test changes
// between runs, as a site owner fixes links; it answers If-None-Match like
// a static server and counts the requests per path.
type editableSite struct {
	mu     sync.Mutex
	page   string
	status map[string]int // path -> status; a path not listed is 404
	hits   map[string]int
}

func (s *editableSite) set(page string, status map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.page, s.status, s.hits = page, status, map[string]int{}
}

func (s *editableSite) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

func (s *editableSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hits[r.URL.Path]++
	if r.URL.Path == "/" {
		etag := fmt.Sprintf(`"%x"`, len(s.page)*31+strings.Count(s.page, "/"))
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, s.page)
		return
	}
	code, ok := s.status[r.URL.Path]
	if !ok {
		code = http.StatusNotFound
	}
	w.WriteHeader(code)
}

// TestFixedLinkShowsInTheNextRun is "I fixed it, let me check again": the
// same check run again within the recheck interval checks every problem
// again, revalidates the page (finding the link added since), and reuses
// only the good result of a third-party link — and says so.
func TestFixedLinkShowsInTheNextRun(t *testing.T) {
	t.Parallel()
	var ext editableSite
	ext.set("", map[string]int{"/partner": 200})
	extSrv := httptest.NewServer(&ext)
	defer extSrv.Close()
	var site editableSite
	srv := httptest.NewServer(&site)
	defer srv.Close()
	db := filepath.Join(t.TempDir(), "fix.db")
	check := func(format string) result {
		t.Helper()
		return runInProcess(t, "check", "--db", db, "--format", format, "--ignore-robots", "-q", srv.URL+"/")
	}
	broken := func(r result) []string {
		t.Helper()
		var got []string
		for _, u := range decodeReport(t, r.stdout).URLs {
			got = append(got, strings.TrimPrefix(u.URL, srv.URL)+" "+u.Verdict)
		}
		slices.Sort(got)
		return got
	}

	site.set(`<a href="/old">old</a> <a href="/moved">moved</a> <a href="`+extSrv.URL+`/partner">partner</a>`, map[string]int{})
	first := check("json")
	if first.code != exitProblems {
		t.Fatalf("first run: exit %d, want 1\n%s", first.code, first.stderr)
	}
	if got, want := broken(first), []string{"/moved broken", "/old broken"}; !slices.Equal(got, want) {
		t.Fatalf("first run reports %q, want %q", got, want)
	}

	// The owner fixes /old on the server, drops the link to /moved and adds
	// a new dead link, all within the hour.
	site.set(`<a href="/old">old</a> <a href="/new-dead">new</a> <a href="`+extSrv.URL+`/partner">partner</a>`, map[string]int{"/old": 200})
	ext.set("", map[string]int{"/partner": 200})
	second := check("json")
	if second.code != exitProblems {
		t.Fatalf("second run: exit %d, want 1 (the new dead link)\n%s", second.code, second.stderr)
	}
	if got, want := broken(second), []string{"/new-dead broken"}; !slices.Equal(got, want) {
		t.Errorf("second run reports %q, want %q: the fix and the new dead link must show", got, want)
	}
	if site.count("/old") == 0 {
		t.Error("the link broken before was not checked again")
	}
	if n := ext.count("/partner"); n != 0 {
		t.Errorf("the good third-party link was requested %d times, want reused", n)
	}
	rep := decodeReport(t, second.stdout)
	if rep.Summary["reused"] != float64(1) || rep.Summary["pages"] != float64(1) {
		t.Errorf("second run summary: reused %v, pages %v; want 1 and 1", rep.Summary["reused"], rep.Summary["pages"])
	}

	// Nothing changed on the page: it costs a 304, and the text report says
	// what was reused and from when: the partner link (fetched by pass 1).
	// /old, only checked and good in pass 2, is on the site's own host and
	// is checked again: a deploy may have deleted it since.
	site.set(`<a href="/old">old</a> <a href="/new-dead">new</a> <a href="`+extSrv.URL+`/partner">partner</a>`, map[string]int{"/old": 200, "/new-dead": 200})
	oldBefore := site.count("/old")
	third := check("text")
	if site.count("/old") == oldBefore {
		t.Error("the site's own good link was reused, not checked again")
	}
	if third.code != exitOK {
		t.Fatalf("third run: exit %d, want 0 once everything is fixed\n%s%s", third.code, third.stdout, third.stderr)
	}
	if site.count("/new-dead") == 0 {
		t.Error("the dead link of the second run was not checked again")
	}
	for _, want := range []string{"1 result reused from pass 1, checked", "--no-reuse fetches everything", "0 pages parsed and 1 unchanged (answered 304", "No problems found."} {
		if !strings.Contains(strings.Join(strings.Fields(third.stdout), " "), want) {
			t.Errorf("third run's report lacks %q:\n%s", want, third.stdout)
		}
	}
}
