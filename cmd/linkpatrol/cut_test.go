package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// cutReport is what the JSON report says of the pages read only in part.
type cutReport struct {
	Summary struct {
		Cut int `json:"cut"`
	} `json:"summary"`
	URLs []struct {
		URL string `json:"url"`
	} `json:"urls"`
	CutPages []struct {
		URL     string   `json:"url"`
		File    string   `json:"file"`
		Note    string   `json:"note"`
		Reasons []string `json:"reasons"`
		Advice  string   `json:"advice"`
	} `json:"cut_pages"`
}

func decodeCut(t *testing.T, r result) cutReport {
	t.Helper()
	var rep cutReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("decode: %v\n%s%s", err, r.stdout, r.stderr)
	}
	return rep
}

// A page cut at --max-size (or at the bound on links per page) hides links
// nobody checked: the report counts and lists it in every format, without
// --all, so a clean report never reads as a fully checked site (qa4 F4).
// Like a quota skip or a spider trap it leaves part of the pass unchecked,
// so the pass exits 5 when the links it checked are fine.
func TestCutPageIsCountedAndListed(t *testing.T) {
	t.Parallel()
	t.Run("directory over --max-size", func(t *testing.T) {
		t.Parallel()
		padding := strings.Repeat("<p>"+strings.Repeat("lorem ipsum ", 80)+"</p>\n", 20) // about 20 KB
		dir := tree(t, map[string]string{
			"site/index.html": "<a href=\"ok.html\">ok</a>\n" + padding + "<a href=\"missing.html\">gone</a>\n",
			"site/ok.html":    "<p>ok</p>",
		})
		db := filepath.Join(t.TempDir(), "lp.db")
		site := filepath.Join(dir, "site")
		r := runInProcess(t, "check", "--db", db, "--max-size", "4KiB", site)
		if r.code != exitHeldBack {
			t.Errorf("exit %d, want %d (a cut page leaves links unchecked)\n%s%s", r.code, exitHeldBack, r.stdout, r.stderr)
		}
		if !strings.HasPrefix(r.stdout, "PARTLY CHECKED: 1 page read only in part") {
			t.Errorf("the first line does not say the pass was cut:\n%s", r.stdout)
		}
		for _, want := range []string{"(1 cut short: links past the cut not checked, listed below)",
			"1 page was cut short: links past the cut were not checked", "Cut short (1)", "index.html", "raise --max-size"} {
			if !strings.Contains(strings.Join(strings.Fields(r.stdout), " "), want) {
				t.Errorf("text report lacks %q:\n%s", want, r.stdout)
			}
		}
		if strings.Contains(r.stdout, "No problems found.") {
			t.Errorf("text report reads as a fully checked site:\n%s", r.stdout)
		}
		r = runInProcess(t, "report", "--db", db, "--format", "json")
		rep := decodeCut(t, r)
		if rep.Summary.Cut != 1 || len(rep.CutPages) != 1 || !strings.HasSuffix(rep.CutPages[0].File, "index.html") ||
			!slices.Equal(rep.CutPages[0].Reasons, []string{"max-size"}) || !strings.Contains(rep.CutPages[0].Note, "page larger than 4096 bytes") {
			t.Errorf("JSON: summary.cut %d, cut_pages %+v; want index.html cut at max-size\n%s", rep.Summary.Cut, rep.CutPages, r.stdout)
		}
		for _, format := range []string{"markdown", "html", "junit", "github"} {
			r := runInProcess(t, "report", "--db", db, "--format", format)
			if !strings.Contains(r.stdout, "1 cut short: links past the cut not checked") {
				t.Errorf("%s: the summary does not count the cut page:\n%s", format, r.stdout)
			}
		}
	})
	t.Run("HTTP page over the links bound", func(t *testing.T) {
		t.Parallel()
		const links = 100_000 // crawler's maxPageLinks
		page := strings.Repeat("<a href=\"/ok\">ok</a>\n", links+1) + "<a href=\"/missing\">gone</a>\n"
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/":
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprint(w, page)
			case "/ok":
				w.Header().Set("Content-Type", "text/plain")
			default:
				http.NotFound(w, r)
			}
		}))
		t.Cleanup(srv.Close)
		r := runInProcess(t, "check", "--db", filepath.Join(t.TempDir(), "lp.db"), "--format", "json", srv.URL+"/")
		if r.code != exitHeldBack {
			t.Errorf("exit %d, want %d\n%s", r.code, exitHeldBack, r.stderr)
		}
		rep := decodeCut(t, r)
		if rep.Summary.Cut != 1 || len(rep.CutPages) != 1 || rep.CutPages[0].URL != srv.URL+"/" ||
			!slices.Equal(rep.CutPages[0].Reasons, []string{"links"}) || !strings.Contains(rep.CutPages[0].Advice, "split the page") {
			t.Errorf("summary.cut %d, cut_pages %+v; want / cut at the links bound", rep.Summary.Cut, rep.CutPages)
		}
	})
}

