package extract

import "bytes"

// cssRef is one URL in CSS: tok is where the reference starts (the "u" of
// "url(", or the opening quote of an @import string), url the URL itself.
// imported says it is the stylesheet of an @import, in either form.
type cssRef struct {
	tok      int
	url      span
	imported bool
}

// importAttr is the Link.Attr of an @import, so that a link read back
// from the store (see KindOf) is still known for a stylesheet.
const importAttr = "@import"

// cssURLs appends every url(...), @import "..." and image-set() string in s, a <style> body or a
// style attribute. It steps over comments and strings, so a url( inside
// either is not a reference. Escapes are left as written: they are rare in
// URLs and a checker reporting "a\2e png" is still useful.
func cssURLs[T ~string | ~[]byte](s T, dst []cssRef) []cssRef {
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			i = skipComment(s, i)
		case c == '"' || c == '\'':
			i = skipString(s, i)
		case c == '\\':
			i += 2
		case (c == 'u' || c == 'U') && hasPrefixFold(s, i, "url(") && !identByteBefore(s, i):
			dst, i = appendURLToken(s, i, dst)
		case (c == 'i' || c == 'I' || c == '-') && !identByteBefore(s, i):
			if n := imageSetAt(s, i); n > 0 {
				dst, i = imageSetURLs(s, i+n, dst)
			} else {
				i++
			}
		case c == '@' && hasPrefixFold(s, i+1, "import") && !identByteAt(s, i+7):
			i = skipSpaceAndComments(s, i+7)
			switch {
			case i < len(s) && (s[i] == '"' || s[i] == '\''):
				end := skipString(s, i)
				if a, b := trimSpan(s, i+1, stringContentEnd(s, i, end)); a < b {
					dst = append(dst, cssRef{tok: i, url: span{a, b}, imported: true})
				}
				i = end
			case hasPrefixFold(s, i, "url("):
				var ref cssRef
				ref, i = cssURLToken(s, i)
				if ref.url.start < ref.url.end {
					ref.imported = true
					dst = append(dst, ref)
				}
			}
		default:
			i++
		}
	}
	return dst
}

// appendURLToken appends the url() token at i when it names something, and
// returns the position after it.
func appendURLToken[T ~string | ~[]byte](s T, i int, dst []cssRef) ([]cssRef, int) {
	ref, end := cssURLToken(s, i)
	if ref.url.start < ref.url.end {
		dst = append(dst, ref)
	}
	return dst, end
}

// imageSetAt is the length of the "image-set(" or "-webkit-image-set(" at
// i, or 0.
func imageSetAt[T ~string | ~[]byte](s T, i int) int {
	for _, f := range [...]string{"image-set(", "-webkit-image-set("} {
		if hasPrefixFold(s, i, f) {
			return len(f)
		}
	}
	return 0
}

// imageSetURLs appends the URLs of the image-set() whose arguments start
// at i and returns the position after it. Its options may name an image
// with a bare string ("a.png" 1x), which browsers fetch as a url() (qa11
// §5); a string inside a nested function (type("image/avif")) is none.
// It stops where a declaration would end, so that a missing ")" loses
// nothing that follows.
func imageSetURLs[T ~string | ~[]byte](s T, i int, dst []cssRef) ([]cssRef, int) {
	depth := 0
	for i < len(s) {
		switch c := s[i]; {
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			i = skipComment(s, i)
		case c == '"' || c == '\'':
			end := skipString(s, i)
			if a, b := trimSpan(s, i+1, stringContentEnd(s, i, end)); depth == 0 && a < b {
				dst = append(dst, cssRef{tok: i, url: span{a, b}})
			}
			i = end
		case c == '\\':
			i += 2
		case (c == 'u' || c == 'U') && hasPrefixFold(s, i, "url(") && !identByteBefore(s, i):
			dst, i = appendURLToken(s, i, dst)
			// The url()'s own ")" does not end the image-set().
			if i = skipSpace(s, i, len(s)); i < len(s) && s[i] == ')' {
				i++
			}
		case c == '(':
			depth++
			i++
		case c == ')' && depth > 0:
			depth--
			i++
		case c == ')':
			return dst, i + 1
		case c == ';' || c == '{' || c == '}':
			return dst, i
		default:
			i++
		}
	}
	return dst, i
}

