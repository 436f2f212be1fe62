package crawler

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// fetched is the end of a redirect chain.
type fetched struct {
	hop
	finalURL  string
	redirects []store.Hop
	errClass  string // set when the chain itself failed: loop, too many, bad Location, robots; or why a file could not be read
	// skipped says the chain stopped on purpose, not broken: at a redirect
	// target robots.txt disallows, or one the rules never request (then
	// with note, see notFollowed); finalURL was not requested.
	skipped bool
	local   bool // read from a checked directory: no status, ok unless errClass says why not
	// verdict is that of a chain that failed (errClass) when it is not
	// broken: a hop to a host whose robots.txt could not be read is
	// transient. note says more for a person.
	verdict store.Verdict
	note    string
	// reached says finalURL is what hop, err, errClass or skipped are about;
	// false when the chain stopped before requesting it (a loop, too many
	// redirects, or pendingOn).
	reached bool
	// keys are the pass's URLs of the redirect targets requested after the
	// first, in order (redirects[1:], then finalURL when reached): "" for a
	// target not recorded, one the rules never request (the chain stops
	// there, skipped) or one the chain could not claim. Every other one
	// was claimed by this fetch, which records it.
	keys []string
	// abandoned are the keys a HEAD chain claimed before it was asked
	// again with GET from the task's URL (see restartAsGet) that the GET
	// chain did not pass through: this fetch records none of them.
	abandoned []string
	// astray are the keys a HEAD chain claimed before it was asked again
	// with GET: where HEAD led astray, for the pass to remember (see
	// dispatcher.astray).
	astray []string
	// head says the chain was followed with HEAD: its answers are the
	// server's to HEAD, which some answer with a redirect that GET does
	// not get (qa9 T2). Its records wait on pendingOn as a head chain.
	head bool
	// pendingOn is the pass's URL of a redirect target some other task
	// resolves: the chain stopped short of it (see chain.go).
	pendingOn string
	// awaits is the pass's URL of a redirect target on a host another
	// crawler owns: the chain stopped short of it and handed it to its
	// owner (foreign), and its records wait on that URL's result in the
	// merged database (see awaitEnd).
	awaits  string
	foreign []target
	// handOff, with pendingOn, says this chain claimed pendingOn but
	// stopped short of it, its host asking to wait: it is queued as a task
	// of its own (see hopRefused).
	handOff *handOff
	// dec is the rules' decision of finalURL: the task's own, or that of
	// the last redirect target, decided once when it was followed.
	dec *rules.Decision
	// policy is what the request for finalURL carried, or would have.
	policy *rules.Policy
	// later, when set, is how long the throttle asked a follow-up request
	// (a redirect hop, GET after a refused HEAD, the GET that parses a
	// checked page) to wait: longer than a worker holds on for, so the task
	// goes back to the dispatcher (see acquireNext), with getNext or
	// upgradeNext when it was one of the GETs.
	later       time.Duration
	getNext     bool
	upgradeNext bool
}

// decided is the rules' decision of f.finalURL.
func (f *fetched) decided(c *Crawler) *rules.Decision {
	if f.dec == nil || f.dec.URL == "" {
		if u, err := url.Parse(f.finalURL); err == nil {
			d := c.rules.Decide(u)
			f.dec = &d
		} else {
			f.dec = &rules.Decision{}
		}
	}
	return f.dec
}