// A page that grows past --max-size still links to what its last full copy
// linked to past the cut: those links are carried, checked and reported as
// such, never "no longer linked" — a broken one still fails the night
// (qa4 F17). Read whole again, the page says what it really links to.
func TestCutPageCarriesLinksPastTheCut(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"site/ok.html": "<p>ok</p>"})
	site := filepath.Join(dir, "site")
	index := filepath.Join(site, "index.html")
	db := filepath.Join(t.TempDir(), "lp.db")
	night := func(paragraphs int, tail string) result {
		t.Helper()
		padding := strings.Repeat("<p>"+strings.Repeat("lorem ipsum ", 80)+"</p>\n", paragraphs) // about 1 KB each
		if err := os.WriteFile(index, []byte("<a href=\"ok.html\">ok</a>\n"+padding+tail), 0o644); err != nil {
			t.Fatal(err)
		}
		return runInProcess(t, "check", "--db", db, "--max-size", "8KiB", site)
	}
	const gone = "<a href=\"missing.html\">gone</a>\n"
	if r := night(2, gone); r.code != exitProblems {
		t.Fatalf("night 1 (read whole): exit %d, want %d\n%s%s", r.code, exitProblems, r.stdout, r.stderr)
	}
	r := night(20, gone) // grown past --max-size, the link still there
	flat := strings.Join(strings.Fields(r.stdout), " ")
	if r.code != exitProblems {
		t.Errorf("night 2 (cut, link still on the page): exit %d, want %d\n%s%s", r.code, exitProblems, r.stdout, r.stderr)
	}
	for _, want := range []string{"missing.html", "index.html:4 (past the cut, carried from its last full copy of",
		"1 link not in the part read carried from its last full copy", "0 new problems, 1 still there"} {
		if !strings.Contains(flat, want) {
			t.Errorf("night 2 lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "No longer linked") {
		t.Errorf("night 2 calls a link past the cut no longer linked:\n%s", r.stdout)
	}
	r = night(20, gone) // cut again: carried from the same full copy
	if r.code != exitProblems || !strings.Contains(strings.Join(strings.Fields(r.stdout), " "), "(past the cut, carried from its last full copy of") {
		t.Errorf("night 3 (cut again): exit %d, want %d with the link carried\n%s%s", r.code, exitProblems, r.stdout, r.stderr)
	}
	r = night(2, "") // read whole again, the link removed
	if r.code != exitOK || !strings.Contains(r.stdout, "No longer linked") {
		t.Errorf("night 4 (read whole, link removed): exit %d, want %d and missing.html no longer linked\n%s%s", r.code, exitOK, r.stdout, r.stderr)
	}
}

// A page cut on a night when all of its links were still in the part read
// carries nothing, but it still stands for its last full copy: cut again
// the next night with a link now past the cut, that link is carried, not
// dropped as no longer linked (a broken one still fails the night).
func TestCutPageCarriesAfterACutThatCarriedNothing(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"site/ok.html": "<p>ok</p>"})
	site := filepath.Join(dir, "site")
	index := filepath.Join(site, "index.html")
	db := filepath.Join(t.TempDir(), "lp.db")
	const gone = "<a href=\"missing.html\">gone</a>\n"
	night := func(head string, paragraphs int, tail string) result {
		t.Helper()
		padding := strings.Repeat("<p>"+strings.Repeat("lorem ipsum ", 80)+"</p>\n", paragraphs) // about 1 KB each
		if err := os.WriteFile(index, []byte("<a href=\"ok.html\">ok</a>\n"+head+padding+tail), 0o644); err != nil {
			t.Fatal(err)
		}
		return runInProcess(t, "check", "--db", db, "--max-size", "8KiB", site)
	}
	if r := night(gone, 2, ""); r.code != exitProblems {
		t.Fatalf("night 1 (read whole): exit %d, want %d\n%s%s", r.code, exitProblems, r.stdout, r.stderr)
	}
	if r := night(gone, 20, ""); r.code != exitProblems || strings.Contains(r.stdout, "past the cut, carried") {
		t.Fatalf("night 2 (cut, the link in the part read): exit %d, want %d and nothing carried\n%s%s", r.code, exitProblems, r.stdout, r.stderr)
	}
	r := night("", 20, gone)
	flat := strings.Join(strings.Fields(r.stdout), " ")
	if r.code != exitProblems || !strings.Contains(flat, "(past the cut, carried from its last full copy of") || strings.Contains(r.stdout, "No longer linked") {
		t.Errorf("night 3 (cut, the link now past the cut): exit %d, want %d with missing.html carried\n%s%s", r.code, exitProblems, r.stdout, r.stderr)
	}
}
