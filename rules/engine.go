package rules

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"
)

// Config is what New compiles into an Engine. LoadConfig fills it from a
// config file; the command line then overrides what it sets (Start,
// Include, Exclude).
type Config struct {
	// Start URLs: pages on their scheme+host+port are parsed by default
	// (for file:/// start URLs: files under the start URL's directory).
	Start []string
	// Include are quick regexes (--include) on the canonical URL: a URL
	// matching none is skipped. The start URLs themselves are exempt, so a
	// crawl can begin on a page outside the included part.
	Include []string
	// Exclude are quick regexes (--exclude): a matching URL is skipped,
	// start URLs included. Both come before the rules.
	Exclude []string

	// Rules are tried in order; the first that matches decides.
	Rules []Rule
	// Rewrites are regex replacements on the canonical URL, in order.
	Rewrites []Rewrite
	// Unwrap are redirect-service patterns, "[host]/path?param=": a
	// matching URL is replaced by the target in param.
	Unwrap []string
	// DropParams are globs of query (and ;path) parameter names dropped
	// before dedupe. Nil means DefaultDropParams(); empty drops none.
	DropParams []string
	// Aliases maps a canonical origin ("https://example.com") to origins
	// that serve the same site and are folded into it.
	Aliases map[string][]string
	// AliasStartHosts folds http/https and www./bare variants of each
	// http(s) start origin into it (explicit Aliases and other start
	// origins are left alone).
	AliasStartHosts bool
	// StripIndex drops a trailing index.html or index.htm from paths.
	StripIndex bool
	// CollapseSlashes turns runs of slashes in paths into one.
	CollapseSlashes bool
	// KeepSessionIDs keeps query and ;path parameters that carry a session
	// id (see sessionID), which are otherwise dropped before dedupe: with a
	// fresh session id on every link, a site is an endless set of URLs.
	KeepSessionIDs bool
	// Headers are the command line's -H: sent to the start origins, or to
	// the host one names (over https only), on top of a rule's headers.
	Headers []HeaderFlag
	// Offline skips every http(s) URL off the start origins that no rule
	// gives an action (--offline): the site's own links only, reported as
	// skipped, never as fine.
	Offline bool
	// Accept are status codes taken as ok for every URL (--accept 200,429),
	// under what a rule's own accept says about the same status.
	Accept []int
	// Traps are the run's spider-trap limits; a [[rule]] may set its own.
	// The zero value turns them all off; the command starts from
	// DefaultTraps.
	Traps Traps
	// Hosts override politeness settings per host glob or CIDR; the first
	// that matches wins.
	Hosts []HostRule
	// LookupEnv resolves ${NAME} in header, cookie and credential values;
	// nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

// Rewrite is a regex replacement on the whole canonical URL; Replace may
// use $1, ${name}, ... The result must be an absolute URL.
type Rewrite struct {
	Source  string // "linkpatrol.toml:30" when it came from a file
	Regex   string
	Replace string
}

// Engine decides what happens to each URL. It is safe for concurrent use,
// and immutable after New but for the hosts a start URL's redirects add to
// the site (FollowStart, AddSiteOrigins).
type Engine struct {
	starts  map[string]bool // canonical start URLs
	origins map[string]bool // scheme://host[:port] of the start URLs
	// onDefaultPort are the hosts of the http(s) start URLs on their
	// scheme's default port. Such a host's name under the other scheme,
	// on its default port too, is the same site to the people who run it
	// (a site that serves both, an old absolute http:// link on an https
	// site): its pages are parsed too, as written, rather than only
	// checked as another host's (qa9 T9: a page reachable only that way,
	// and every link on it, went unread and unsaid). alias_start_hosts
	// folds the two into one instead.
	onDefaultPort map[string]bool
	startHosts    map[string]bool // host and host:port of the http(s) start URLs
	fileRoots     []string        // canonical file:///dir/ prefixes of file start URLs
	include       []quickRule
	exclude       []quickRule
	rules         []*rule
	rw            rewriter
	hosts         []*hostRule
	defaults      *Policy
	headers       []HeaderFlag
	offline       bool
	traps         Traps
	// site holds the hosts a start URL's redirects led to, which are the
	// site's own too (see FollowStart); nil until one does. Written under
	// siteMu, read without a lock: a pass adds one or two, while every
	// link is classified.
	site   atomic.Pointer[siteHosts]
	siteMu sync.Mutex
}

type quickRule struct {
	re   *regexp.Regexp
	name string // as shown in Decision.Rule
}

// Decision is what the engine says about one URL.
type Decision struct {
	// URL is the canonical form after rewrites, without fragment: the
	// dedupe key.
	URL string
	// Parsed is URL as a url.URL, so a caller needs no second parse of
	// the string for its host or path. Shared: callers must not modify it.
	Parsed *url.URL
	// Fragment is the fragment of the URL as a browser's URL holds it (see
	// LinkedFragment); kept for the report and for fragment checks, never
	// fetched.
	Fragment string
	Action   Action
	// Rule says, for people, what decided: "start host", "other host",
	// "scheme mailto", "--exclude ^https://x/", ...
	Rule string
	// Request holds the settings for requests to URL, the URL after
	// rewrites: what a task of the pass sends. Policy holds those for a
	// request to the URL as it was given (a redirect hop is requested as
	// the server wrote it); the two differ only when a rewrite moved the
	// URL to another scheme or host, whose rule's headers and credentials
	// then stay off the URL as given. Neither is ever nil; both are shared
	// between decisions: callers must not modify them.
	Request *Policy
	Policy  *Policy
	// Traps are the spider-trap limits for URL: the run's, or those of the
	// rule that decided.
	Traps Traps
}

// Policy is the per-URL request and result settings a rule sets. The zero
// value means "the run's defaults" throughout.
type Policy struct {
	Timeout time.Duration // request timeout; 0 = the run's default
	Recheck Recheck       // per-verdict reuse intervals; zero = the run's default
	// Accept overrides the verdict for a status code ("ok",
	// "unverifiable", ...), e.g. 403 from a host that blocks robots.
	Accept map[int]string
	// Header and the basic-auth credentials are for requests to the
	// decided URL only; the crawler asks again for every request, so they
	// never follow a redirect to another host.
	Header         http.Header
	User, Password string

	fromEnv map[string]string // field ("header X-Token", "user", ...) -> env names, for redaction
}

// Recheck says how long a result with each verdict stays fresh enough to
// reuse without a request. OK is for targets that are only checked; a good
// page that was parsed is reused only within Pages (by default never: a
// conditional request costs a 304 and finds the links added since).
type Recheck struct{ OK, Pages, Broken, Transient, Unverifiable time.Duration }

// ignoredSchemes are not resources a link checker can or should verify: a
// person to write to or call, script, inline data, a place on a map, an app
// to open, a reader's own manual page, a name that locates nothing (urn:,
// magnet:). A link to them is not recorded at all. Every other scheme but
// http, https and file names something on a network that linkpatrol cannot
// check (ftp:, sftp:, news:, irc:, gopher:, ssh:, webcal:, ...), or a scheme
// it does not know (a typo such as htps:): see UnsupportedScheme.
var ignoredSchemes = map[string]bool{
	"mailto": true, "tel": true, "javascript": true, "data": true, "sms": true,
	"about": true, "blob": true, "geo": true, "callto": true, "skype": true,
	"magnet": true, "fax": true, "facetime": true,
	"whatsapp": true, "intent": true, "market": true,
	"maps": true, "xmpp": true, "bitcoin": true, "man": true, "urn": true,
}

// IgnoredScheme says whether scheme (lower-case) names no resource to
// check (see ignoredSchemes): a link to it is not recorded, and a redirect
// to it leads nowhere a link checker can follow.
func IgnoredScheme(scheme string) bool { return ignoredSchemes[scheme] }

// UnsupportedScheme starts the Decision.Rule of a URL in a scheme linkpatrol
// cannot check (see ignoredSchemes), followed by a space and the scheme. Its
// Action is Skip, as nothing is requested, but no one chose to leave it out:
// the crawler records it as not checked (unverifiable), unless --exclude,
// --offline or a rule that skips or ignores it said to leave it out.
const UnsupportedScheme = "unsupported scheme"

// UnsupportedSchemeOf is the scheme a Decision.Rule names as one linkpatrol
// cannot check (see UnsupportedScheme), and whether it names one.
func UnsupportedSchemeOf(rule string) (scheme string, ok bool) {
	return strings.CutPrefix(rule, UnsupportedScheme+" ")
}

// New compiles cfg. An error names the bad item (and, for a Config that
// LoadConfig returned, ParseConfig has already reported it with its place
// in the file).
func New(cfg Config) (*Engine, error) {
	e := &Engine{
		starts:        make(map[string]bool, len(cfg.Start)),
		origins:       make(map[string]bool, len(cfg.Start)),
		onDefaultPort: make(map[string]bool, len(cfg.Start)),
		startHosts:    make(map[string]bool, 2*len(cfg.Start)),
		defaults:      &Policy{},
		traps:         cfg.Traps,
		offline:       cfg.Offline,
	}
	for i, s := range cfg.Start {
		if err := e.addStart(s); err != nil {
			return nil, itemErr(fmt.Sprintf("start URL %q", s), err, "start", i)
		}
	}
	var err error
	if e.include, err = compileQuick("--include", "include", cfg.Include); err != nil {
		return nil, err
	}
	if e.exclude, err = compileQuick("--exclude", "exclude", cfg.Exclude); err != nil {
		return nil, err
	}
	for i, r := range cfg.Rules {
		c, err := compileRule(r, i+1, cfg.LookupEnv, cfg.Traps)
		if err != nil {
			return nil, itemErr(itemName("rule", i+1, r.Source), err, "rule", i)
		}
		e.rules = append(e.rules, c)
	}
	for i, r := range e.rules {
		if r.matchAll && i < len(e.rules)-1 {
			later := fmt.Sprintf("rule %d", i+2)
			if i+2 < len(e.rules) {
				later = fmt.Sprintf("rules %d-%d", i+2, len(e.rules))
			}
			return nil, itemErr(itemName("rule", i+1, cfg.Rules[i].Source),
				fmt.Errorf("has no scheme, host, path_prefix, path or regex, so it matches every URL and %s would never apply", later), "rule", i)
		}
	}
	lookup := cfg.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	for i, h := range cfg.Headers {
		// ${NAME} as in a rule's headers: the secret stays out of the
		// file, and out of explain.
		v, names, err := expandEnv(h.Value, lookup)
		if err == nil && (!httpguts.ValidHeaderFieldName(h.Name) || !httpguts.ValidHeaderFieldValue(v)) {
			err = errors.New("want NAME: VALUE, or HOST=NAME: VALUE for another host than the start hosts")
		}
		if err != nil {
			return nil, itemErr(fmt.Sprintf("--header %q", h.Name), err, "header", i)
		}
		h.Value, h.env = v, strings.Join(names, ", $")
		e.headers = append(e.headers, h)
	}
	if err := e.acceptEverywhere(cfg.Accept); err != nil {
		return nil, err
	}
	if err := e.compileRewrites(cfg); err != nil {
		return nil, err
	}
	// A start URL that a rewrite moves (an alias to another origin, say)
	// is still the start: its new form and origin count as well.
	for _, s := range slices.Sorted(maps.Keys(e.starts)) {
		u, _ := url.Parse(s)
		if r := e.rw.apply(u, nil).String(); r != s {
			_ = e.addStart(r)
		}
	}
	for i, h := range cfg.Hosts {
		c, err := compileHostRule(h, i+1)
		if err != nil {
			return nil, itemErr(itemName("host", i+1, h.Source), err, "host", i)
		}
		e.hosts = append(e.hosts, c)
	}
	return e, nil
}

// acceptEverywhere puts the run's accepted statuses into the default
// policy and each rule's, where the rule does not decide that status
// itself: a rule is the more specific of the two.
func (e *Engine) acceptEverywhere(codes []int) error {
	if len(codes) == 0 {
		return nil
	}
	for i, code := range codes {
		if code < 100 || code > 599 {
			return itemErr(fmt.Sprintf("--accept %d", code), errors.New("not an HTTP status code (100-599)"), "accept", i)
		}
	}
	with := func(p *Policy) *Policy {
		q := *p
		q.Accept = maps.Clone(p.Accept)
		if q.Accept == nil {
			q.Accept = make(map[int]string, len(codes))
		}
		for _, code := range codes {
			if _, ok := q.Accept[code]; !ok {
				q.Accept[code] = "ok"
			}
		}
		return &q
	}
	e.defaults = with(e.defaults)
	for _, r := range e.rules {
		shared := r.public == r.policy
		r.policy = with(r.policy)
		if shared {
			r.public = r.policy
		} else {
			r.public = with(r.public)
		}
	}
	return nil
}

func itemName(kind string, n int, source string) string {
	if source != "" {
		return fmt.Sprintf("%s %d (%s)", kind, n, source)
	}
	return fmt.Sprintf("%s %d", kind, n)
}

func (e *Engine) addStart(s string) error {
	u, err := Resolve(nil, s)
	if err != nil {
		return err
	}
	c := Canonicalize(u)
	switch c.Scheme {
	case "http", "https":
		e.origins[c.Scheme+"://"+c.Host] = true
		e.startHosts[c.Host] = true
		if c.Port() == "" {
			e.startHosts[c.Host+":"+defaultPort(c.Scheme)] = true
			e.onDefaultPort[c.Host] = true
		}
	case "file":
		e.fileRoots = append(e.fileRoots, c.Scheme+"://"+c.Host+dirOf(c.EscapedPath()))
	default:
		return fmt.Errorf("scheme %q is not http, https or file", c.Scheme)
	}
	e.starts[c.String()] = true
	return nil
}

func compileQuick(flag, key string, exprs []string) ([]quickRule, error) {
	out := make([]quickRule, 0, len(exprs))
	for i, x := range exprs {
		re, err := regexp.Compile(x)
		if err != nil {
			return nil, itemErr(fmt.Sprintf("%s %q", flag, x), err, key, i)
		}
		out = append(out, quickRule{re: re, name: flag + " " + x})
	}
	return out, nil
}

func (e *Engine) compileRewrites(cfg Config) error {
	rw := &e.rw
	for i, u := range cfg.Unwrap {
		r, err := compileUnwrap(u)
		if err != nil {
			return itemErr(fmt.Sprintf("unwrap %q", u), err, "unwrap", i)
		}
		rw.unwrap = append(rw.unwrap, r)
	}
	for i, r := range cfg.Rewrites {
		if r.Regex == "" {
			return itemErr(itemName("rewrite", i+1, r.Source), fieldErr("regex", errors.New("missing")), "rewrite", i)
		}
		re, err := regexp.Compile(r.Regex)
		if err != nil {
			return itemErr(itemName("rewrite", i+1, r.Source), fieldErr("regex", err), "rewrite", i)
		}
		desc := fmt.Sprintf("rewrite %d (%s -> %s)", i+1, r.Regex, r.Replace)
		if r.Source != "" {
			desc = r.Source + ": " + desc
		}
		rw.regex = append(rw.regex, regexRewrite{desc: desc, re: re, replace: r.Replace})
	}
	drop := cfg.DropParams
	if drop == nil {
		drop = DefaultDropParams()
	}
	for i, g := range drop {
		glob := strings.ToLower(strings.TrimSpace(g))
		if glob != "" && !strings.ContainsAny(glob, `*?[\`) {
			// What compileGlob makes of a glob without its special
			// characters: the name itself, whole.
			if rw.dropNames == nil {
				rw.dropNames = make(map[string]bool)
			}
			rw.dropNames[glob] = true
			continue
		}
		re, err := compileGlob(glob, 0)
		if err != nil {
			return itemErr(fmt.Sprintf("drop_params %q", g), err, "drop_params", i)
		}
		rw.drop = append(rw.drop, re)
	}
	rw.stripIndex, rw.collapse = cfg.StripIndex, cfg.CollapseSlashes
	rw.sessions = !cfg.KeepSessionIDs
	rw.aliases = make(map[string]origin)
	for _, canon := range slices.Sorted(maps.Keys(cfg.Aliases)) {
		to, err := parseOrigin(canon)
		if err != nil {
			return itemErr(fmt.Sprintf("alias %q", canon), err, "aliases", canon)
		}
		for i, a := range cfg.Aliases[canon] {
			from, err := parseOrigin(a)
			if err != nil {
				return itemErr(fmt.Sprintf("alias %q of %q", a, canon), err, "aliases", canon, i)
			}
			switch prev, dup := rw.aliases[from.String()]; {
			case from == to:
				return itemErr(fmt.Sprintf("alias %q of %q", a, canon), errors.New("is the origin itself"), "aliases", canon, i)
			case dup:
				return itemErr(fmt.Sprintf("alias %q of %q", a, canon), fmt.Errorf("is already an alias of %s", prev), "aliases", canon, i)
			}
			rw.aliases[from.String()] = to
		}
	}
	for canon := range rw.aliases {
		if _, chained := rw.aliases[rw.aliases[canon].String()]; chained {
			to := rw.aliases[canon].String()
			return itemErr(fmt.Sprintf("alias %q", to), fmt.Errorf("is itself an alias of %s", rw.aliases[to]), "aliases", to)
		}
	}
	if cfg.AliasStartHosts {
		e.aliasStartHosts()
	}
	return nil
}

// aliasStartHosts folds the http/https and www./bare variants of each
// http(s) start origin into it, unless the variant is configured already
// or is a start origin itself. Variants of the same scheme are assigned
// first and https origins before http ones, so with both https://a and
// http://a as start URLs, https://www.a goes to https://a.
func (e *Engine) aliasStartHosts() {
	httpsFirst := func(o string) int {
		if strings.HasPrefix(o, "https:") {
			return 0
		}
		return 1
	}
	origins := slices.SortedFunc(maps.Keys(e.origins), func(a, b string) int {
		return cmp.Or(cmp.Compare(httpsFirst(a), httpsFirst(b)), cmp.Compare(a, b))
	})
	for _, sameScheme := range []bool{true, false} {
		for _, o := range origins {
			scheme, hostport, _ := strings.Cut(o, "://")
			host, port := splitHostPort(hostport)
			hosts := []string{host}
			if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err != nil && host != "localhost" {
				if bare, ok := strings.CutPrefix(host, "www."); ok {
					hosts = append(hosts, bare)
				} else {
					hosts = append(hosts, "www."+host)
				}
			}
			s := scheme
			if !sameScheme {
				s = map[string]string{"http": "https", "https": "http"}[scheme]
			}
			for _, h := range hosts {
				if port != "" {
					h += ":" + port
				}
				from := s + "://" + h
				if _, set := e.rw.aliases[from]; set || e.origins[from] {
					continue
				}
				e.rw.aliases[from] = origin{scheme, hostport}
			}
		}
	}
}

// StartHost reports whether host ("host" or "host:port") is one of the
// start URLs' hosts: the site's own, as opposed to a third party's.
func (e *Engine) StartHost(host string) bool {
	_, hostport := normalizeHostPort(host)
	return e.startHosts[hostport] || e.site.Load().has(hostport)
}

// Decide canonicalizes u (a resolved absolute URL), applies the rewrites
// and decides its action. Without rules: http(s) URLs on a start
// scheme+host+port are parsed, other http(s) URLs checked; file URLs under
// a file start URL's directory are parsed and other file URLs skipped (a
// web page must not make us read local files); mailto:, tel:,
// javascript:, data: and other schemes that name no resource to check are
// ignored; any other scheme (ftp, irc, ...) is skipped with the Rule
// UnsupportedScheme, unless --exclude, --offline or a rule leaves it out.
func (e *Engine) Decide(u *url.URL) Decision {
	return e.decide(u, nil)
}

func (e *Engine) decide(u *url.URL, steps *[]Step) Decision {
	c := Canonicalize(u)
	asked := c
	rewrite := (c.Scheme == "file" || (c.Scheme == "http" || c.Scheme == "https") && c.Host != "")
	nsteps := 0
	if steps != nil {
		nsteps = len(*steps)
	}
	if rewrite {
		c = e.rw.apply(c, steps)
	}
	d := Decision{URL: canonicalString(c), Fragment: LinkedFragment(u)}
	var r *rule
	d.Action, d.Rule, r = e.classify(c, d.URL)
	if rewrite && r != nil && r.keepSessions && e.rw.sessions {
		// The rule that matches the URL without its session ids keeps
		// them: rewrite it again, with the session ids left in.
		if steps != nil {
			*steps = (*steps)[:nsteps]
		}
		rw := e.rw
		rw.sessions = false
		c = rw.apply(asked, steps)
		d.URL = canonicalString(c)
		d.Action, d.Rule, r = e.classify(c, d.URL)
	}
	d.Parsed = c
	d.Request = e.defaults
	d.Traps = e.traps
	if r != nil {
		d.Traps = r.traps
		d.Request = r.policy
		if !r.secretsFor(c) {
			// Nor do credentials go over plain http unless the rule
			// says so.
			d.Request = r.public
		}
	}
	if len(e.headers) > 0 {
		d.Request = e.withHeaders(d.Request, c)
	}
	d.Policy = d.Request
	if asked.Scheme != c.Scheme || asked.Host != c.Host {
		// Credentials belong to the hosts a rule names; u itself is on
		// another host, and a caller may well request u as it is.
		d.Policy = e.defaults
		if r != nil {
			d.Policy = r.public
		}
	}
	return d
}

// Offline is the Decision.Rule of a URL that --offline skips.
const Offline = "--offline (another host)"

// HeaderFlag is one -H of the command line: Name: Value, for the start
// origins when Host is "", else for https://Host, and for http://Host too
// when Cleartext (written "http://HOST=Name: value"): like a rule's
// credentials, a header for another host goes over plain http only when
// asked to.
type HeaderFlag struct {
	Host, Name, Value string
	Cleartext         bool
	env               string // the variables Value was read from, for redaction
}

// ParseHeaderFlag reads "Name: value", "HOST=Name: value" or
// "http://HOST=Name: value" ("https://HOST=" is HOST=).
func ParseHeaderFlag(s string) (HeaderFlag, error) {
	var h HeaderFlag
	if host, rest, ok := strings.Cut(s, "="); ok && !strings.ContainsAny(host, " \t") && !strings.Contains(host, ": ") && strings.Contains(rest, ":") && !headerStart(host) {
		h.Host, s = strings.ToLower(host), rest
		if after, ok := strings.CutPrefix(h.Host, "http://"); ok {
			h.Host, h.Cleartext = after, true
		} else {
			h.Host = strings.TrimPrefix(h.Host, "https://")
		}
		if h.Host == "" || strings.ContainsAny(h.Host, "/?#") {
			return HeaderFlag{}, fmt.Errorf("%q: want a host (and port) before =, as in example.com=NAME: VALUE or http://127.0.0.1:8080=NAME: VALUE", host)
		}
	}
	name, value, ok := strings.Cut(s, ":")
	if !ok || !httpguts.ValidHeaderFieldName(name) {
		return HeaderFlag{}, fmt.Errorf("%q: want NAME: VALUE, or HOST=NAME: VALUE for another host than the start hosts", s)
	}
	h.Name, h.Value = http.CanonicalHeaderKey(name), strings.TrimSpace(value)
	return h, nil
}

// headerStart says whether s, the text before the first '=' of a -H, is
// the start of "Name:value" (written without a space, a value holding '='
// and ':') rather than a host: its colon is not a port's. Taken for a
// host, "X-Token:a=b:c" became the header B for a host "x-token:a", and
// X-Token went nowhere without a word.
func headerStart(s string) bool {
	if strings.Contains(s, "://") || strings.HasPrefix(s, "[") {
		return false
	}
	_, port, ok := strings.Cut(s, ":")
	return ok && (port == "" || strings.Trim(port, "0123456789") != "")
}

// names says whether h, a header for another host, names c's host.
func (h HeaderFlag) names(c *url.URL) bool {
	return h.Host == c.Host || h.Host == c.Hostname()
}

func (h HeaderFlag) sendsOver(scheme string) bool {
	return scheme == "https" || (h.Cleartext && scheme == "http")
}

// Withheld are the -H headers not sent to u though u looks meant for
// them: one for another host that names u's host when u is plain http
// (they go over https only), and one for the start hosts when u is a start
// host under the other scheme (they go to the start URLs' exact origins
// only, and that one is the site's own but not one of them: review9). A
// check says so rather than leave a 401 unexplained (qa4 F16).
//
// A header of the same name that another -H does send to u (the
// http://HOST= the warning asks for) is not withheld: the warning would
// say a header was not sent when it was (review10 R1).
func (e *Engine) Withheld(u *url.URL) []HeaderFlag {
	var out []HeaderFlag
	for _, h := range e.headers {
		if !(h.Host != "" && !h.sendsOver(u.Scheme) && h.names(u) || h.Host == "" && (e.otherSchemeOfStart(u) || e.RedirectedSite(u))) {
			continue
		}
		if slices.ContainsFunc(e.headers, func(o HeaderFlag) bool { return o.Name == h.Name && e.sends(o, u) }) {
			continue
		}
		out = append(out, h)
	}
	return out
}

// sends says whether -H h goes to c: one without a host to the start URLs'
// exact origins, one for a host to that host over the schemes it allows.
func (e *Engine) sends(h HeaderFlag, c *url.URL) bool {
	if h.Host == "" {
		return e.origins[c.Scheme+"://"+c.Host]
	}
	return h.sendsOver(c.Scheme) && h.names(c)
}

// otherSchemeOfStart says whether u is on a start host under the scheme
// its start URL does not have (see onDefaultPort).
func (e *Engine) otherSchemeOfStart(u *url.URL) bool {
	return (u.Scheme == "http" || u.Scheme == "https") && u.Port() == "" && e.onDefaultPort[u.Host] && !e.origins[u.Scheme+"://"+u.Host]
}

// WithholdsAny says whether Withheld can be non-empty for some URL.
func (e *Engine) WithholdsAny() bool {
	for _, h := range e.headers {
		if h.Host != "" && !h.Cleartext || h.Host == "" && (len(e.onDefaultPort) > 0 || e.site.Load() != nil) {
			return true
		}
	}
	return false
}

// withHeaders is p with the -H headers meant for c's origin; a header of
// the command line replaces a rule's header of the same name, as a flag
// overrides the file.
func (e *Engine) withHeaders(p *Policy, c *url.URL) *Policy {
	var q *Policy
	for _, h := range e.headers {
		if !e.sends(h, c) {
			continue
		}
		if q == nil {
			cp := *p
			cp.Header = p.Header.Clone()
			if cp.Header == nil {
				cp.Header = make(http.Header)
			}
			q = &cp
		}
		q.Header.Set(h.Name, h.Value)
		if h.env != "" {
			q.fromEnv = maps.Clone(q.fromEnv)
			if q.fromEnv == nil {
				q.fromEnv = make(map[string]string)
			}
			q.fromEnv["header "+h.Name] = h.env
		}
	}
	if q == nil {
		return p
	}
	return q
}

// Warnings lists what is valid in the rules but probably not meant, for
// config check.
func (e *Engine) Warnings() []string {
	var w []string
	for _, r := range e.rules {
		w = append(w, r.warnings()...)
	}
	return w
}

// FileOutside is the rule of a file: URL outside every checked directory
// that no --exclude or rule skips or ignores.
const FileOutside = "file outside the start directory"

func (e *Engine) classify(c *url.URL, key string) (Action, string, *rule) {
	onStart := false
	switch c.Scheme {
	case "http", "https":
		if c.Host == "" {
			return Skip, "no host", nil
		}
		onStart = e.onSite(c)
	case "file":
		if !e.underFileRoot(key) {
			// No file of the site (a file: link written on a web page,
			// say); the user may still exclude or ignore it.
			if q, ok := firstMatch(e.exclude, key); ok {
				return Skip, q.name, nil
			}
			if r := e.firstRule(c, key); r != nil && (r.action == Skip || r.action == Ignore) {
				return r.action, r.desc, nil
			}
			return Skip, FileOutside, nil
		}
		onStart = true
	default:
		if ignoredSchemes[c.Scheme] {
			return Ignore, "scheme " + c.Scheme, nil
		}
		// Rules may choose between skip and ignore for schemes we cannot
		// fetch, nothing more; --exclude and --offline leave them out as
		// they do any URL (another host's, for --offline).
		if q, ok := firstMatch(e.exclude, key); ok {
			return Skip, q.name, nil
		}
		if r := e.firstRule(c, key); r != nil && (r.action == Skip || r.action == Ignore) {
			return r.action, r.desc, nil
		}
		if e.offline {
			return Skip, Offline, nil
		}
		return Skip, UnsupportedScheme + " " + c.Scheme, nil
	}
	return e.classifyOn(c, key, onStart)
}

// classifyOn is classify of a URL of the site (onStart) or not, that no
// special case of its scheme decided.
func (e *Engine) classifyOn(c *url.URL, key string, onStart bool) (Action, string, *rule) {
	if q, ok := firstMatch(e.exclude, key); ok {
		return Skip, q.name, nil
	}
	r := e.firstRule(c, key)
	if e.starts[key] {
		return Parse, "start URL", r
	}
	fallback := "other host"
	if onStart {
		fallback = "start host"
		if c.Scheme == "file" {
			fallback = "start directory"
		}
	}
	if len(e.include) > 0 {
		q, ok := firstMatch(e.include, key)
		if !ok {
			return Skip, "matches no --include", nil
		}
		fallback = q.name
	}
	switch {
	case r != nil && r.action != 0:
		return r.action, r.desc, r
	case e.offline && !onStart:
		return Skip, Offline, nil
	case r != nil:
		return defaultAction(onStart), r.desc + "; default action (" + hostKind(onStart) + ")", r
	}
	return defaultAction(onStart), fallback, nil
}

func defaultAction(onStart bool) Action {
	if onStart {
		return Parse
	}
	return Check
}

func hostKind(onStart bool) string {
	if onStart {
		return "start host"
	}
	return "other host"
}

func (e *Engine) firstRule(c *url.URL, key string) *rule {
	for _, r := range e.rules {
		if r.match(c, key) {
			return r
		}
	}
	return nil
}

func (e *Engine) underFileRoot(key string) bool {
	for _, r := range e.fileRoots {
		if strings.HasPrefix(key, r) {
			return true
		}
	}
	return false
}

func firstMatch(qs []quickRule, key string) (quickRule, bool) {
	for _, q := range qs {
		if matchAsWritten(q.re, key) {
			return q, true
		}
	}
	return quickRule{}, false
}

// dirOf returns the path up to and including its last slash.
func dirOf(p string) string {
	return p[:strings.LastIndexByte(p, '/')+1]
}
