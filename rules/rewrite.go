package rules

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// DefaultDropParams returns the query (and ;path) parameters dropped
// before dedupe when the configuration names none: click trackers,
// campaign tags and session ids, which change the URL but not the
// resource. Globs, matched without regard to case.
func DefaultDropParams() []string {
	return []string{
		"utm_*", "fbclid", "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "msclkid",
		"yclid", "twclid", "ttclid", "li_fat_id", "igshid", "mc_cid", "mc_eid",
		"_ga", "_gl", "_hsenc", "_hsmi", "__hssc", "__hstc", "__hsfp", "mkt_tok",
		"jsessionid", "phpsessid", "aspsessionid*", "sessionid", "session_id", "cfid", "cftoken",
	}
}

// Step is one rewrite that changed a URL, for explain.
type Step struct {
	Rewrite       string // which rewrite, for people
	Before, After string
}

// maxUnwrap bounds how many redirect services are peeled off one URL.
const maxUnwrap = 5

type rewriter struct {
	unwrap  []unwrapRule
	regex   []regexRewrite
	aliases map[string]origin // scheme://host[:port] -> canonical origin
	// dropNames are the drop_params without a wildcard, matched whole;
	// drop are the others. Most are plain names (28 of the 30 defaults):
	// a regexp each cost New 30 compilations, and each query parameter 30
	// matches.
	dropNames  map[string]bool
	drop       []*regexp.Regexp
	stripIndex bool
	collapse   bool
	sessions   bool // drop parameters and path segments that carry a session id
}

type unwrapRule struct {
	desc  string
	host  *regexp.Regexp // nil: any host
	path  *regexp.Regexp
	param string
}

type regexRewrite struct {
	desc    string
	re      *regexp.Regexp
	replace string
}

type origin struct{ scheme, host string }

func (o origin) String() string { return o.scheme + "://" + o.host }

// maxRounds bounds how often the rewrites run over a URL until it stops
// changing: one rewrite can make another apply (a collapsed path that now
// matches an unwrap pattern), and the crawler decides the result again.
const maxRounds = 4

// apply runs the rewrites in order on the canonical URL c, again while a
// round changes it, and returns the canonical result; rec, when not nil,
// receives each step that changed it.
func (rw *rewriter) apply(c *url.URL, rec *[]Step) *url.URL {
	for range maxRounds {
		next, changed := rw.round(c, rec)
		if !changed {
			break
		}
		c = next
	}
	return c
}

func (rw *rewriter) round(c *url.URL, rec *[]Step) (*url.URL, bool) {
	changed := false
	note := func(what string, before, after *url.URL) {
		changed = true
		if rec != nil {
			*rec = append(*rec, Step{Rewrite: what, Before: before.String(), After: after.String()})
		}
	}
	for range maxUnwrap {
		next, what := rw.unwrapOnce(c)
		if next == nil {
			break
		}
		note(what, c, next)
		c = next
	}
	for _, r := range rw.regex {
		s := c.String()
		if !r.re.MatchString(s) {
			continue
		}
		out := r.re.ReplaceAllString(s, r.replace)
		u, err := Resolve(nil, out)
		if err != nil || out == s {
			continue
		}
		next := Canonicalize(u)
		note(r.desc, c, next)
		c = next
	}
	if o, ok := rw.aliases[c.Scheme+"://"+c.Host]; ok {
		next := *c
		next.Scheme, next.Host = o.scheme, o.host
		note("alias "+c.Scheme+"://"+c.Host+" = "+o.String(), c, &next)
		c = &next
	}
	if len(rw.dropNames) > 0 || len(rw.drop) > 0 || rw.sessions {
		if next, dropped := rw.dropParams(c); next != nil {
			note("drop_params ("+strings.Join(dropped, ", ")+")", c, next)
			c = next
		}
	}
	if rw.stripIndex {
		if next := stripIndex(c); next != nil {
			note("strip_index", c, next)
			c = next
		}
	}
	if rw.collapse {
		if next := collapseSlashes(c); next != nil {
			note("collapse_slashes", c, next)
			c = next
		}
	}
	return c, changed
}

// unwrapOnce returns the target of a redirect-service URL, or nil.
func (rw *rewriter) unwrapOnce(c *url.URL) (*url.URL, string) {
	if c.RawQuery == "" {
		return nil, ""
	}
	for _, r := range rw.unwrap {
		if r.host != nil && !r.host.MatchString(c.Hostname()) || !r.path.MatchString(c.Path) {
			continue
		}
		target := queryValue(c.RawQuery, r.param)
		if target == "" {
			continue
		}
		u, err := Resolve(c, target)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			continue
		}
		return Canonicalize(u), r.desc
	}
	return nil, ""
}

