package crawler

import (
	"context"
	"errors"
	"net"
	"net/url"

	"github.com/linkpatrol/linkpatrol/throttle"
)

// Third-party hosts must not starve the site's own pages. A site with many
// external links has most of its tasks on other people's hosts, each
// slowed by that host's politeness, and without a bound they can hold every
// worker while the site's own pages wait. So:
//
//   - Tasks on third-party hosts hold at most thirdShare of the workers;
//     the rest is kept for the site's own hosts (the start hosts, and any
//     host whose URLs the rules parse).
//   - A host is probed before its first request: its name is looked up and
//     its robots.txt read, by probe workers of their own, so neither a slow
//     DNS server nor a slow robots.txt ever holds a fetch slot.
//   - A host whose name does not exist settles every URL on it at once, as
//     broken "dns", instead of one request (and one DNS timeout) per URL at
//     the third-party rate.

// thirdShare is the most workers third-party tasks may hold: all but a
// quarter (at least one) of them, which stay free for the site's own pages.
func thirdShare(workers int) int {
	return max(1, workers-max(1, workers/4))
}

// thirdFull says whether q is a third-party host and the third-party share
// of the workers is taken while the site's own hosts have work. Once they
// have none, none can come (only their pages are parsed), and the
// third-party tail may use every worker.
func (d *dispatcher) thirdFull(q *hostQueue) bool {
	return !q.own && d.third >= thirdShare(d.c.cfg.Concurrency) && d.ownBusy()
}

func (d *dispatcher) ownBusy() bool {
	for h := range d.ownHosts {
		if q := d.hosts[h]; q != nil && (q.len() > 0 || q.inflight > 0) {
			return true
		}
	}
	return false
}

// probeWorkers is how many host probes run at once. A probe mostly waits
// (a name lookup can take seconds, for a name that then does not exist),
// so there are more of them than workers.
func probeWorkers(workers int) int { return 4 * workers }

// slotKind is a slot a host can wait for out of the ring.
type slotKind uint8

const (
	slotNone  slotKind = iota
	slotProbe          // a probe worker (see probeFree)
	slotThird          // the third-party share of the workers (see thirdFull)
)

// probeFree says whether a host may be probed now.
func (d *dispatcher) probeFree() bool {
	return d.probe == nil && d.probing < probeWorkers(d.c.cfg.Concurrency)
}

// parkForSlot takes q, at the head of the ring, out of it until a slot of
// kind frees, so that the hosts behind it go on.
func (d *dispatcher) parkForSlot(q *hostQueue, kind slotKind) {
	d.leaveRing(q)
	q.slot = kind
	if kind == slotProbe {
		d.probeParked = append(d.probeParked, q)
	} else {
		d.thirdParked = append(d.thirdParked, q)
	}
}

// refillSlots returns hosts parked for a slot to the ring, in the order
// they were parked, as many as there are slots free: all of them once the
// site's own hosts have no work left, for third-party slots. Putting every
// parked host back whenever one slot freed cost the time of asking each
// again (qa8 S1). A host taken off for a slot and looked at without taking
// it (its URLs settled at once, or it must wait for its time) is counted
// no more, so the next one is taken off.
func (d *dispatcher) refillSlots() {
	for !d.probeOut && d.probeFree() && len(d.probeParked) > 0 {
		q := shift(&d.probeParked)
		if d.unparkSlot(q) {
			q.released, d.probeOut = slotProbe, true
		}
	}
	share := thirdShare(d.c.cfg.Concurrency)
	for len(d.thirdParked) > 0 && (d.third+d.thirdOut < share || !d.ownBusy()) {
		q := shift(&d.thirdParked)
		if d.unparkSlot(q) {
			q.released = slotThird
			d.thirdOut++
		}
	}
}

// unparkSlot puts q, off its slot's queue, back in the ring, and says
// whether it went in: a host that must wait for something else meanwhile
// (its request slots, a probe, its time) goes back when that ends.
func (d *dispatcher) unparkSlot(q *hostQueue) bool {
	q.slot = slotNone
	d.schedule(q)
	return q.inRing
}

