package rules

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strings"
	"time"

	"github.com/linkpatrol/linkpatrol/throttle"
)

// HostRule overrides politeness settings for the hosts it matches, by host
// glob or by the CIDR of the resolved address (exactly one of the two).
// Values are as written in a config file; empty strings and nil pointers
// leave the default for the host alone.
type HostRule struct {
	Source string // "linkpatrol.toml:40" when it came from a file
	Match  string // host glob, e.g. "*.example.com"; with a ":" it also matches the port
	CIDR   string // e.g. "10.0.0.0/8"

	Rate          string // "5/s", "300/m", "unlimited"
	Burst         *int
	Window        string // "100/1m"
	PerHost       *int   // requests in flight at once
	Bandwidth     string // body bytes per second, "512KiB"
	QuotaRequests *int64
	QuotaBytes    string // "2GB"
	CrawlDelay    string // "1s"
	MaxPause      string // "10m"
	IgnoreRobots  *bool
	Adaptive      *bool
	Retries       *int
}

type hostRule struct {
	desc     string
	glob     *regexp.Regexp
	withPort bool
	cidr     netip.Prefix
	apply    []func(*throttle.Settings)
	// crawlDelay: the rule sets crawl_delay, which on a start host is
	// the owner's to choose over robots.txt's (throttle.Settings.OwnCrawlDelay).
	crawlDelay bool
}

func compileHostRule(h HostRule, n int) (*hostRule, error) {
	r := &hostRule{}
	switch {
	case h.Match != "" && h.CIDR != "":
		return nil, fieldErr("cidr", errors.New("give match or cidr, not both"))
	case h.Match != "":
		re, err := compileHostGlob(h.Match)
		if err != nil {
			return nil, fieldErr("match", err)
		}
		r.glob, r.withPort = re, strings.Contains(h.Match, ":")
		r.desc = fmt.Sprintf("host %d (%s)", n, h.Match)
	case h.CIDR != "":
		p, err := netip.ParsePrefix(strings.TrimSpace(h.CIDR))
		if err != nil {
			return nil, fieldErr("cidr", err)
		}
		r.cidr = p.Masked()
		r.desc = fmt.Sprintf("host %d (cidr %s)", n, r.cidr)
	default:
		return nil, fieldErr("", errors.New("a [[host]] needs match (a host glob) or cidr"))
	}
	if h.Source != "" {
		r.desc = h.Source + ": " + r.desc
	}
	if h.Rate != "" {
		v, err := throttle.ParseRate(h.Rate)
		if err != nil {
			return nil, fieldErr("rate", err)
		}
		r.apply = append(r.apply, func(s *throttle.Settings) { s.Rate = v })
	}
	if h.Window != "" {
		n, d, err := throttle.ParseWindow(h.Window)
		if err != nil {
			return nil, fieldErr("window", err)
		}
		r.apply = append(r.apply, func(s *throttle.Settings) { s.WindowMax, s.Window = n, d })
	}
	for _, b := range []struct {
		field, v string
		set      func(*throttle.Settings, int64)
	}{
		{"bandwidth", h.Bandwidth, func(s *throttle.Settings, v int64) { s.BytesPerSec = v }},
		{"quota_bytes", h.QuotaBytes, func(s *throttle.Settings, v int64) { s.QuotaBytes = v }},
	} {
		if b.v == "" {
			continue
		}
		v, err := throttle.ParseBytes(b.v)
		if err != nil {
			return nil, fieldErr(b.field, err)
		}
		set := b.set
		r.apply = append(r.apply, func(s *throttle.Settings) { set(s, v) })
	}
	for _, d := range []struct {
		field, v string
		set      func(*throttle.Settings, time.Duration)
	}{
		{"crawl_delay", h.CrawlDelay, func(s *throttle.Settings, v time.Duration) { s.CrawlDelay = v }},
		{"max_pause", h.MaxPause, func(s *throttle.Settings, v time.Duration) { s.MaxPause = v }},
	} {
		if d.v == "" {
			continue
		}
		v, err := throttle.ParseDuration(d.v)
		if err != nil {
			return nil, fieldErr(d.field, err)
		}
		set := d.set
		r.apply = append(r.apply, func(s *throttle.Settings) { set(s, v) })
	}
	for _, i := range []struct {
		field string
		v     *int
		set   func(*throttle.Settings, int)
	}{
		{"burst", h.Burst, func(s *throttle.Settings, v int) { s.Burst = v }},
		{"per_host", h.PerHost, func(s *throttle.Settings, v int) { s.MaxInFlight = v }},
		{"retries", h.Retries, func(s *throttle.Settings, v int) { s.MaxRetries = v }},
	} {
		if i.v == nil {
			continue
		}
		if *i.v < 0 {
			return nil, fieldErr(i.field, fmt.Errorf("%d is negative", *i.v))
		}
		v, set := *i.v, i.set
		r.apply = append(r.apply, func(s *throttle.Settings) { set(s, v) })
	}
	r.crawlDelay = h.CrawlDelay != ""
	if h.QuotaRequests != nil {
		if *h.QuotaRequests < 0 {
			return nil, fieldErr("quota_requests", fmt.Errorf("%d is negative", *h.QuotaRequests))
		}
		v := *h.QuotaRequests
		r.apply = append(r.apply, func(s *throttle.Settings) { s.QuotaRequests = v })
	}
	if h.IgnoreRobots != nil {
		v := *h.IgnoreRobots
		r.apply = append(r.apply, func(s *throttle.Settings) { s.IgnoreRobots = v })
	}
	if h.Adaptive != nil {
		v := *h.Adaptive
		r.apply = append(r.apply, func(s *throttle.Settings) { s.Adaptive = v })
	}
	if len(r.apply) == 0 {
		return nil, fieldErr("", errors.New("a [[host]] sets no politeness setting"))
	}
	return r, nil
}

