package crawler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// robotsLimit is how much of a robots.txt we read: RFC 9309 asks crawlers
// to parse at least 500 KiB, and the throttle parses no more than that.
const robotsLimit = throttle.MaxRobotsSize

// robotsAnswer is what robots.txt says about requesting a URL now.
type robotsAnswer uint8

const (
	// robotsNotRead: the host's file must be read first.
	robotsNotRead robotsAnswer = iota
	// robotsAllowed: the file allows it, or does not apply (no throttle,
	// a host whose robots.txt is ignored, not http).
	robotsAllowed
	// robotsDisallowed: the file forbids it; the URL is skipped.
	robotsDisallowed
	// robotsFailing: the file could not be read, and RFC 9309 keeps
	// crawlers off the host: its URLs are transient, never skipped.
	robotsFailing
)

// robotsGate is the one place robots.txt is asked about a URL: by the
// dispatcher before a task's first request, on a worker for each link a
// page writes (so the dispatcher need not), and for each redirect hop.
// allowed says the URL was found allowed before (by whoever found it), so
// that only whether the host's file is still known is asked again.
func (c *Crawler) robotsGate(u *url.URL, allowed bool) robotsAnswer {
	var m robotsMemo
	return m.gate(c, u, allowed)
}

// robotsMemo keeps what robotsGate looked up for the host of the last URL
// asked through it: most links of a page share a host, and the lookup
// (the host's settings, and its file from the throttle under a read lock
// and the host's limiter lock, which every request's Reserve and Done
// contend for) was 4% of the CPU of a check when done for every link.
type robotsMemo struct {
	scheme, host string
	set          bool
	apply        bool // the host's file applies to its URLs
	known        bool // and has been read: robots answers
	robots       *throttle.Robots
	agent        throttle.RobotsAgent // robots for our User-Agent
}

// gate is robotsGate, looking the host's file up again only for a URL on
// another scheme or host than the last one.
func (m *robotsMemo) gate(c *Crawler, u *url.URL, allowed bool) robotsAnswer {
	if !m.set || m.scheme != u.Scheme || m.host != u.Host {
		*m = robotsMemo{scheme: u.Scheme, host: u.Host, set: true}
		m.apply = c.cfg.Throttle != nil && (u.Scheme == "http" || u.Scheme == "https") &&
			(c.cfg.HostSettings == nil || !c.cfg.HostSettings(u.Host).IgnoreRobots)
		if m.apply {
			m.robots, m.known = c.cfg.Throttle.Robots(u.Host)
			m.agent = m.robots.Agent(c.cfg.UserAgent)
		}
	}
	switch {
	case !m.apply:
		return robotsAllowed
	case !m.known:
		return robotsNotRead
	case allowed || m.agent.Allowed(u.RequestURI()):
		return robotsAllowed
	case m.robots.Failed():
		return robotsFailing
	}
	return robotsDisallowed
}

// robotsRefused is why robots.txt kept a request for a URL on host from
// being sent (a robotsDisallowed or robotsFailing answer): a file that
// forbids it makes it skipped; a file that could not be fetched is a host
// failing, and RFC 9309 keeps crawlers off such a host for a while: its
// URLs are problems with that real cause, never "skipped" as if the site
// had asked for it.
func (c *Crawler) robotsRefused(host string, a robotsAnswer) (v store.Verdict, class, note string) {
	if a == robotsFailing {
		r, _ := c.cfg.Throttle.Robots(host)
		class, note := robotsFailure(r)
		return store.VerdictTransient, class, note
	}
	return store.VerdictSkipped, store.ErrorRobots, "skipped: robots.txt disallows it"
}

// robotsAgain is where a host's robots.txt fetch that the throttle asked to
// try again stands: the tries so far, and what the last one got (cause,
// see fetchRobots).
type robotsAgain struct {
	tries retries
	cause string
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
		stored, _ := c.robotsTries.Load(host)
		last, _ := stored.(robotsAgain)
		r, cause := c.fetchRobots(ctx, scheme+"://"+host+"/robots.txt", p, &last.tries)
		if ctx.Err() != nil {
			return nil, ctx.Err() // stopped: neither allow nor forbid on a guess
		}
		if r == nil {
			// The host asked for a pause (or is backing off): its robots.txt
			// is asked again after it, rather than keeping the crawler off
			// the whole host for an hour over a short pause.
			if cause == "" {
				cause = last.cause // not asked this time: what the last try got still holds
			}
			c.robotsTries.Store(host, robotsAgain{last.tries, cause})
			return nil, nil
		}
		c.robotsTries.Delete(host)
		c.cfg.Throttle.SetRobots(host, r, c.cfg.Now())
		c.warnCrawlDelay(host)
		return nil, nil
	})
}

