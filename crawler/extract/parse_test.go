package extract

import (
	"slices"
	"testing"
)

func TestSrcsetURLs(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{" , ,, ", nil},
		{"a.png", []string{"a.png"}},
		{"a.png 1x", []string{"a.png"}},
		{"a.png 1x, b.png 2x", []string{"a.png", "b.png"}},
		{"a.png 640w,b.png 1280w", []string{"a.png", "b.png"}},
		{"a.png,b.png", []string{"a.png,b.png"}},            // a comma not followed by white space is part of the URL
		{"a.png, b.png", []string{"a.png", "b.png"}},        // the trailing comma ends the first URL
		{"a.png,, b.png", []string{"a.png", "b.png"}},       // several trailing commas too
		{"x,y.png 1x, z.png", []string{"x,y.png", "z.png"}}, // commas inside a URL
		{"/img?w=1,2 1x, /b.png 2x", []string{"/img?w=1,2", "/b.png"}},
		{"a.png (x, y) 1x, b.png", []string{"a.png", "b.png"}}, // a comma inside descriptor parentheses does not split
		{"a.png (unclosed, b.png 2x", []string{"a.png"}},
		{"a.png 1x 2x 3x , b.png", []string{"a.png", "b.png"}},
		{"\n  a.png 1x,\n  b.png 2x\n", []string{"a.png", "b.png"}},
		{"data:image/png;base64,AAAA 1x, b.png 2x", []string{"data:image/png;base64,AAAA", "b.png"}},
		{"a.png bogus-descriptor, b.png", []string{"a.png", "b.png"}}, // kept though a browser drops it
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var got []string
			for _, sp := range srcsetURLs(tt.in, nil) {
				got = append(got, tt.in[sp.start:sp.end])
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("srcsetURLs(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestRefreshURL(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"5; url=/next", "/next", true},
		{"5;url=/next", "/next", true},
		{"0; URL=/next", "/next", true},
		{"0;URL = '/next page'", "/next page", true},
		{`0; url="/q" trailing`, "/q", true},
		{`0; url="/unterminated`, "/unterminated", true},
		{"3, /comma", "/comma", true},
		{"1 /space", "/space", true},
		{"1.5; url=/dot", "/dot", true},
		{".5; url=/lead", "/lead", true},
		{"  7  ;  url=/ws  ", "/ws", true},
		{"5; 'quoted'", "quoted", true},
		{"5; url", "url", true},             // no "=": the text is the URL
		{"5; uhoh.html", "uhoh.html", true}, // a leading "u" is not special
		{"5; url='x", "x", true},
		{"5", "", false},
		{"5;", "", false},
		{"5; url=", "", false},
		{"5; url=''", "", false},
		{"", "", false},
		{"soon; url=/x", "", false},
		{"5x; url=/x", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			a, b, ok := refreshURL(tt.in)
			var got string
			if ok {
				got = tt.in[a:b]
			}
			if ok != tt.ok || got != tt.want {
				t.Errorf("refreshURL(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
			// The Refresh response header is read by the same steps.
			if h, hok := RefreshHeader(tt.in); h != got || hok != ok {
				t.Errorf("RefreshHeader(%q) = %q, %v; want %q, %v", tt.in, h, hok, got, ok)
			}
		})
	}
}

func TestCSSURLs(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		toks []int // offset of each reference's url( or @import string
	}{
		{"", nil, nil},
		{"a{background:url(x.png)}", []string{"x.png"}, []int{13}},
		{"a{background:URL( 'x y.png' )}", []string{"x y.png"}, []int{13}},
		{`a{b:url("x.png")}`, []string{"x.png"}, []int{4}},
		{`a{b:url(  x.png  )}`, []string{"x.png"}, []int{4}},
		{"a{b:url()}", nil, nil},
		{`a{b:url("")}`, nil, nil},
		{"a{b:url(x.png", []string{"x.png"}, []int{4}},
		{`a{b:url("x.png`, []string{"x.png"}, []int{4}},
		{"/* url(no.png) */ a{b:url(y.png)}", []string{"y.png"}, []int{22}},
		{"/* unclosed url(no.png)", nil, nil},
		{`a{content:"url(no.png)"} b{c:url(y.png)}`, []string{"y.png"}, []int{29}},
		{`a{content:"it\"s url(no)"}`, nil, nil},
		{"a{b:myurl(no.png);c:x-url(no2)}", nil, nil},
		{`a{b:\url(no)}`, nil, nil},
		{`@import "a.css";`, []string{"a.css"}, []int{8}},
		{`@IMPORT 'a.css' screen;`, []string{"a.css"}, []int{8}},
		{`@import url(a.css);`, []string{"a.css"}, []int{8}},
		{`@import /* c */ "a.css";`, []string{"a.css"}, []int{16}},
		{`@importer "no.css";`, nil, nil},
		{"@font-face{src:url(f.woff2) format(\"woff2\"),url('f.woff') format('woff')}", []string{"f.woff2", "f.woff"}, []int{15, 44}},
		{"a{b:url(x.png),url(y.png)}", []string{"x.png", "y.png"}, []int{4, 15}},
		{`a{b:image-set("x.png" 1x, 'y.png' 2x)}`, []string{"x.png", "y.png"}, []int{14, 26}},
		{`a{b:-webkit-image-set("x.png" 1x)}`, []string{"x.png"}, []int{22}},
		{`a{b:IMAGE-SET( url(x.png) 1x, "y.avif" type("image/avif") )}`, []string{"x.png", "y.avif"}, []int{15, 30}},
		{`a{b:image-set(linear-gradient(red, "no") 1x, /* "no2" */ "y.png" 2x)}`, []string{"y.png"}, []int{57}},
		{`a{b:my-image-set("no.png" 1x);c:"image-set('no2')"}`, nil, nil},
		{`a{b:image-set("x.png" 1x;c:"no"} d{e:url(y.png)}`, []string{"x.png", "y.png"}, []int{14, 37}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var got []string
			var toks []int
			for _, r := range cssURLs(tt.in, nil) {
				got = append(got, tt.in[r.url.start:r.url.end])
				toks = append(toks, r.tok)
			}
			if !slices.Equal(got, tt.want) || !slices.Equal(toks, tt.toks) {
				t.Errorf("cssURLs(%q) = %q at %v, want %q at %v", tt.in, got, toks, tt.want, tt.toks)
			}
			// The same scanner reads <style> bodies as bytes.
			var fromBytes []string
			b := []byte(tt.in)
			for _, r := range cssURLs(b, nil) {
				fromBytes = append(fromBytes, string(b[r.url.start:r.url.end]))
			}
			if !slices.Equal(fromBytes, got) {
				t.Errorf("cssURLs([]byte(%q)) = %q, want %q", tt.in, fromBytes, got)
			}
		})
	}
}

