package crawler

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// drainLimit is how much of a body we read past what we need, so that a
// small response leaves its connection reusable; anything larger is cut off
// by closing the connection, which is cheaper than downloading it.
const drainLimit = 16 << 10

func newTransport(cfg Config) *http.Transport {
	dialer := &net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:                  http.ProxyFromEnvironment,
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           cfg.Concurrency * 2,
		MaxIdleConnsPerHost:    cfg.PerHost,
		MaxConnsPerHost:        cfg.PerHost,
		IdleConnTimeout:        30 * time.Second,
		TLSHandshakeTimeout:    cfg.Timeout,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 256 << 10,
	}
	if cfg.Insecure {
		// The user asked for it (--insecure) and every report of the pass
		// says so in its first line.
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec
	}
	return tr
}

// hop is one request and what was kept of its response.
type hop struct {
	status      int
	header      http.Header
	contentType string
	body        []byte // only for an HTML page that is to be parsed, or robots.txt
	size        int64  // body bytes read
	truncated   bool
	err         error
	retry       bool          // the throttle says: try this URL again later
	retryAfter  time.Duration // no sooner than this
	// consumeErr is what requestOpts.consume said about a body it read to
	// the end without a network error: the body itself is bad.
	consumeErr error
}

type requestOpts struct {
	wantHTML bool             // read an HTML body in full (up to MaxSize) to parse it
	robots   bool             // read any body up to robotsLimit
	prev     *store.URLRecord // send If-None-Match / If-Modified-Since from it
	attempt  int              // retries of this URL so far, for the throttle
	// public: a redirect left the origin (scheme, host, port) the task
	// began on, so the rule's headers and credentials stay behind, as
	// curl does since CVE-2022-27776.
	public bool
	// consume, when set, reads a 2xx body itself as it arrives (a sitemap,
	// parsed while it streams in); errors reading from the network are
	// kept apart from what consume says about the content.
	consume func(io.Reader) error
}

// requestWith sends one request under the soft timeout, holding permit p
// (nil without a throttle), and reads the body only as far as needed: all
// of an HTML page to parse (up to MaxSize), a little of anything else. It
// always settles the permit, telling the throttle what the host answered.
func (c *Crawler) requestWith(ctx context.Context, method, target string, p *throttle.Permit, o requestOpts) (h hop) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	var latency time.Duration
	var counted countingReader
	if p != nil {
		defer func() {
			out := throttle.Outcome{
				Status: h.status, RetryAfter: h.header.Get("Retry-After"), Err: h.err,
				Bytes: counted.n, Latency: latency, Attempt: o.attempt,
			}
			if !o.robots {
				// robots.txt speaks for the whole host; any other URL for itself.
				out.Key = target
			}
			h.retry, h.retryAfter = p.Done(out)
		}()
	}
	req, err := http.NewRequestWithContext(ctx, method, target, nil)
	if err != nil {
		return hop{err: err}
	}
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	if o.wantHTML {
		req.Header.Set("Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8")
	} else {
		req.Header.Set("Accept", "*/*")
	}
	if !o.robots && !o.public {
		if u, err := url.Parse(target); err == nil {
			applyPolicy(req, c.rules.Decide(u).Policy)
		}
	}
	if o.prev != nil {
		if o.prev.ETag != "" {
			req.Header.Set("If-None-Match", o.prev.ETag)
		}
		if o.prev.LastModified != "" {
			req.Header.Set("If-Modified-Since", o.prev.LastModified)
		}
	}
	c.stats.requests.Add(1)
	sent := time.Now()
	resp, err := c.client.Do(req)
	latency = time.Since(sent)
	if err != nil {
		c.noteNoSuchHost(req.URL.Hostname(), err)
		return hop{err: err}
	}
	defer resp.Body.Close()
	h = hop{status: resp.StatusCode, header: resp.Header, contentType: resp.Header.Get("Content-Type")}
	if method == http.MethodHead {
		return h
	}
	var body io.Reader = resp.Body
	if p != nil {
		body = p.Body(ctx, body)
	}
	counted.r = body
	br := bufio.NewReaderSize(&counted, 4096)
	if h.contentType == "" {
		sniff, _ := br.Peek(512)
		h.contentType = http.DetectContentType(sniff)
	}
	switch {
	case o.consume != nil && resp.StatusCode/100 == 2:
		h.consumeErr = o.consume(br)
		h.size = counted.n
		if counted.err != nil {
			h.err, h.consumeErr = counted.err, nil
		}
		return h
	case o.robots:
		h.body, h.truncated, h.err = readCapped(br, robotsLimit)
	case o.wantHTML && resp.StatusCode/100 == 2 && parsable(h.contentType):
		h.body, h.truncated, h.err = readCapped(br, c.cfg.MaxSize)
	default:
		n, _ := io.Copy(io.Discard, io.LimitReader(br, drainLimit))
		h.size = n
		return h
	}
	h.size = int64(len(h.body))
	return h
}

