package rules

import (
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// The site's own hosts are those of the start URLs and those a start URL's
// redirects lead to: http://example.com/ answering with a redirect to
// https://www.example.com/ names the site that is to be checked, as every
// other link checker takes it (qa9 T7 asked the user to type the other URL
// instead; a start URL that is the everyday bare or http:// form of a site
// checked nothing then). Such a host is the site's for what it decides:
// its pages are parsed, it has the start hosts' politeness, --offline and
// --fail-on internal count it as the site's. The -H headers without a host
// do not go there: they belong to the start URLs' exact origins, and a
// redirect is the server's choice of host, not the user's (the warning of
// Withheld names how to send them).

// siteHosts are the hosts added to the site, in the forms the start URLs'
// own are kept in (see Engine's origins, startHosts and onDefaultPort).
// A value is never changed once stored: adding copies it.
type siteHosts struct {
	origins       map[string]bool
	hosts         map[string]bool
	onDefaultPort map[string]bool
}

func (s *siteHosts) has(hostport string) bool {
	return s != nil && s.hosts[hostport]
}

// onSite says whether c, a canonical http(s) URL, is on a host of the
// site: a start URL's origin (or its host under the other scheme, both on
// the default port), or one a start URL redirected to.
func (e *Engine) onSite(c *url.URL) bool {
	origin := c.Scheme + "://" + c.Host
	if c.Port() == "" && e.onDefaultPort[c.Host] || e.origins[origin] {
		return true
	}
	s := e.site.Load()
	return s != nil && (c.Port() == "" && s.onDefaultPort[c.Host] || s.origins[origin])
}

// FollowStart is told that start, a URL of the pass, redirects to target.
// When start is a start URL and target is on a host that is not the
// site's, of the same site as start (see StartRedirect), which the rules
// would parse as the site's (no --exclude, --include or rule keeps it out
// or only checks it), target's origin becomes one of the site's own, and
// FollowStart returns it. onSite says whether target is on the site's
// hosts after the call: a chain that leaves them once adds nothing after,
// so that only a chain that stays within the site ends on an added host.
func (e *Engine) FollowStart(start string, target *url.URL) (origin string, onSite bool) {
	if !e.starts[start] {
		return "", false
	}
	c := e.rw.apply(Canonicalize(target), nil)
	if c.Scheme != "http" && c.Scheme != "https" || c.Host == "" {
		return "", false
	}
	if e.onSite(c) {
		return "", true
	}
	su, err := url.Parse(start)
	if err != nil || StartRedirect(su, c) != SameSite {
		return "", false
	}
	if a, _, _ := e.classifyOn(c, canonicalString(c), true); a != Parse {
		return "", false
	}
	e.addSite(c)
	return c.Scheme + "://" + c.Host, true
}

// Landing says where a start URL's redirect lands, as StartRedirect
// judges it; a greater one is the further from the site.
type Landing int

const (
	// SameSite is the start URL's host under another scheme or port, or
	// another host of its registrable domain (example.com and
	// www.example.com).
	SameSite Landing = iota
	// OtherSite is a host of another registrable domain, or another
	// address: a CDN, a parking or maintenance page, an SSO provider.
	OtherSite
	// LoginPage is a URL that carries the start URL back in its query
	// (next=, return_to=, service=, …): a login wall, even within the
	// registrable domain. The site behind it was never seen.
	LoginPage
)

// StartRedirect judges target, where the start URL start redirects, for
// whether its host is the site start names: a redirect is the server's
// choice, and adding a login or SSO host as the site would check that
// host and call the site behind it fine (review11 H1). The registrable
// domain (eTLD+1) comes from the Public Suffix List, as the throttle's and
// cluster's do: a naive "last two labels" would make user1.github.io and
// user2.github.io, or any two .co.uk sites, one site.
func StartRedirect(start, target *url.URL) Landing {
	if carriesBack(start, target) {
		return LoginPage
	}
	a, b := hostName(start), hostName(target)
	if a == b {
		return SameSite
	}
	if net.ParseIP(a) != nil || net.ParseIP(b) != nil {
		return OtherSite
	}
	da, err := publicsuffix.EffectiveTLDPlusOne(a)
	if err != nil {
		return OtherSite
	}
	if db, err := publicsuffix.EffectiveTLDPlusOne(b); err != nil || da != db {
		return OtherSite
	}
	return SameSite
}

func hostName(u *url.URL) string {
	return strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
}

// returnKeys are the query keys login pages take the page to come back to
// in; one of them holding start's own path is start carried back too.
var returnKeys = map[string]bool{
	"next": true, "return_to": true, "returnto": true, "return": true, "returnurl": true, "return_url": true,
	"redirect": true, "redirect_to": true, "redirect_uri": true, "redirecturl": true, "service": true,
	"continue": true, "goto": true, "came_from": true, "destination": true, "dest": true, "target": true,
	"from": true, "back": true, "relaystate": true,
}

// carriesBack says whether target's query names start again: a URL on
// start's host (any key: OAuth's redirect_uri, CAS's service), or, under
// a key login pages use, start's path.
func carriesBack(start, target *url.URL) bool {
	host, path := hostName(start), start.EscapedPath()
	if path == "" {
		path = "/"
	}
	for k, vs := range target.Query() {
		for _, v := range vs {
			u, err := url.Parse(strings.TrimSpace(v))
			if err != nil || u.String() == "" {
				continue
			}
			if u.Host != "" && hostName(u) == host {
				return true
			}
			if u.Host == "" && u.Scheme == "" && returnKeys[strings.ToLower(k)] && (u.EscapedPath() == path || u.RequestURI() == start.RequestURI()) {
				return true
			}
		}
	}
	return false
}

// AddSiteOrigins makes each origin ("scheme://host[:port]", as FollowStart
// returned it) one of the site's own hosts: those a resumed pass's start
// URLs redirected to in an earlier run.
func (e *Engine) AddSiteOrigins(origins []string) error {
	for _, o := range origins {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("site origin %q: want scheme://host[:port]", o)
		}
		if c := Canonicalize(u); !e.onSite(c) {
			e.addSite(c)
		}
	}
	return nil
}

