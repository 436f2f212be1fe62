package rules

import (
	"errors"
	"net/netip"
	"net/url"
	"regexp"
	"strings"

	"golang.org/x/net/idna"
)

// Resolve parses ref (an attribute value as written in a page) relative to
// base, the way a browser does: leading and trailing C0 controls and spaces
// are trimmed, tabs and newlines inside are removed, and in http(s) and file
// URLs a backslash before the query counts as a slash. A reference that
// cannot be parsed, or an http(s) URL without a host, is an error (the
// crawler reports it as "invalid URL"). base may be nil when ref is absolute.
func Resolve(base *url.URL, ref string) (*url.URL, error) {
	ref = cleanRef(ref)
	if u := resolvePlain(base, ref); u != nil {
		return u, nil
	}
	return resolve(base, ref)
}

// resolve is Resolve for a reference cleanRef has cleaned.
func resolve(base *url.URL, ref string) (*url.URL, error) {
	scheme, rest, hasScheme := splitScheme(ref)
	effective := scheme
	if !hasScheme && base != nil {
		effective = base.Scheme
	}
	if special(effective) && strings.IndexByte(ref, '\\') >= 0 {
		ref = slashBackslashes(ref)
		if hasScheme {
			rest = ref[len(scheme)+1:]
		}
	}
	if !hasScheme && colonInFirstSegment(ref) {
		// "Help_talk:Contents.html" names no scheme (a scheme is a letter,
		// then letters, digits, "+", "-", "."): browsers read it as a path
		// relative to the page, where url.Parse refuses a colon in the
		// first segment of a relative reference (qa8 U1).
		ref = "./" + ref
	}
	if hasScheme && (scheme == "http" || scheme == "https") && !strings.HasPrefix(rest, "//") {
		// "http:foo" is relative to a base of the same scheme and names
		// the host foo otherwise, as in browsers.
		if base != nil && base.Scheme == scheme {
			ref = rest
		} else {
			ref = scheme + "://" + strings.TrimLeft(rest, "/")
		}
	}
	r, err := url.Parse(escapeStrayPercentsOutsideQuery(ref))
	if err != nil {
		return nil, unwrapURLError(err)
	}
	if !r.IsAbs() {
		if base == nil {
			return nil, errors.New("relative URL without a base")
		}
		frag, rawFrag := r.Fragment, r.RawFragment
		r = base.ResolveReference(r)
		// RFC 3986 5.2.2: the fragment is always the reference's own, even
		// when it is empty (ResolveReference keeps the base's then).
		r.Fragment, r.RawFragment = frag, rawFrag
	}
	if (r.Scheme == "http" || r.Scheme == "https") && r.Host == "" {
		return nil, errors.New("missing host")
	}
	return r, nil
}

// resolvePlain is resolve for the reference pages write most, a path of
// plain characters (letters, digits, "-._~/") with at most a plain
// fragment, on a page of an http(s) URL: the path joined to the page's
// directory (up one for each leading "../") is the URL's path when neither
// has a dot segment left, and nothing needs parsing or escaping. It returns nil for any other reference, or
// base, which resolve then reads. Parsing the reference and
// ResolveReference were a third of the CPU a link that missed the crawler's
// cache cost. FuzzResolvePlain holds it to resolve.
func resolvePlain(base *url.URL, ref string) *url.URL {
	if base == nil || base.Host == "" || base.Opaque != "" || base.Scheme != "http" && base.Scheme != "https" {
		return nil
	}
	path, frag, _ := strings.Cut(ref, "#")
	if path == "" || !plainChars(frag, false) {
		return nil
	}
	full := path
	if path[0] != '/' {
		dir := base.EscapedPath()
		dir = dir[:strings.LastIndexByte(dir, '/')+1]
		if dir == "" {
			return nil
		}
		// Leading "./" and "../" segments, as relative links write them,
		// stay on the directory or go up one, never above the root.
		for {
			if rest, ok := strings.CutPrefix(path, "./"); ok {
				path = rest
			} else if rest, ok := strings.CutPrefix(path, "../"); ok {
				path = rest
				if len(dir) > 1 {
					dir = dir[:strings.LastIndexByte(dir[:len(dir)-1], '/')+1]
				}
			} else {
				break
			}
		}
		if path == "" || path[0] == '/' {
			return nil
		}
		full = dir + path
	}
	if full[0] != '/' || strings.HasPrefix(full, "//") || !plainChars(full, true) || hasDotSegment(full) {
		return nil
	}
	return &url.URL{Scheme: base.Scheme, User: base.User, Host: base.Host, Path: full, Fragment: frag}
}