// fetch follows redirects itself, hop by hop, up to MaxRedirects. Every
// request after the task's first asks the throttle again, and a hop to
// another host obeys that host's robots.txt. With consume set the final
// body is fetched with GET and handed to it (see requestOpts.consume);
// otherwise each redirect target of the pass is claimed (see chain.go).
func (c *Crawler) fetch(ctx context.Context, t task, prev *store.URLRecord, consume func(io.Reader) error) (f fetched) {
	// A page a check found (see upgrade) is read like one to parse.
	parse := (t.Action == rules.Parse.String() || t.upgradeNext) && c.mayParse(t.Depth)
	method := http.MethodGet
	if !parse && consume == nil && !t.getNext {
		method = http.MethodHead
	}
	claim := consume == nil && c.claimReqs != nil
	cur := t.URL
	permit := t.permit
	// visited holds each URL the chain requested, with the cookies it was
	// sent (see chainCookies): a redirect back to one of them is a loop
	// only when it would carry the same ones again. A hop that set a new
	// cookie makes it a new request, whose answer may differ (a page that
	// sets a cookie and redirects to itself); a server that sets a new one
	// at every hop is stopped by MaxRedirects.
	var cookies chainCookies
	visited := map[string]string{cur: ""}
	// A URL whose HEAD failed already is asked with GET on every try.
	f = fetched{dec: c.decision(&t), getNext: t.getNext}
	defer func() { f.head = method == http.MethodHead }()
	// The task's URL is requested as decided, after rewrites; a redirect
	// target as the server wrote it (see rules.Decision).
	f.policy = f.dec.Request
	var first *url.URL
	// widen says the chain has stayed on the site's hosts so far, where a
	// start URL's redirect may add one (see followStart).
	widen := true
	// unclaimed says cur is a hop after a cookie, not claimed (yet).
	unclaimed := false
	// restart says cur is the task's URL, asked again with GET after a
	// HEAD chain ended in a refusal or a loop (see restartAsGet).
	restart := false
	restartAsGet := func() {
		method = http.MethodGet
		f.restartAsGet(c, &t)
		cur, restart, unclaimed = t.URL, true, false
		cookies, visited = chainCookies{}, map[string]string{cur: ""}
		widen = true
	}
	for {
		f.finalURL, f.reached = cur, true
		cu, err := url.Parse(cur)
		if err != nil {
			f.errClass = "bad redirect"
			return f
		}
		if first == nil {
			first = cu
		}
		if len(f.redirects) > 0 {
			if a := f.dec.Action; a == rules.Skip || a == rules.Ignore {
				// The rules say never to request this URL (--offline,
				// --exclude, --include, a rule that skips or ignores
				// it): not as a redirect target either, nor its host's
				// robots.txt (qa7 Q1). The chain stops short of it,
				// skipped by the user's choice: neither broken nor
				// checked.
				f.skipped, f.note = true, notFollowed(f.dec)
				return f
			}
			a := c.robotsGate(cu, false)
			if a == robotsNotRead {
				c.loadRobots(ctx, cu.Scheme, cu.Host, nil)
				if a = c.robotsGate(cu, false); a == robotsNotRead {
					if err := ctx.Err(); err != nil {
						f.err = err // stopped while it was read
						return f
					}
					if _, held := c.cfg.Throttle.Deferred(cu.Host, ""); held {
						// The host asked for a pause longer than this run
						// waits (or stopped answering): the chain is held
						// back as a link straight to it would be, with
						// the same verdict and words (review7 RV2 #5).
						f.err = fmt.Errorf("%s: %w", cu.Host, throttle.ErrDeferred)
						return f
					}
					// Its robots.txt is to be asked again later: the hop
					// is not requested now.
					f.errClass, f.note = c.robotsNotYet(cu.Host)
					f.verdict = store.VerdictTransient
					return f
				}
			}
			if a != robotsAllowed {
				v, class, note := c.robotsRefused(cu.Host, a)
				f.errClass = class
				if v == store.VerdictSkipped {
					f.skipped = true // fetchedRecord says it was a redirect target
				} else {
					f.verdict, f.note = v, note
				}
				return f
			}
		}
		opts := requestOpts{wantHTML: parse, retries: t.retries, consume: consume, public: t.Public || !sameOrigin(first, cu), policy: f.policy,
			cookies: cookies.to(cu)}
		if len(f.redirects) == 0 {
			opts.prev = prev
		}
		if restart {
			// Never waited for: handed back, the GET is the task's first
			// request, as after a HEAD refused at the task's own URL.
			restart = false
			if permit, err = c.acquireNext(ctx, cu.Host, cur, 0); err != nil {
				f.getNext = true
				c.followUpRefused(&f, err)
				return f
			}
		} else if permit == nil && len(f.redirects) > 0 {
			if permit, err = c.acquireNext(ctx, cu.Host, cur, c.hopWithin(ctx, f.policy)); err != nil {
				c.hopRefused(&f, err)
				return f
			}
		}
		h := c.requestWith(ctx, method, cur, permit, opts)
		permit = nil
		cookies.keep(cu, h.header)
		if method == http.MethodHead && headRefused(h) && !h.retry {
			method = http.MethodGet
			if len(f.redirects) > 0 {
				restartAsGet()
				continue
			}
			if permit, err = c.acquireNext(ctx, cu.Host, cur, 0); err != nil {
				// The HEAD told us nothing; the GET is sent when the
				// host allows, as the first request of a task.
				f.getNext = true
				c.followUpRefused(&f, err)
				return f
			}
			opts.cookies = cookies.to(cu)
			h = c.requestWith(ctx, method, cur, permit, opts)
			permit = nil
			cookies.keep(cu, h.header)
		}
		f.hop = h
		if method == http.MethodHead && h.retry && (isTimeout(h.err) ||
			h.status == http.StatusTooManyRequests || h.status == http.StatusServiceUnavailable) {
			// A HEAD that never answers is the commonest mishandling of
			// HEAD (an app server waiting for a body); some servers limit
			// or refuse HEAD alone with a 429 or 503 while GET is served
			// (qa9 T10): the URL's next try, spent anyway, is a GET (qa8
			// P3), after the pause the answer asked for.
			f.getNext = true
		}
		if h.err != nil || h.retry || !isRedirect(h.status) {
			if unclaimed && !h.retry {
				c.claimEnd(ctx, t, &f)
			}
			return f
		}
		loc := h.header.Get("Location")
		if loc == "" {
			loc = strings.Join(h.header[badLocation], "")
		}
		if loc == "" {
			if unclaimed {
				c.claimEnd(ctx, t, &f)
			}
			return f
		}
		next, err := rules.Resolve(cu, loc)
		if err != nil {
			f.errClass = "invalid URL"
			f.note = fmt.Sprintf("the redirect's Location is not a valid URL: %.200q", loc)
			return f
		}
		if cu.Scheme != "file" && next.Scheme != "http" && next.Scheme != "https" {
			// A web server can only redirect to a web address: it must
			// never make us read a local file (file:), in any mode. (The
			// directory-mode transport redirects /dir to /dir/ itself.)
			if next.Scheme != "file" && !rules.IgnoredScheme(next.Scheme) {
				if d := c.rules.Decide(next); d.Action == rules.Skip {
					// A scheme linkpatrol cannot check (a download moved
					// to an ftp: mirror): not checked, as a link written
					// so is, or left out by the user's choice (review10
					// R5: "broken, never worked").
					f.redirects = append(f.redirects, store.Hop{URL: cur, Status: h.status})
					f.finalURL, f.dec, f.policy = d.URL, &d, d.Policy
					if claim {
						f.keys = append(f.keys, "") // never requested, never recorded
					}
					if scheme, ok := rules.UnsupportedSchemeOf(d.Rule); ok {
						f.errClass, f.verdict, f.note = store.ErrorUnsupportedScheme, store.VerdictUnverifiable, unsupportedNote(scheme)
					} else {
						f.skipped, f.note = true, notFollowed(&d)
					}
					return f
				}
			}
			f.errClass = "redirect to " + next.Scheme + ":"
			return f
		}
		f.redirects = append(f.redirects, store.Hop{URL: cur, Status: h.status})
		cur = rules.Canonicalize(next).String()
		f.reached = false
		if widen {
			widen = c.followStart(t, next)
		}
		d := c.rules.Decide(next)
		f.dec, f.policy = &d, d.Policy
		if len(cur) > store.MaxURLLength {
			// Like a link that long: a result of its own, never a key the
			// store cannot hold.
			f.errClass = "URL too long"
			f.finalURL = clip(cur)
			return f
		}
		carry := sent(cookies.to(next))
		if before, ok := visited[cur]; ok && before == carry {
			if method == http.MethodHead {
				// A loop that only HEAD gets (a server that redirects
				// HEAD to a URL that redirects it back) is no more the
				// link's answer than HEAD's 404 is.
				restartAsGet()
				continue
			}
			f.errClass = store.ErrorRedirectLoop
			f.finalURL = cur
			return f
		}
		if len(f.redirects) > c.cfg.MaxRedirects {
			f.errClass = store.ErrorTooManyRedirects
			f.finalURL = cur
			return f
		}
		visited[cur] = carry
		unclaimed = false
		if claim && cookies.held() && !c.frontier.Owns(next.Host) && (d.Action == rules.Parse || d.Action == rules.Check) {
			// Another crawler's host, after a cookie: requested here it
			// would bypass that host's throttle, forwarded to its owner
			// it would go without the cookie (and the chain come back
			// round as a false loop: review8 F2). The chain stops short
			// of it, not verified.
			f.errClass, f.verdict = errCookieAcross, store.VerdictUnverifiable
			f.note = "not followed: the redirect chain carries a cookie to " + next.Host +
				", which another crawler of the pass checks, and does not send it there"
			f.finalURL, f.reached = cur, true
			return f
		}
		if claim && cookies.held() && c.frontier.Owns(next.Host) {
			// Once a hop set a cookie, what the later ones answer is this
			// chain's, not the URL's: they are followed here to the end,
			// never left to another task (which would request them
			// without the cookie, or wait on this chain for ever), and
			// not recorded as the pass's answer for their URLs. Only the
			// chain's end is, once it answers (see claimEnd).
			f.keys = append(f.keys, "")
			unclaimed = true
		} else if claim {
			key := ""
			if !c.frontier.Owns(next.Host) && (d.Action == rules.Parse || d.Action == rules.Check) {
				// Another crawler's URL: not requested here, where its
				// host's limits are not kept, but forwarded to its owner
				// like a link (see Frontier), and requested there as this
				// chain would have requested it. The chain's records end
				// where that URL's does, once its result is known.
				c.stats.foreignHops.Add(1)
				f.foreign = append(f.foreign, target{url: d.URL, host: next.Host, action: d.Action, rule: d.Rule, dec: &d,
					public: t.Public || !sameOrigin(first, next)})
				f.finalURL, f.awaits = cur, d.URL
				return f
			} else if d.Action == rules.Parse || d.Action == rules.Check {
				key = d.URL
				if !f.takeBack(key) {
					ans, err := c.claim(ctx, key, method == http.MethodHead)
					if err != nil {
						// Not claimed, so not recorded ("") by this chain,
						// whose end the error is.
						f.err = err
						f.finalURL, f.reached = cur, true
						f.keys = append(f.keys, "")
						return f
					}
					switch ans {
					case claimAstray:
						// Another HEAD chain was led astray there: its
						// answer to HEAD is known, and not the link's.
						restartAsGet()
						continue
					case claimTaken:
						f.finalURL, f.pendingOn = cur, key
						return f
					}
				}
			}
			f.keys = append(f.keys, key)
		}
		if ctx.Err() != nil {
			f.err = ctx.Err()
			f.finalURL, f.reached = cur, true
			return f
		}
	}
}

