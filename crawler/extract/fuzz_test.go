package extract

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
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
		"<iframe srcdoc=\"<a href=&quot;x&quot;>\r\n<img\rsrc=y>&#13;<iframe srcdoc='<a href=z>'>\"><table background=t><img longdesc=d>",
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

// FuzzTokenizerMatchesXNetHTML checks that our tokenizer splits any input
// into the tokens golang.org/x/net/html's Tokenizer does, to the byte (Raw),
// with the same type (start and self-closing tags alike), read the way
// Extract reads it (NextIsNotRawText after every <noscript>). For every
// start tag it checks that the scan finds exactly the attributes the
// tokenizer reports, in the same order, that each value span holds that
// attribute's value, and that the tag name is the tokenizer's. Link lines and Extract's values without the tokenizer rest
// on this.
func FuzzTokenizerMatchesXNetHTML(f *testing.F) {
	addSeeds(f)
	for _, s := range []string{
		"<script><!--<script></script>--></script><a href=1>",
		"<script><!-- </script><a href=2>",
		"<script>a<!--b<script>c</script>d-->e</SCRIPT\t><a href=3>",
		"<script><!--<scriptx></script><a href=4>",
		"<script>--></script/><a href=5>",
		"<style></st</style ><a href=6></style>",
		"<title>a &amp; b\r\n\x00c</title><textarea></textarea x>",
		"<plaintext><a href=7>",
		"<xmp><a href=8></xmp><iframe><a href=9></iframe><noembed>x</noembed><noframes></noframes>",
		"<!DOCTYPE html><!doctype><!DOCTYP><!-><!--><!---><!-- a --!> b --!x-->",
		"<?php x ?></><//a></ a><!>x</",
		"<a<b <c/d e/=f g= =h i=\"j\"k='l'>",
		"<a href=x",
		"<a href='x'",
		"<!--",
		"<!-- x --!",
		"<script><!--<script>",
		"<script><!--</scr",
		"<div style=\"a\" style=b STYLE=c>",
		"text<",
		"<<a>",
		"</a",
		"<a \x00b=c\x00>",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		x := html.NewTokenizer(bytes.NewReader(doc))
		z := newTokenizer(doc)
		xoff := 0
		for n := 0; ; n++ {
			xt := x.Next()
			tt, start, end := z.next()
			if xt == html.ErrorToken {
				if tt != tokEOF {
					t.Fatalf("token %d: x/net/html ends the document, we read %v %q", n, tt, doc[start:end])
				}
				return
			}
			xstart := xoff
			xoff += len(x.Raw())
			if want := tokenTypeOf(xt); tt != want || start != xstart || end != xoff {
				t.Fatalf("token %d: x/net/html %v %q, we read %v %q", n, xt, doc[xstart:xoff], tt, doc[start:min(max(start, end), len(doc))])
			}
			if tt == tokStartTag {
				checkTag(t, x, doc, z.name, z.attrs)
			}
		}
	})
}

func tokenTypeOf(tt html.TokenType) tokenType {
	switch tt {
	case html.TextToken:
		return tokText
	case html.StartTagToken, html.SelfClosingTagToken:
		return tokStartTag
	case html.EndTagToken:
		return tokEndTag
	case html.CommentToken:
		return tokComment
	case html.DoctypeToken:
		return tokDoctype
	}
	return tokEOF
}

// checkTag compares the tag name and attributes the scan found with the
// tokenizer's, and reads the tokenizer's token the way Extract needs it.
func checkTag(t *testing.T, x *html.Tokenizer, doc []byte, name span, attrs []rawAttr) {
	t.Helper()
	raw := doc[name.start:name.end]
	tok := x.Token()
	if tok.Data == "noscript" {
		x.NextIsNotRawText()
	}
	if got := tagName(raw); got != tok.Data {
		t.Fatalf("tag name %q: we read %q, x/net/html %q", raw, got, tok.Data)
	}
	if len(attrs) != len(tok.Attr) {
		t.Fatalf("<%s>: scan found %d attributes, tokenizer %d", tok.Data, len(attrs), len(tok.Attr))
	}
	for i, a := range tok.Attr {
		key := doc[attrs[i].key.start:attrs[i].key.end]
		if !sameKey(key, []byte(a.Key)) {
			t.Fatalf("<%s>: attribute %d is %q, tokenizer says %q", tok.Data, i, key, a.Key)
		}
		val := plainValue(doc[attrs[i].val.start:attrs[i].val.end])
		if bytes.IndexByte(val, '&') >= 0 {
			var ok bool
			if val, ok = decodeAmp(val); !ok {
				continue // entity decoding is the tokenizer's business
			}
		}
		// Extract reports this value without asking the tokenizer.
		if string(val) != a.Val {
			t.Fatalf("<%s>: value of %q is %q, tokenizer says %q", tok.Data, a.Key, val, a.Val)
		}
	}
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
			if l.URL == "" || strings.Trim(l.URL, " \t\n\f\r") != l.URL {
				t.Errorf("%+v: URL empty or not trimmed", l)
			}
			if want := KindOf(l.Tag, l.Attr); l.Kind != want || (l.Kind == KindStylesheet) != (l.Attr == "@import") {
				t.Errorf("%+v: kind %d, want %d: an @import is a stylesheet, any other url() a resource", l, l.Kind, want)
			}
		}
	})
}

// FuzzCharsetQuery checks that Charset.Query never panics, changes nothing
// before a link's query nor from its fragment on, and leaves no non-ASCII
// character in a query it encodes.
func FuzzCharsetQuery(f *testing.F) {
	for _, s := range []string{"/caf\u00e9?q=\u00e9#\u00e9", "/s?q=\u4e2d%zz", "mailto:a?\u00e9", "?\xff\xfe", "#?\u00e9", "a:/?\u00e9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		for _, cs := range []Charset{{enc: charmap.Windows1252}, {enc: japanese.ShiftJIS}, {enc: japanese.ISO2022JP}} {
			got := cs.Query(ref)
			q := strings.IndexByte(ref, '?')
			h := strings.IndexByte(ref, '#')
			if q < 0 || (h >= 0 && h < q) {
				if got != ref {
					t.Fatalf("%q: no query, but became %q", ref, got)
				}
				continue
			}
			if !strings.HasPrefix(got, ref[:q+1]) {
				t.Fatalf("%q: what comes before the query changed: %q", ref, got)
			}
			if h >= 0 && !strings.HasSuffix(got, ref[h:]) {
				t.Fatalf("%q: the fragment changed: %q", ref, got)
			}
			if got != ref {
				gh := len(got) - (len(ref) - h)
				if h < 0 {
					gh = len(got)
				}
				if !ascii(got[q:gh]) {
					t.Fatalf("%q: non-ASCII left in the query: %q", ref, got)
				}
			}
		}
	})
}
