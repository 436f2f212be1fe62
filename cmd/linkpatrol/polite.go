package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// politeFlags are the politeness settings for the audited site's own hosts
// (third-party hosts keep their conservative defaults unless a [[host]]
// rule of the config file says otherwise). Each flag is the [[host]] key
// of the same name (settingsTable's hostKey).
type politeFlags struct {
	rate                                   throttle.Rate
	window                                 throttle.Window
	bandwidth, quotaBytes, globalBandwidth int64
	burst, retries                         int
	quotaRequests                          int64
	maxPause, crawlDelay                   time.Duration
	ignoreRobots, adaptive                 bool
	groupHosts                             string
}

// hostRules turns the politeness flags the user gave into a [[host]] rule
// per start host, placed before the config file's so that flags win.
func (p *politeFlags) hostRules(fs *pflag.FlagSet, starts []string) []rules.HostRule {
	given := false
	for _, s := range settingsTable {
		given = given || s.hostKey != "" && fs.Changed(s.flag)
	}
	if !given {
		return nil
	}
	text := func(flag string, v fmt.Stringer) string {
		if !fs.Changed(flag) {
			return ""
		}
		return v.String()
	}
	var out []rules.HostRule
	for _, s := range starts {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			continue
		}
		r := rules.HostRule{Source: "command line", Match: u.Host, Rate: text("rate", p.rate), Window: text("window", p.window),
			Bandwidth: text("bandwidth", throttle.Size(p.bandwidth)), QuotaBytes: text("quota-bytes", throttle.Size(p.quotaBytes)),
			MaxPause: text("max-pause", throttle.Duration(p.maxPause)), CrawlDelay: text("crawl-delay", throttle.Duration(p.crawlDelay))}
		if fs.Changed("burst") {
			r.Burst = &p.burst
		}
		if fs.Changed("quota-requests") {
			r.QuotaRequests = &p.quotaRequests
		}
		if fs.Changed("ignore-robots") {
			r.IgnoreRobots = &p.ignoreRobots
		}
		if fs.Changed("adaptive") {
			r.Adaptive = &p.adaptive
		}
		if fs.Changed("retries") {
			r.Retries = &p.retries
		}
		out = append(out, r)
	}
	return out
}

// newThrottle builds the throttle with the engine's per-host settings,
// remembered per host: the crawler asks on every task. When some rule
// matches by CIDR, a host's settings depend on its resolved address, which
// is looked up once per host. byDomain groups hosts of one registrable
// domain under one set of limits. life is the longest a request lasts and
// perHost the crawl's own cap on requests in flight to a host (see
// throttle.Config.RequestLife).
func newThrottle(engine *rules.Engine, userAgent string, global int64, life time.Duration, perHost int, resolve, byDomain bool) (*throttle.Throttle, func(string) throttle.Settings) {
	var cache sync.Map
	type cached struct {
		host string
		// own: a host becomes the site's when a start URL redirects
		// there (rules.Engine.FollowStart), and its settings change.
		own bool
	}
	settings := func(host string) throttle.Settings {
		key := cached{host, engine.StartHost(host)}
		if s, ok := cache.Load(key); ok {
			return s.(throttle.Settings)
		}
		var ip net.IP
		if resolve {
			ip = lookupIP(host)
		}
		s, _ := engine.HostSettings(host, ip)
		cache.Store(key, s)
		return s
	}
	cfg := throttle.Config{Settings: settings, UserAgent: userAgent, GlobalBytesPerSec: global, RequestLife: life, PerHost: perHost}
	if byDomain {
		cfg.Key = throttle.DomainKey
	}
	return throttle.New(cfg), settings
}

// lookupIP resolves a host name for CIDR rules; an IP literal is itself,
// and a name that does not resolve in time matches no CIDR rule.
func lookupIP(hostport string) net.IP {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil {
		return ip
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil || len(addrs) == 0 {
		return nil
	}
	return addrs[0].IP
}

// hasCIDRRules says whether any [[host]] rule matches by address.
func hasCIDRRules(hosts []rules.HostRule) bool {
	for _, h := range hosts {
		if h.CIDR != "" {
			return true
		}
	}
	return false
}
