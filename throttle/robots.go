package throttle

import (
	"bytes"
	"strings"
	"time"

	"github.com/temoto/robotstxt"
)

const (
	// MaxRobotsSize is how much of a robots.txt body is parsed (RFC 9309
	// §2.5 asks for at least 500 KiB); the rest is ignored.
	MaxRobotsSize = 500 << 10
	// robotsTTL is how long a robots.txt answer is used before it is fetched
	// again (RFC 9309 §2.4: no more than 24 hours).
	robotsTTL = 24 * time.Hour
	// robotsErrorTTL is shorter: "disallow all" after a server error is a
	// stopgap, and one request an hour is a fair price for noticing that
	// the server has recovered.
	robotsErrorTTL = time.Hour
	// maxCrawlDelay bounds a Crawl-delay: a larger value is almost always a
	// typo, and the library turns values past ~292 years into negative
	// durations.
	maxCrawlDelay = time.Hour
)

// RobotsKind says how a robots.txt answer came about.
type RobotsKind string

const (
	RobotsRules       RobotsKind = "rules"        // a 2xx body, parsed
	RobotsAllowAll    RobotsKind = "allow all"    // 4xx (unavailable) or too many redirects
	RobotsDisallowAll RobotsKind = "disallow all" // 5xx, 429 or unreachable
)

// Robots is one host's robots.txt, parsed. A nil *Robots allows everything
// and asks for no delay, like a missing file.
type Robots struct {
	status int
	body   []byte // what was parsed, kept so the cache can be stored
	kind   RobotsKind
	data   *robotstxt.RobotsData
	cause  string // why the file could not be fetched, when status is 0
	// noServer: nothing answered at all (a refused connection). See
	// NoServerRobots.
	noServer bool
}

// ParseRobots turns a robots.txt response into rules following RFC 9309:
// a 2xx body is parsed (its first MaxRobotsSize bytes, every line that
// parses); 4xx means no restrictions; 3xx, which reaches here only when the
// redirect limit ran out, counts as unavailable like 4xx; 429, 5xx, any
// other status and status 0 (unreachable) disallow everything.
func ParseRobots(status int, body []byte) *Robots {
	r := &Robots{status: status}
	switch {
	case status >= 200 && status < 300:
		r.kind = RobotsRules
		r.body = capRobots(body)
		r.data = parseLenient(normalizeRobots(r.body))
	case status == 429:
		r.kind = RobotsDisallowAll
	case status >= 300 && status < 500:
		r.kind = RobotsAllowAll
	default:
		r.kind = RobotsDisallowAll
	}
	return r
}

// UnreachableRobots is the answer for a host whose robots.txt could not be
// fetched at all (status 0: a timeout, a reset connection): disallow all,
// as RFC 9309 asks, remembering why so that the URLs it holds back can be
// reported with their real cause instead of as forbidden.
func UnreachableRobots(cause string) *Robots {
	r := ParseRobots(0, nil)
	r.cause = cause
	return r
}

// NoServerRobots is the answer for a host where nothing took the
// robots.txt connection (refused): there is no server to protect, so it
// allows everything and each URL is reported for what it gets. But it is
// not the site's "no rules" (qa8 B2: a server restarting at that moment
// then had every disallowed path crawled, that pass and the next): it is
// never saved (ExportHost), and the first answer the host gives to any
// request drops it (Permit.Done), so robots.txt is asked again before the
// host's next URL.
func NoServerRobots(cause string) *Robots {
	return &Robots{kind: RobotsAllowAll, cause: cause, noServer: true}
}

// saved reports whether the answer is kept for later runs (see
// ExportState). A failure is not: RFC 9309 keeps crawlers off a failing
// host while its robots.txt cannot be read, and within a run the answer
// holds for robotsErrorTTL, but a new run asks once more before deciding
// (qa9 T12: a server fixed after a 503 was told it was failing, with no
// request, every run for an hour, a deploy check that met a restart
// included). What the failure did to the host's pace (a pause, a
// backoff) is saved with the rest of its state. Nothing listening is
// never saved either (see NoServerRobots).
func (r *Robots) saved() bool {
	return !r.noServer && !r.Failed()
}

// NoServer reports whether the answer is NoServerRobots'.
func (r *Robots) NoServer() bool {
	return r != nil && r.noServer
}

// capRobots cuts the body to MaxRobotsSize at the last line break, so a
// line cut in half is not read as a shorter rule.
func capRobots(body []byte) []byte {
	if len(body) <= MaxRobotsSize {
		return bytes.Clone(body)
	}
	cut := body[:MaxRobotsSize]
	if i := bytes.LastIndexAny(cut, "\r\n"); i >= 0 {
		cut = cut[:i+1]
	}
	return bytes.Clone(cut)
}