// plainChars says whether s has only unreserved characters, and "/" when
// slash is set: none of them is escaped in a path or a fragment, or is
// read as anything but itself.
func plainChars(s string, slash bool) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !unreservedChars[c] && (c != '/' || !slash) {
			return false
		}
	}
	return true
}

// Scheme is the scheme a reference is written with, lower-cased, read as
// Resolve reads it; "" for a relative reference. A resolved URL cannot tell
// file:///x written in a page from /x resolved against a file: page.
func Scheme(ref string) string {
	scheme, _, _ := splitScheme(cleanRef(ref))
	return scheme
}

// escapeStrayPercents writes a "%" that does not start an escape ("#%_sec",
// "100%") as "%25". Browsers follow such a URL (the WHATWG URL parser keeps
// the "%"), so it is no invalid URL; it is sent escaped, which is the only
// way to send a literal "%".
func escapeStrayPercents(s string) string {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s
	}
	var b strings.Builder
	for ; i >= 0; i = strings.IndexByte(s, '%') {
		b.WriteString(s[:i+1])
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			b.WriteString("25")
		}
		s = s[i+1:]
	}
	b.WriteString(s)
	return b.String()
}

// escapeStrayPercentsOutsideQuery is escapeStrayPercents on all of ref
// but its query: a query is sent as it is written, a stray "%" too, as
// browsers send it ("?q=100%", qa11 §6), and url.Parse takes it so.
// A path cannot be: url.Parse refuses it, and the URL's key must parse.
func escapeStrayPercentsOutsideQuery(ref string) string {
	h := strings.IndexByte(ref, '#')
	if h < 0 {
		h = len(ref)
	}
	q := strings.IndexByte(ref[:h], '?')
	if q < 0 {
		return escapeStrayPercents(ref)
	}
	return escapeStrayPercents(ref[:q]) + ref[q:h] + escapeStrayPercents(ref[h:])
}

// asWritten undoes escapeStrayPercents on a canonical URL, so a pattern a
// person wrote from the page's source ("%_sec") matches it too.
func asWritten(key string) string {
	if !strings.Contains(key, "%25") {
		return key
	}
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		if strings.HasPrefix(key[i:], "%25") && (i+4 >= len(key) || !isHex(key[i+3]) || !isHex(key[i+4])) {
			b.WriteByte('%')
			i += 2
			continue
		}
		b.WriteByte(key[i])
	}
	return b.String()
}

// matchAsWritten says whether re matches the URL key, canonical or as
// written (see asWritten).
func matchAsWritten(re *regexp.Regexp, key string) bool {
	if re.MatchString(key) {
		return true
	}
	w := asWritten(key)
	return w != key && re.MatchString(w)
}

// unwrapURLError drops the "parse <whole URL>:" prefix of url.Error: the
// caller already shows the URL next to the error.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// cleanRef trims leading and trailing C0 controls and spaces and removes
// tab, CR and LF inside, without allocating in the common clean case.
func cleanRef(s string) string {
	start, end := 0, len(s)
	for start < end && s[start] <= ' ' {
		start++
	}
	for end > start && s[end-1] <= ' ' {
		end--
	}
	s = s[start:end]
	if strings.IndexAny(s, "\t\r\n") < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != '\t' && c != '\r' && c != '\n' {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// splitScheme returns the lower-cased scheme of an absolute reference and
// what follows its colon.
func splitScheme(s string) (scheme, rest string, ok bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.':
			if i == 0 {
				return "", s, false
			}
		case c == ':':
			if i == 0 {
				return "", s, false
			}
			return strings.ToLower(s[:i]), s[i+1:], true
		default:
			return "", s, false
		}
	}
	return "", s, false
}

