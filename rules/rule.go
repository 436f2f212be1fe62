package rules

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/linkpatrol/linkpatrol/throttle"
	"golang.org/x/net/http/httpguts"
)

// Rule is one ordered rule as written in a config file. Every criterion
// given must match (none given: the rule matches every URL, so it can only
// be the last); the first rule that matches a URL decides its action and
// its policy.
type Rule struct {
	Source string // "linkpatrol.toml:14" when it came from a file

	Scheme     string // "http", "https", "file", "ftp", ...
	Host       string // host glob; "*" spans dots; with a ":" it also matches the port
	PathPrefix string // on the decoded path
	Path       string // path glob: "*" stays within a segment, "**" spans them
	Regex      string // on the whole canonical URL (after rewrites, no fragment)

	Action string // parse, check, skip or ignore; "" keeps the default for the host

	// Settings for requests to the matched URLs. Header, cookie and
	// password values may use ${NAME} for environment variables. Headers,
	// cookies and credentials need a Host criterion, so they only ever go
	// to the hosts the rule names.
	Timeout  string            // "30s"
	Recheck  map[string]string // verdict ("ok", "broken", ...) -> interval ("7d")
	Accept   map[string]string // status ("403") -> verdict ("unverifiable")
	Headers  map[string]string
	Cookies  map[string]string
	User     string
	Password string

	// KeepSessionIDs keeps the session-id parameters of the matched URLs
	// (matched without them) instead of dropping them.
	KeepSessionIDs bool
	// Spider-trap limits for the matched URLs; nil keeps the run's.
	MaxHops, MaxPathSegments, MaxPathRepeats, MaxQueryVariants, MaxTemplateRun *int
}

type rule struct {
	desc     string // for Decision.Rule
	scheme   string
	host     *regexp.Regexp
	withPort bool
	prefix   string
	path     *regexp.Regexp
	re       *regexp.Regexp
	action   Action // 0: the default
	policy   *Policy
	// public is policy without headers and credentials, for a URL that
	// only a rewrite brought to this rule's hosts: the request may still
	// go to the host as written (a redirect hop, say).
	public       *Policy
	traps        Traps // the run's, with this rule's own limits on top
	keepSessions bool
	matchAll     bool
	// cleartextOK: the rule names scheme "http" itself, so its secrets may
	// go over plain http. Without a scheme they go over https only.
	cleartextOK bool
}

// secretsFor says whether a request to u may carry the rule's headers,
// cookies and credentials: only over https, unless the rule names plain
// http explicitly, so that an https page redirecting to http (or a link
// written with http://) never sends them in cleartext.
func (r *rule) secretsFor(u *url.URL) bool {
	return u.Scheme == "https" || r.cleartextOK
}

// warnings are what config check says about a rule that is valid but
// probably not what was meant.
func (r *rule) warnings() []string {
	if r.policy != r.public && r.scheme == "" {
		return []string{r.desc + `: headers, cookies and credentials without a scheme are sent over https only; add scheme = "https" to say so, or scheme = "http" to allow cleartext`}
	}
	return nil
}

func (r *rule) match(u *url.URL, key string) bool {
	if r.scheme != "" && u.Scheme != r.scheme {
		return false
	}
	if r.host != nil {
		h := u.Hostname()
		if r.withPort {
			h = u.Host
		}
		if !r.host.MatchString(h) {
			return false
		}
	}
	if r.prefix != "" && !strings.HasPrefix(u.Path, r.prefix) {
		return false
	}
	if r.path != nil && !r.path.MatchString(u.Path) {
		return false
	}
	return r.re == nil || matchAsWritten(r.re, key)
}

// describe lists a rule's criteria for people: "host *.example.com, path_prefix /private/".
func (r Rule) describe() string {
	var c []string
	for _, f := range []struct{ k, v string }{
		{"scheme", r.Scheme}, {"host", r.Host}, {"path_prefix", r.PathPrefix},
		{"path", r.Path}, {"regex", r.Regex},
	} {
		if f.v != "" {
			c = append(c, f.k+" "+f.v)
		}
	}
	if len(c) == 0 {
		return "every URL"
	}
	return strings.Join(c, ", ")
}

