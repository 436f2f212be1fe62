package extract

// RefreshHeaderTag and RefreshHeaderAttr are the Link.Tag and Link.Attr of
// the URL a page's Refresh response header names (see RefreshHeader). It
// has no line in the body: its Line is 0.
const (
	RefreshHeaderTag  = "http-header"
	RefreshHeaderAttr = "refresh"
)

// RefreshHeader is the URL a Refresh response header names ("0; url=/next"),
// which browsers follow as they follow a <meta http-equiv=refresh> of the
// same content: the HTML standard runs the same shared declarative refresh
// steps on both. ok is false when it names none.
func RefreshHeader(v string) (u string, ok bool) {
	start, end, ok := refreshURL(v)
	if !ok {
		return "", false
	}
	return v[start:end], true
}

// refreshURL finds the URL in the content of a <meta http-equiv=refresh>,
// following the HTML standard's "shared declarative refresh steps":
// "5; url=/next", "0;URL='/next'", "3, /next" and "1 /next" all name /next.
// ok is false when there is no URL (a plain "5" reloads the page itself) or
// the content is malformed.
func refreshURL[T ~string | ~[]byte](s T) (start, end int, ok bool) {
	i := skipSpace(s, 0, len(s))
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	if j == i && (j >= len(s) || s[j] != '.') {
		return 0, 0, false
	}
	for j < len(s) && (isDigit(s[j]) || s[j] == '.') {
		j++
	}
	if j >= len(s) || !(s[j] == ';' || s[j] == ',' || isSpace(s[j])) {
		return 0, 0, false
	}
	j = skipSpace(s, j, len(s))
	if j < len(s) && (s[j] == ';' || s[j] == ',') {
		j = skipSpace(s, j+1, len(s))
	}
	if j >= len(s) {
		return 0, 0, false
	}
	start = j
	if k, ok := afterURLEquals(s, j); ok {
		start = k
	}
	end = len(s)
	if start < len(s) && (s[start] == '"' || s[start] == '\'') {
		q := s[start]
		start++
		for k := start; k < len(s); k++ {
			if s[k] == q {
				end = k
				break
			}
		}
	}
	start, end = trimSpan(s, start, end)
	return start, end, start < end
}

// afterURLEquals matches `url\s*=\s*` at j and returns where the value
// starts. Anything short of the "=" ("5; url", "5; uhoh.html") is part of
// the URL.
func afterURLEquals[T ~string | ~[]byte](s T, j int) (int, bool) {
	if j+3 > len(s) || lower(s[j]) != 'u' || lower(s[j+1]) != 'r' || lower(s[j+2]) != 'l' {
		return j, false
	}
	k := skipSpace(s, j+3, len(s))
	if k >= len(s) || s[k] != '=' {
		return j, false
	}
	return skipSpace(s, k+1, len(s)), true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// trimSpan narrows s[start:end] to exclude leading and trailing ASCII white
// space.
func trimSpan[T ~string | ~[]byte](s T, start, end int) (int, int) {
	for start < end && isSpace(s[start]) {
		start++
	}
	for end > start && isSpace(s[end-1]) {
		end--
	}
	return start, end
}