// applyPolicy adds what a rule asks for. The policy comes from deciding this
// exact request URL, so credentials never travel to another host, not even
// across a redirect.
func applyPolicy(req *http.Request, p *rules.Policy) {
	if p == nil {
		return
	}
	for k, vs := range p.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if p.User != "" || p.Password != "" {
		req.SetBasicAuth(p.User, p.Password)
	}
}

func readCapped(r io.Reader, max int64) ([]byte, bool, error) {
	body, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return body, false, err
	}
	if int64(len(body)) > max {
		return body[:max], true, nil
	}
	return body, false, nil
}

func isHTML(contentType string) bool {
	mt := mediaType(contentType)
	return mt == "text/html" || mt == "application/xhtml+xml"
}

func isCSS(contentType string) bool { return mediaType(contentType) == "text/css" }

// parsable says whether a body of this type has links of its own: an HTML
// page or a stylesheet.
func parsable(contentType string) bool { return isHTML(contentType) || isCSS(contentType) }

func mediaType(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(strings.Split(contentType, ";")[0]))
	}
	return mt
}

// headRefused says whether a HEAD answer is more likely a server that
// mishandles HEAD than the truth about the URL, so GET must be asked too.
func headRefused(h hop) bool {
	if h.err != nil {
		var ne net.Error
		if errors.As(h.err, &ne) && ne.Timeout() {
			return false
		}
		return errors.Is(h.err, io.EOF) || errors.Is(h.err, io.ErrUnexpectedEOF) || isReset(h.err)
	}
	switch h.status {
	case http.StatusMethodNotAllowed, http.StatusNotImplemented, http.StatusBadRequest,
		http.StatusForbidden, http.StatusNotFound, http.StatusGone, http.StatusInternalServerError:
		// A HEAD answer that would make the URL a problem is confirmed with
		// GET: some servers answer HEAD wrongly, and a false "broken" costs
		// a person's time, while a real one costs one more request.
		return true
	}
	return false
}

// fetched is the end of a redirect chain.
type fetched struct {
	hop
	finalURL  string
	redirects []store.Hop
	errClass  string // set when the chain itself failed: loop, too many, bad Location, robots; or why a file could not be read
	skipped   bool   // the chain stopped on purpose (robots), not broken
	local     bool   // read from a checked directory: no status, ok unless errClass says why not
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
	// target the rules do not check, which is followed but not recorded.
	// Every other one was claimed by this fetch, which records it.
	keys []string
	// pendingOn is the pass's URL of a redirect target some other task
	// resolves: the chain stopped short of it (see chain.go).
	pendingOn string
	// foreign are the redirect targets of hosts the frontier does not own,
	// followed but left to their owner to record.
	foreign []target
}

