package crawler

import (
	"bufio"
	"context"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// drainLimit is how much of a body we read past what we need, so that a
// small response leaves its connection reusable; anything larger is cut off
// by closing the connection, which is cheaper than downloading it.
const drainLimit = 16 << 10

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
	comeback    time.Duration // the retry is one the server asked for with this Retry-After, not a failed try
	hold        time.Duration // the URL alone waits this long before its retry (see throttle.Decision.Hold)
	// resent is how many more requests net/http sent for this one on its
	// own (see tries): each a try of the URL, like a retry.
	resent int
	// consumeErr is what requestOpts.consume said about a body it read to
	// the end without a network error: the body itself is bad.
	consumeErr error
}

// retries is what the tries of a URL the throttle gave back to be made
// again have used: failed tries, which count against its retries, and
// comebacks, the retries the server asked for with a Retry-After, which
// spend none (see throttle.Decision.Comeback). A task, a host's
// robots.txt fetch and each request carry one.
type retries struct {
	attempt   int // failed tries so far
	comebacks throttle.Comebacks
}

// count counts one more try given back: a comeback when the server said
// when to come back (comeback > 0), else a failed try.
func (r *retries) count(comeback time.Duration) {
	if comeback > 0 {
		r.comebacks.Add(comeback)
	} else {
		r.attempt++
	}
}

type requestOpts struct {
	wantHTML bool             // read an HTML body in full (up to MaxSize) to parse it
	robots   bool             // read any body up to robotsLimit
	prev     *store.URLRecord // send If-None-Match / If-Modified-Since from it
	retries                   // of this URL so far, for the throttle
	// public: a redirect left the origin (scheme, host, port) the task
	// began on, so the rule's headers and credentials stay behind, as
	// curl does since CVE-2022-27776.
	public bool
	// consume, when set, reads a 2xx body itself as it arrives (a sitemap,
	// parsed while it streams in); errors reading from the network are
	// kept apart from what consume says about the content.
	consume func(io.Reader) error
	// policy is the rules' settings for this request (see fetch): its
	// timeout always, its headers and credentials unless public.
	policy *rules.Policy
	// cookies are what earlier hops of the redirect chain set for this
	// URL (see chainCookies).
	cookies []*http.Cookie
}