// slowCrawlDelay is the Crawl-delay from which a run says at once what it
// will cost: at 10 s, 1,000 pages of a host take close to three hours.
const slowCrawlDelay = 10 * time.Second

// warnCrawlDelay warns, once a run, of a host whose robots.txt asks for a
// long Crawl-delay: the run then looks idle for minutes or hours, and
// only the warning says why (qa5 N11: Crawl-delay 3600, two silent
// minutes, a six-page site to take six hours). It says what the delay
// costs and what would change it: on the site's own hosts it is kept at
// the host's max pause at most, and the owner's crawl delay takes its
// place; another site's is kept in full, and when longer than its max
// pause its links are held back (see heldBackBy).
func (c *Crawler) warnCrawlDelay(host string) {
	asked, kept := c.cfg.Throttle.CrawlDelay(host)
	if asked < slowCrawlDelay || kept == 0 {
		return // short, ignored with robots.txt, or the owner's own in its place
	}
	if _, warned := c.slowHosts.LoadOrStore(host, true); warned {
		return
	}
	msg := fmt.Sprintf("%s: robots.txt asks for Crawl-delay %s", host, throttle.FormatDuration(asked))
	if kept < asked {
		msg += fmt.Sprintf(", more than the host's max pause: kept at %s", throttle.FormatDuration(kept))
	}
	var maxPause time.Duration
	if c.cfg.HostSettings != nil {
		maxPause = c.cfg.HostSettings(host).MaxPause
	}
	own := c.rules.StartHost(host)
	if !own && maxPause > 0 && kept > maxPause {
		// Never asked sooner than it asks, and not waited for longer
		// than max_pause: its URLs are held back (see heldBackBy).
		msg += fmt.Sprintf(", longer than its max pause %s: another site's is not shortened, so its links are not checked this pass (unverifiable); max_pause in a [[host]] for it raises the wait", throttle.FormatDuration(maxPause))
		c.cfg.Logger.Warn(msg, "host", host, "crawl_delay", asked, "gap", kept)
		return
	}
	msg += fmt.Sprintf(", so at most %s requests an hour to it", strconv.FormatFloat(math.Floor(float64(time.Hour)/float64(kept)), 'f', -1, 64))
	if own {
		msg += "; --crawl-delay (crawl_delay in a [[host]] for it) sets the site's own delay in its place"
		if kept < asked {
			msg += ", --max-pause raises the cap"
		}
	} else {
		msg += "; it is another site's, kept in full"
	}
	c.cfg.Logger.Warn(msg, "host", host, "crawl_delay", asked, "gap", kept)
}