func compileRule(r Rule, n int, lookup func(string) (string, bool), traps Traps) (*rule, error) {
	c := &rule{desc: fmt.Sprintf("rule %d (%s)", n, r.describe()), keepSessions: r.KeepSessionIDs}
	if r.Source != "" {
		c.desc = r.Source + ": " + c.desc
	}
	if r.Scheme != "" {
		s := strings.ToLower(strings.TrimSpace(r.Scheme))
		if _, _, ok := splitScheme(s + ":"); !ok {
			return nil, fieldErr("scheme", fmt.Errorf("%q is not a URL scheme", r.Scheme))
		}
		c.scheme = s
	}
	if r.Host != "" {
		re, err := compileHostGlob(r.Host)
		if err != nil {
			return nil, fieldErr("host", err)
		}
		c.host, c.withPort = re, strings.Contains(r.Host, ":")
	}
	if r.PathPrefix != "" {
		if !strings.HasPrefix(r.PathPrefix, "/") {
			return nil, fieldErr("path_prefix", fmt.Errorf("%q does not start with /", r.PathPrefix))
		}
		c.prefix = r.PathPrefix
	}
	if r.Path != "" {
		if !strings.HasPrefix(r.Path, "/") && !strings.HasPrefix(r.Path, "*") {
			return nil, fieldErr("path", fmt.Errorf("%q does not start with / or *", r.Path))
		}
		re, err := compileGlob(r.Path, '/')
		if err != nil {
			return nil, fieldErr("path", err)
		}
		c.path = re
	}
	if r.Regex != "" {
		re, err := regexp.Compile(r.Regex)
		if err != nil {
			return nil, fieldErr("regex", err)
		}
		c.re = re
	}
	c.matchAll = c.scheme == "" && c.host == nil && c.prefix == "" && c.path == nil && c.re == nil
	if r.Action != "" {
		a, err := ParseAction(r.Action)
		if err != nil {
			return nil, fieldErr("action", err)
		}
		c.action = a
	}
	p, err := compilePolicy(r, lookup)
	if err != nil {
		return nil, err
	}
	if (c.action == Skip || c.action == Ignore) && p.requestSettings() {
		return nil, fieldErr("action", fmt.Errorf("action %s never fetches, so the rule's timeout, accept, headers, cookies and credentials would have no effect", c.action))
	}
	if (len(p.Header) > 0 || p.User != "" || p.Password != "") && !specificHost(r.Host) {
		field := "headers"
		switch {
		case len(r.Headers) == 0 && len(r.Cookies) > 0:
			field = "cookies"
		case len(r.Headers) == 0:
			field = "user"
			if r.User == "" {
				field = "password"
			}
		}
		return nil, fieldErr(field, errors.New("headers, cookies and credentials need a host (not just \"*\") in the same rule, so they go only to the hosts it names"))
	}
	var setsTraps bool
	c.traps, setsTraps, err = r.trapLimits(traps)
	if err != nil {
		return nil, err
	}
	if setsTraps && (c.action == Skip || c.action == Ignore) {
		return nil, fieldErr("action", fmt.Errorf("action %s never fetches, so the rule's spider-trap limits would have no effect", c.action))
	}
	c.policy, c.public = p, p
	if p.Header != nil || p.User != "" || p.Password != "" {
		c.public = &Policy{Timeout: p.Timeout, Recheck: p.Recheck, Accept: p.Accept}
	}
	c.cleartextOK = c.scheme == "http"
	return c, nil
}

// trapLimits puts the rule's own spider-trap limits on top of the run's.
func (r Rule) trapLimits(run Traps) (Traps, bool, error) {
	set := false
	for _, f := range []struct {
		v   *int
		dst *int
		key string
	}{
		{r.MaxHops, &run.MaxHops, TrapHops.Key},
		{r.MaxPathSegments, &run.MaxPathSegments, TrapPathSegments.Key},
		{r.MaxPathRepeats, &run.MaxPathRepeats, TrapPathRepeats.Key},
		{r.MaxQueryVariants, &run.MaxQueryVariants, TrapQueryVariants.Key},
		{r.MaxTemplateRun, &run.MaxTemplateRun, TrapTemplateRun.Key},
	} {
		if f.v == nil {
			continue
		}
		if *f.v < 0 {
			return Traps{}, false, fieldErr(f.key, fmt.Errorf("%d is negative (0 turns the limit off)", *f.v))
		}
		*f.dst, set = *f.v, true
	}
	return run, set, nil
}

// specificHost rejects a missing host criterion and globs that match
// every host.
func specificHost(glob string) bool {
	return strings.Trim(glob, "*?. ") != ""
}

func (p *Policy) requestSettings() bool {
	return p.Timeout > 0 || len(p.Accept) > 0 || len(p.Header) > 0 || p.User != "" || p.Password != ""
}