// fetch follows redirects itself, hop by hop, up to MaxRedirects. Every
// request after the task's first asks the throttle again, and a hop to
// another host obeys that host's robots.txt. With consume set the final
// body is fetched with GET and handed to it (see requestOpts.consume);
// otherwise each redirect target of the pass is claimed (see chain.go).
func (c *Crawler) fetch(ctx context.Context, t task, prev *store.URLRecord, consume func(io.Reader) error) fetched {
	parse := t.Action == rules.Parse.String()
	method := http.MethodGet
	if !parse && consume == nil {
		method = http.MethodHead
	}
	claim := consume == nil && c.claims != nil
	cur := t.URL
	permit := t.permit
	visited := map[string]bool{cur: true}
	var f fetched
	var first *url.URL
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
			if !c.frontier.Owns(cu.Host) {
				c.stats.foreignHops.Add(1)
			}
			if c.needsRobots(cu.Scheme, cu.Host) {
				c.loadRobots(ctx, cu.Scheme, cu.Host, nil)
				if c.needsRobots(cu.Scheme, cu.Host) {
					// Its robots.txt asked for a pause: not requested now.
					f.errClass, f.verdict, f.note = "robots.txt asked to wait", store.VerdictTransient, "the redirect target's host answered its robots.txt with 429 or 503; tried again next pass"
					return f
				}
			}
			if !c.allowed(cu) {
				if r, _ := c.cfg.Throttle.Robots(cu.Host); r.Failed() {
					f.errClass, f.verdict, f.note = robotsFailure(r), store.VerdictTransient, heldByRobots
					return f
				}
				f.errClass, f.skipped = "robots", true
				return f
			}
		}
		opts := requestOpts{wantHTML: parse, attempt: t.attempt, consume: consume, public: !sameOrigin(first, cu)}
		if len(f.redirects) == 0 {
			opts.prev = prev
		}
		if permit == nil && len(f.redirects) > 0 {
			if permit, err = c.acquire(ctx, cu.Host, cur); err != nil {
				f.err = err
				return f
			}
		}
		h := c.requestWith(ctx, method, cur, permit, opts)
		permit = nil
		if method == http.MethodHead && headRefused(h) && !h.retry {
			method = http.MethodGet
			if permit, err = c.acquire(ctx, cu.Host, cur); err != nil {
				f.err = err
				return f
			}
			h = c.requestWith(ctx, method, cur, permit, opts)
			permit = nil
		}
		f.hop = h
		if h.err != nil || h.retry || !isRedirect(h.status) {
			return f
		}
		loc := h.header.Get("Location")
		if loc == "" {
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
			f.errClass = "redirect to " + next.Scheme + ":"
			return f
		}
		f.redirects = append(f.redirects, store.Hop{URL: cur, Status: h.status})
		cur = rules.Canonicalize(next).String()
		f.reached = false
		if len(cur) > store.MaxURLLength {
			// Like a link that long: a result of its own, never a key the
			// store cannot hold.
			f.errClass = "URL too long"
			f.finalURL = clip(cur)
			return f
		}
		if visited[cur] {
			f.errClass = "redirect loop"
			f.finalURL = cur
			return f
		}
		if len(f.redirects) > c.cfg.MaxRedirects {
			f.errClass = "too many redirects"
			f.finalURL = cur
			return f
		}
		visited[cur] = true
		if claim {
			key := ""
			if d := c.rules.Decide(next); !c.frontier.Owns(next.Host) && (d.Action == rules.Parse || d.Action == rules.Check) {
				// Another crawler's URL: followed, not recorded here; it is
				// forwarded to its owner like a link (see Frontier).
				f.foreign = append(f.foreign, target{url: d.URL, host: next.Host, action: d.Action, rule: d.Rule})
			} else if d.Action == rules.Parse || d.Action == rules.Check {
				key = d.URL
				if !c.claims.claim(key) {
					f.finalURL, f.pendingOn = cur, key
					return f
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

// process runs one task end to end under the hard timeout.
func (c *Crawler) process(ctx context.Context, pass store.Pass, t task) outcome {
	defer c.stats.done.Add(1)
	o := outcome{task: t}
	now := c.cfg.Now()
	if t.fresh {
		return c.reuse(pass, t, *t.prev)
	}
	if !t.prevLoaded {
		t.prev, _ = c.previous(pass, t.URL)
	}
	prevp := t.prev
	hadPrev := prevp != nil
	var prev store.URLRecord
	if hadPrev {
		prev = *prevp
	}

	hardCtx, cancel := context.WithTimeout(ctx, 2*c.cfg.Timeout)
	defer cancel()
	var conditional *store.URLRecord
	if hadPrev && prev.Parsed && prev.Verdict == store.VerdictOK && !c.needsAnchors(prev) {
		conditional = prevp
	}
	var f fetched
	if _, _, local := c.siteOf(t.URL); local {
		f = c.readLocal(t)
	} else {
		f = c.fetch(hardCtx, t, conditional, nil)
		if c.settle(ctx, hardCtx, &f, &o) {
			return o
		}
	}
	if errors.Is(f.err, throttle.ErrDeferred) && len(f.redirects) == 0 {
		// GET after a refused HEAD is held back by a server's pause.
		o.result, o.deferred = c.deferral(pass, t, f.finalURL)
		return o
	}

	if f.status == http.StatusNotModified && conditional != nil && len(f.redirects) == 0 && f.err == nil && f.errClass == "" && !f.skipped {
		// Unchanged since last time: keep what we knew, links included.
		o.result = c.reused(pass, t, prev, now)
		o.found = c.storedTargets(t.URL)
		o.result.Record.Status = prev.Status
		c.countPage(prev.ContentType)
		return o
	}
	if len(f.redirects) > 0 {
		return c.chain(hardCtx, pass, t, f, now)
	}
	c.upgrade(hardCtx, t, t.URL, &f)
	rec := c.fetchedRecord(pass, t, f, now)
	if f.local && f.finalURL != t.URL && rec.Verdict == store.VerdictOK {
		// A directory linked without its slash: a static host answers
		// with dir/, against which its links resolve. The page is parsed
		// there, once.
		if fu, err := url.Parse(f.finalURL); err == nil {
			if d := c.rules.Decide(fu); d.Action == rules.Parse {
				o.found = append(o.found, target{url: d.URL, action: rules.Parse, rule: d.Rule})
			}
		}
	}
	if c.parseInto(&rec, &o.result, &o.found, f) && t.Action != rules.Parse.String() {
		rec.Action = rules.Parse.String()
	}
	if !rec.Parsed && hadPrev && prev.Parsed && rec.Verdict.Problem() && !f.local && c.ghost(prev, now) {
		// A page good recently is failing: follow its old links anyway so
		// one broken index page does not hide the rest of the site. (Not
		// a file: a missing one is gone, not failing for a while.)
		rec.Parsed = true
		rec.Note = "ghost: following its links from " + prev.LastGood.Format("2006-01-02")
		o.found = c.storedTargets(t.URL)
	} else if !rec.Parsed {
		o.result.SetLinks = true // a page that stopped being one loses its links
	}
	history(&rec, prevp, pass.ID, now)
	if rec.Verdict.Problem() {
		c.stats.problems.Add(1)
	}
	o.result.Record = rec
	return o
}

// upgrade fetches with GET a URL that was only checked but answered with
// an HTML page or a stylesheet the rules would parse: a page first met as
// a resource (an <img> or a <link> to it) is parsed like any other,
// whichever link the walk met first, and the site's own stylesheets are
// read for their url() and @import.
func (c *Crawler) upgrade(ctx context.Context, t task, first string, f *fetched) {
	if t.Action != rules.Check.String() || f.body != nil || !f.reached || f.err != nil || f.errClass != "" ||
		f.status/100 != 2 || !parsable(f.contentType) {
		return
	}
	u, err := url.Parse(f.finalURL)
	if err != nil {
		return
	}
	d := c.rules.Decide(u)
	if d.Action != rules.Parse {
		return
	}
	if trap, held := upgradeHeld(t, u, d.Traps); held {
		// Checked, and ok, but its links are not followed.
		f.note = "not parsed: " + strings.TrimPrefix(trap.Note(), "skipped: ")
		return
	}
	p, err := c.acquire(ctx, u.Host, f.finalURL)
	if err != nil {
		return // the check stands; the throttle said no more requests now
	}
	fu, _ := url.Parse(first)
	h := c.requestWith(ctx, http.MethodGet, f.finalURL, p, requestOpts{wantHTML: true, attempt: t.attempt, public: fu == nil || !sameOrigin(fu, u)})
	if h.err == nil && !h.retry {
		f.hop = h
	}
}

// parseInto parses the page f fetched into rec (the record of f.finalURL)
// and its result, when it is HTML the rules parse, and says whether it did.
func (c *Crawler) parseInto(rec *store.URLRecord, res *store.Result, found *[]target, f fetched) bool {
	if f.truncated {
		rec.Note = fmt.Sprintf("page larger than %d bytes: only the first part was checked", c.cfg.MaxSize)
	}
	if rec.Verdict != store.VerdictOK || f.body == nil {
		return false
	}
	final, err := url.Parse(f.finalURL)
	if err != nil || c.rules.Decide(final).Action != rules.Parse {
		return false
	}
	var links []store.Link
	var fnd []target
	var ids []string
	more := false
	if isCSS(f.contentType) {
		links, fnd = c.stylesheetLinks(final, f.body)
		if c.cfg.CheckFragments {
			ids = []string{} // nothing to link to, and known to be so
		}
	} else {
		links, fnd, ids, more = c.extractLinks(final, f.body, f.contentType)
	}
	res.SetLinks = true
	res.Links = links
	*found = fnd
	rec.Parsed = true
	if more {
		rec.Note = strings.TrimPrefix(rec.Note+"; "+fmt.Sprintf("page has more than %d links: only the first %d were checked", maxPageLinks, maxPageLinks), "; ")
	}
	if !f.truncated && !more {
		// Anchors past the cut are unknown: without any, the page's
		// fragments are not checked rather than all reported.
		rec.IDs = ids
	}
	c.countPage(f.contentType)
	return true
}

// countPage counts a parsed document for Progress, unless it was a
// stylesheet.
func (c *Crawler) countPage(contentType string) {
	if !isCSS(contentType) {
		c.stats.pages.Add(1)
	}
}

// chain turns a fetch that followed redirects into records: one for the
// task's URL and one for every redirect target it claimed, each ending
// where the chain ends; the page the chain ends at is parsed here, under
// its own URL, once. A chain that stopped at a target another task
// resolves is handed to the dispatcher to finish (see chain.go).
func (c *Crawler) chain(hardCtx context.Context, pass store.Pass, t task, f fetched, now time.Time) outcome {
	o := outcome{task: t}
	n := len(f.redirects)
	// keyAt is the pass's URL of the i-th URL requested ("" when not recorded).
	keyAt := func(i int) string {
		if i == 0 {
			return t.URL
		}
		return f.keys[i-1]
	}
	var end store.URLRecord
	var endResult *store.Result
	switch {
	case f.pendingOn != "":
		end.URL = f.pendingOn
	case !f.reached:
		// A loop or too many redirects: every URL of it ends the same way.
		end = store.URLRecord{URL: f.finalURL, Verdict: store.VerdictBroken, Error: f.errClass, Status: f.status}
	default:
		key := keyAt(n)
		action := rules.Check
		if u, err := url.Parse(f.finalURL); err == nil && c.rules.Decide(u).Action == rules.Parse &&
			(t.Action == rules.Parse.String() || f.body != nil) {
			action = rules.Parse
		}
		ft := task{Task: store.Task{URL: key, Action: action.String(), Depth: t.Depth}}
		if key == "" {
			ft.URL = f.finalURL // not recorded: only its outcome is passed on
		} else {
			c.upgrade(hardCtx, ft, t.URL, &f)
		}
		fe := f
		fe.redirects = nil
		end = c.fetchedRecord(pass, ft, fe, now)
		if key != "" {
			endResult = &store.Result{}
			if c.parseInto(&end, endResult, &o.found, fe) {
				end.Action = rules.Parse.String()
			} else {
				endResult.SetLinks = true
			}
			if end.Note == "" {
				end.Note = viaNote(t.URL)
			}
			prev, _ := c.previous(pass, key)
			history(&end, prev, pass.ID, now)
			if end.Verdict.Problem() {
				c.stats.problems.Add(1)
			}
			endResult.Record = end
		}
	}
	// From the end back to the task's URL, each recorded URL ends where
	// the next one does, through the hops between them.
	var hops []store.Hop
	var records []waiting
	for i := n - 1; i >= 0; i-- {
		hops = append([]store.Hop{f.redirects[i]}, hops...)
		key := keyAt(i)
		if key == "" {
			continue
		}
		rec := store.URLRecord{URL: key, Pass: pass.ID, Action: rules.Check.String(), FetchedAt: now, Redirects: hops}
		var prev *store.URLRecord
		if i == 0 {
			rec.Action, prev = t.Action, t.prev
		} else {
			prev, _ = c.previous(pass, key)
		}
		w := waiting{rec: rec, prev: prev, depth: t.Depth + min(i, 1)}
		if i > 0 {
			w.via = t.URL
		}
		records = append(records, w)
		hops = nil
	}
	slices.Reverse(records) // the task's URL first
	if f.pendingOn != "" {
		o.waitOn, o.waits = f.pendingOn, records
		return o
	}
	o.found = append(o.found, f.foreign...)
	for i := len(records) - 1; i >= 0; i-- {
		w := &records[i]
		chainEnd(&w.rec, end, c.cfg.MaxRedirects)
		w.noteVia()
		history(&w.rec, w.prev, pass.ID, now)
		if w.rec.Verdict.Problem() {
			c.stats.problems.Add(1)
		}
		end = w.rec
	}
	o.result = store.Result{Record: records[0].rec, SetLinks: true}
	for _, w := range records[1:] {
		o.hops = append(o.hops, store.Result{Record: w.rec, SetLinks: true})
	}
	if endResult != nil {
		o.hops = append(o.hops, *endResult)
	}
	if errors.Is(f.err, throttle.ErrDeferred) && f.reached {
		if _, _, until := c.heldBackBy(f.finalURL); !until.IsZero() {
			// The chain ends at a URL of the site held back by a pause:
			// all of it is done again when the pass resumes.
			requeue(&o.result, t.Depth)
			for i := range o.hops {
				requeue(&o.hops[i], t.Depth+1)
			}
			o.deferred, o.held = until, 1+len(o.hops)
		}
	}
	return o
}

// fetchedRecord is the record of a fetch that ran to its end, classified by
// how the chain ended: a stop on purpose, a refusal by the throttle, a
// broken chain, a failed request or the final status.
func (c *Crawler) fetchedRecord(pass store.Pass, t task, f fetched, now time.Time) store.URLRecord {
	rec := store.URLRecord{
		URL: t.URL, Pass: pass.ID, Action: t.Action, FetchedAt: now,
		Status: f.status, ContentType: f.contentType, Size: f.size,
		Redirects: f.redirects,
	}
	if f.finalURL != t.URL {
		rec.FinalURL = f.finalURL
	}
	if f.header != nil {
		rec.ETag = f.header.Get("ETag")
		rec.LastModified = f.header.Get("Last-Modified")
	}
	switch {
	case f.skipped:
		rec.Verdict, rec.Error, rec.Note = store.VerdictSkipped, f.errClass, "skipped: robots.txt disallows a redirect target"
		if len(f.redirects) == 0 {
			rec.Note = "skipped: robots.txt disallows it"
		}
	case errors.Is(f.err, throttle.ErrDeferred):
		rec.Error = "rate-limited"
		rec.Verdict, rec.Note, _ = c.heldBackBy(f.finalURL)
	case politeClass(f.err) != "":
		rec.Verdict, rec.Error, rec.Note = store.VerdictSkipped, politeClass(f.err), "skipped: "+f.err.Error()
	case f.errClass != "":
		rec.Verdict, rec.Error, rec.Note = store.VerdictBroken, f.errClass, f.note
		if f.verdict != "" {
			rec.Verdict = f.verdict
		}
	case f.local:
		rec.Verdict = store.VerdictOK
	case f.err != nil:
		rec.Verdict, rec.Error = classifyError(f.err)
	default:
		u, _ := url.Parse(t.URL)
		rec.Verdict, rec.Error = classifyStatus(f.status, f.header, c.rules.Decide(u).Policy)
		if f.note != "" {
			rec.Note = f.note // why a page that was only checked was not parsed (upgrade)
		}
	}
	return rec
}

// settle says whether a fetch ended its task without a result: cut short
// by a stop (the task stays queued and is done again on resume) or to be
// retried when the throttle allows. It names a task that overran the hard
// timeout.
func (c *Crawler) settle(ctx, hardCtx context.Context, f *fetched, o *outcome) bool {
	switch {
	case f.err != nil && ctx.Err() != nil:
		o.stopped = true
		return true
	case f.retry:
		o.retry = true
		// The redirect targets claimed on the way are this task's no more:
		// they are queued as tasks of their own.
		for _, k := range f.keys {
			if k != "" {
				o.released = append(o.released, k)
			}
		}
		return true
	case f.err != nil && hardCtx.Err() != nil:
		f.err = fmt.Errorf("task took longer than %s: %w", 2*c.cfg.Timeout, context.DeadlineExceeded)
	}
	return false
}

// previous reads what is known of u from earlier passes (or earlier runs of
// this pass) and whether it is fresh enough to reuse without a request.
func (c *Crawler) previous(pass store.Pass, u string) (*store.URLRecord, bool) {
	prev, ok, err := c.store.Get(u)
	if err != nil {
		c.readFailed("read previous result", err, "url", u)
		return nil, false
	}
	if !ok {
		return nil, false
	}
	// A file costs nothing to read again, and a site on disk is checked
	// right after it was edited: its results are never reused.
	local := strings.HasPrefix(u, "file:")
	return &prev, !local && prev.Pass != pass.ID && c.fresh(prev, c.cfg.Now())
}

// history carries the URL's past into its new record.
func history(rec *store.URLRecord, prev *store.URLRecord, passID uint64, now time.Time) {
	if prev == nil {
		rec.FirstSeen = now
		if rec.Verdict == store.VerdictOK {
			rec.LastGood = now
		} else if rec.Verdict.Problem() {
			rec.FirstBroken, rec.Failures = now, 1
		}
		return
	}
	rec.FirstSeen = prev.FirstSeen
	if rec.FirstSeen.IsZero() {
		rec.FirstSeen = now
	}
	if prev.Pass == passID {
		// Resolved again in the same pass (a resume redid it): its past is
		// the one before this pass.
		rec.PrevVerdict, rec.PrevPass = prev.PrevVerdict, prev.PrevPass
	} else {
		rec.PrevVerdict, rec.PrevPass = prev.Verdict, prev.Pass
	}
	rec.LastGood = prev.LastGood
	switch {
	case rec.Verdict == store.VerdictOK:
		rec.LastGood = now
	case rec.Verdict.Problem():
		rec.FirstBroken = prev.FirstBroken
		if rec.FirstBroken.IsZero() {
			rec.FirstBroken = now
		}
		rec.Failures = prev.Failures
		if prev.Pass != passID || prev.Failures == 0 {
			rec.Failures++
		}
	default: // skipped: neither good nor bad, the run of failures is untouched
		rec.FirstBroken, rec.Failures = prev.FirstBroken, prev.Failures
	}
}

// immediate builds the record of a URL that is resolved without a request.
func (c *Crawler) immediate(pass store.Pass, u string, v store.Verdict, errClass, note string) store.Result {
	c.stats.done.Add(1)
	return c.unfetched(pass, u, v, errClass, note)
}

// unfetched is immediate for a task whose worker counts it done itself.
func (c *Crawler) unfetched(pass store.Pass, u string, v store.Verdict, errClass, note string) store.Result {
	now := c.cfg.Now()
	rec := store.URLRecord{URL: u, Pass: pass.ID, Verdict: v, Error: errClass, Note: note, Action: "check"}
	if v == store.VerdictSkipped {
		rec.Action = "skip"
	}
	prev, ok, err := c.store.Get(u)
	var prevp *store.URLRecord
	if err != nil {
		c.readFailed("read previous result", err, "url", u)
	} else if ok {
		prevp = &prev
	}
	history(&rec, prevp, pass.ID, now)
	if v.Problem() {
		c.stats.problems.Add(1)
	}
	return store.Result{Record: rec}
}
