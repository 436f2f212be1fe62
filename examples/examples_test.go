// Package examples_test checks that EXPECTED.md still describes the example
// site: it crawls examples/site with a deliberately simple checker and compares
// what it finds with the list written by hand. It tests the example, not
// linkpatrol.
package examples_test

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// expectation is EXPECTED.md's "Broken" section: target → referrers
// ("file:line"), and the totals it states.
type expectation struct {
	pages, brokenCount int
	broken             map[string][]string
}

var (
	headingRE  = regexp.MustCompile("^### `([^`]+)` — ")
	referrerRE = regexp.MustCompile("^- `([^`]+:[0-9]+)`")
	pagesRE    = regexp.MustCompile(`parses \*\*(\d+) pages\*\*`)
	brokenRE   = regexp.MustCompile(`reports \*\*(\d+) broken URLs\*\*`)
	cssURLRE   = regexp.MustCompile(`url\(\s*['"]?([^'")\s]+)`)
)

func readExpected(t *testing.T) expectation {
	t.Helper()
	text, err := os.ReadFile("EXPECTED.md")
	if err != nil {
		t.Fatal(err)
	}
	exp := expectation{broken: map[string][]string{}}
	m := pagesRE.FindSubmatch(text)
	n := brokenRE.FindSubmatch(text)
	if m == nil || n == nil {
		t.Fatal("EXPECTED.md no longer states the number of pages and broken URLs")
	}
	exp.pages, _ = strconv.Atoi(string(m[1]))
	exp.brokenCount, _ = strconv.Atoi(string(n[1]))

	inBroken, target := false, ""
	sc := bufio.NewScanner(strings.NewReader(string(text)))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			inBroken = line == "## Broken"
		case !inBroken:
		case headingRE.MatchString(line):
			target = headingRE.FindStringSubmatch(line)[1]
			exp.broken[target] = nil
		case referrerRE.MatchString(line) && target != "":
			exp.broken[target] = append(exp.broken[target], referrerRE.FindStringSubmatch(line)[1])
		}
	}
	return exp
}

// link is a URL as written on a page and where it points.
type link struct {
	written string
	target  *url.URL // resolved, without fragment
}

// pageLinks finds the links in a decoded HTML page: href of a and link, src
// of img and script, srcset candidates, and CSS url() in style attributes and
// <style> elements. Non-HTTP schemes are dropped; comments are not links.
func pageLinks(t *testing.T, page *url.URL, body []byte) []link {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parse %s: %v", page, err)
	}
	var written []string
	for n := range doc.Descendants() {
		if n.Type == html.TextNode && n.Parent != nil && n.Parent.Data == "style" {
			for _, m := range cssURLRE.FindAllStringSubmatch(n.Data, -1) {
				written = append(written, m[1])
			}
		}
		if n.Type != html.ElementNode {
			continue
		}
		for _, a := range n.Attr {
			switch {
			case a.Key == "href" && (n.Data == "a" || n.Data == "link"),
				a.Key == "src" && (n.Data == "img" || n.Data == "script"):
				written = append(written, a.Val)
			case a.Key == "srcset":
				for cand := range strings.SplitSeq(a.Val, ",") {
					if f := strings.Fields(cand); len(f) > 0 {
						written = append(written, f[0])
					}
				}
			case a.Key == "style":
				for _, m := range cssURLRE.FindAllStringSubmatch(a.Val, -1) {
					written = append(written, m[1])
				}
			}
		}
	}
	var links []link
	for _, w := range written {
		u, err := page.Parse(w)
		if err != nil {
			t.Fatalf("%s: bad link %q: %v", page, w, err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			continue
		}
		u.Fragment = ""
		links = append(links, link{written: w, target: u})
	}
	return links
}

// fileOf is the file under site/ that serves a page URL.
func fileOf(u *url.URL) string {
	p := strings.TrimPrefix(u.Path, "/")
	if p == "" || strings.HasSuffix(p, "/") {
		p += "index.html"
	}
	return p
}

// name is how EXPECTED.md writes a target: a path from the site's root, or
// the absolute URL for another host.
func name(u, site *url.URL) string {
	if u.Host == site.Host {
		return u.EscapedPath()
	}
	return u.String()
}

