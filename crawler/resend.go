package crawler

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
)

// net/http's Transport sends an idempotent request (GET, HEAD) again, on
// another connection, when a kept-alive connection fails before any answer
// (transport.go, shouldRetryRequest), and says nothing of it. The server
// may well have read the first one: a server that resets connections got
// 1 + --retries requests from our own retries plus one such resend per
// try. Each request that reaches the wire is a try of its URL here: a
// resend is counted as one (in the progress and in the throttle's retry
// decision), one past the host's retries is never written, and one within
// them waits for its host's throttle (Permit.Resend) before it is: a burst
// of resends within 3 ms broke --window (QA4 F1).
//
// HTTP/2 is left alone: its client resends only a stream the server
// refused unprocessed (REFUSED_STREAM, past a GOAWAY), which is no request.

// errTriesUsed is what a connection answers when net/http would resend a
// request past its tries; the Transport then gives up.
var errTriesUsed = errors.New("request not sent again: its tries are used")

// sentConn is a connection the crawler dialled: it counts the bytes
// written on it, so that a request can tell whether it reached the wire,
// keeps the last read error, the cause of a failure the Transport resends
// after, and refuses writes once told to.
type sentConn struct {
	net.Conn
	written atomic.Int64
	refuse  atomic.Bool
	mu      sync.Mutex
	readErr error
}

func (c *sentConn) Write(b []byte) (int, error) {
	if c.refuse.Load() {
		return 0, errTriesUsed
	}
	n, err := c.Conn.Write(b)
	c.written.Add(int64(n))
	return n, err
}

func (c *sentConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err != nil {
		c.mu.Lock()
		c.readErr = err
		c.mu.Unlock()
	}
	return n, err
}

func (c *sentConn) lastReadErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readErr
}

// sentConnOf is the sentConn under an HTTP/1 connection, nil for HTTP/2
// or a connection someone else dialled (Config.Transport).
func sentConnOf(c net.Conn) *sentConn {
	if tc, ok := c.(*tls.Conn); ok {
		if tc.ConnectionState().NegotiatedProtocol == "h2" {
			return nil
		}
		c = tc.NetConn()
	}
	sc, _ := c.(*sentConn)
	return sc
}

// tries follows one request through http.Client.Do: the connections the
// Transport sends it over, and how many of them it reached.
type tries struct {
	allowed int // requests it may take; 0: no limit
	// wait, when set, waits for the host's throttle to let one more
	// request be sent (see Crawler.resendWait); an error refuses it.
	wait  func() error
	mu    sync.Mutex
	last  *sentConn
	mark  int64 // last.written when the request got it
	sent  int   // requests written before last
	cause error // why the connection before last failed
}

// trace hooks t into a request's context.
func (t *tries) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		sc := sentConnOf(info.Conn)
		if sc == nil {
			return
		}
		t.mu.Lock()
		resend := t.last != nil && t.last.written.Load() > t.mark
		if resend {
			t.sent++
			t.cause = t.last.lastReadErr()
		}
		refuse := t.allowed > 0 && t.sent >= t.allowed
		t.last, t.mark = sc, sc.written.Load()
		t.mu.Unlock()
		// The Transport holds no lock while it tells GotConn, and writes
		// the request over sc only after it returns.
		if !refuse && resend && t.wait != nil {
			refuse = t.wait() != nil
		}
		if refuse {
			sc.refuse.Store(true)
		}
	}}
}

// count is how many requests reached the wire (at least one: a request
// over a connection it cannot see counts as one, as before), and the
// error to report for err: the failure a refused resend followed.
func (t *tries) count(err error) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := t.sent
	if t.last == nil || t.last.written.Load() > t.mark {
		n++
	}
	n = max(n, 1)
	if errors.Is(err, errTriesUsed) {
		err = t.cause
		if err == nil {
			err = errors.New("connection closed before the server answered")
		}
	}
	return n, err
}
