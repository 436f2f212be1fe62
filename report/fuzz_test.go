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

func TestParseThreshold(t *testing.T) {
	tests := []struct {
		in   string
		want Threshold
		err  bool
	}{
		{"", Threshold{}, false},
		{"0", Threshold{}, false},
		{"3", Threshold{Failures: 3}, false},
		{"36h", Threshold{Age: 36 * time.Hour}, false},
		{"90m", Threshold{Age: 90 * time.Minute}, false},
		{"3d", Threshold{Age: 72 * time.Hour}, false},
		{"3+2d", Threshold{Failures: 3, Age: 48 * time.Hour}, false},
		{" 2d + 4 ", Threshold{Failures: 4, Age: 48 * time.Hour}, false},
		{"-1", Threshold{}, true},
		{"-3h", Threshold{}, true},
		{"3x", Threshold{}, true},
		{"d", Threshold{}, true},
		{"1.5d", Threshold{}, true},
		{"106752d", Threshold{}, true},
		{"876024h", Threshold{Age: 36501 * day}, false},
		{"3++", Threshold{}, true},
	}
	for _, tt := range tests {
		got, err := ParseThreshold(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseThreshold(%q) = %+v, %v; want %+v, error %v", tt.in, got, err, tt.want, tt.err)
		}
	}
	for in, want := range map[string]string{"5h": "5h", "90m": "1h30m", "36h": "36h", "48h": "2d", "1h0m1s": "1h0m1s", "3+5h": "3+5h"} {
		if th, _ := ParseThreshold(in); th.String() != want {
			t.Errorf("ParseThreshold(%q).String() = %q, want %q", in, th.String(), want)
		}
	}
	var th Threshold
	if err := th.Set("2d"); err != nil || th.String() != "2d" || th.Type() == "" {
		t.Errorf("Set(2d): %v, String %q", err, th.String())
	}
	if err := th.Set("soon"); err == nil || th.String() != "2d" {
		t.Errorf("Set(soon) = %v and left %q; want an error and the old value", err, th.String())
	}
}

func FuzzParseThreshold(f *testing.F) {
	for _, s := range []string{"", "3", "36h", "3d", "3+2d", "1h30m", "-1", "+", "9223372036854775807", "876024h", "106751d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		th, err := ParseThreshold(s)
		if err != nil {
			return
		}
		if th.Failures < 0 || th.Age < 0 {
			t.Fatalf("ParseThreshold(%q) = %+v: negative", s, th)
		}
		back, err := ParseThreshold(th.String())
		if err != nil || back != th {
			t.Fatalf("ParseThreshold(%q) = %+v, but its String %q reads back as %+v, %v", s, th, th.String(), back, err)
		}
	})
}

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
