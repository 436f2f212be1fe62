package extract

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
)

// DecodeUTF8 converts an HTML body to UTF-8 using the charset from the
// Content-Type header, a BOM, or <meta charset>/<meta http-equiv> in the
// first 1024 bytes (charset.DetermineEncoding), e.g. windows-1252 or
// Shift_JIS. A body already in UTF-8 is returned as is, without copying.
//
// One departure from the standard's sniffing: a body that declares no
// charset anywhere and whose first 1024 bytes are plain ASCII would be taken
// as windows-1252; if the whole body is valid UTF-8 it is kept as UTF-8
// instead, so that a non-ASCII URL further down is not turned into mojibake
// and reported broken. A declared charset is always followed, as browsers
// do.
//
// It also returns the page's Charset, in which its links' queries are
// encoded (see Charset.Query).
func DecodeUTF8(body []byte, contentType string) ([]byte, Charset, error) {
	enc, name, certain := charset.DetermineEncoding(body, contentType)
	if name == "utf-8" || (!certain && name == "windows-1252" && !declaresCharset(body) && utf8.Valid(body)) {
		return body, Charset{}, nil
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return nil, Charset{}, fmt.Errorf("decode %s body: %w", name, err)
	}
	cs := Charset{enc: enc}
	if strings.HasPrefix(name, "utf-16") {
		// The URL standard encodes a UTF-16 document's queries in UTF-8.
		cs = Charset{}
	}
	return out, cs, nil
}

// Charset is the encoding a page came in, as far as its URLs care: a
// browser percent-encodes the non-ASCII characters of a link's query in
// the document's encoding (the URL standard's query state), while the path
// and the fragment are always UTF-8. A search or CGI link with a
// non-ASCII query on a Latin-1 or Shift_JIS page sent in UTF-8 asks the
// server for something else than a visitor's click does: a false broken,
// or a false ok (qa8 P2). The zero value is UTF-8.
type Charset struct{ enc encoding.Encoding }

// Query returns ref, a link's text decoded to UTF-8, with the non-ASCII
// characters of its query percent-encoded in the page's encoding, as a
// browser sends them; everything else is left as it is, %-escapes
// included, for resolving as any link. A character the encoding cannot
// represent becomes "&#N;" percent-encoded, as browsers send it. Only
// links to special schemes (http, https, ws excepted, file, ftp, or no
// scheme: relative to the page) are concerned; the others' queries are
// UTF-8 everywhere.
func (cs Charset) Query(ref string) string {
	if cs.enc == nil || ascii(ref) {
		return ref
	}
	q := strings.IndexByte(ref, '?')
	if q < 0 {
		return ref
	}
	end := strings.IndexByte(ref, '#')
	if end >= 0 && end < q {
		return ref // the '?' is the fragment's
	}
	if end < 0 {
		end = len(ref)
	}
	if !queryInPageEncoding(ref[:q]) || ascii(ref[q:end]) {
		return ref
	}
	var b strings.Builder
	b.Grow(len(ref) + 16)
	b.WriteString(ref[:q])
	enc := cs.enc.NewEncoder()
	query := ref[q:end]
	for i := 0; i < len(query); {
		if query[i] < utf8.RuneSelf {
			b.WriteByte(query[i])
			i++
			continue
		}
		j := i
		for j < len(query) && query[j] >= utf8.RuneSelf {
			j++
		}
		if out, err := enc.String(query[i:j]); err == nil {
			percentEncode(&b, out)
		} else {
			// One character at a time, to spell out only those that the
			// encoding lacks.
			for _, r := range query[i:j] {
				if out, err := enc.String(string(r)); err == nil && r != utf8.RuneError {
					percentEncode(&b, out)
				} else {
					b.WriteString("%26%23" + strconv.Itoa(int(r)) + "%3B")
				}
			}
		}
		i = j
	}
	b.WriteString(ref[end:])
	return b.String()
}

// queryInPageEncoding says whether a link that begins with head (its text
// up to the query's '?') has a scheme whose queries the URL standard
// encodes in the document's encoding: a special one other than ws and wss,
// or none (the link is relative to the page, an http or file one).
func queryInPageEncoding(head string) bool {
	head = strings.TrimLeft(head, " \t\n\r\f")
	colon := strings.IndexByte(head, ':')
	if colon <= 0 || strings.ContainsAny(head[:colon], "/") {
		return true
	}
	for i := 0; i < colon; i++ {
		c := head[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return true // not a scheme: a relative path with a colon
		}
	}
	switch strings.ToLower(head[:colon]) {
	case "http", "https", "file", "ftp":
		return true
	}
	return false
}

// percentEncode writes s, a query's bytes in the page's encoding, with the
// bytes of the URL standard's special-query percent-encode set escaped.
func percentEncode(b *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c <= ' ' || c >= 0x7f || c == '"' || c == '#' || c == '<' || c == '>' || c == '\'':
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		default:
			b.WriteByte(c)
		}
	}
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// declaresCharset reports whether the part of body that DetermineEncoding
// prescans could name a charset. Every <meta> declaration it honours
// contains the word "charset", so without it the windows-1252 it returns is
// its default and not the page's word.
func declaresCharset(body []byte) bool {
	head := body[:min(len(body), 1024)]
	for i := range head {
		if hasPrefixFold(head, i, "charset") {
			return true
		}
	}
	return false
}
