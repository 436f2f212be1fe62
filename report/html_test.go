package report

import (
	"context"
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
	r := build(t, fillStore(t, dirHistory()), 1, Options{BaseDir: "/work"})
	page := render(t, r, "html")
	for _, want := range []string{"INCOMPLETE: stopped after 1m30s", "<code>site/about/index.html:12</code>", "<code>site/img/logo big.png</code>"} {
		if !strings.Contains(page, want) {
			t.Errorf("no %q in the page", want)
		}
	}
	// A file path is not turned into a link: it would not resolve from
	// wherever the page is saved.
	if strings.Contains(page, `href="file:`) {
		t.Error("a file:// URL is linked")
	}
}

// TestHTMLInChromium loads the page in headless Chromium (Debian's chromium
// package) and checks it renders, that filtering and sorting from the
// address's fragment work, and that the console stays silent.
func TestHTMLInChromium(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (apt-get install chromium); skipping the browser test")
	}
	if testing.Short() {
		t.Skip("-short: skipping the browser test")
	}
	r := build(t, fillStore(t, webHistory()), 2, Options{})
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	if err := os.WriteFile(path, []byte(render(t, r, "html")), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		fragment string
		want     []string // data-rank of the visible rows, in order
	}{
		{"", []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}},
		{"#verdict=transient", []string{"7", "8"}},
		{"#q=about%2F%3A3", []string{"3", "8", "9", "10"}},
		{"#q=%3Cscript%3E", []string{"3"}},
		{"#verdict=unverifiable&new=1", []string{"10"}},
		{"#sort=since&dir=descending", []string{"6", "8", "10", "5", "7", "1", "2", "3", "4", "9"}},
		{"#q=%E0%A4%A", nil},
	}
	for _, tt := range tests {
		t.Run(tt.fragment, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu",
				"--no-first-run", "--user-data-dir="+t.TempDir(), "--enable-logging=stderr", "--v=0",
				"--dump-dom", "file://"+filepath.ToSlash(path)+tt.fragment)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("chromium: %v\n%s", err, stderr.String())
			}
			for _, line := range strings.Split(stderr.String(), "\n") {
				if strings.Contains(line, ":CONSOLE") {
					t.Errorf("console message: %s", line)
				}
			}
			var visible []string
			walk(parseHTML(t, string(out)), func(n *html.Node) {
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