// restartAsGet starts f again from the task's URL, to be asked with GET,
// after a HEAD chain ended in an answer that HEAD alone may get (an error
// the GET fallback confirms, see headRefused, or a redirect loop): some
// servers (IIS and ASP.NET above all) redirect a HEAD to an error page that
// answers 404, while a GET of the same URL answers 200 (qa9 T2; wummel/
// linkchecker#418 does the same). Only the first URL is the link as
// written: GET at the HEAD chain's end asked a page no visitor reaches.
// The targets the HEAD chain claimed are taken again if the GET chain
// passes through them (takeBack), and let go otherwise (f.abandoned).
func (f *fetched) restartAsGet(c *Crawler, t *task) {
	for _, k := range f.keys {
		if k != "" {
			f.abandoned = append(f.abandoned, k)
			f.astray = append(f.astray, k)
		}
	}
	f.hop, f.redirects, f.keys = hop{}, nil, nil
	f.dec = c.decision(t)
	f.policy = f.dec.Request
}

// takeBack says whether key is one the HEAD chain claimed before the GET
// restart, and takes it for the GET chain.
func (f *fetched) takeBack(key string) bool {
	i := slices.Index(f.abandoned, key)
	if i < 0 {
		return false
	}
	f.abandoned = slices.Delete(f.abandoned, i, i+1)
	return true
}

