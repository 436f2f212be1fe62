package crawler

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"time"
)

// readBufferSize is the size of each connection's read buffer: 16
// connections hold 512 KiB.
const readBufferSize = 32 << 10

func newTransport(cfg Config) *http.Transport {
	dialer := &net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		// Every connection counts what is written on it (see tries).
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &sentConn{Conn: c}, nil
		},
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           cfg.Concurrency * 2,
		MaxIdleConnsPerHost:    cfg.PerHost,
		MaxConnsPerHost:        cfg.PerHost,
		IdleConnTimeout:        30 * time.Second,
		TLSHandshakeTimeout:    cfg.Timeout,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 256 << 10,
		// A typical page and its headers arrive in one read instead of
		// two or three with the default 4 KiB (strace -c of a 10,000-page
		// check: 32,000 reads for 11,000 responses).
		ReadBufferSize: readBufferSize,
	}
	if cfg.Insecure {
		// The user asked for it (--insecure) and every report of the pass
		// says so in its first line.
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec
	}
	return tr
}

// badLocation is where keepBadLocation moves a Location that does not
// parse. A header name with a space cannot come from the wire.
const badLocation = "Location (unparsed)"

// keepBadLocation hands a redirect whose Location does not parse (a bad
// escape: "/a%zz") back as an answer, its Location moved to badLocation.
// http.Client parses Location before CheckRedirect and, when that fails,
// returns only an error with the answer dropped, so the report could not
// say that the server redirected, nor to what (see fetch).
type keepBadLocation struct{ http.RoundTripper }

func (k keepBadLocation) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := k.RoundTripper.RoundTrip(req)
	if err != nil || resp.StatusCode < 300 || resp.StatusCode > 399 {
		return resp, err
	}
	if loc := resp.Header.Get("Location"); loc != "" {
		if _, perr := req.URL.Parse(loc); perr != nil {
			resp.Header.Del("Location")
			resp.Header[badLocation] = []string{loc}
		}
	}
	return resp, nil
}