// shift takes the first host off a queue of hosts.
func shift(qs *[]*hostQueue) *hostQueue {
	q := (*qs)[0]
	(*qs)[0] = nil
	*qs = (*qs)[1:]
	return q
}

// startProbe stages the probe of q's host; its URLs wait for it.
func (d *dispatcher) startProbe(q *hostQueue, probe task) {
	q.robots = robotsLoading
	d.leaveRing(q)
	q.inflight++
	q.requesting++
	d.probing++
	d.probe = &probe
}

// needsDNS says whether u's host name must be looked up before its first
// request. Only with the crawler's own transport: a caller's transport
// (a test's, a proxy's) may reach names the resolver does not know.
func (c *Crawler) needsDNS(u *url.URL) bool {
	if c.cfg.Transport != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	name := u.Hostname()
	if name == "" || net.ParseIP(name) != nil {
		return false
	}
	v, known := c.dns.Load(name)
	if tries, ok := v.(dnsTries); ok {
		return tries < maxDNSTries
	}
	return !known
}

// dnsTries counts the lookups of a name that failed for now (a timeout, a
// server failure); after maxDNSTries the requests are left to find out, so
// a resolver that never answers cannot keep a host's URLs waiting.
type dnsTries int

const maxDNSTries = 3

// deadHost is the lookup error of a host name that does not exist, nil for
// any other host.
func (c *Crawler) deadHost(hostport string) error {
	if hostport == "" {
		return nil
	}
	name := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		name = h
	}
	v, _ := c.dns.Load(name)
	err, _ := v.(error)
	return err
}

// probeHost looks the host's name up (see needsDNS), or reads its
// robots.txt when the probe holds a permit for it.
func (c *Crawler) probeHost(ctx context.Context, t task) {
	u := &url.URL{Scheme: t.robots, Host: t.host}
	if c.needsDNS(u) && !validHostName(u.Hostname()) {
		// "http://localhost]/" parses, but no resolver or dialer takes it:
		// its URLs are broken for what they are, not "no such host".
		c.dns.Store(u.Hostname(), errInvalidHost)
		if t.permit != nil {
			t.permit.Done(throttle.Outcome{Err: context.Canceled})
		}
		return
	}
	if c.needsDNS(u) {
		lctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
		_, err := net.DefaultResolver.LookupHost(lctx, u.Hostname())
		cancel()
		var dnsErr *net.DNSError
		switch {
		case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
			c.dns.Store(u.Hostname(), error(dnsErr))
			if t.permit != nil {
				t.permit.Done(throttle.Outcome{Err: context.Canceled}) // nothing to ask it
			}
			return
		case err == nil:
			c.dns.Store(u.Hostname(), nil)
		case ctx.Err() == nil: // failed for now; a stop decides nothing
			v, _ := c.dns.Load(u.Hostname())
			tries, _ := v.(dnsTries)
			c.dns.Store(u.Hostname(), tries+1)
		}
	}
	if t.permit != nil {
		c.loadRobots(ctx, t.robots, t.host, t.permit)
	}
}

// noteNoSuchHost remembers a name that a request found does not exist, as
// a probe would have: the probe's lookup may have failed only for now (a
// resolver that drops queries under load), or a caller's transport does the
// lookups. The rest of the host's URLs then settle at once instead of one
// request each at the host's pace.
func (c *Crawler) noteNoSuchHost(name string, err error) {
	var dnsErr *net.DNSError
	if name != "" && errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		c.dns.Store(name, error(dnsErr))
	}
}

// errInvalidHost marks a host name no lookup could succeed for.
var errInvalidHost = errors.New("invalid host")

// validHostName says whether name can be a DNS name: letters, digits,
// hyphens, dots and (as some real hosts have) underscores, within 253
// bytes. Canonical URLs carry IDNs as punycode already.
func validHostName(name string) bool {
	if name == "" || len(name) > 253 {
		return false
	}
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.', r == '_':
		default:
			return false
		}
	}
	return true
}
