package extract

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func addSeeds(f *testing.F) {
	f.Add(readTestdata(f, "blog.html"))
	f.Add(readTestdata(f, "legacy.html"))
	for _, s := range []string{
		"<a href=x>",
		"<img srcset=\"a 1x,\r\nb (x,y) 2x,,c\" src=\"&#10;&amp;\">",
		"<div style=\"background:url(&quot;a&quot;)\n;@import 'b'\">",
		"<style>/* x */ a{b:url( c )} @import \"d\";</style>",
		"<meta http-equiv=refresh content=\"0; url='x'\">",
		"<a =b c= d/ e='f\x00' E=g\rhref=h>",
		"<noscript><img src=x></noscript><template><a href=y></template>",
		"<title>t</title><textarea><a href=z></textarea><script><a href=w></script>",
		"<input type=image src=i><base href=b><a name=n id=i>",
	} {
		f.Add([]byte(s))
	}
}

// FuzzExtract checks that Extract never panics and that every link it
// reports is well formed and on a line the document has.
func FuzzExtract(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, doc []byte) {
		total := lineCount(doc)
		if naive := naiveLineCount(doc); total != naive {
			t.Fatalf("lineCount = %d, naive count %d", total, naive)
		}
		p := Extract(doc, Options{IDs: true})
		for _, l := range p.Links {
			if l.Line < 1 || l.Line > total {
				t.Errorf("%+v: line outside 1..%d", l, total)
			}
			if l.Kind != KindPage && l.Kind != KindResource && l.Kind != KindStylesheet {
				t.Errorf("%+v: kind not set", l)
			}
			if l.URL == "" || strings.Trim(l.URL, " \t\n\f\r") != l.URL {
				t.Errorf("%+v: URL empty or not trimmed", l)
			}
			if l.Tag == "" {
				t.Errorf("%+v: no tag", l)
			}
		}
	})
}

// FuzzScanMatchesTokenizer checks that the position scan of every start tag
// finds exactly the attributes the tokenizer reports, in the same order,
// and that each value span holds that attribute's value. Extract falls back
// to a tag's line when they differ; this is what keeps that from happening.
func FuzzScanMatchesTokenizer(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, doc []byte) {
		z := html.NewTokenizer(bytes.NewReader(doc))
		var s tagScanner
		off := 0
		for {
			tt := z.Next()
			if tt == html.ErrorToken {
				return
			}
			start := off
			off += len(z.Raw())
			if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
				continue
			}
			_, attrs, ok := s.scan(doc, start, off)
			if !ok {
				t.Fatalf("scan of %q not ok", doc[start:off])
			}
			tok := z.Token()
			if len(attrs) != len(tok.Attr) {
				t.Fatalf("%q: scan found %d attributes, tokenizer %d", doc[start:off], len(attrs), len(tok.Attr))
			}
			for i, a := range tok.Attr {
				raw := doc[attrs[i].key.start:attrs[i].key.end]
				if !sameKey(raw, []byte(a.Key)) {
					t.Fatalf("%q: attribute %d is %q, tokenizer says %q", doc[start:off], i, raw, a.Key)
				}
				rawVal := doc[attrs[i].val.start:attrs[i].val.end]
				if bytes.IndexByte(rawVal, '&') >= 0 {
					continue // entity decoding is the tokenizer's business
				}
				// Extract reports this value without asking the tokenizer.
				if val := string(plainValue(rawVal)); val != a.Val {
					t.Fatalf("%q: value of %q is %q, tokenizer says %q", doc[start:off], a.Key, val, a.Val)
				}
			}
		}
	})
}

func naiveLineCount(doc []byte) int {
	s := strings.ReplaceAll(string(doc), "\r\n", "\n")
	return 1 + strings.Count(s, "\n") + strings.Count(s, "\r")
}

// FuzzStylesheet checks that any CSS file gives trimmed, non-empty URLs on
// lines that exist.
func FuzzStylesheet(f *testing.F) {
	f.Add([]byte("@import 'a.css';\nbody{background:url( b.png )}"))
	f.Add([]byte("/* url(c.png) */ a{b:url(\"d\\\")e\")}\r\n@import url(x.css) print;"))
	f.Add([]byte("url(\x00)\n@import \""))
	f.Fuzz(func(t *testing.T, css []byte) {
		total := lineCount(css)
		for _, l := range Stylesheet(css) {
			if l.Line < 1 || l.Line > total {
				t.Errorf("%+v: line outside 1..%d", l, total)
			}
			if l.URL == "" || strings.Trim(l.URL, " \t\n\f\r") != l.URL || l.Kind != KindResource {
				t.Errorf("%+v: URL empty or not trimmed, or not a resource", l)
			}
		}
	})
}