// errCookieAcross is the error of a chain stopped at a hop to another
// crawler's host after a hop set a cookie (see fetch).
const errCookieAcross = "cookie to another crawler"

// claimEnd claims the end of a cookie chain (f.finalURL, which answered
// and is not a redirect to follow), left unclaimed while it was a hop:
// it is a page of the pass like any other, recorded and parsed under its
// own URL. Commonly a site sets a language or session cookie and
// redirects to its real home page; unclaimed, that page and everything
// behind it went unchecked, unsaid (review8 F0). When another task has
// the URL already, that task records and parses it, and this chain ends
// with what it got there, unrecorded: waiting on that task instead would
// take an answer got without the cookie, and the task may be waiting on
// this chain (a cookie wall whose consent URL is linked too: review8 F1).
// The task's own URL is left to chain (home), and so is a URL this chain
// claimed as an earlier hop.
func (c *Crawler) claimEnd(ctx context.Context, t task, f *fetched) {
	d := f.decided(c)
	if d.URL == "" || d.URL == t.URL || (d.Action != rules.Parse && d.Action != rules.Check) ||
		slices.Contains(f.keys, d.URL) {
		return
	}
	if f.takeBack(d.URL) {
		f.keys[len(f.keys)-1] = d.URL // claimed by the HEAD chain before a restart
		return
	}
	if ans, err := c.claim(ctx, d.URL, false); err == nil && ans == claimFresh {
		f.keys[len(f.keys)-1] = d.URL
	}
}

// notFollowed is the note of a URL whose redirect chain stopped at a
// target the rules never request (d): what they do with it, and what
// decided so (--offline, --exclude, a rule's file:line).
func notFollowed(d *rules.Decision) string {
	did := "skipped"
	if d.Action == rules.Ignore {
		did = "ignored"
	}
	return "redirect not followed; its target is " + did + ": " + d.Rule
}

// publicHop says whether a redirect target that t's chain reached is
// requested without credentials: when the chain left t's origin to reach
// it, or t itself was requested so.
func publicHop(t task, target string) bool {
	a, err := url.Parse(t.URL)
	if err != nil {
		return true
	}
	b, err := url.Parse(target)
	return err != nil || t.Public || !sameOrigin(a, b)
}

// sameOrigin compares scheme, host and port, a missing port being the
// scheme's default.
func sameOrigin(a, b *url.URL) bool {
	return a.Scheme == b.Scheme && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch u.Scheme {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}

func isRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}