func TestExpectedMatchesSite(t *testing.T) {
	exp := readExpected(t)
	srv := httptest.NewServer(staticServer("site"))
	defer srv.Close()
	site, _ := url.Parse(srv.URL + "/")

	pages := 0
	status := map[string]string{}               // target → "200", "404", "refused"
	referrers := map[string][]string{}          // target → files, one per link
	linksOn := map[string]map[string][]string{} // file → target → links as written
	queue := []*url.URL{site}
	status[name(site, site)] = ""
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		resp, err := srv.Client().Get(u.String())
		if err != nil {
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Fatalf("GET %s: %v", u, err)
			}
			status[name(u, site)] = "refused"
			continue
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		status[name(u, site)] = strconv.Itoa(resp.StatusCode)
		ctype := resp.Header.Get("Content-Type")
		if resp.StatusCode != 200 || u.Host != site.Host || !strings.HasPrefix(ctype, "text/html") {
			continue
		}
		pages++
		dec, err := charset.NewReader(strings.NewReader(string(body)), ctype)
		if err != nil {
			t.Fatal(err)
		}
		if body, err = io.ReadAll(dec); err != nil {
			t.Fatal(err)
		}
		file := fileOf(u)
		linksOn[file] = map[string][]string{}
		for _, l := range pageLinks(t, u, body) {
			n := name(l.target, site)
			referrers[n] = append(referrers[n], file)
			linksOn[file][n] = append(linksOn[file][n], l.written)
			if _, seen := status[n]; !seen {
				status[n] = ""
				queue = append(queue, l.target)
			}
		}
	}

	if pages != exp.pages {
		t.Errorf("the site has %d pages, EXPECTED.md says %d", pages, exp.pages)
	}
	if len(exp.broken) != exp.brokenCount {
		t.Errorf("EXPECTED.md lists %d broken URLs but says %d", len(exp.broken), exp.brokenCount)
	}
	for target, st := range status {
		if _, listed := exp.broken[target]; st != "200" && !listed {
			t.Errorf("%s answers %s and is not in EXPECTED.md (linked from %v)", target, st, referrers[target])
		}
	}
	for target, refs := range exp.broken {
		if st := status[target]; st == "200" || st == "" {
			t.Errorf("EXPECTED.md lists %s as broken, but it answers %q", target, st)
			continue
		}
		var files []string
		for _, r := range refs {
			file, line, _ := strings.Cut(r, ":")
			files = append(files, file)
			checkLine(t, file, line, target, linksOn[file][target])
		}
		got := slices.Clone(referrers[target])
		slices.Sort(got)
		slices.Sort(files)
		if !slices.Equal(got, files) {
			t.Errorf("%s: linked from %v, EXPECTED.md says %v", target, got, files)
		}
	}
}

// staticServer serves dir the way common static hosts (nginx, Apache, Python's
// http.server) do: HTML as "text/html" without a charset parameter, so the
// page's own <meta charset> decides. http.FileServer alone would say
// "charset=utf-8", which by the HTML rules overrides the meta, and the
// windows-1252 page would be read wrongly.
func staticServer(dir string) http.Handler {
	files := http.FileServer(http.Dir(dir))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; strings.HasSuffix(p, "/") || strings.HasSuffix(p, ".html") {
			w.Header().Set("Content-Type", "text/html")
		}
		files.ServeHTTP(w, r)
	})
}

// checkLine checks that a link to target, as written on the page, starts on
// the given line of file: the line holds attr="URL", a srcset candidate, or a
// CSS url( token.
func checkLine(t *testing.T, file, line, target string, written []string) {
	t.Helper()
	raw, err := os.ReadFile(path.Join("site", file))
	if err != nil {
		t.Fatal(err)
	}
	dec, err := charset.NewReader(strings.NewReader(string(raw)), "text/html")
	if err != nil {
		t.Fatal(err)
	}
	text, err := io.ReadAll(dec)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.ReplaceAll(string(text), "\r\n", "\n"), "\n")
	n, _ := strconv.Atoi(line)
	if n < 1 || n > len(lines) {
		t.Errorf("%s:%s: no such line", file, line)
		return
	}
	l := lines[n-1]
	for _, w := range written {
		attrStart := strings.Contains(l, `="`+w) || strings.Contains(l, "url('"+w) ||
			strings.Contains(l, `url("`+w) || strings.TrimSpace(l) != "" && strings.HasPrefix(strings.TrimSpace(l), w+" ")
		if attrStart {
			return
		}
	}
	t.Errorf("%s:%s is %q: no link to %s (written %q) starts there", file, line, l, target, written)
}
