package report

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

func parseHTML(t testing.TB, page string) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func walk(n *html.Node, fn func(*html.Node)) {
	fn(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, fn)
	}
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func text(n *html.Node) string {
	var b strings.Builder
	walk(n, func(c *html.Node) {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	})
	return b.String()
}

// TestHTMLSelfContained checks the page loads nothing from anywhere, that
// its only script and style are the ones its Content-Security-Policy allows,
// and that hostile text stays text.
func TestHTMLSelfContained(t *testing.T) {
	t.Parallel()
	r := build(t, fillStore(t, webHistory()), 2, Options{})
	doc := parseHTML(t, render(t, r, "html"))
	var scripts, styles, rows []*html.Node
	var csp string
	var codes []string
	walk(doc, func(n *html.Node) {
		if n.Type != html.ElementNode {
			return
		}
		switch n.DataAtom {
		case atom.Script:
			scripts = append(scripts, n)
		case atom.Style:
			styles = append(styles, n)
		case atom.Tr:
			if _, ok := attr(n, "data-rank"); ok {
				rows = append(rows, n)
			}
		case atom.Code:
			codes = append(codes, text(n))
		case atom.Meta:
			if v, _ := attr(n, "http-equiv"); v == "Content-Security-Policy" {
				csp, _ = attr(n, "content")
			}
		case atom.Link:
			if href, _ := attr(n, "href"); href != "data:," {
				t.Errorf("<link> loads %q", href)
			}
		}
		for _, a := range n.Attr {
			if a.Key == "src" || a.Key == "srcset" || strings.HasPrefix(a.Key, "on") || a.Key == "style" {
				t.Errorf("<%s %s=%q>: the page must not load assets or carry inline handlers", n.Data, a.Key, a.Val)
			}
		}
	})
	if len(scripts) != 1 || len(styles) != 1 {
		t.Fatalf("%d scripts and %d styles, want exactly one of each (ours)", len(scripts), len(styles))
	}
	for _, want := range []string{"default-src 'none'", "'" + cspHash(text(scripts[0])) + "'", "'" + cspHash(text(styles[0])) + "'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q (the inline script or style would be blocked)", csp, want)
		}
	}
	if len(rows) != len(r.Entries) {
		t.Errorf("%d rows, want %d", len(rows), len(r.Entries))
	}
	if !slices.Contains(codes, xssURL) {
		t.Errorf("the URL with <script> is not shown as text; code elements: %q", codes)
	}
	if v, _ := attr(rows[2], "data-target"); v != xssURL {
		t.Errorf("row 3 data-target = %q, want the raw URL", v)
	}
}

func TestHTMLDirectory(t *testing.T) {
	t.Parallel()
	r := build(t, fillStore(t, dirHistory()), 1, Options{BaseDir: "/work"})
	page := render(t, r, "html")
	for _, want := range []string{"INCOMPLETE: stopped after 1m30s", "<code>site/about/index.html</code></a><code>:12</code>", "<code>site/img/logo big.png</code>",
		// Each referrer links to its file: written to stdout, by its
		// absolute file:// URL.
		`href="file:///work/site/about/index.html"`} {
		if !strings.Contains(page, want) {
			t.Errorf("no %q in the page", want)
		}
	}
	// Written to a file, relative to it, so the report saved beside the
	// site (or published with it) still links to the files.
	page = render(t, r.WrittenTo("/work/reports/links.html"), "html")
	for _, want := range []string{`href="../site/about/index.html"`, `href="../site/img/logo%20big.png"`} {
		if !strings.Contains(page, want) {
			t.Errorf("written to /work/reports: no %q in the page", want)
		}
	}
}

