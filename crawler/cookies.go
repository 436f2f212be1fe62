package crawler

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// chainCookies is the cookie jar of one redirect chain: what its hops set
// is sent on its later hops, as a browser does within one navigation, so
// that a page that sets a cookie and redirects to itself, or through a
// page that checks the cookie came back (consent walls, session pinning),
// ends where a browser's navigation does rather than in a false "redirect
// loop" (qa8 D1). It lives as long as the chain: nothing is kept between
// links, tasks or passes, so one link's answer never depends on another's.
// The public suffix list keeps a hop from setting a cookie for a whole
// public suffix (co.uk, github.io), as browsers refuse it.
//
// Its zero value holds nothing and costs nothing: the jar is made at the
// first Set-Cookie of the chain.
type chainCookies struct {
	jar *cookiejar.Jar
}

// keep takes the cookies a response to a request for u set.
func (c *chainCookies) keep(u *url.URL, h http.Header) {
	if len(h["Set-Cookie"]) == 0 {
		return
	}
	set := (&http.Response{Header: h}).Cookies()
	if len(set) == 0 {
		return
	}
	if c.jar == nil {
		// New fails only for options it does not get.
		c.jar, _ = cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List})
	}
	c.jar.SetCookies(u, set)
}

// held says whether any hop of the chain set a cookie.
func (c *chainCookies) held() bool { return c.jar != nil }

// to is what the chain sends a request for u.
func (c *chainCookies) to(u *url.URL) []*http.Cookie {
	if c.jar == nil {
		return nil
	}
	return c.jar.Cookies(u)
}

// sent is cs as a Cookie header reads, to compare two visits of a URL.
func sent(cs []*http.Cookie) string {
	var b strings.Builder
	for _, ck := range cs {
		b.WriteString(ck.Name)
		b.WriteByte('=')
		b.WriteString(ck.Value)
		b.WriteString("; ")
	}
	return b.String()
}