// fetchRobots follows up to five redirects (RFC 9309) and reads the answer:
// the file's rules, allow all (4xx, too many redirects, a redirect to a
// host the rules never request, no such host; nothing listening, for as
// long as the host answers nothing: throttle.NoServerRobots) or, for a host
// that is failing, disallow all with its cause; nil when the throttle says
// to try again (a 429 or 503, a timeout, within the host's retries),
// counted in tries, with what that try got: a status
// ("503 Service Unavailable") or an error's class ("timeout").
func (c *Crawler) fetchRobots(ctx context.Context, target string, p *throttle.Permit, tries *retries) (*throttle.Robots, string) {
	for hops := 0; hops <= 5; hops++ {
		u, err := url.Parse(target)
		if err != nil {
			// Only a redirect leads here: like too many redirects, the
			// file is unavailable (RFC 9309 §2.3.1.2), which allows all.
			return throttle.ParseRobots(http.StatusNotFound, nil), ""
		}
		if p == nil {
			if p, err = c.acquire(ctx, u.Host, ""); err != nil {
				if hops == 0 && errors.Is(err, throttle.ErrDeferred) {
					// The host itself is paused past what this run waits
					// (its robots.txt asked it with a long Retry-After) or
					// stopped answering: nothing was asked, so nothing
					// failed. Read later, as its own URLs are (review7
					// RV2 #5: a redirect here once made the host "failing").
					return nil, ""
				}
				return throttle.UnreachableRobots(err.Error()), ""
			}
		}
		h := c.requestWith(ctx, http.MethodGet, target, p, requestOpts{robots: true, retries: *tries})
		p = nil
		if h.retry && c.cfg.Throttle != nil {
			tries.count(h.comeback)
			again := strings.TrimSpace(strconv.Itoa(h.status) + " " + http.StatusText(h.status))
			if h.err != nil {
				_, again = classifyError(h.err)
			}
			return nil, again
		}
		if h.err != nil {
			v, class := classifyError(h.err)
			if class == "refused" {
				// Nothing listening: no server to protect, so its URLs
				// are requested and each reported for what it gets; but
				// only until the host answers, and never saved as its
				// rules: a server restarting refuses for a moment, and
				// its robots.txt then still applies (qa8 B2).
				return throttle.NoServerRobots(class), ""
			}
			if v == store.VerdictBroken {
				// No such host, no TLS: there is no server to protect,
				// and each link to it is reported for what it is when
				// it is requested.
				return throttle.ParseRobots(http.StatusNotFound, nil), ""
			}
			return throttle.UnreachableRobots(class), "" // overloaded or timing out: RFC 9309 says keep off
		}
		if !isRedirect(h.status) {
			return throttle.ParseRobots(h.status, h.body), ""
		}
		// No Location, or one that does not parse (keepBadLocation set it
		// aside): the file is unavailable (allow all), and not asked for
		// again, as u.Parse("") (u itself) would.
		next, err := u.Parse(h.header.Get("Location"))
		if err != nil || h.header.Get("Location") == "" {
			return throttle.ParseRobots(http.StatusNotFound, nil), ""
		}
		// Followed wherever it leads, whatever --offline, --exclude or a
		// rule say of links: RFC 9309 §2.3.1.2 says a file reached within
		// five redirects MUST be read and obeyed for this host, and the
		// request is made for the host's sake, to be polite to it. Taking
		// it as absent instead (allow all) once let --offline fetch pages
		// the site's own robots.txt disallows (review7 RV2 #4).
		target = next.String()
	}
	// Too many redirects: RFC 9309 treats the file as unavailable (allow all).
	return throttle.ParseRobots(http.StatusNotFound, nil), ""
}

// robotsNotYet is why a redirect hop to host was not requested when its
// robots.txt could not be read yet, the throttle asking for another try
// later: a status that asked for a pause, or a failure, which RFC 9309
// keeps crawlers off the host for (qa7: an unreachable host was said to
// have "asked to wait").
func (c *Crawler) robotsNotYet(host string) (class, note string) {
	stored, _ := c.robotsTries.Load(host)
	last, _ := stored.(robotsAgain)
	cause := last.cause
	switch {
	case cause == "":
		return "robots.txt not read yet", "the redirect target's host's robots.txt could not be read yet; tried again next pass"
	case cause[0] >= '1' && cause[0] <= '9':
		return "robots.txt asked to wait", "the redirect target's host answered its robots.txt with " + cause + "; tried again next pass"
	}
	return "robots.txt could not be fetched (" + cause + ")", "RFC 9309 keeps crawlers off a host until its robots.txt can be read; tried again next pass"
}

// robotsRefusal is the record of a URL that robots.txt keeps us from
// requesting (see robotsRefused).
func (c *Crawler) robotsRefusal(pass store.Pass, u string, host string, a robotsAnswer) store.Result {
	v, class, note := c.robotsRefused(host, a)
	return c.immediate(pass, u, v, class, note)
}

const heldByRobots = "not requested: RFC 9309 keeps crawlers off a host until its robots.txt can be read (asked again within the hour, and by the next run)"

// dnsAgain is the note of a URL whose host's name did not resolve: no
// robots.txt was asked, so none is blamed (qa10 Q4).
const dnsAgain = "the name is looked up again within the hour, and by the next run"