// cssURLToken reads the url( at i and returns the reference and the
// position after it. A quoted URL is the string's content; an unquoted one
// runs to ")" or white space.
func cssURLToken[T ~string | ~[]byte](s T, i int) (cssRef, int) {
	ref := cssRef{tok: i}
	j := skipSpace(s, i+len("url("), len(s))
	if j < len(s) && (s[j] == '"' || s[j] == '\'') {
		end := skipString(s, j)
		a, b := trimSpan(s, j+1, stringContentEnd(s, j, end))
		ref.url = span{a, b}
		return ref, end
	}
	k := j
	for k < len(s) && s[k] != ')' && !isSpace(s[k]) {
		k++
	}
	ref.url = span{j, k}
	return ref, k
}

// skipString returns the position after the string that opens at i: after
// its closing quote, or at the unescaped newline or end of input that cuts
// it short.
func skipString[T ~string | ~[]byte](s T, i int) int {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case q:
			return j + 1
		case '\\':
			j++
		case '\n', '\r', '\f':
			return j
		}
	}
	return len(s)
}

// stringContentEnd is where the content of the string opening at i and
// ending before end stops: before the closing quote if there is one.
func stringContentEnd[T ~string | ~[]byte](s T, i, end int) int {
	if end > i+1 && end <= len(s) && s[end-1] == s[i] {
		return end - 1
	}
	return end
}

func skipComment[T ~string | ~[]byte](s T, i int) int {
	for j := i + 2; j+1 < len(s); j++ {
		if s[j] == '*' && s[j+1] == '/' {
			return j + 2
		}
	}
	return len(s)
}

func skipSpaceAndComments[T ~string | ~[]byte](s T, i int) int {
	for {
		i = skipSpace(s, i, len(s))
		if i+1 < len(s) && s[i] == '/' && s[i+1] == '*' {
			i = skipComment(s, i)
			continue
		}
		return i
	}
}

// hasPrefixFold reports whether s[i:] starts with the lower-case ASCII
// word, ignoring case.
func hasPrefixFold[T ~string | ~[]byte](s T, i int, word string) bool {
	if i+len(word) > len(s) {
		return false
	}
	for k := 0; k < len(word); k++ {
		if lower(s[i+k]) != word[k] {
			return false
		}
	}
	return true
}

// identByteBefore reports whether s[i] continues an identifier, so that
// "myurl(" is not mistaken for "url(".
func identByteBefore[T ~string | ~[]byte](s T, i int) bool {
	return i > 0 && isIdentByte(s[i-1])
}

func identByteAt[T ~string | ~[]byte](s T, i int) bool {
	return i < len(s) && isIdentByte(s[i])
}

func isIdentByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '_' || c == '\\' || c >= 0x80
}

// Stylesheet finds every url(...) and @import in a CSS file, each on the
// line its url( token or @import string starts on. The links carry tag
// "css"; an @import is a stylesheet with attribute "@import" (it is read
// for its own url()s), any other url() a resource with none.
func Stylesheet(css []byte) []Link {
	refs := cssURLs(css, nil)
	lines := newLineCounter(css)
	links := make([]Link, 0, len(refs))
	for _, r := range refs {
		u := css[r.url.start:r.url.end]
		if bytes.IndexByte(u, 0) >= 0 {
			u = bytes.ReplaceAll(u, []byte{0}, []byte("\uFFFD"))
		}
		if a, b := trimSpan(u, 0, len(u)); a < b {
			l := Link{URL: string(u[a:b]), Line: lines.at(r.tok), Tag: "css", Kind: KindResource}
			if r.imported {
				l.Attr, l.Kind = importAttr, KindStylesheet
			}
			links = append(links, l)
		}
	}
	return links
}