// queryValue returns the first value of name in a raw query, decoded.
func queryValue(raw, name string) string {
	for part := range strings.SplitSeq(raw, "&") {
		k, v, _ := strings.Cut(part, "=")
		if key, err := url.QueryUnescape(k); err != nil || key != name {
			continue
		}
		if v, err := url.QueryUnescape(v); err == nil {
			return v
		}
	}
	return ""
}

// dropParams removes the matching query parameters and ;parameters of path
// segments (…/page;jsessionid=…), keeping the order of the rest. It returns
// nil when nothing matched, and the names it dropped.
func (rw *rewriter) dropParams(c *url.URL) (*url.URL, []string) {
	var dropped []string
	query := rw.filterParams(c.RawQuery, "&", &dropped)
	qChanged := len(dropped) > 0
	// The path's escaped form decodes to c.Path, so it holds "))",
	// "%29%29" or a ';' only if c.Path holds "))" or a ';': most paths
	// hold neither, and are not read twice more for nothing.
	if !qChanged && !strings.Contains(c.Path, "))") && strings.IndexByte(c.Path, ';') < 0 {
		return nil, nil
	}
	path := c.EscapedPath()
	pChanged := false
	if rw.sessions && (strings.Contains(path, "))") || strings.Contains(path, "%29%29")) {
		if p, n := dropCookielessSessions(path); n > 0 {
			path, pChanged = p, true
			dropped = append(dropped, "session id segment")
		}
	}
	if strings.IndexByte(path, ';') >= 0 {
		segs := strings.Split(path, "/")
		for i, s := range segs {
			if first, params, ok := strings.Cut(s, ";"); ok {
				n := len(dropped)
				kept := rw.filterParams(params, ";", &dropped)
				if len(dropped) > n {
					pChanged = true
					segs[i] = first
					if kept != "" {
						segs[i] += ";" + kept
					}
				}
			}
		}
		path = strings.Join(segs, "/")
	}
	if !qChanged && !pChanged {
		return nil, nil
	}
	next := *c
	next.RawQuery = query
	if pChanged {
		setEscapedPath(&next, path)
	}
	return &next, dropped
}

// filterParams drops the matching parameters of raw (separated by sep)
// and appends their names to dropped.
func (rw *rewriter) filterParams(raw, sep string, dropped *[]string) string {
	if raw == "" || !rw.anyDropped(raw, sep) {
		return raw
	}
	parts := strings.Split(raw, sep)
	kept := parts[:0]
	for _, p := range parts {
		name, value, _ := strings.Cut(p, "=")
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		lower := strings.ToLower(name)
		if rw.dropped(lower) {
			*dropped = append(*dropped, name)
		} else if rw.sessions && sessionName(lower) && sessionValue(value) {
			*dropped = append(*dropped, name+" (session id)")
		} else {
			kept = append(kept, p)
		}
	}
	if len(kept) == len(parts) {
		return raw
	}
	return strings.Join(kept, sep)
}

// anyDropped is filterParams' allocation-free look ahead for the common
// query that has nothing to drop.
func (rw *rewriter) anyDropped(raw, sep string) bool {
	for p := range strings.SplitSeq(raw, sep) {
		name, _, _ := strings.Cut(p, "=")
		if strings.ContainsAny(name, "%+ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
			return true // decoding or lower-casing needed: let filterParams decide
		}
		if rw.dropped(name) || rw.sessions && sessionName(name) {
			return true
		}
	}
	return false
}

// sessionName says whether a parameter name (lower case) is one that
// servers put session ids in. Names that only sometimes carry one, such
// as sid (a story id on some sites), are dropped only with a value that
// looks like a session id.
func sessionName(name string) bool {
	switch name {
	case "sid", "sess", "session", "ssid", "sessid", "s_id":
		return true
	}
	return strings.Contains(name, "sessid") || strings.Contains(name, "sessionid") ||
		strings.Contains(name, "session_id") || strings.Contains(name, "sess_id")
}

// sessionValue says whether a raw parameter value looks like a session id
// rather than a word or a number: at least 16 letters and digits (and - or
// _), with both letters and digits in it, as random tokens have.
func sessionValue(v string) bool {
	if len(v) < 16 {
		return false
	}
	letters, digits := false, false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case '0' <= c && c <= '9':
			digits = true
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			letters = true
		case c == '-' || c == '_':
		default:
			return false
		}
	}
	return letters && digits
}