func compilePolicy(r Rule, lookup func(string) (string, bool)) (*Policy, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	p := &Policy{}
	if r.Timeout != "" {
		d, err := throttle.ParseDuration(r.Timeout)
		if err != nil {
			return nil, fieldErr("timeout", err)
		}
		if d == 0 {
			return nil, fieldErr("timeout", errors.New("a timeout of 0 would fail every request"))
		}
		p.Timeout = d
	}
	for _, k := range slices.Sorted(maps.Keys(r.Recheck)) {
		d, err := throttle.ParseDuration(r.Recheck[k])
		if err != nil {
			return nil, fieldErr("recheck", err, k)
		}
		switch k {
		case "ok":
			p.Recheck.OK = d
		case "broken":
			p.Recheck.Broken = d
		case "transient":
			p.Recheck.Transient = d
		case "unverifiable":
			p.Recheck.Unverifiable = d
		default:
			return nil, fieldErr("recheck", fmt.Errorf("unknown verdict %q (want %s)", k, strings.Join(verdictNames, ", ")), k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(r.Accept)) {
		code, err := strconv.Atoi(strings.TrimSpace(k))
		if err != nil || code < 100 || code > 999 {
			return nil, fieldErr("accept", fmt.Errorf("%q is not an HTTP status code", k), k)
		}
		v := strings.ToLower(strings.TrimSpace(r.Accept[k]))
		if !slices.Contains(verdictNames, v) {
			return nil, fieldErr("accept", fmt.Errorf("unknown verdict %q (want %s)", r.Accept[k], strings.Join(verdictNames, ", ")), k)
		}
		if p.Accept == nil {
			p.Accept = make(map[int]string)
		}
		p.Accept[code] = v
	}
	// secret expands ${NAME} in the value of field (and key, for tables)
	// and remembers, under redact, which variables it came from.
	secret := func(redact, v, field string, key ...string) (string, error) {
		out, names, err := expandEnv(v, lookup)
		if err != nil {
			return "", fieldErr(field, err, key...)
		}
		if len(names) > 0 {
			if p.fromEnv == nil {
				p.fromEnv = make(map[string]string)
			}
			p.fromEnv[redact] = strings.Join(names, ", $")
		}
		return out, nil
	}
	for _, name := range slices.Sorted(maps.Keys(r.Headers)) {
		if !httpguts.ValidHeaderFieldName(name) {
			return nil, fieldErr("headers", fmt.Errorf("%q is not a header name", name), name)
		}
		switch http.CanonicalHeaderKey(name) {
		case "Host", "Content-Length", "Transfer-Encoding", "Connection":
			return nil, fieldErr("headers", fmt.Errorf("header %s is set by the crawler", name), name)
		}
		v, err := secret("header "+http.CanonicalHeaderKey(name), r.Headers[name], "headers", name)
		if err != nil {
			return nil, err
		}
		if !httpguts.ValidHeaderFieldValue(v) {
			return nil, fieldErr("headers", fmt.Errorf("the value of %s has characters a header cannot carry", name), name)
		}
		if p.Header == nil {
			p.Header = make(http.Header)
		}
		p.Header.Set(name, v)
	}
	if len(r.Cookies) > 0 {
		var pairs []string
		for _, name := range slices.Sorted(maps.Keys(r.Cookies)) {
			c := &http.Cookie{Name: name}
			if c.Valid() != nil || strings.ContainsAny(name, "=;, ") {
				return nil, fieldErr("cookies", fmt.Errorf("%q is not a cookie name", name), name)
			}
			v, err := secret("cookie "+name, r.Cookies[name], "cookies", name)
			if err != nil {
				return nil, err
			}
			if strings.ContainsAny(v, ";\r\n") {
				return nil, fieldErr("cookies", fmt.Errorf("the value of cookie %s has characters a cookie cannot carry", name), name)
			}
			pairs = append(pairs, name+"="+v)
		}
		if p.Header == nil {
			p.Header = make(http.Header)
		}
		p.Header.Set("Cookie", strings.Join(pairs, "; "))
	}
	if r.User != "" || r.Password != "" {
		if r.User == "" {
			return nil, fieldErr("password", errors.New("a password without a user"))
		}
		u, err := secret("user", r.User, "user")
		if err != nil {
			return nil, err
		}
		if strings.Contains(u, ":") {
			return nil, fieldErr("user", errors.New("a basic-auth user cannot contain \":\""))
		}
		pw, err := secret("password", r.Password, "password")
		if err != nil {
			return nil, err
		}
		p.User, p.Password = u, pw
	}
	return p, nil
}