func TestLineCounter(t *testing.T) {
	tests := []struct {
		doc   string
		offs  []int
		lines []int
		total int
	}{
		{"", []int{0}, []int{1}, 1},
		{"abc", []int{0, 2, 3}, []int{1, 1, 1}, 1},
		{"a\nb", []int{0, 1, 2}, []int{1, 1, 2}, 2},
		{"a\r\nb", []int{1, 2, 3}, []int{1, 1, 2}, 2},
		{"a\rb", []int{1, 2}, []int{1, 2}, 2},
		{"\r\r\n\n\r", []int{0, 1, 2, 3, 4, 5}, []int{1, 2, 2, 3, 4, 5}, 5},
		{"a\n", []int{2}, []int{2}, 2},
		// Asked out of order, it still answers right.
		{"a\nb\nc", []int{4, 0, 2}, []int{3, 1, 2}, 3},
	}
	for _, tt := range tests {
		c := newLineCounter([]byte(tt.doc))
		for i, off := range tt.offs {
			if got := c.at(off); got != tt.lines[i] {
				t.Errorf("%q: line at %d = %d, want %d", tt.doc, off, got, tt.lines[i])
			}
		}
		if got := lineCount([]byte(tt.doc)); got != tt.total {
			t.Errorf("lineCount(%q) = %d, want %d", tt.doc, got, tt.total)
		}
	}
}

// TestLineCounterSplitCRLF asks for the line of the "\n" of a "\r\n" pair in
// two steps, the cursor stopping between the "\r" and the "\n".
func TestLineCounterSplitCRLF(t *testing.T) {
	c := newLineCounter([]byte("a\r\nb"))
	if got := c.at(2); got != 1 {
		t.Errorf("line at the \\n of \\r\\n = %d, want 1", got)
	}
	if got := c.at(3); got != 2 {
		t.Errorf("line after \\r\\n = %d, want 2", got)
	}
}

