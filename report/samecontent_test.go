package report

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/store"
)

// Pages not read for links because they had the content of a page read
// before them (a catch-all's made-up paths) are said in every format, with
// a count and examples. Those whose relative links led elsewhere were not
// checked: the pass is PARTLY CHECKED (exit 5). A copy whose links are the
// first page's (/docs/index.html beside /docs/) loses nothing: said, not
// held back.
func TestSameContentLine(t *testing.T) {
	t.Parallel()
	const home = "https://example.com/"
	copyOf := func(u, first string, moved bool) store.Result {
		r := page(u)
		r.Record.Parsed, r.Record.Note = false, store.SameContentNote+first
		if moved {
			r.Record.Note += store.SameContentMoved
		}
		return r
	}
	for _, tc := range []struct {
		name    string
		results []store.Result
		want    string // the line's start; "" for none
		held    int    // pages whose links were lost
	}{
		{"catch-all", []store.Result{page(home, link(home+"docs/intro", 2), link(home+"about", 3), link(home+"img/missing.png", 4)),
			copyOf(home+"docs/intro", home, true), copyOf(home+"img/missing.png", home, true), copyOf(home+"about", home, false)},
			"3 pages had the same content as https://example.com/ and were not read for links, for example https://example.com/docs/intro, https://example.com/img/missing.png, https://example.com/about; 2 of them are in another directory", 2},
		{"index.html", []store.Result{page(home, link(home+"docs/", 2), link(home+"docs/index.html", 3)), page(home + "docs/"),
			copyOf(home+"docs/index.html", home+"docs/", false)},
			"1 page had the same content as https://example.com/docs/ and was not read for links, for example https://example.com/docs/index.html; their links are its links", 0},
		{"two pages copied", []store.Result{page(home, link(home+"a/", 2), link(home+"b/", 3)), page(home + "a/"),
			copyOf(home+"a/index.html", home+"a/", false), copyOf(home+"b/", home, true), copyOf(home+"b/x", home, true)},
			"3 pages had the same content as the page that linked to them and were not read for links (2 as https://example.com/), for example https://example.com/b/", 2},
		{"none", []store.Result{page(home, link(home+"a", 2)), page(home + "a")}, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := fillStore(t, []fixturePass{{
				pass:    store.Pass{StartURLs: []string{home}, State: store.PassComplete, Started: night2, Finished: night2.Add(time.Minute)},
				results: tc.results,
			}})
			r := build(t, src, 1, Options{})
			line := r.SameContentLine()
			if !strings.HasPrefix(line, tc.want) || (tc.want == "") != (line == "") {
				t.Fatalf("line\n %q\nwant it to start\n %q", line, tc.want)
			}
			if held := r.HeldBack(); (tc.held > 0) != strings.HasPrefix(held, "PARTLY CHECKED: ") || tc.held > 0 && !strings.Contains(held, "not read for links") {
				t.Errorf("first line %q; want PARTLY CHECKED (exit 5) only when links were lost (%d)", held, tc.held)
			}
			if tc.want == "" {
				return
			}
			for _, f := range []string{"text", "markdown", "html"} {
				if out := strings.Join(strings.Fields(render(t, r, f)), " "); !strings.Contains(out, "and were not read for links") && !strings.Contains(out, "and was not read for links") {
					t.Errorf("%s: the report does not say it:\n%s", f, out)
				}
			}
			var js struct {
				Summary struct {
					SameContent *struct {
						Pages, Elsewhere int
						First            string
						Examples         []string
					} `json:"same_content"`
				} `json:"summary"`
			}
			if err := json.Unmarshal([]byte(render(t, r, "json")), &js); err != nil {
				t.Fatal(err)
			}
			if sc := js.Summary.SameContent; sc == nil || sc.Pages != r.Summary.SameContent.Count || sc.Elsewhere != tc.held || sc.First == "" || len(sc.Examples) == 0 {
				t.Errorf("JSON same_content %+v; want %d pages, %d elsewhere, the first and examples", sc, r.Summary.SameContent.Count, tc.held)
			}
			if junit := render(t, r, "junit"); (tc.held > 0) != strings.Contains(junit, "copies not read for links") {
				t.Errorf("JUnit: a skipped case for the copies %v, want %v:\n%s", !(tc.held > 0), tc.held > 0, junit)
			}
			if r.HasBroken() {
				t.Error("counted broken: a copy is checked, and it answered")
			}
		})
	}
}
