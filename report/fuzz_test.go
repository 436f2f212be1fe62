package report

import (
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/linkpatrol/linkpatrol/store"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// FuzzWriters feeds hostile URLs, pages, notes and errors through every
// format and checks each output still parses as what it claims to be, and
// that nothing from the data escapes into markup.
func FuzzWriters(f *testing.F) {
	f.Add("https://example.com/missing", "https://example.com/", "", "", 12, 404, "", 80)
	f.Add(xssURL, "file:///a b/", "<script>alert(1)</script>", "invalid URL", 0, 0, "/work/site", 40)
	f.Add("a\nb\r::error::x", "p|q`r", "]]>\x00", "%0A", -5, 999, "", 0)
	f.Add("=cmd|' /C calc'!A0", "https://example.com/"+strings.Repeat("é", 300), "\u2028\u2029", "", 1<<30, 200, "site", 24)
	f.Fuzz(func(t *testing.T, u, pageURL, note, errClass string, line, status int, root string, width int) {
		if u == pageURL || u == "" || pageURL == "" {
			return
		}
		src := newMemSource(t, []fixturePass{{
			pass: store.Pass{StartURLs: []string{pageURL}, Root: root, State: store.PassComplete, Started: night2, Finished: night2.Add(time.Minute)},
			results: []store.Result{
				page(pageURL, store.Link{URL: u, Line: line, Fragment: note, Tag: "a", Attr: "href"}),
				target(store.URLRecord{URL: u, Verdict: store.VerdictBroken, Status: status, Error: errClass, Note: note, FinalURL: note, FirstBroken: night2}),
			},
		}})
		r := build(t, src, 1, Options{Width: width % 200, BaseDir: "/work"})
		if len(r.Entries) != 1 {
			t.Fatalf("%d entries, want the one broken URL", len(r.Entries))
		}
		// Below 40 columns the indentation alone eats the room minWrap keeps.
		// A URL or a path is never broken, so only a line carrying one
		// (whole, after its prefix) may be wider.
		if w := r.Options.Width; w >= 40 {
			whole := func(l string) bool {
				for _, item := range []string{r.Location(u), r.Location(pageURL), note} {
					if item = strings.TrimSpace(printable(item)); item != "" && strings.Contains(l, item) {
						return true
					}
				}
				return false
			}
			for i, l := range strings.Split(render(t, r, "text"), "\n") {
				if n := utf8.RuneCountInString(l); n > w && !whole(l) {
					t.Errorf("text line %d is %d wide (width %d): %q", i+1, n, w, l)
				}
			}
		}
		var doc map[string]any
		if err := json.Unmarshal([]byte(render(t, r, "json")), &doc); err != nil {
			t.Fatalf("json: %v", err)
		}
		if err := json.Unmarshal([]byte(render(t, r, "sarif")), &doc); err != nil {
			t.Fatalf("sarif: %v", err)
		}
		if err := validateJUnit([]byte(render(t, r, "junit"))); err != nil {
			t.Fatalf("junit: %v", err)
		}
		rows, err := csv.NewReader(strings.NewReader(render(t, r, "csv"))).ReadAll()
		if err != nil || len(rows) != 2 || rows[1][1] != shown(cell(u)) {
			t.Fatalf("csv: %v, rows %q", err, rows)
		}
		for _, l := range strings.Split(strings.TrimSuffix(render(t, r, "github"), "\n"), "\n") {
			if !strings.HasPrefix(l, "::error ") && !strings.HasPrefix(l, "linkpatrol pass 1 of ") {
				t.Fatalf("github: a line that is neither an annotation nor the summary: %q", l)
			}
		}
		hdoc, err := html.Parse(strings.NewReader(render(t, r, "html")))
		if err != nil {
			t.Fatal(err)
		}
		scripts := 0
		walk(hdoc, func(n *html.Node) {
			if n.Type == html.ElementNode && (n.DataAtom == atom.Script || n.Data == "b") {
				scripts++
			}
		})
		if scripts != 1 {
			t.Fatalf("html: %d script (or <b>) elements, want only ours", scripts)
		}
		if prose := stripCodeSpans(render(t, r, "markdown")); strings.Contains(prose, "<script") {
			t.Fatalf("markdown: raw <script> outside a code span")
		}
	})
}

// shown is s as a human-readable format writes it: control and bidi
// characters other than line breaks and tabs neutralised.
func shown(s string) string {
	var b strings.Builder
	pw := &printableWriter{w: &b}
	pw.Write([]byte(s))
	pw.flush()
	return b.String()
}