func TestScanTag(t *testing.T) {
	tests := []struct {
		tag  string
		name string
		keys []string
		vals []string
	}{
		{"<a>", "a", nil, nil},
		{"<a href=x>", "a", []string{"href"}, []string{"x"}},
		{"<A HREF='x' Class=\"y z\">", "A", []string{"HREF", "Class"}, []string{"x", "y z"}},
		{"<img/src=x>", "img", []string{"src"}, []string{"x"}},
		{"<img / src=x />", "img", []string{"src"}, []string{"x"}},
		{"<a href=x/>", "a", []string{"href"}, []string{"x/"}},
		{"<a =x b>", "a", []string{"=x", "b"}, []string{"", ""}},
		{"<a b = c d>", "a", []string{"b", "d"}, []string{"c", ""}},
		{"<a b= >", "a", []string{"b"}, []string{""}},
		{"<a b=>", "a", []string{"b"}, []string{""}},
		{"<a x=1 X=2 y x=3>", "a", []string{"x", "y"}, []string{"1", ""}},
		{"<a\nb\n=\n'c'\n>", "a", []string{"b"}, []string{"c"}},
		{"<a b='>'>", "a", []string{"b"}, []string{">"}},
	}
	for _, tt := range tests {
		t.Run(tt.tag, func(t *testing.T) {
			doc := []byte(tt.tag)
			var s tagScanner
			name, attrs, end, ok := s.scan(doc, 1, true)
			if !ok || end != len(doc) {
				t.Fatalf("scan(%q) = ok %v, end %d", tt.tag, ok, end)
			}
			if got := string(doc[name.start:name.end]); got != tt.name {
				t.Errorf("name = %q, want %q", got, tt.name)
			}
			var keys, vals []string
			for _, a := range attrs {
				keys = append(keys, string(doc[a.key.start:a.key.end]))
				vals = append(vals, string(doc[a.val.start:a.val.end]))
			}
			if !slices.Equal(keys, tt.keys) || !slices.Equal(vals, tt.vals) {
				t.Errorf("attrs = %q %q, want %q %q", keys, vals, tt.keys, tt.vals)
			}
		})
	}
}

// TestScanTagManyAttributes covers the switch from pairwise duplicate
// detection to a map.
func TestScanTagManyAttributes(t *testing.T) {
	doc := []byte("<a")
	for i := range 3 * dedupLinear {
		doc = append(doc, ' ', 'k', byte('a'+i%26), byte('a'+i/26))
	}
	doc = append(doc, " KAA kAb href=x>"...) // both seen before
	var s tagScanner
	_, attrs, _, ok := s.scan(doc, 1, true)
	if !ok {
		t.Fatal("not ok")
	}
	if got, want := len(attrs), 3*dedupLinear+1; got != want {
		t.Fatalf("%d attributes, want %d", got, want)
	}
	if last := attrs[len(attrs)-1]; string(doc[last.key.start:last.key.end]) != "href" {
		t.Errorf("last attribute %q, want href", doc[last.key.start:last.key.end])
	}
}

// TestScanTagEndsWithInput: a tag the input ends inside is no tag, and
// one that ends early leaves the rest to the tokenizer.
func TestScanTagEndsWithInput(t *testing.T) {
	for _, in := range []string{"<a", "<a ", "<a href='x>", "<a href=x", "<a b", "<a b=", "<a b='x'"} {
		var s tagScanner
		if _, _, _, ok := s.scan([]byte(in), 1, true); ok {
			t.Errorf("scan(%q) ok, want not ok", in)
		}
	}
	var s tagScanner
	if _, _, end, ok := s.scan([]byte("<a b>c>"), 1, true); !ok || end != len("<a b>") {
		t.Errorf("scan(<a b>c>) = ok %v, end %d; want the end after <a b>", ok, end)
	}
}

func TestValueLines(t *testing.T) {
	val := []byte("a\nbb\n\nc")
	exact := valueLines{val: val, line: 10, exact: true}
	for _, q := range []struct{ off, line int }{{0, 10}, {2, 11}, {6, 13}, {1, 10}, {5, 12}, {7, 13}, {99, 13}} {
		if got := exact.at(q.off); got != q.line {
			t.Errorf("exact: line at %d = %d, want %d", q.off, got, q.line)
		}
	}
	fallback := valueLines{line: 4}
	if got := fallback.at(6); got != 4 {
		t.Errorf("fallback: line at 6 = %d, want 4", got)
	}
}

// lineCount is the number of lines in doc, the last line counted even when
// it is empty.
func lineCount(doc []byte) int {
	return 1 + countBreaks(doc, 0, len(doc))
}