// requestWith sends one request under the soft timeout, holding permit p
// (nil without a throttle), and reads the body only as far as needed: all
// of an HTML page to parse (up to MaxSize), a little of anything else. It
// always settles the permit, telling the throttle what the host answered.
func (c *Crawler) requestWith(ctx context.Context, method, target string, p *throttle.Permit, o requestOpts) (h hop) {
	crawl := ctx
	ctx, cancel := context.WithTimeout(ctx, c.timeout(o.policy))
	defer cancel()
	var latency time.Duration
	var counted countingReader
	var sent tries
	if p != nil {
		sent.allowed = p.Tries(o.attempt)
		sent.wait = func() error { return c.resendWait(ctx, p) }
		defer func() {
			out := throttle.Outcome{
				Status: h.status, RetryAfter: h.header.Get("Retry-After"), Err: h.err,
				Bytes: counted.n, Latency: latency, Attempt: o.attempt + h.resent,
				Comebacks: o.comebacks,
				// Cut by the crawl's stop, not by the task's own deadline
				// (a timeout like any other, review9 R4).
				Abandoned: h.err != nil && errors.Is(crawl.Err(), context.Canceled),
			}
			if !o.robots {
				// robots.txt speaks for the whole host; any other URL for itself.
				out.Key = target
			}
			d := p.Done(out)
			h.retry, h.retryAfter = d.Retry, d.After
			if h.retry {
				h.comeback, h.hold = d.Comeback, d.Hold
			}
			if d.Paced != "" {
				c.logPaced(target, d.Paced)
			}
			if d.Paused != "" {
				c.logPaused(target, d)
			}
		}()
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, sent.trace()), method, target, nil)
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
		applyPolicy(req, o.policy)
	}
	for _, ck := range o.cookies {
		req.AddCookie(ck)
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
	start := time.Now()
	resp, err := c.client.Do(req)
	latency = time.Since(start)
	n, err := sent.count(err)
	if n > 1 {
		c.stats.requests.Add(int64(n - 1))
	}
	if err != nil {
		c.noteNoSuchHost(req.URL.Hostname(), err)
		return hop{err: err, resent: n - 1}
	}
	defer resp.Body.Close()
	h = hop{status: resp.StatusCode, header: resp.Header, contentType: resp.Header.Get("Content-Type"), resent: n - 1}
	if method == http.MethodHead {
		return h
	}
	var body io.Reader = resp.Body
	if p != nil {
		body = p.Body(ctx, body)
	}
	counted.r = body
	br := c.readers.get(&counted)
	defer c.readers.put(br)
	length := resp.ContentLength
	if enc := resp.Header.Get("Content-Encoding"); enc != "" && resp.StatusCode/100 == 2 && (o.robots || o.wantHTML || o.consume != nil) {
		// Only a body that is read needs undoing; a checked link's is
		// drained as it came.
		if _, err := br.Peek(1); err == nil {
			dr, err := decoded(br, enc)
			if err != nil {
				h.err = err
				return h
			}
			br = bufio.NewReader(dr)
			// The wire length says nothing of the decoded body, as Go's
			// transport says for a gzip it undoes itself.
			length = -1
		}
	}
	if h.contentType == "" || isXML(h.contentType) {
		head, _ := br.Peek(512)
		h.contentType = pageType(h.contentType, head)
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
		h.body, h.truncated, h.err = readCapped(br, robotsLimit, length)
	case o.wantHTML && resp.StatusCode/100 == 2 && parsable(h.contentType):
		h.body, h.truncated, h.err = readCapped(br, c.cfg.MaxSize, length)
		if errors.Is(h.err, io.ErrUnexpectedEOF) {
			h.err = &shortBodyError{got: int64(len(h.body)), want: length, err: h.err}
		}
	default:
		n, _ := io.Copy(io.Discard, io.LimitReader(br, drainLimit))
		h.size = n
		return h
	}
	h.size = int64(len(h.body))
	return h
}