// robotsFailure names why a robots.txt could not be read, for a person
// (class), and what keeps the host's URLs from being requested (note).
func robotsFailure(r *throttle.Robots) (class, note string) {
	switch st := r.Status(); {
	case st == 0 && r.Cause() == "dns":
		// The name did not resolve for want of an answer (the resolver
		// unreachable, a lookup timing out): nothing reached the host,
		// which may be fine (qa9 T8: 1,940 links of 1,940 "failing"
		// hosts on a night the machine's DNS was down).
		return "DNS lookup failed, not the host: nothing was requested", dnsAgain
	case st == 0:
		return "robots.txt could not be fetched (" + r.Cause() + "): the host is failing", heldByRobots
	case st == http.StatusTooManyRequests:
		return "robots.txt answered 429: the host is rate-limiting", heldByRobots
	default:
		return fmt.Sprintf("robots.txt answered %d: the host is failing", st), heldByRobots
	}
}

// stoppedAnswering is the class of another site's URL held back because
// its host stopped answering (see heldBackBy).
const stoppedAnswering = "stopped answering"

// hold is what a URL held back to a later run becomes (see heldBackBy).
type hold struct {
	verdict store.Verdict
	class   string // store.ErrorRateLimited, store.ErrorHostDown, or "stopped answering" (another site's host down, not queued)
	note    string
	// until is when the URL may be asked again, on the site's own hosts:
	// it stays queued, and the pass is not complete; zero on a third
	// party's, whose URL this verdict settles.
	until time.Time
	// downSince and downAfter: the host stopped answering (see
	// throttle.Throttle.Down), then, after that many answers.
	downSince time.Time
	downAfter int64
}

// record writes h onto rec.
func (h hold) record(rec *store.URLRecord) {
	rec.Verdict, rec.Error, rec.Note = h.verdict, h.class, h.note
	if h.class == store.ErrorHostDown {
		rec.DownSince, rec.DownAfter = h.downSince, int(h.downAfter)
	}
}

// heldBackBy says what a URL held back to a later run on the request for
// target (the URL, or a later hop of its chain) becomes: held by a
// server's pause beyond what this run may wait (a Retry-After past
// MaxPause), or because its host stopped answering (it answered earlier
// in the pass, then left every request unanswered through a URL's
// retries: a server going down, hung or restarting, not a dead link, qa6
// Q2). It is never hidden:
// on a third-party host the URL could not be verified (a pause) or is
// transient (the host down), and that is its verdict; on the site's own
// hosts it is provisional and stays queued, the pass is not complete, and
// running the same command again checks it.
func (c *Crawler) heldBackBy(target string) hold {
	host := hostOf(target)
	own := c.rules.StartHost(host)
	if d, down := c.cfg.Throttle.Down(host); down {
		what := fmt.Sprintf("%s answered %d requests of this pass, then %s from %s on (the server stopped, hangs or is restarting)",
			d.Host, d.Answered, d.How, d.Since.Local().Format("2006-01-02 15:04:05"))
		if d.Host != host {
			// Held back with the host it shares its limits with, not for
			// anything it did itself.
			what = fmt.Sprintf("held back with %s, which shares its limits (--group-hosts): %s", d.Host, what)
		}
		if !own {
			return hold{verdict: store.VerdictTransient, class: stoppedAnswering, note: what + ": not checked, not a dead link"}
		}
		return hold{verdict: store.VerdictTransient, class: store.ErrorHostDown, until: d.Since, downSince: d.Since, downAfter: d.Answered,
			note: "not checked: " + what + "; run the same command again to check it"}
	}
	end, _ := c.cfg.Throttle.Deferred(host, target)
	var maxPause time.Duration
	if c.cfg.HostSettings != nil {
		maxPause = c.cfg.HostSettings(host).MaxPause
	}
	if asked, kept := c.cfg.Throttle.CrawlDelay(host); !own && maxPause > 0 && kept > maxPause {
		// Another site's Crawl-delay is never shortened (review6 B): the
		// run would have to wait longer than it may before asking again.
		return hold{verdict: store.VerdictUnverifiable, class: store.ErrorRateLimited,
			note: fmt.Sprintf("robots.txt asks for Crawl-delay %s, longer than max_pause %s: not checked this pass",
				throttle.FormatDuration(asked), throttle.FormatDuration(maxPause))}
	}
	now := c.cfg.Now()
	left, at := roughly(end.Sub(now)), end.Local().Format("2006-01-02 15:04")
	if end.Sub(now) > throttle.MaxRetryAfter-time.Hour {
		// Longer ones (a year 9999) are kept as this long: the server
		// asked for no time anyone waits for (qa8 R1).
		left = "at least " + left
	}
	wait := fmt.Sprintf("Retry-After %s (until %s)", left, at)
	if asked, from := c.cfg.Throttle.PausedBy(host, target); !asked && len(from) > 0 {
		// The URL asked for nothing itself: its host did, through the
		// URLs that did, while it served nothing else (qa8 R1: each URL
		// never requested read as told "Retry-After 1d" itself).
		others := ""
		switch n := len(from) - 1; {
		case n == 1:
			others = " and 1 other URL"
		case n > 1:
			others = fmt.Sprintf(" and %d other URLs", n)
		}
		wait = fmt.Sprintf("not checked: on %s%s, while it served no other page, its host asked for a pause of %s (until %s)", from[0], others, left, at)
	}
	if since := c.cfg.Throttle.Refusing(host); !since.IsZero() && (maxPause <= 0 || end.Sub(now) <= maxPause) {
		// No one pause was too long: the host refused every request
		// for longer than this run waits (see throttle.Decision.Comeback).
		wait = fmt.Sprintf("the host has answered every request with 429 or 503 and a Retry-After since %s (%s), next %s", since.Local().Format("15:04"), roughly(now.Sub(since)), wait)
	}
	if own {
		return hold{verdict: store.VerdictTransient, class: store.ErrorRateLimited, until: end,
			note: fmt.Sprintf("%s, longer than --max-pause %s; run the same command again after then to check it", wait, roughly(maxPause))}
	}
	return hold{verdict: store.VerdictUnverifiable, class: store.ErrorRateLimited,
		note: fmt.Sprintf("%s, longer than the %s this run waits for a third-party host (max_pause of a [[host]] rule)", wait, roughly(maxPause))}
}

