package crawler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// robotsLimit is how much of a robots.txt we read: RFC 9309 asks crawlers
// to parse at least 500 KiB, and the throttle parses no more than that.
const robotsLimit = throttle.MaxRobotsSize

// robotsFor is host's robots.txt as the crawler reads it: need says the
// file must be fetched before a request to host; otherwise r answers, and
// a nil r (not http(s), ignored by the host's settings, no throttle)
// allows everything.
func (c *Crawler) robotsFor(scheme, host string) (r *throttle.Robots, need bool) {
	if c.cfg.Throttle == nil || (scheme != "http" && scheme != "https") {
		return nil, false
	}
	if c.cfg.HostSettings != nil && c.cfg.HostSettings(host).IgnoreRobots {
		return nil, false
	}
	r, cached := c.cfg.Throttle.Robots(host)
	return r, !cached
}

// needsRobots says whether a request to host must wait for its robots.txt.
func (c *Crawler) needsRobots(scheme, host string) bool {
	_, need := c.robotsFor(scheme, host)
	return need
}

// allowed answers robots.txt for a URL whose host's file is known (or
// ignored); an unknown file allows, which only happens for hosts that never
// needed one.
func (c *Crawler) allowed(u *url.URL) bool {
	r, _ := c.robotsFor(u.Scheme, u.Host)
	return r.Allowed(c.cfg.UserAgent, u.RequestURI())
}

// loadRobots fetches host's robots.txt once, however many workers ask at
// the same moment, through the host's throttle like any other request.
func (c *Crawler) loadRobots(ctx context.Context, scheme, host string, p *throttle.Permit) {
	_, _, _ = c.robotsOnce.Do(host, func() (any, error) {
		if _, ok := c.cfg.Throttle.Robots(host); ok {
			if p != nil {
				p.Done(throttle.Outcome{Err: context.Canceled})
			}
			return nil, nil
		}
		tries, _ := c.robotsTries.Load(host)
		n, _ := tries.(int)
		r := c.fetchRobots(ctx, scheme+"://"+host+"/robots.txt", p, n)
		if ctx.Err() != nil {
			return nil, ctx.Err() // stopped: neither allow nor forbid on a guess
		}
		if r == nil {
			// The host asked for a pause (or is backing off): its robots.txt
			// is asked again after it, rather than keeping the crawler off
			// the whole host for an hour over a short pause.
			c.robotsTries.Store(host, n+1)
			return nil, nil
		}
		c.robotsTries.Delete(host)
		c.cfg.Throttle.SetRobots(host, r, c.cfg.Now())
		return nil, nil
	})
}

// fetchRobots follows up to five redirects (RFC 9309) and reads the answer:
// the file's rules, allow all (4xx, too many redirects, no server there at
// all) or, for a host that is failing, disallow all with its cause; nil
// when the throttle says to try again (a 429 or 503, a timeout, within the
// host's retries: tries is how many were made).
func (c *Crawler) fetchRobots(ctx context.Context, target string, p *throttle.Permit, tries int) *throttle.Robots {
	for hops := 0; hops <= 5; hops++ {
		u, err := url.Parse(target)
		if err != nil {
			// Only a redirect leads here: like too many redirects, the
			// file is unavailable (RFC 9309 §2.3.1.2), which allows all.
			return throttle.ParseRobots(http.StatusNotFound, nil)
		}
		if p == nil {
			if p, err = c.acquire(ctx, u.Host, ""); err != nil {
				return throttle.UnreachableRobots(err.Error())
			}
		}
		h := c.requestWith(ctx, http.MethodGet, target, p, requestOpts{robots: true, attempt: tries})
		p = nil
		if h.retry && c.cfg.Throttle != nil {
			return nil
		}
		if h.err != nil {
			v, class := classifyError(h.err)
			if v == store.VerdictBroken {
				// No such host, nothing listening, no TLS: there is no
				// server to protect, and each link to it is reported for
				// what it is when it is requested.
				return throttle.ParseRobots(http.StatusNotFound, nil)
			}
			return throttle.UnreachableRobots(class) // overloaded or timing out: RFC 9309 says keep off
		}
		if !isRedirect(h.status) {
			return throttle.ParseRobots(h.status, h.body)
		}
		next, err := u.Parse(h.header.Get("Location"))
		if err != nil {
			return throttle.ParseRobots(http.StatusNotFound, nil)
		}
		target = next.String()
	}
	// Too many redirects: RFC 9309 treats the file as unavailable (allow all).
	return throttle.ParseRobots(http.StatusNotFound, nil)
}

// robotsRefusal is the record of a URL that robots.txt keeps us from
// requesting. A file that forbids it makes it skipped; a file that could
// not be fetched is a host failing, and RFC 9309 keeps crawlers off such a
// host for a while: its URLs are problems with that real cause, never
// "skipped" as if the site had asked for it.
func (c *Crawler) robotsRefusal(pass store.Pass, u string, host string) store.Result {
	r, _ := c.cfg.Throttle.Robots(host)
	if !r.Failed() {
		return c.immediate(pass, u, store.VerdictSkipped, "robots", "skipped: robots.txt disallows it")
	}
	return c.immediate(pass, u, store.VerdictTransient, robotsFailure(r), heldByRobots)
}

const heldByRobots = "not requested: RFC 9309 keeps crawlers off a host until its robots.txt can be read (tried again within the hour)"