// SiteOrigins are the origins FollowStart and AddSiteOrigins added, sorted.
func (e *Engine) SiteOrigins() []string {
	s := e.site.Load()
	if s == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(s.origins))
}

// addSite adds c's origin to the site's hosts, as addStart adds a start
// URL's.
func (e *Engine) addSite(c *url.URL) {
	e.siteMu.Lock()
	defer e.siteMu.Unlock()
	next := &siteHosts{origins: map[string]bool{}, hosts: map[string]bool{}, onDefaultPort: map[string]bool{}}
	if old := e.site.Load(); old != nil {
		next.origins, next.hosts, next.onDefaultPort = maps.Clone(old.origins), maps.Clone(old.hosts), maps.Clone(old.onDefaultPort)
	}
	next.origins[c.Scheme+"://"+c.Host] = true
	next.hosts[c.Host] = true
	if c.Port() == "" {
		next.hosts[c.Host+":"+defaultPort(c.Scheme)] = true
		next.onDefaultPort[c.Host] = true
	}
	e.site.Store(next)
}

// RedirectedSite says whether u is on a host of the site only because a
// start URL redirected there (see FollowStart), not on a start URL's
// origin: the -H headers without a host are not sent there (Withheld).
func (e *Engine) RedirectedSite(u *url.URL) bool {
	s := e.site.Load()
	if s == nil || (u.Scheme != "http" && u.Scheme != "https") || e.origins[u.Scheme+"://"+u.Host] {
		return false
	}
	return s.origins[u.Scheme+"://"+u.Host] || u.Port() == "" && s.onDefaultPort[u.Host]
}
