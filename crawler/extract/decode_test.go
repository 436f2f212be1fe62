package extract

import (
	"bytes"
	"testing"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/unicode"
)

func encode(t *testing.T, enc encoding.Encoding, s string) []byte {
	t.Helper()
	b, err := enc.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatalf("encode %q: %v", s, err)
	}
	return b
}

func TestDecodeUTF8(t *testing.T) {
	const page = "<title>Café</title>\n<a href=\"/café/naïve?q=€\">menu</a>\n"
	const sjisPage = "<title>時刻表</title>\n<a href=\"/駅/時刻表.html\">時刻表</a>\n"
	metaCharset := func(cs string) string { return "<meta charset=\"" + cs + "\">\n" }
	metaEquiv := func(cs string) string {
		return "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=" + cs + "\">\n"
	}
	tests := []struct {
		name        string
		body        []byte
		contentType string
		want        string
	}{
		{"windows-1252 in header", encode(t, charmap.Windows1252, page), "text/html; charset=windows-1252", page},
		{"iso-8859-1 label in header means windows-1252", encode(t, charmap.Windows1252, page), "text/html; charset=ISO-8859-1", page},
		{"windows-1252 in meta charset", encode(t, charmap.Windows1252, metaCharset("windows-1252")+page), "text/html",
			metaCharset("windows-1252") + page},
		{"windows-1252 in meta http-equiv", encode(t, charmap.Windows1252, metaEquiv("windows-1252")+page), "",
			metaEquiv("windows-1252") + page},
		{"Shift_JIS in header", encode(t, japanese.ShiftJIS, sjisPage), "text/html; charset=Shift_JIS", sjisPage},
		{"Shift_JIS in meta charset", encode(t, japanese.ShiftJIS, metaCharset("shift_jis")+sjisPage), "text/html",
			metaCharset("shift_jis") + sjisPage},
		{"Shift_JIS in meta http-equiv", encode(t, japanese.ShiftJIS, metaEquiv("Shift_JIS")+sjisPage), "text/html",
			metaEquiv("Shift_JIS") + sjisPage},
		{"header wins over meta", encode(t, japanese.ShiftJIS, metaCharset("windows-1252")+sjisPage), "text/html; charset=shift_jis",
			metaCharset("windows-1252") + sjisPage},
		{"UTF-16 by its BOM", encode(t, unicode.UTF16(unicode.LittleEndian, unicode.UseBOM), page), "text/html; charset=windows-1252",
			"\uFEFF" + page},
		{"undeclared, not UTF-8: windows-1252", encode(t, charmap.Windows1252, page), "text/html", page},
		{"declared windows-1252 is followed even when the bytes are valid UTF-8",
			[]byte(metaCharset("windows-1252") + "<a href=\"/caf\u00e9\">"), "",
			metaCharset("windows-1252") + "<a href=\"/caf\u00c3\u00a9\">"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := DecodeUTF8(tt.body, tt.contentType)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("DecodeUTF8 = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestDecodeUTF8KeepsUTF8 checks that a UTF-8 body comes back as the very
// same slice, whatever told DecodeUTF8 it is UTF-8.
func TestDecodeUTF8KeepsUTF8(t *testing.T) {
	long := "<p>" + string(bytes.Repeat([]byte("plain ascii text "), 100)) + "<a href=\"/café\">"
	tests := []struct {
		name, body, contentType string
	}{
		{"header", "<a href=\"/café\">", "text/html; charset=utf-8"},
		{"meta", "<meta charset=utf-8><a href=\"/café\">", "text/html"},
		{"BOM", "\xef\xbb\xbf<a href=\"/café\">", "text/html; charset=windows-1252"},
		{"sniffed in the first 1024 bytes", "<a href=\"/café\">", ""},
		{"undeclared, first non-ASCII byte after 1024", long, "text/html"},
		{"pure ASCII", "<a href=\"/x\">", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := []byte(tt.body)
			got, _, err := DecodeUTF8(body, tt.contentType)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(body) || &got[0] != &body[0] {
				t.Errorf("DecodeUTF8 copied or changed the body: %q", got)
			}
		})
	}
}

// TestDecodeThenExtract runs the two together as the crawler does: a
// windows-1252 page's non-ASCII URL comes out as the UTF-8 text of what the
// author wrote, on the right line.
func TestDecodeThenExtract(t *testing.T) {
	body := encode(t, charmap.Windows1252, "<meta charset=windows-1252>\n<p>\n<a\nhref=\"/men\u00fc.html\">")
	doc, _, err := DecodeUTF8(body, "")
	if err != nil {
		t.Fatal(err)
	}
	assertLinks(t, Extract(doc, Options{}).Links, []Link{pg("/men\u00fc.html", 4, "a", "href")})
}

// A link's query is sent in the page's encoding, as browsers send it (the
// URL standard's query state); its path and fragment stay UTF-8, and so do
// links of schemes other than the special ones (qa8 P2).
func TestCharsetQuery(t *testing.T) {
	t.Parallel()
	latin := Charset{enc: charmap.Windows1252}
	sjis := Charset{enc: japanese.ShiftJIS}
	tests := []struct {
		cs       Charset
		ref, out string
	}{
		{latin, "/ok/caf\u00e9?q=\u00e9", "/ok/caf\u00e9?q=%E9"},
		{latin, "/s?q=caf\u00e9&x=%C3%A9&y=a b", "/s?q=caf%E9&x=%C3%A9&y=a b"}, // %-escapes and ASCII as written
		{latin, "/s?q=\u00e9#fr\u00e9", "/s?q=%E9#fr\u00e9"},                   // the fragment is UTF-8
		{latin, "/s#a?q=\u00e9", "/s#a?q=\u00e9"},                              // a '?' of the fragment
		{latin, "/caf\u00e9", "/caf\u00e9"},                                    // no query
		{latin, "/s?q=a", "/s?q=a"},
		{latin, "https://h.example/s?q=\u20ac", "https://h.example/s?q=%80"}, // the euro sign is 0x80 in windows-1252
		{latin, "//h.example/s?q=\u00e9", "//h.example/s?q=%E9"},
		{latin, "a:b/c?q=\u00e9", "a:b/c?q=\u00e9"}, // "a:" is a scheme, not a special one
		{latin, "mailto:x@example.com?subject=\u00e9", "mailto:x@example.com?subject=\u00e9"},
		{latin, "wss://h.example/?q=\u00e9", "wss://h.example/?q=\u00e9"},
		{latin, "/s?q=\u4e2d", "/s?q=%26%2320013%3B"},  // not in windows-1252: as a browser spells it
		{sjis, "/s?q=\u65e5\u672c", "/s?q=%93%FA%96{"}, // "{" is not in the set a browser escapes
		{sjis, "/s?q=\u8868", "/s?q=%95\\"},            // the second byte is a backslash, left as browsers leave it
		{Charset{}, "/s?q=\u00e9", "/s?q=\u00e9"},
	}
	for _, tt := range tests {
		if got := tt.cs.Query(tt.ref); got != tt.out {
			t.Errorf("Query(%q) = %q, want %q", tt.ref, got, tt.out)
		}
	}
}

// DecodeUTF8 says which encoding the queries take: the page's, except for
// UTF-8 and UTF-16 (which the URL standard sends as UTF-8).
func TestDecodeUTF8Charset(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, contentType string
		body              []byte
		out               string
	}{
		{"header", "text/html; charset=windows-1252", []byte("<a href=\"/a?q=\xe9\">"), "/a?q=%E9"},
		{"meta only", "text/html", []byte("<meta charset=iso-8859-1><a href=\"/a?q=\xef\">"), "/a?q=%EF"},
		{"utf-8", "text/html; charset=utf-8", []byte("<a href=\"/a?q=\xc3\xa9\">"), "/a?q=\u00e9"},
		{"utf-16", "text/html; charset=utf-16le", encode(t, unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM), "<a href=\"/a?q=\u00e9\">"), "/a?q=\u00e9"},
	}
	for _, tt := range tests {
		doc, cs, err := DecodeUTF8(tt.body, tt.contentType)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		ls := Extract(doc, Options{}).Links
		if len(ls) != 1 {
			t.Fatalf("%s: links %+v", tt.name, ls)
		}
		if got := cs.Query(ls[0].URL); got != tt.out {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.out)
		}
	}
}