func (r *hostRule) matches(name, hostport string, ip netip.Addr) bool {
	if r.glob != nil {
		if r.withPort {
			return r.glob.MatchString(hostport)
		}
		return r.glob.MatchString(name)
	}
	return ip.IsValid() && r.cidr.Contains(ip.Unmap())
}

// HostSettings returns the politeness settings for host ("host" or
// "host:port") and where they come from. The defaults depend on whether
// the host is a start host (brisk) or a third-party one (conservative);
// the first [[host]] rule that matches, by host glob or, when ip (the
// resolved address) is given or the host is an IP literal, by CIDR,
// overrides the settings it names.
func (e *Engine) HostSettings(host string, ip net.IP) (throttle.Settings, string) {
	name, hostport := normalizeHostPort(host)
	own := e.startHosts[hostport] || e.site.Load().has(hostport)
	s, from, kind := throttle.OtherHostDefaults(), "default for third-party hosts", "third-party"
	if own {
		s, from, kind = throttle.StartHostDefaults(), "default for start hosts", "start-host"
	}
	addr, ok := netip.AddrFromSlice(ip)
	if !ok {
		addr, _ = netip.ParseAddr(strings.Trim(name, "[]"))
	}
	for _, r := range e.hosts {
		if r.matches(name, hostport, addr) {
			for _, f := range r.apply {
				f(&s)
			}
			// The site's owner may ask for less than its robots.txt does
			// (qa5 N11: Crawl-delay 3600); another site's asks stand.
			s.OwnCrawlDelay = own && r.crawlDelay
			return s, r.desc + " over the " + kind + " default"
		}
	}
	return s, from
}

// normalizeHostPort returns the canonical host name and host:port (port
// only when one was given).
func normalizeHostPort(host string) (name, hostport string) {
	h, port := splitHostPort(strings.ToLower(strings.TrimSpace(host)))
	h = strings.TrimRight(h, ".")
	if !isASCII(h) {
		if a, err := punycode.ToASCII(h); err == nil {
			h = a
		}
	}
	if port == "" {
		return h, h
	}
	return h, h + ":" + port
}
