package crawler

import (
	"context"
	"errors"
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

// needsRobots says whether a request to host must wait for its robots.txt.
func (c *Crawler) needsRobots(scheme, host string) bool {
	if c.cfg.Throttle == nil || (scheme != "http" && scheme != "https") {
		return false
	}
	if c.cfg.HostSettings != nil && c.cfg.HostSettings(host).IgnoreRobots {
		return false
	}
	_, cached := c.cfg.Throttle.Robots(host)
	return !cached
}

// allowed answers robots.txt for a URL whose host's file is known (or
// ignored); an unknown file allows, which only happens for hosts that never
// needed one.
func (c *Crawler) allowed(u *url.URL) bool {
	if c.cfg.Throttle == nil || (u.Scheme != "http" && u.Scheme != "https") {
		return true
	}
	if c.cfg.HostSettings != nil && c.cfg.HostSettings(u.Host).IgnoreRobots {
		return true
	}
	r, ok := c.cfg.Throttle.Robots(u.Host)
	return !ok || r.Allowed(c.cfg.UserAgent, u.RequestURI())
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
		status, body := c.fetchRobots(ctx, scheme+"://"+host+"/robots.txt", p)
		if ctx.Err() != nil {
			return nil, ctx.Err() // stopped: neither allow nor forbid on a guess
		}
		c.cfg.Throttle.SetRobots(host, throttle.ParseRobots(status, body), c.cfg.Now())
		return nil, nil
	})
}

// fetchRobots follows up to five redirects (RFC 9309) and returns the final
// status (0 when the host could not be reached) and at most robotsLimit bytes.
func (c *Crawler) fetchRobots(ctx context.Context, target string, p *throttle.Permit) (int, []byte) {
	for hops := 0; hops <= 5; hops++ {
		u, err := url.Parse(target)
		if err != nil {
			return 0, nil
		}
		if p == nil {
			if p, err = c.acquire(ctx, u.Host); err != nil {
				return 0, nil
			}
		}
		h := c.requestWith(ctx, http.MethodGet, target, p, requestOpts{robots: true})
		p = nil
		if h.err != nil {
			if v, _ := classifyError(h.err); v == store.VerdictBroken {
				// No such host, or nothing listening: there is no server to
				// protect, and the links to it must be reported for what
				// they are, not skipped as if robots.txt forbade them.
				return http.StatusNotFound, nil
			}
			return 0, nil // overloaded or timing out: RFC 9309 says keep off
		}
		if !isRedirect(h.status) {
			return h.status, h.body
		}
		next, err := u.Parse(h.header.Get("Location"))
		if err != nil {
			return 0, nil
		}
		target = next.String()
	}
	// Too many redirects: RFC 9309 treats the file as unavailable (allow all).
	return http.StatusNotFound, nil
}

// acquire waits for the right to send one more request to host, for the
// requests of a task after its first (HEAD→GET fallback, redirect hops):
// the throttle counts them like any other, so no host is hit harder
// because a task needed two tries or landed on it by redirect.
func (c *Crawler) acquire(ctx context.Context, host string) (*throttle.Permit, error) {
	if c.cfg.Throttle == nil {
		return nil, nil
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