// timeout is the soft timeout of a request under policy p: a rule's own,
// shorter or longer than the run's.
func (c *Crawler) timeout(p *rules.Policy) time.Duration {
	if p != nil && p.Timeout > 0 {
		return p.Timeout
	}
	return c.cfg.Timeout
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

// readCapped reads r to its end, or to max bytes and says it was cut
// there. size is what the response said its body holds (-1: unknown): a
// buffer of that size is read into at once, where growing one from 512
// bytes, as io.ReadAll does, cost a page four copies and 2.5 times its size
// in allocations.
func readCapped(r io.Reader, max, size int64) ([]byte, bool, error) {
	n := int64(512)
	if size >= 0 {
		// The last read, which finds the end, needs room. A body that
		// says it is large grows as it arrives, like one that says
		// nothing: a header alone does not get a server our memory.
		n = min(size, max, maxPresize) + 1
	}
	body := make([]byte, 0, n)
	lr := io.LimitedReader{R: r, N: max + 1}
	for {
		m, err := lr.Read(body[len(body):cap(body)])
		body = body[:len(body)+m]
		if err == io.EOF {
			break
		}
		if err != nil {
			return body, false, err
		}
		if len(body) == cap(body) {
			body = append(body, 0)[:len(body)]
		}
	}
	if int64(len(body)) > max {
		return body[:max], true, nil
	}
	return body, false, nil
}

// maxPresize bounds the buffer readCapped makes for a body's announced size.
const maxPresize = 1 << 20

// readerPool lends the 4 KiB buffered readers responses are read through,
// one per request otherwise.
type readerPool struct{ p sync.Pool }

func (rp *readerPool) get(r io.Reader) *bufio.Reader {
	if br, ok := rp.p.Get().(*bufio.Reader); ok {
		br.Reset(r)
		return br
	}
	return bufio.NewReaderSize(r, 4096)
}

func (rp *readerPool) put(br *bufio.Reader) {
	br.Reset(nil) // holds nothing of the response while it waits
	rp.p.Put(br)
}

func isHTML(contentType string) bool {
	switch mediaType(contentType) {
	case "text/html", "application/xhtml+xml", "application/vnd.wap.xhtml+xml":
		return true
	}
	return false
}

func isXML(contentType string) bool {
	mt := mediaType(contentType)
	return mt == "text/xml" || mt == "application/xml"
}

// xhtmlRoot is an html element in the XHTML namespace near the start of a
// document: what makes a browser render an XML document as a page.
var xhtmlRoot = regexp.MustCompile(`(?i)<html\b[^>]*\bxmlns\s*=\s*["']http://www\.w3\.org/1999/xhtml["']`)

// pageType is the type a browser reads a body as, given the first bytes of
// the body. With no Content-Type it sniffs (WHATWG MIME sniffing, which
// http.DetectContentType implements); an XML document whose root is XHTML's
// html element is a page with working links, as browsers show it, whether
// the server said text/xml or nothing (QA8 C1: such pages were listed OK
// and every link on them went unchecked).
//
// The page keeps its encoding: the charset the server declared, else the
// one its XML declaration names, which browsers read for an XML document
// and which the decoder would not look for (RV8 F6: a Shift_JIS XHTML page
// sent as text/xml; charset=Shift_JIS was decoded by guess).
func pageType(declared string, head []byte) string {
	t := declared
	if t == "" {
		t = http.DetectContentType(head)
	}
	if !isXML(t) || !xhtmlRoot.Match(head) {
		return t
	}
	const xhtml = "application/xhtml+xml"
	if _, params, err := mime.ParseMediaType(declared); err == nil && params["charset"] != "" {
		return xhtml + "; charset=" + params["charset"]
	}
	if m := xmlEncoding.FindSubmatch(head); m != nil {
		return xhtml + "; charset=" + string(m[1])
	}
	return xhtml
}

// xmlEncoding is the encoding an XML declaration names. A byte order mark
// before it says the encoding itself, and the decoder reads that.
var xmlEncoding = regexp.MustCompile(`^\s*<\?xml\b[^>]*?\bencoding\s*=\s*["']([A-Za-z0-9._:-]+)["']`)

func isCSS(contentType string) bool { return mediaType(contentType) == "text/css" }

// parsable says whether a body of this type has links of its own: an HTML
// page or a stylesheet.
func parsable(contentType string) bool { return isHTML(contentType) || isCSS(contentType) }

// mediaType is the type/subtype of a Content-Type, lower-cased: what
// mime.ParseMediaType returns as the media type when it parses the header,
// and what was taken when it did not, without the map of parameters it
// builds, which nothing here reads (1% of a check's allocations, for the
// three times each response's type is asked).
func mediaType(contentType string) string {
	base, _, _ := strings.Cut(contentType, ";")
	return strings.TrimSpace(strings.ToLower(base))
}

// headRefused says whether a HEAD answer is more likely a server that
// mishandles HEAD than the truth about the URL, so GET must be asked too.
func headRefused(h hop) bool {
	if h.err != nil {
		var ne net.Error
		if errors.As(h.err, &ne) && ne.Timeout() {
			return false
		}
		// A malformed header line in HEAD's answer is a HEAD handler's bug
		// as likely as the page's (review10 R8): GET says which.
		return errors.Is(h.err, io.EOF) || errors.Is(h.err, io.ErrUnexpectedEOF) || isReset(h.err) ||
			malformedHeader(h.err) != ""
	}
	switch h.status {
	case http.StatusMethodNotAllowed, http.StatusNotImplemented, http.StatusBadRequest,
		http.StatusForbidden, http.StatusNotFound, http.StatusNotAcceptable, http.StatusGone,
		http.StatusInternalServerError, 999:
		// A HEAD answer that would make the URL a problem is confirmed with
		// GET: some servers answer HEAD wrongly (406: content negotiation
		// that fails on HEAD alone; 999, a bot wall some put before HEAD
		// alone, qa9 T10), and a false "broken" costs a person's time, while
		// a real one costs one more request.
		return true
	}
	return false
}