// normalizeRobots rewrites a robots.txt for the library, which compares
// bytes and, of rules of equal length, keeps the first: every Allow and
// Disallow path is put in the form normalizePath gives the URL's path
// (RFC 9309 §2.2.2 compares them as octets after that normalisation), and
// within each stretch between User-agent lines the Allow rules are moved
// ahead of the Disallow rules, so that an Allow rule wins a tie, as §2.2.2
// says it SHOULD. Group membership is unchanged: no rule crosses a
// User-agent line, and each line names its crawler as groupName does.
// Lines end in "\n" afterwards.
func normalizeRobots(body []byte) []byte {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	lines := strings.FieldsFunc(strings.ReplaceAll(string(body), "\r\n", "\n"), func(r rune) bool { return r == '\n' || r == '\r' })
	var allows, disallows, slots []int
	flush := func() {
		order := append(allows, disallows...)
		moved := make([]string, len(order))
		for i, j := range order {
			moved[i] = lines[j]
		}
		for i, j := range slots {
			lines[j] = moved[i]
		}
		allows, disallows, slots = allows[:0], disallows[:0], slots[:0]
	}
	for i, line := range lines {
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(key)) {
		case "user-agent", "useragent":
			flush()
			v, comment, _ := strings.Cut(value, "#")
			if strings.TrimSpace(v) != "*" {
				name := "~" // a line naming no crawler ("*bot") is no one's group
				if productToken(v) != "" {
					name = groupName(v)
				}
				lines[i] = key + ": " + name
				if comment != "" {
					lines[i] += " #" + comment
				}
			}
		case "allow":
			lines[i] = key + ":" + normalizeRule(value)
			allows, slots = append(allows, i), append(slots, i)
		case "disallow":
			lines[i] = key + ":" + normalizeRule(value)
			disallows, slots = append(disallows, i), append(slots, i)
		}
	}
	flush()
	return []byte(strings.Join(lines, "\n") + "\n")
}

// normalizeRule is normalizePath for the value of a rule line, leaving
// the blanks around it and a trailing comment alone.
func normalizeRule(value string) string {
	v, comment, hasComment := strings.Cut(value, "#")
	trimmed := strings.TrimSpace(v)
	lead := v[:strings.Index(v, trimmed)]
	out := lead + normalizePath(trimmed) + v[len(lead)+len(trimmed):]
	if hasComment {
		out += "#" + comment
	}
	return out
}