// cookieless matches the path segment in which ASP.NET keeps a session id
// when cookies are off: /(S(lit3py55t21z5v55vlm25s55))/page.aspx.
var cookieless = regexp.MustCompile(`^\((?:[A-Za-z]\([A-Za-z0-9_-]*\))+\)$`)

// dropCookielessSessions removes cookieless session segments from an
// escaped path, returning how many it removed.
func dropCookielessSessions(path string) (string, int) {
	segs := strings.Split(path, "/")
	kept := segs[:0]
	for _, s := range segs {
		if u, err := url.PathUnescape(s); err == nil && cookieless.MatchString(u) {
			continue
		}
		kept = append(kept, s)
	}
	n := len(segs) - len(kept)
	return strings.Join(kept, "/"), n
}

func (rw *rewriter) dropped(name string) bool {
	if rw.dropNames[name] {
		return true
	}
	for _, g := range rw.drop {
		if g.MatchString(name) {
			return true
		}
	}
	return false
}

func stripIndex(c *url.URL) *url.URL {
	p := c.EscapedPath()
	i := strings.LastIndexByte(p, '/')
	if last := p[i+1:]; last != "index.html" && last != "index.htm" {
		return nil
	}
	next := *c
	setEscapedPath(&next, p[:i+1])
	return &next
}

func collapseSlashes(c *url.URL) *url.URL {
	p := c.EscapedPath()
	if !strings.Contains(p, "//") {
		return nil
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '/' && i > 0 && p[i-1] == '/' {
			continue
		}
		b.WriteByte(p[i])
	}
	next := *c
	setEscapedPath(&next, b.String())
	return &next
}

// setEscapedPath sets an already canonical escaped path.
func setEscapedPath(u *url.URL, escaped string) {
	u.RawPath = escaped
	if p, err := url.PathUnescape(escaped); err == nil {
		u.Path = p
	}
}

// compileUnwrap reads a redirect-service pattern: "[host glob or
// scheme://host]/path glob?param=", e.g. "/go/?url=" (any host) or
// "out.example.com/r?to=".
func compileUnwrap(pattern string) (unwrapRule, error) {
	left, param, ok := strings.Cut(pattern, "?")
	name, ok2 := strings.CutSuffix(param, "=")
	if !ok || !ok2 || name == "" || strings.ContainsAny(name, "&=?#") {
		return unwrapRule{}, errors.New(`want "[host]/path?param=", e.g. "/go/?url="`)
	}
	r := unwrapRule{desc: "unwrap " + pattern, param: name}
	if _, rest, ok := strings.Cut(left, "://"); ok {
		left = rest
	}
	slash := strings.IndexByte(left, '/')
	if slash < 0 {
		return unwrapRule{}, errors.New(`the path must start with "/", e.g. "/go/?url="`)
	}
	if host := left[:slash]; host != "" {
		re, err := compileHostGlob(host)
		if err != nil {
			return unwrapRule{}, fmt.Errorf("host %q: %w", host, err)
		}
		r.host = re
	}
	re, err := compileGlob(left[slash:], '/')
	if err != nil {
		return unwrapRule{}, fmt.Errorf("path %q: %w", left[slash:], err)
	}
	r.path = re
	return r, nil
}

// compileHostGlob lower-cases a host glob and turns its international
// labels into punycode, so it compares with canonical hosts.
func compileHostGlob(glob string) (*regexp.Regexp, error) {
	glob = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(glob)), ".")
	if !isASCII(glob) {
		labels := strings.Split(glob, ".")
		for i, l := range labels {
			if !isASCII(l) && !strings.ContainsAny(l, "*?[]\\") {
				a, err := punycode.ToASCII(l)
				if err != nil {
					return nil, fmt.Errorf("label %q: %w", l, err)
				}
				labels[i] = a
			}
		}
		glob = strings.Join(labels, ".")
	}
	return compileGlob(glob, 0)
}

// parseOrigin reads "scheme://host[:port]" (nothing after the host) into
// its canonical form.
func parseOrigin(s string) (origin, error) {
	u, err := Resolve(nil, s)
	if err != nil {
		return origin{}, err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return origin{}, errors.New(`want an origin such as "https://example.com"`)
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return origin{}, errors.New(`want an origin (scheme and host only), such as "https://example.com"`)
	}
	c := Canonicalize(u)
	return origin{c.Scheme, c.Host}, nil
}
