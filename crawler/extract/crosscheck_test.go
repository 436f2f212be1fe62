package extract

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"
)

// TestAgreesWithGoquery checks on realistic documents that Extract finds
// the same set of URLs as goquery's selectors do on the tree html.Parse
// builds. Sets, not counts: the tree builder clones an unclosed <a> into
// every later paragraph it reopens (legacy.html has one), so goquery sees
// one link written once several times. The parser runs with scripting off,
// because Extract reads <noscript> content as markup.
func TestAgreesWithGoquery(t *testing.T) {
	docs := map[string][]byte{
		"blog.html":   readTestdata(t, "blog.html"),
		"legacy.html": readTestdata(t, "legacy.html"),
		"generated":   realisticPage(),
	}
	selectors := []struct{ tag, attr string }{
		{"a", "href"},
		{"img", "src"},
		{"link", "href"},
		{"script", "src"},
	}
	for name, doc := range docs {
		root, err := html.ParseWithOptions(bytes.NewReader(doc), html.ParseOptionEnableScripting(false))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		gq := goquery.NewDocumentFromNode(root)
		links := Extract(doc, Options{}).Links
		for _, sel := range selectors {
			var want []string
			gq.Find(sel.tag + "[" + sel.attr + "]").Each(func(_ int, s *goquery.Selection) {
				v, _ := s.Attr(sel.attr)
				if v = strings.Trim(v, " \t\n\f\r"); v != "" {
					want = append(want, v)
				}
			})
			var got []string
			for _, l := range links {
				if l.Tag == sel.tag && l.Attr == sel.attr {
					got = append(got, l.URL)
				}
			}
			if len(want) == 0 {
				t.Fatalf("%s: goquery found no %s[%s]; the document does not test it", name, sel.tag, sel.attr)
			}
			slices.Sort(got)
			slices.Sort(want)
			got, want = slices.Compact(got), slices.Compact(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s %s[%s]:\n extract %q\n goquery %q", name, sel.tag, sel.attr, got, want)
			}
		}
	}
}