// robotsFailure names why a robots.txt could not be read, for a person.
func robotsFailure(r *throttle.Robots) string {
	switch st := r.Status(); {
	case st == 0:
		return "robots.txt could not be fetched (" + r.Cause() + "): the host is failing"
	case st == http.StatusTooManyRequests:
		return "robots.txt answered 429: the host is rate-limiting"
	default:
		return fmt.Sprintf("robots.txt answered %d: the host is failing", st)
	}
}

// heldBackBy says what a URL held back by a server's pause beyond what
// this run may wait (a Retry-After past MaxPause) on the request for target
// (the URL, or a later hop of its chain) becomes. It is never hidden: on a
// third-party host the URL could not be verified, and that is its verdict;
// on the site's own hosts it is provisional and stays queued, the pass is
// not complete, and running the same command again checks it. until is
// the end of the pause on the site's own hosts, zero on a third party's.
// The error class is always "rate-limited".
func (c *Crawler) heldBackBy(target string) (v store.Verdict, note string, until time.Time) {
	host := hostOf(target)
	end, _ := c.cfg.Throttle.Deferred(host, target)
	var maxPause time.Duration
	if c.cfg.HostSettings != nil {
		maxPause = c.cfg.HostSettings(host).MaxPause
	}
	wait := fmt.Sprintf("Retry-After %s (until %s)", roughly(end.Sub(c.cfg.Now())), end.Local().Format("2006-01-02 15:04"))
	if c.rules.StartHost(host) {
		return store.VerdictTransient, fmt.Sprintf("%s, longer than --max-pause %s; run the same command again after then to check it", wait, roughly(maxPause)), end
	}
	return store.VerdictUnverifiable, fmt.Sprintf("%s, longer than the %s this run waits for a third-party host (max_pause of a [[host]] rule)", wait, roughly(maxPause)), time.Time{}
}

// deferral is the result of task t held back by a pause on the request
// for target (see heldBackBy), kept queued when until is not zero.
func (c *Crawler) deferral(pass store.Pass, t task, target string) (res store.Result, until time.Time) {
	v, note, until := c.heldBackBy(target)
	res = c.unfetched(pass, t.URL, v, "rate-limited", note)
	if !until.IsZero() {
		res.Record.Action = t.Action
		requeue(&res, t.Depth)
	}
	return res, until
}

// heldOwn says whether rec is that of a URL of the site's own hosts held
// back by a pause, kept queued (see heldBackBy).
func heldOwn(rec store.URLRecord) bool {
	return rec.Error == "rate-limited" && rec.Verdict == store.VerdictTransient
}

// requeue keeps the URL of res queued, to be done again on resume.
func requeue(res *store.Result, depth int) {
	res.Requeue = &store.Task{URL: res.Record.URL, Action: res.Record.Action, Depth: depth}
}

// roughly rounds a duration for people: 59m58s is "1h".
func roughly(d time.Duration) string {
	if d >= time.Hour {
		d = d.Round(time.Minute)
	} else {
		d = d.Round(time.Second)
	}
	return throttle.FormatDuration(d)
}

// acquire waits for the right to send one more request to host, for the
// requests of a task after its first (HEAD→GET fallback, redirect hops):
// the throttle counts them like any other, so no host is hit harder
// because a task needed two tries or landed on it by redirect.
// A key (the URL) held back by a pause of its own is refused like a
// deferred host.
func (c *Crawler) acquire(ctx context.Context, host, key string) (*throttle.Permit, error) {
	if c.cfg.Throttle == nil {
		return nil, nil
	}
	if _, held := c.cfg.Throttle.Deferred(host, key); held && key != "" {
		return nil, fmt.Errorf("%s: %w", key, throttle.ErrDeferred)
	}
	for {
		p, wait, err := c.cfg.Throttle.Reserve(host)
		if err != nil || p != nil {
			return p, err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-c.cfg.Throttle.Ready():
			t.Stop()
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
}

// politeClass names what the throttle refused, for the record of the URL.
func politeClass(err error) string {
	switch {
	case errors.Is(err, throttle.ErrQuota):
		return "quota"
	case errors.Is(err, throttle.ErrDeferred):
		return "deferred"
	}
	return ""
}

// countingReader counts body bytes for the throttle's Outcome, and keeps
// the first error reading them other than the end of the body.
type countingReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF && c.err == nil {
		c.err = err
	}
	return n, err
}

// saveHostState writes the per-host state (pauses, backoff, quota used,
// robots.txt) that changed since it last did, in one transaction, so that
// a restart never hits a paused host early.
func (c *Crawler) saveHostState() error {
	if c.cfg.Throttle == nil {
		return nil
	}
	changed := c.cfg.Throttle.Changed()
	states := make(map[string][]byte, len(changed))
	for _, h := range changed {
		if h == "" {
			continue
		}
		b, err := c.cfg.Throttle.ExportState(h)
		if err != nil {
			return err
		}
		states[h] = b
	}
	return c.store.PutHostStates(states)
}

// loadHostState restores what saveHostState wrote.
func (c *Crawler) loadHostState(passID uint64) error {
	if c.cfg.Throttle == nil {
		return nil
	}
	c.cfg.Throttle.StartPass(passID)
	// State that no pass needs any more is forgotten, so that what is kept
	// grows with the hosts that matter now, not with every host ever met.
	expired := make(map[string][]byte)
	err := c.store.ForEachHostState(func(host string, b []byte) error {
		if c.cfg.Throttle.Expired(b) {
			expired[host] = nil
			return nil
		}
		if err := c.cfg.Throttle.ImportState(host, b); err != nil {
			c.cfg.Logger.Warn("ignoring saved host state", "host", host, "err", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return c.store.PutHostStates(expired)
}
