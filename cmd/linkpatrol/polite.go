package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// politeFlags are the politeness settings for the audited site's own hosts
// (third-party hosts keep their conservative defaults unless a [[host]]
// rule of the config file says otherwise).
type politeFlags struct {
	rate, window, bandwidth, quotaBytes, globalBandwidth string
	burst, retries                                       int
	quotaRequests                                        int64
	maxPause, crawlDelay                                 string
	ignoreRobots, adaptive                               bool
	groupHosts                                           string
}

func (p *politeFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&p.rate, "rate", "", "requests per second to the site's hosts, e.g. 5/s or 300/m (default unlimited)")
	fs.IntVar(&p.burst, "burst", 0, "requests allowed at once above --rate")
	fs.StringVar(&p.window, "window", "", "at most N requests in any sliding window, e.g. 100/1m")
	fs.StringVar(&p.bandwidth, "bandwidth", "", "bytes per second read from one of the site's hosts, e.g. 512KiB")
	fs.StringVar(&p.globalBandwidth, "global-bandwidth", "", "bytes per second read from all hosts together")
	fs.Int64Var(&p.quotaRequests, "quota-requests", 0, "most requests to one of the site's hosts in a pass (0 = no quota)")
	fs.StringVar(&p.quotaBytes, "quota-bytes", "", "most bytes read from one of the site's hosts in a pass, e.g. 2GB")
	fs.StringVar(&p.maxPause, "max-pause", "", "longest Retry-After pause waited for; a longer one holds back the URL that asked (the whole host when a second URL or robots.txt asks too) to a later run of the same command, which then exits 3 (default 10m)")
	fs.StringVar(&p.crawlDelay, "crawl-delay", "", "minimum gap between requests to one of the site's hosts, e.g. 200ms")
	fs.BoolVar(&p.ignoreRobots, "ignore-robots", false, "ignore robots.txt on the site's own hosts (never on others)")
	fs.IntVar(&p.retries, "retries", 0, "retries of a URL after 429, 503, timeouts or connection errors")
	fs.StringVar(&p.groupHosts, "group-hosts", "host", "what shares one set of limits: host (each host:port) or domain (all hosts of a registrable domain)")
	fs.BoolVar(&p.adaptive, "adaptive", false, "slow down on the site's own hosts when their response times climb (always on for third-party hosts)")
}

// hostRules turns the flags the user gave into a [[host]] rule per start
// host, placed before the config file's so that flags win.
func (p *politeFlags) hostRules(fs *pflag.FlagSet, starts []string) []rules.HostRule {
	changed := func(names ...string) bool {
		for _, n := range names {
			if fs.Changed(n) {
				return true
			}
		}
		return false
	}
	if !changed("rate", "burst", "window", "bandwidth", "quota-requests", "quota-bytes", "max-pause", "crawl-delay", "ignore-robots", "retries", "adaptive") {
		return nil
	}
	var out []rules.HostRule
	for _, s := range starts {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			continue
		}
		r := rules.HostRule{Source: "command line", Match: u.Host, Rate: p.rate, Window: p.window,
			Bandwidth: p.bandwidth, QuotaBytes: p.quotaBytes, MaxPause: p.maxPause, CrawlDelay: p.crawlDelay}
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
// domain under one set of limits.
func newThrottle(engine *rules.Engine, userAgent string, global int64, resolve, byDomain bool) (*throttle.Throttle, func(string) throttle.Settings) {
	var cache sync.Map
	settings := func(host string) throttle.Settings {
		if s, ok := cache.Load(host); ok {
			return s.(throttle.Settings)
		}
		var ip net.IP
		if resolve {
			ip = lookupIP(host)
		}
		s, _ := engine.HostSettings(host, ip)
		cache.Store(host, s)
		return s
	}
	cfg := throttle.Config{Settings: settings, UserAgent: userAgent, GlobalBytesPerSec: global}
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

// parseBytesFlag reads a byte size flag; "" is 0 (unlimited).
func parseBytesFlag(name, v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	n, err := throttle.ParseBytes(v)
	if err != nil {
		return 0, fmt.Errorf("--%s %s: %v", name, strconv.Quote(v), err)
	}
	return n, nil
}