// deferral is the result of task t held back on the request for target
// (see heldBackBy), kept queued when until is not zero.
func (c *Crawler) deferral(pass store.Pass, t task, target string) (res store.Result, until time.Time) {
	h := c.heldBackBy(target)
	if !h.until.IsZero() && h.class == store.ErrorRateLimited && target == t.URL && c.heldAgain(pass, t) {
		// Held back in an earlier run of this pass, asked again once its
		// pause ran out, and it asked for another: a daily limit, say.
		// Held again, it would keep the pass open forever, each run
		// asking this URL alone (qa8 R2). It is final for this pass:
		// unverifiable, and the next pass asks it again.
		h = hold{verdict: store.VerdictUnverifiable, class: store.ErrorRateLimited,
			note: "asked again after the pause it asked for earlier in this pass ran out, it asked for another: " +
				strings.TrimSuffix(h.note, "; run the same command again after then to check it") + ": not checked this pass"}
	}
	res = c.unfetched(pass, t.URL, h.verdict, h.class, h.note)
	h.record(&res.Record)
	if !h.until.IsZero() {
		res.Record.Action = t.Action
		requeue(&res, t.Depth, t.Public)
	}
	return res, h.until
}

// heldAgain says whether t was requested in this run and refused, its URL
// held back by a long pause in an earlier run of this pass: a URL a
// restart finds still inside its pause is held without a request (its
// tries are those earlier runs used), so a short outage is still waited out.
func (c *Crawler) heldAgain(pass store.Pass, t task) bool {
	if t.retries == t.restored {
		return false
	}
	prev, ok, err := c.store.Get(t.URL)
	if err != nil {
		c.readFailed("read previous result", err, "url", t.URL)
		return false
	}
	return ok && prev.Pass == pass.ID && prev.HeldOwn() && prev.Error == store.ErrorRateLimited
}