// normalizePath is the one form in which robots.txt rules and URL paths are
// compared (RFC 9309 §2.2.2): an escape of an unreserved character (%7E)
// is decoded ("~"), other escapes are kept with upper-case hex digits (so
// %2F stays distinct from "/"), and octets outside printable ASCII are
// percent-encoded (a rule written "/café" is "/caf%C3%A9", the UTF-8 the
// URL is sent in).
func normalizePath(p string) string {
	i := 0
	for i < len(p) && p[i] != '%' && p[i] > ' ' && p[i] < 0x7f {
		i++
	}
	if i == len(p) {
		return p // the common case: nothing to change, nothing allocated
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(p) + 8)
	b.WriteString(p[:i])
	for ; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '%' && i+2 < len(p) && isHex(p[i+1]) && isHex(p[i+2]):
			v := unhex(p[i+1])<<4 | unhex(p[i+2])
			if isUnreserved(v) {
				b.WriteByte(v)
			} else {
				b.WriteByte('%')
				b.WriteByte(hex[v>>4])
				b.WriteByte(hex[v&15])
			}
			i += 2
		case c <= ' ' || c >= 0x7f:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// isUnreserved is RFC 3986's unreserved set: ALPHA DIGIT - . _ ~
func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// parseLenient parses with the library and, when it rejects the file,
// drops the lines it rejects and parses the rest. RFC 9309 §2.2 wants every
// parseable rule used, while the library refuses a whole file over one bad
// line (a rule before any User-agent, a Crawl-delay that is not a number).
func parseLenient(body []byte) *robotstxt.RobotsData {
	if d, err := robotstxt.FromBytes(body); err == nil {
		return d
	}
	var kept bytes.Buffer
	inGroup := false
	for _, line := range bytes.FieldsFunc(body, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if inGroup {
			if !parses([]byte("user-agent: x\n"), line, nil) {
				continue
			}
		} else {
			// Outside any group only a User-agent line or a non-group line
			// (Sitemap, unknown keys) can stand; a User-agent line is the
			// one after which a rule parses.
			if !parses(nil, line, nil) {
				continue
			}
			inGroup = parses(nil, line, []byte("\ndisallow: /"))
		}
		kept.Write(line)
		kept.WriteByte('\n')
	}
	if d, err := robotstxt.FromBytes(kept.Bytes()); err == nil {
		return d
	}
	// Every line parsed on its own, so this is not expected; an empty rule
	// set is the reading closest to "the file said nothing usable".
	d, _ := robotstxt.FromBytes(nil)
	return d
}

func parses(before, line, after []byte) bool {
	b := make([]byte, 0, len(before)+len(line)+len(after))
	b = append(append(append(b, before...), line...), after...)
	_, err := robotstxt.FromBytes(b)
	return err == nil
}

// Kind says whether the answer is parsed rules, allow all or disallow all.
func (r *Robots) Kind() RobotsKind {
	if r == nil {
		return RobotsAllowAll
	}
	return r.kind
}

// Failed reports whether the answer is not the site's own rules but a
// failure to get them (a server error, 429, or no answer at all): what it
// disallows is held back, not forbidden.
func (r *Robots) Failed() bool {
	return r != nil && r.kind == RobotsDisallowAll
}

// Cause is why the file could not be fetched when Status is 0, as given to
// UnreachableRobots.
func (r *Robots) Cause() string {
	if r == nil {
		return ""
	}
	return r.cause
}

// Status is the HTTP status the answer came from (0 = unreachable).
func (r *Robots) Status() int {
	if r == nil {
		return 0
	}
	return r.status
}

// Allowed reports whether userAgent may fetch path, which should be the
// URL's path with its query (url.URL.RequestURI). The group is chosen by
// the User-Agent's product token, whole (see groupName), falling back to
// "*". /robots.txt itself is always allowed.
func (r *Robots) Allowed(userAgent, path string) bool {
	return r.Agent(userAgent).Allowed(path)
}

// RobotsAgent is a robots.txt as one User-Agent reads it: the group of
// rules that applies to it, found once.
type RobotsAgent struct {
	kind  RobotsKind // "" for a nil *Robots
	group *robotstxt.Group
}

// Agent is r for userAgent, to ask about many paths: finding the group for
// every link of a page (a lower-cased copy of the token and a walk over
// the file's groups each time) was 2% of the CPU of a check.
func (r *Robots) Agent(userAgent string) RobotsAgent {
	if r == nil {
		return RobotsAgent{}
	}
	a := RobotsAgent{kind: r.kind}
	if r.kind == RobotsRules {
		a.group = r.data.FindGroup(groupName(userAgent))
	}
	return a
}

// Allowed is Robots.Allowed for the agent's User-Agent.
func (a RobotsAgent) Allowed(path string) bool {
	if path == "/robots.txt" {
		return true
	}
	if path == "" {
		path = "/"
	}
	switch a.kind {
	case RobotsRules:
		return a.group.Test(normalizePath(path))
	case RobotsDisallowAll:
		return false
	}
	return true
}

// CrawlDelay is the Crawl-delay of the group that applies to userAgent,
// at most one hour.
func (r *Robots) CrawlDelay(userAgent string) time.Duration {
	if r == nil || r.data == nil {
		return 0
	}
	d := r.data.FindGroup(groupName(userAgent)).CrawlDelay
	if d < 0 || d > maxCrawlDelay {
		return maxCrawlDelay
	}
	return d
}

// Sitemaps lists the Sitemap URLs the file names, in order.
func (r *Robots) Sitemaps() []string {
	if r == nil || r.data == nil {
		return nil
	}
	return append([]string(nil), r.data.Sitemaps...)
}

// ttl is how long the answer may be used without fetching it again.
func (r *Robots) ttl() time.Duration {
	if r.Kind() == RobotsDisallowAll {
		return robotsErrorTTL
	}
	return robotsTTL
}

// productToken is the part of a User-Agent, or of a robots.txt
// User-agent line, that names a crawler (RFC 9309 §2.2.1): the letters,
// "_" and "-" it starts with. "linkpatrol/1.2 (+https://…)" and a line
// "User-agent: linkpatrol/0.1.0-dev" copied from an access log both name
// "linkpatrol". "" when it starts with none.
func productToken(s string) string {
	s = strings.TrimSpace(s)
	end := strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_' || r == '-')
	})
	if end < 0 {
		return s
	}
	return s[:end]
}

// groupName is how a User-agent line's crawler is named for the library
// (see normalizeRobots) and how we ask for ours: the product token with an
// end mark. The library picks the longest group name that the asked name
// starts with, so without the mark a group for "link" would be taken for
// linkpatrol's (qa9 T13); with it, only the whole token matches, as RFC
// 9309 says (ignoring case). "*" (or a line naming no crawler) is the
// library's default group.
func groupName(s string) string {
	token := productToken(s)
	if token == "" {
		return "*"
	}
	return token + "$"
}