// TestHTMLInChromium loads the page in headless Chromium (Debian's chromium
// package) and checks it renders, that filtering and sorting from the
// address's fragment work, and that the console stays silent.
func TestHTMLInChromium(t *testing.T) {
	t.Parallel()
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (apt-get install chromium); skipping the browser test")
	}
	if testing.Short() {
		t.Skip("-short: skipping the browser test")
	}
	web := writePage(t, build(t, fillStore(t, webHistory()), 2, Options{}))
	frags := writePage(t, build(t, fillStore(t, fragHistory()), 1, Options{CheckFragments: true}))
	tests := []struct {
		path     string
		fragment string
		want     []string // data-rank of the visible rows, in order
	}{
		{web, "", []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}},
		{web, "#verdict=transient", []string{"7", "8"}},
		{web, "#q=about%2F%3A3", []string{"3", "8", "9", "10"}},
		{web, "#q=%3Cscript%3E", []string{"3"}},
		{web, "#verdict=unverifiable&new=1", []string{"10"}},
		{web, "#sort=since&dir=descending", []string{"6", "8", "10", "5", "7", "1", "2", "3", "4", "9"}},
		{web, "#q=%E0%A4%A", nil},
		// Missing fragments and permanent redirects are rows of the same
		// table, inside its filter and sort.
		{frags, "", []string{"1", "2", "3", "4", "5", "6"}},
		{frags, "#verdict=fragment", []string{"2", "3", "4", "5"}},
		{frags, "#verdict=moved", []string{"6"}},
		{frags, "#q=setup", []string{"5"}},
	}
	b := startBrowser(t, chromium)
	t.Cleanup(func() {
		// Anything the browser logged as console output, whichever page
		// it came from, besides what each page's events said.
		for _, line := range b.consoleLines() {
			t.Errorf("console message: %s", line)
		}
	})
	for _, tt := range tests {
		t.Run(filepath.Base(tt.path)+tt.fragment, func(t *testing.T) {
			t.Parallel() // each page in a tab of its own
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			dom, console, err := b.load(ctx, "file://"+filepath.ToSlash(tt.path)+tt.fragment)
			for _, line := range console {
				t.Errorf("console message: %s", line)
			}
			if err != nil {
				t.Fatalf("chromium: %v", err)
			}
			var visible []string
			walk(parseHTML(t, dom), func(n *html.Node) {
				if n.DataAtom != atom.Tr {
					return
				}
				rank, ok := attr(n, "data-rank")
				if _, hidden := attr(n, "hidden"); ok && !hidden {
					visible = append(visible, rank)
				}
			})
			if !slices.Equal(visible, tt.want) {
				t.Errorf("visible rows %v, want %v", visible, tt.want)
			}
		})
	}
}

// writePage writes the HTML report of r to a file and returns its path.
func writePage(t *testing.T, r *Report) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), fmt.Sprintf("pass%d.html", r.Pass.ID))
	if err := os.WriteFile(path, []byte(render(t, r, "html")), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The first referrer of each row shows without expanding anything, as a
// link to the referring page; the others are behind a disclosure.
func TestHTMLFirstReferrerVisible(t *testing.T) {
	t.Parallel()
	r := build(t, fillStore(t, webHistory()), 2, Options{})
	doc := parseHTML(t, render(t, r, "html"))
	rows := 0
	walk(doc, func(n *html.Node) {
		if n.DataAtom != atom.Td {
			return
		}
		if c, _ := attr(n, "class"); c != "refs" {
			return
		}
		rows++
		first := n.FirstChild
		if first == nil || first.DataAtom != atom.A {
			t.Errorf("row %d: the referrers cell does not start with a link: %q", rows, text(n))
			return
		}
		if href, _ := attr(first, "href"); !strings.HasPrefix(href, "https://example.com/") {
			t.Errorf("row %d: first referrer links to %q", rows, href)
		}
	})
	if rows != len(r.Entries) {
		t.Errorf("%d referrer cells, want %d", rows, len(r.Entries))
	}
}

// Every kind of row the page shows gets a badge someone can see: the badge
// is white text, so a row class without a background in the stylesheet
// showed "not read", "cut short" and "not taken" as white on white.
func TestHTMLEveryRowKindHasABadgeColour(t *testing.T) {
	t.Parallel()
	for _, h := range []struct {
		name    string
		history []fixturePass
		pass    uint64
	}{
		{"web", webHistory(), 2},
		{"cut", cutHistory(), 1},
		{"unread", unreadHistory(), 1},
		{"sitemap", sitemapHistory(), 1},
	} {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			doc := parseHTML(t, render(t, build(t, newMemSource(t, h.history), h.pass, Options{}), "html"))
			walk(doc, func(n *html.Node) {
				if n.DataAtom != atom.Tr {
					return
				}
				if class, ok := attr(n, "class"); ok && strings.HasPrefix(class, "v-") {
					if rule := "." + class + " .badge { background:"; !strings.Contains(htmlCSS, rule) {
						t.Errorf("row class %s has no %q in page.css", class, rule)
					}
				}
			})
		})
	}
}
