package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/linkpatrol/linkpatrol/crawler"
)

// expectedProblems reads examples/EXPECTED.md: each "### `target` — why"
// heading of the Broken section, with its "- `file:line`" referrers.
func expectedProblems(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	heading := regexp.MustCompile("^### `([^`]+)`")
	referrer := regexp.MustCompile("^- `([^`]+:[0-9]+)`")
	want := map[string][]string{}
	var current string
	inBroken := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			inBroken = line == "## Broken"
			current = ""
		case !inBroken:
		case heading.MatchString(line):
			current = heading.FindStringSubmatch(line)[1]
			want[current] = nil
		case current != "" && referrer.MatchString(line):
			want[current] = append(want[current], referrer.FindStringSubmatch(line)[1])
		}
	}
	if len(want) == 0 {
		t.Fatalf("no problems read from %s", path)
	}
	return want
}

// TestExampleSite runs the first command of README.md, the way a new user
// does, and holds its report to the hand-written list of planted problems:
// every target, every referring file and line, nothing more.
func TestExampleSite(t *testing.T) {
	root, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	want := expectedProblems(t, filepath.Join(root, "EXPECTED.md"))
	r := runInProcess(t, "check", "--db", filepath.Join(t.TempDir(), "ex.db"), "--format", "json", filepath.Join(root, "site"))
	if r.code != exitProblems {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	rep := decodeReport(t, r.stdout)
	if pages, _ := rep.Summary["pages"].(float64); pages != 20 {
		t.Errorf("parsed %v pages, want 20", rep.Summary["pages"])
	}
	got := map[string][]string{}
	site := crawler.DirURL(filepath.Join(root, "site"))
	for _, u := range rep.URLs {
		target := u.URL
		if rel, ok := strings.CutPrefix(u.URL, site); ok {
			target = "/" + rel
		}
		var refs []string
		for _, ref := range u.Referrers {
			page := strings.TrimPrefix(ref.Page, site)
			if page == "" || strings.HasSuffix(page, "/") {
				page += "index.html" // a directory's page, as the site links it
			}
			refs = append(refs, page+":"+strconv.Itoa(ref.Line))
		}
		got[target] = refs
	}
	for target, refs := range want {
		g, ok := got[target]
		if !ok {
			t.Errorf("%s: not reported", target)
			continue
		}
		slices.Sort(g)
		slices.Sort(refs)
		if !slices.Equal(g, refs) {
			t.Errorf("%s: referrers %v, want %v", target, g, refs)
		}
	}
	for target := range got {
		if _, ok := want[target]; !ok {
			t.Errorf("%s: reported, but EXPECTED.md does not list it", target)
		}
	}
}
