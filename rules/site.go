package rules

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
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
// site's, which the rules would parse as the site's (no --exclude,
// --include or rule keeps it out or only checks it), target's origin
// becomes one of the site's own, and FollowStart returns it. It returns ""
// for any other redirect.
func (e *Engine) FollowStart(start string, target *url.URL) string {
	if !e.starts[start] {
		return ""
	}
	c := e.rw.apply(Canonicalize(target), nil)
	if c.Scheme != "http" && c.Scheme != "https" || c.Host == "" || e.onSite(c) {
		return ""
	}
	if a, _, _ := e.classifyOn(c, canonicalString(c), true); a != Parse {
		return ""
	}
	origin := c.Scheme + "://" + c.Host
	e.addSite(c)
	return origin
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