// requeue keeps the URL of res queued, to be done again on resume, public
// when a redirect from another origin reached it.
func requeue(res *store.Result, depth int, public bool) {
	res.Requeue = &store.Task{URL: res.Record.URL, Action: res.Record.Action, Depth: depth, Public: public}
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
// requests of a task after its first that cannot be handed back (reading
// robots.txt): the throttle counts them like any other, so no host is hit
// harder because a task needed two tries or landed on it by redirect. A
// key (the URL) held back by a pause of its own is refused like a deferred
// host.
func (c *Crawler) acquire(ctx context.Context, host, key string) (*throttle.Permit, error) {
	return c.acquireNext(ctx, host, key, -1)
}

// maxHopWait is the longest a worker waits for the throttle's permit for a
// redirect hop: about the gap between two requests at a polite rate. A hop
// that must wait longer (a Retry-After pause, a slow rate) is left to a
// task of its own, queued once the wait is over, which the chain's records
// wait on (see hopRefused); that task is one more turn of the queue, so a
// short wait is sat out. A GET after a refused HEAD, or the one that parses
// a page a check found (see upgrade), never waits: handed back, it becomes
// the task's first request, and nothing is asked twice.
const maxHopWait = time.Second

// hopWithin is how long a redirect hop whose request follows policy may
// wait for its host's permit inside the chain's task (ctx): maxHopWait,
// and never into the time that request has before the task's deadline. A
// hop that waited for linkpatrol's own pace and then ran out of time at
// the server would be reported as the server's timeout (qa9 T1); handed
// off instead, it waits in the dispatcher, and its request gets its full
// timeout when its turn comes.
func (c *Crawler) hopWithin(ctx context.Context, policy *rules.Policy) time.Duration {
	within := maxHopWait
	if deadline, ok := ctx.Deadline(); ok {
		within = min(within, time.Until(deadline)-c.timeout(policy))
	}
	return max(within, 0)
}

// waitError says the throttle asked a follow-up request to wait longer than
// its worker holds on for.
type waitError struct{ wait time.Duration }

func (e *waitError) Error() string { return "the host asks to wait " + roughly(e.wait) }

// acquireNext is acquire for a redirect hop or a follow-up GET,
// waiting at most within in all (no bound when below 0); a longer wait is
// a *waitError, and the task goes back to the dispatcher (see
// followUpRefused). The bound is on the whole wait, not on each turn of
// it: the dispatcher takes the host's permits for its new URLs meanwhile,
// and a hop that lost every turn waited on until its task's deadline,
// which read as the server's timeout for a URL never requested (qa9 T1).
func (c *Crawler) acquireNext(ctx context.Context, host, key string, within time.Duration) (*throttle.Permit, error) {
	if c.cfg.Throttle == nil {
		return nil, nil
	}
	if _, held := c.cfg.Throttle.Deferred(host, key); held && key != "" {
		return nil, fmt.Errorf("%s: %w", key, throttle.ErrDeferred)
	}
	began := time.Now()
	for {
		p, wait, err := c.cfg.Throttle.Reserve(host)
		if err != nil || p != nil {
			return p, err
		}
		if within >= 0 && time.Since(began)+wait > within {
			return nil, &waitError{wait}
		}
		if err := c.throttleWait(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// throttleWait waits d, or less when the throttle says a permit may have
// come free (one was given back, a pause ended), so that the caller asks
// again.
func (c *Crawler) throttleWait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-c.cfg.Throttle.Ready():
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// resendWait waits until p's host lets the request p is for be sent once
// more (net/http resending it on its own, see tries): a resend reaches the
// server like any request and must keep to the host's limits.
func (c *Crawler) resendWait(ctx context.Context, p *throttle.Permit) error {
	for {
		wait, err := p.Resend()
		if err != nil || wait <= 0 {
			return err
		}
		if err := c.throttleWait(ctx, wait); err != nil {
			return err
		}
	}
}

// followUpRefused ends f where the throttle refused a follow-up request:
// handed back to wait (see acquireNext), or refused for good.
func (c *Crawler) followUpRefused(f *fetched, err error) {
	var we *waitError
	if errors.As(err, &we) {
		f.later = we.wait
		return
	}
	f.err = err
}

// handOff is a redirect target a chain claimed and left to a task of its
// own, queued after wait.
type handOff struct {
	wait time.Duration
}

// hopRefused ends f where the throttle refused the request for the
// redirect target the chain is at. A wait for a target the chain claimed is
// not handed back with the task: queued again, the task would request its
// own URL and every hop before that target once more, which the servers
// would see as the same URL asked for twice. The chain stops short of the
// target instead, as at one some other task resolves (pendingOn): its
// records wait on the target's result, and the dispatcher queues the
// target as a task of its own for when its host allows.
func (c *Crawler) hopRefused(f *fetched, err error) {
	var we *waitError
	if n := len(f.keys); errors.As(err, &we) && n > 0 && f.keys[n-1] != "" {
		f.pendingOn, f.keys, f.reached = f.keys[n-1], f.keys[:n-1], false
		f.handOff = &handOff{wait: we.wait}
		return
	}
	c.followUpRefused(f, err)
}

// politeClass names what the throttle refused, for the record of the URL.
func politeClass(err error) string {
	switch {
	case errors.Is(err, throttle.ErrQuota):
		return store.ErrorQuota
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
// robots.txt) that changed since it was last saved, in one transaction, so
// that a restart never hits a paused host early. Each commit saves it too.
func (c *Crawler) saveHostState() error {
	states, err := c.changedHostStates()
	if err != nil {
		return err
	}
	if err := c.store.PutHostStates(states); err != nil {
		c.unsaved = states
		return err
	}
	return nil
}

// changedHostStates is the state of the hosts whose state changed since it
// was last taken, with what a failed save left unsaved; nil when there is
// none. The caller saves it or leaves it in c.unsaved. Only the writer
// calls it while a pass runs, and run after that.
func (c *Crawler) changedHostStates() (map[string][]byte, error) {
	if c.cfg.Throttle == nil {
		return nil, nil
	}
	changed := c.cfg.Throttle.Changed()
	states := c.unsaved
	c.unsaved = nil
	if states == nil && len(changed) > 0 {
		states = make(map[string][]byte, len(changed))
	}
	for _, h := range changed {
		if h == "" {
			continue
		}
		b, err := c.cfg.Throttle.ExportState(h)
		if err != nil {
			c.unsaved = states
			return nil, err
		}
		states[h] = b
	}
	return states, nil
}

// loadHostState restores what saveHostState wrote. A run that follows a
// process killed before it saved its last requests (dead: when the run
// before, which never ended, was last known alive) assumes that what that
// process had not committed (the batch being written, the tasks in its
// workers' hands and the one outcome being handed over) just started at
// every host, so that no server sees more than its limits across the kill
// (Throttle.Resume), and takes every host's in-flight cap as still out at
// the server (Throttle.Killed) until --timeout after the dead run's last
// possible start: the requests it started after its last save are
// nowhere in it. A run that ended (--max-time, a signal) saved every
// request, and its waits end when they ended: assumed to start again at
// every resume, the slower pace a failing host had taught held it up to a
// minute before its first request at each run of a nightly job (qa11
// Q10).
func (c *Crawler) loadHostState(passID uint64, dead time.Time) error {
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
			return nil
		}
		c.warnCrawlDelay(host) // its robots.txt is not fetched again this run
		return nil
	})
	if err != nil {
		return err
	}
	if !dead.IsZero() {
		c.cfg.Throttle.Resume(c.cfg.BatchSize + Workers(c.cfg.Concurrency) + 1)
		startedBy := dead.Add(aliveUnseen)
		c.cfg.Throttle.Killed(startedBy)
		now := c.cfg.Now()
		// A wait of up to --timeout on every host must not look like a
		// hung run; a kill long enough ago costs nothing, and says nothing.
		if wait := min(startedBy.Add(c.cfg.Timeout).Sub(now), c.cfg.Timeout); wait > 0 {
			c.cfg.Logger.Warn(fmt.Sprintf("the run before was killed (last seen alive %s ago), and the servers may still be serving requests it left: each host's first request waits %s (--timeout %s after it could last have sent one)",
				roughly(now.Sub(dead)), roughly(wait), throttle.FormatDuration(c.cfg.Timeout)))
		}
	}
	return c.store.PutHostStates(expired)
}

// logPaced tells the person running the crawl what an answer to target
// did to its host's pace (see throttle.Decision.Paced): a host slowed down
// to one request a minute must not look like a crawl that hangs.
func (c *Crawler) logPaced(target, paced string) {
	host := hostOf(target)
	c.cfg.Logger.Warn(host+": "+paced, "host", host)
}

// logPaused tells, with -v, that an answer to target paused its host, until
// when and why, once per pause (see throttle.Decision.Paused): a host that
// waits minutes on a backoff said nothing, and looked hung (qa7 Q2).
// Pauses come and go on a healthy crawl, so they are not warnings.
func (c *Crawler) logPaused(target string, d throttle.Decision) {
	host := hostOf(target)
	if d.PausedUntil.IsZero() {
		c.cfg.Logger.Info(host+": "+d.Paused, "host", host)
		return
	}
	c.cfg.Logger.Info(host+": "+d.Paused, "host", host, "until", d.PausedUntil)
}