// colonInFirstSegment says whether ref has a ":" before any "/", "?" or
// "#".
func colonInFirstSegment(ref string) bool {
	i := strings.IndexAny(ref, ":/?#")
	return i >= 0 && ref[i] == ':'
}

// special reports the schemes in which browsers read a backslash as a slash.
func special(scheme string) bool {
	return scheme == "http" || scheme == "https" || scheme == "file"
}

func slashBackslashes(s string) string {
	end := strings.IndexAny(s, "?#")
	if end < 0 {
		end = len(s)
	}
	return strings.ReplaceAll(s[:end], `\`, "/") + s[end:]
}

// Canonicalize returns the canonical form of u as a new URL (u is not
// modified): scheme and host lower-cased, the default port dropped, a
// trailing dot of the host dropped, an IDN host in punycode, IPv6 literals
// in their short form, dot segments removed, percent-encoding normalised
// (upper-case hex, unreserved characters decoded, characters RFC 3986 does
// not allow escaped), an empty path as "/", an empty query dropped (a
// file: URL's query too, since a file has none) and the fragment removed. The order of query parameters is kept: it can matter to
// the server. Opaque URLs (mailto:, javascript:, ...) only lose their
// fragment and get a lower-case scheme.
func Canonicalize(u *url.URL) *url.URL {
	c := *u
	c.Scheme = lowerASCII(c.Scheme) // url.Parse takes only ASCII schemes
	c.Fragment, c.RawFragment = "", ""
	if c.Opaque != "" {
		return &c
	}
	c.Host = canonicalHost(c.Scheme, c.Host)
	path := normalizeEscapes(escapedPath(u), pathChars, false)
	path = removeDotSegments(path)
	if path == "" && (c.Host != "" || special(c.Scheme)) {
		path = "/"
	}
	if c.Host == "" && strings.HasPrefix(path, "//") {
		// Without "//" before it, the path's first segment would read
		// as a host.
		c.OmitHost = false
	}
	c.RawPath = path
	if strings.IndexByte(path, '%') < 0 {
		c.Path = path // what PathUnescape returns, without a second read
	} else if p, err := url.PathUnescape(path); err == nil {
		c.Path = p
	}
	c.RawQuery = normalizeEscapes(c.RawQuery, queryChars, true)
	if c.Scheme == "file" {
		// A file has no query: a built site's cache-buster (style.css?v=3,
		// ./?lang=en) names the same file a static host would serve.
		c.RawQuery = ""
	}
	c.ForceQuery = false
	return &c
}

// canonicalString is c.String(), for any c, and is meant for the canonical
// URL of each link (see Canonicalize): for an http(s) URL with a plain host
// and no user or fragment, as nearly every link's is, it skips the cases
// url.URL's String looks for in vain, which made String a fifth of deciding
// a link. FuzzResolveCanonicalize holds the two to each other.
func canonicalString(c *url.URL) string {
	if c.Opaque != "" || c.User != nil || c.Fragment != "" || c.ForceQuery || !plainHostPort(c.Host) ||
		(c.Scheme != "http" && c.Scheme != "https") {
		return c.String()
	}
	path := c.Path
	if (c.RawPath != "" && c.RawPath != c.Path) || !plainPath(path) {
		path = c.EscapedPath()
	}
	if !strings.HasPrefix(path, "/") {
		return c.String()
	}
	var b strings.Builder
	b.Grow(len(c.Scheme) + 3 + len(c.Host) + len(path) + 1 + len(c.RawQuery))
	b.WriteString(c.Scheme)
	b.WriteString("://")
	b.WriteString(c.Host)
	b.WriteString(path)
	if c.RawQuery != "" {
		b.WriteByte('?')
		b.WriteString(c.RawQuery)
	}
	return b.String()
}

// plainHostPort says whether h is a non-empty host[:port] of lower-case
// letters, digits, dots, dashes and colons, which url.URL's String writes
// as it is.
func plainHostPort(h string) bool {
	for i := 0; i < len(h); i++ {
		if c := h[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == ':') {
			return false
		}
	}
	return h != ""
}

// plainPath says whether p is a path that url.URL's EscapedPath returns as
// it is, whether RawPath is p or empty: it has only the bytes that Go never
// escapes in a path (so no '%', nor the "*" EscapedPath keeps apart). A
// canonical path without escapes, as most are, then needs no more reads.
func plainPath(p string) bool {
	for i := 0; i < len(p); i++ {
		if !plainPathChars[p[i]] {
			return false
		}
	}
	return true
}

// escapedPath is u.EscapedPath, except that it keeps the path as written
// (with its %2F, say) even when it has characters Go would escape, which
// normalizeEscapes escapes anyway.
func escapedPath(u *url.URL) string {
	if u.RawPath != "" {
		if p, err := url.PathUnescape(u.RawPath); err == nil && p == u.Path {
			return u.RawPath
		}
	}
	return u.EscapedPath()
}

var punycode = idna.New(idna.MapForLookup(), idna.Transitional(false), idna.StrictDomainName(false))

// canonicalHost lower-cases host[:port], converts an international name
// to punycode, drops trailing dots and the scheme's default port.
func canonicalHost(scheme, hostport string) string {
	if hostport == "" {
		return ""
	}
	host, port := splitHostPort(hostport)
	switch {
	case strings.HasPrefix(host, "["):
		if a, err := netip.ParseAddr(host[1 : len(host)-1]); err == nil {
			host = "[" + a.String() + "]"
		} else {
			host = strings.ToLower(host)
		}
	case isASCII(host):
		host = lowerASCII(host)
	default:
		// Lower-case first: the lookup mapping accepts some upper-case
		// letters only in their lower-case form, and a host that stays
		// Unicode must still be the same after a second round.
		host = strings.ToLower(host)
		if a, err := punycode.ToASCII(host); err == nil && plainHost(a) {
			host = a
		}
	}
	if strings.HasSuffix(host, ".") {
		host = strings.TrimRight(host, ".")
	}
	if allDigits(port) {
		port = strings.TrimLeft(port, "0")
	}
	if port == "" || port == defaultPort(scheme) {
		return host
	}
	if len(hostport) == len(host)+1+len(port) && hostport[:len(host)] == host && hostport[len(host)] == ':' && hostport[len(host)+1:] == port {
		return hostport // already canonical: no copy for every link to it
	}
	return host + ":" + port
}

// splitHostPort splits what url.Parse leaves in Host at the first colon
// outside brackets; unlike net.SplitHostPort it accepts a missing port and
// an empty one ("host:").
func splitHostPort(hostport string) (host, port string) {
	if strings.HasPrefix(hostport, "[") {
		if end := strings.IndexByte(hostport, ']'); end >= 0 {
			host, rest := hostport[:end+1], hostport[end+1:]
			if strings.HasPrefix(rest, ":") {
				return host, rest[1:]
			}
			return host, ""
		}
		return hostport, ""
	}
	if i := strings.IndexByte(hostport, ':'); i >= 0 {
		return hostport[:i], hostport[i+1:]
	}
	return hostport, ""
}

// plainHost reports whether h has only the characters of a DNS name (the
// lenient IDNA profile can map a character to a space, say).
func plainHost(h string) bool {
	for i := 0; i < len(h); i++ {
		if c := h[i]; !unreservedChars[c] {
			return false
		}
	}
	return h != ""
}

func defaultPort(scheme string) string {
	switch scheme {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// lowerASCII avoids strings.ToLower's allocation when s is already lower case.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

// charSet is a byte class as a lookup table.
type charSet [256]bool

func newCharSet(chars string) *charSet {
	var s charSet
	for i := 0; i < len(chars); i++ {
		s[chars[i]] = true
	}
	return &s
}

// Character classes for normalizeEscapes: which bytes may stay as they are.
const (
	unreservedBytes = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~"
	subDelimBytes   = "!$&'()*+,;="
)

var (
	unreservedChars = newCharSet(unreservedBytes)
	pathChars       = newCharSet(unreservedBytes + subDelimBytes + ":@/")
	queryChars      = newCharSet(unreservedBytes + subDelimBytes + ":@/?")
	// plainPathChars are the bytes url.URL never escapes in a path.
	plainPathChars = newCharSet(unreservedBytes + "$&+,;=:@/")
)

// normalizeEscapes rewrites s so that every %XX has upper-case hex, escapes
// of unreserved characters are decoded, and every byte outside allowed
// (and every '%' that starts no valid escape) is escaped. Escapes of
// reserved characters stay escaped: %2F and / mean different things.
// With stray, a '%' that starts no valid escape is kept as it is, as
// browsers keep it in a query: "%25zz" and "%zz" are two requests.
func normalizeEscapes(s string, allowed *charSet, stray bool) string {
	if cleanEscapes(s, allowed, stray) {
		return s
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			d := unhex(s[i+1])<<4 | unhex(s[i+2])
			i += 2
			if unreservedChars[d] {
				b.WriteByte(d)
			} else {
				b.WriteByte('%')
				b.WriteByte(hex[d>>4])
				b.WriteByte(hex[d&15])
			}
			continue
		}
		if (c != '%' && allowed[c]) || (c == '%' && stray) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// cleanEscapes reports whether normalizeEscapes would return s unchanged,
// which is the common case and costs no allocation.
func cleanEscapes(s string, allowed *charSet, stray bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' {
			if stray && (i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2])) {
				continue
			}
			if i+2 >= len(s) || !isUpperHex(s[i+1]) || !isUpperHex(s[i+2]) {
				return false
			}
			if unreservedChars[unhex(s[i+1])<<4|unhex(s[i+2])] {
				return false
			}
			i += 2
			continue
		}
		if !allowed[c] {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isUpperHex(c byte) bool {
	return '0' <= c && c <= '9' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// removeDotSegments applies RFC 3986 section 5.2.4 to an escaped path
// (escapes of '.' are already decoded, so %2E counts as a dot, as in
// browsers).
func removeDotSegments(p string) string {
	if !hasDotSegment(p) {
		return p
	}
	abs := strings.HasPrefix(p, "/")
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	joined := strings.Join(out, "/")
	if abs {
		return "/" + joined
	}
	return joined
}

func hasDotSegment(p string) bool {
	for i := 0; i < len(p); i++ {
		if p[i] != '.' || (i > 0 && p[i-1] != '/') {
			continue
		}
		j := i + 1
		if j < len(p) && p[j] == '.' {
			j++
		}
		if j == len(p) || p[j] == '/' {
			return true
		}
	}
	return false
}

// LinkedFragment is u's fragment as a browser's URL holds it: as written,
// with only controls, spaces, ", <, >, ` and non-ASCII bytes
// percent-encoded (WHATWG URL's fragment percent-encode set). It is what
// HTML compares with ids, before it tries the percent-decoded form: a link
// to #%5eup does not reach id="%5Eup", nor #%25%3D name="%25=" (qa10 Q2),
// so the decoded form Go's url.URL keeps is not enough.
func LinkedFragment(u *url.URL) string {
	written := u.RawFragment
	if written == "" {
		written = u.EscapedFragment()
	}
	for i := 0; i < len(written); i++ {
		if inFragmentEncodeSet(written[i]) {
			return encodeFragment(written)
		}
	}
	return written
}

func inFragmentEncodeSet(b byte) bool {
	return b <= ' ' || b >= 0x7f || b == '"' || b == '<' || b == '>' || b == '`'
}

func encodeFragment(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		if c := s[i]; inFragmentEncodeSet(c) {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}
