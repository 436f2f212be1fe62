package crawler

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
)

// classifyStatus turns a final HTTP status into a verdict. A server that
// would not let a robot look (401, 403, 429, 999, a bot challenge) is
// "unverifiable", which is not the same as a dead link: other checkers
// lump these with broken (false alarms) or with ok (missed 404s).
func classifyStatus(status int, h http.Header, p *rules.Policy) (store.Verdict, string) {
	if p != nil {
		if v, ok := p.Accept[status]; ok {
			return store.Verdict(v), ""
		}
	}
	switch {
	case botChallenge(status, h):
		return store.VerdictUnverifiable, "bot challenge"
	case status >= 200 && status < 300:
		return store.VerdictOK, ""
	case status == http.StatusNotModified:
		// The one 304 that is fine, the answer to a conditional request,
		// never gets here (process keeps the stored page); to a request
		// with no condition it leaves a browser without a page.
		return store.VerdictBroken, "304 to an unconditional request"
	case status == http.StatusUnauthorized, status == http.StatusForbidden,
		status == http.StatusTooManyRequests, status == 999:
		return store.VerdictUnverifiable, ""
	case status >= 300 && status < 400 && !isRedirect(status) && h.Get("Location") != "":
		// 300, 305, 306 and unassigned codes: browsers (Fetch) follow only
		// 301, 302, 303, 307 and 308, whatever Location says (qa9 T3).
		return store.VerdictBroken, "redirect browsers do not follow"
	case status >= 300 && status < 400:
		return store.VerdictBroken, "redirect without location"
	case status >= 400 && status < 500:
		return store.VerdictBroken, ""
	case status >= 500:
		return store.VerdictTransient, ""
	}
	return store.VerdictBroken, "bad status " + strconv.Itoa(status)
}

// botChallenge recognises the interstitial pages of the common bot
// protections, which answer a robot with 403 or 503 whatever the URL.
func botChallenge(status int, h http.Header) bool {
	if h == nil || (status != http.StatusForbidden && status != http.StatusServiceUnavailable && status != http.StatusTooManyRequests) {
		return false
	}
	if h.Get("Cf-Mitigated") != "" || h.Get("X-Amzn-Waf-Action") != "" {
		return true
	}
	server := strings.ToLower(h.Get("Server"))
	return strings.Contains(server, "cloudflare") || strings.Contains(server, "ddos-guard")
}

// classifyError names a failed request by what a person can do about it.
func classifyError(err error) (store.Verdict, string) {
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalidCert x509.CertificateInvalidError
	var addrErr *net.AddrError
	var opErr *net.OpError
	var recordErr tls.RecordHeaderError
	switch {
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return store.VerdictBroken, "dns"
		}
		return store.VerdictTransient, "dns"
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return store.VerdictTransient, "timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return store.VerdictBroken, "refused"
	case errors.As(err, &addrErr):
		// url.Parse lets "http://localhost]/" through; the dialer does not.
		return store.VerdictBroken, "invalid host"
	case errors.As(err, &opErr) && opErr.Op == "remote error", errors.As(err, &recordErr),
		strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		// The server refused the handshake (a TLS alert), or does not
		// speak TLS on that port at all.
		return store.VerdictBroken, "TLS handshake failed"
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &hostErr), errors.As(err, &invalidCert):
		return store.VerdictBroken, store.ErrorTLS
	case errors.As(err, new(*unsupportedEncodingError)):
		// Not broken: a browser may read it, we cannot; and robots.txt
		// sent so is unreadable, not empty (RFC 9309: keep off).
		return store.VerdictUnverifiable, store.ErrorUnsupportedEncoding
	case errors.As(err, new(*shortBodyError)):
		return store.VerdictTransient, "body cut short"
	case errors.Is(err, gzip.ErrHeader), errors.Is(err, gzip.ErrChecksum), errors.As(err, new(flate.CorruptInputError)),
		errors.Is(err, zlib.ErrHeader), errors.Is(err, zlib.ErrChecksum):
		return store.VerdictTransient, "bad compressed body"
	case isReset(err), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return store.VerdictTransient, "connection reset"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return store.VerdictTransient, "unreachable"
	case strings.Contains(err.Error(), "response headers exceeded"):
		return store.VerdictBroken, "headers too large"
	case malformedHeader(err) != "":
		// Not broken: browsers skip a header line they cannot read and
		// show the page; nor transient: the server sends it every time,
		// and it is not asked again (see throttle's notLoad). The answer
		// could not be read, as one in an encoding we cannot undo.
		return store.VerdictUnverifiable, store.ErrorMalformedHeader
	case badContentLength(err) != "":
		// The response cannot be read, however often it is asked (qa9
		// T4: it was a bare "error", asked three times).
		return store.VerdictBroken, "bad Content-Length header"
	case strings.Contains(err.Error(), "multiple Content-Length headers"):
		// A server bug, or a smuggling attempt: browsers refuse it too.
		return store.VerdictTransient, "duplicate Content-Length header"
	case strings.Contains(err.Error(), "chunked encoding"), strings.Contains(err.Error(), "chunk length"),
		strings.Contains(err.Error(), "chunked line"):
		return store.VerdictTransient, "malformed chunked encoding"
	case transferEncoding(err) != "":
		return store.VerdictTransient, "unsupported transfer encoding"
	case strings.Contains(err.Error(), "malformed HTTP"):
		return store.VerdictBroken, "bad response"
	case strings.Contains(err.Error(), "unsupported protocol scheme"):
		return store.VerdictSkipped, "unsupported scheme"
	}
	return store.VerdictTransient, "error"
}

// malformedHeader is what was wrong with a response's header lines, which
// Go's HTTP client refuses (qa9 T4: it was a bare "error", transient), as
// net/textproto says it (`missing colon: "BadHeaderLine"`), or "".
func malformedHeader(err error) string {
	var pe textproto.ProtocolError
	if !errors.As(err, &pe) {
		return ""
	}
	why, ok := strings.CutPrefix(string(pe), "malformed MIME header")
	if !ok {
		return ""
	}
	return strings.TrimLeft(why, " :")
}

// malformedHeaderNote says in words what the server sent, for the record
// of a URL whose answer had a malformed header line.
func malformedHeaderNote(err error) string {
	why := malformedHeader(err)
	if len(why) > maxQuoted {
		// textproto quotes the whole line, up to the client's header
		// limit: 256 KiB in the note of every URL answered so (review10 R9).
		why = fmt.Sprintf("%s… (%d bytes)", strings.ToValidUTF8(why[:maxQuoted], ""), len(why))
	}
	return "the server sent a header line that is not \"Name: value\" (" + why +
		"), which HTTP forbids: browsers skip such a line and may show the page, linkpatrol cannot read the answer"
}

// maxQuoted is the most of a server's malformed line a note quotes.
const maxQuoted = 80

// badContentLength is the Content-Length a response could not be read
// for, as Go's error quotes it (`"12abc"`), or "".
func badContentLength(err error) string {
	_, cl, ok := strings.Cut(err.Error(), "bad Content-Length ")
	if !ok {
		return ""
	}
	return cl
}

// transferEncoding is the Transfer-Encoding of a response that could not
// be read for it, as Go's error quotes it ("gzip, chunked"), or "".
func transferEncoding(err error) string {
	msg := err.Error()
	for _, prefix := range []string{"unsupported transfer encoding: ", "too many transfer encodings: "} {
		if i := strings.Index(msg, prefix); i >= 0 {
			return msg[i+len(prefix):]
		}
	}
	return ""
}

// transferEncodingProblem says in words what the server did wrong: a
// client need understand only chunked, and a server may use another
// transfer coding only if the request offered it in TE, which ours never
// does (qa7 Q7: it was a bare "error"). "" for another error.
func transferEncodingProblem(err error) string {
	te := transferEncoding(err)
	if te == "" {
		return ""
	}
	return "the server sent the body with Transfer-Encoding " + te + ", which the request did not offer (no TE header): only chunked is understood"
}

// certProblem says in words why a server's certificate was not trusted:
// the record's note for the error class store.ErrorTLS, which stays as
// it is for machines (qa5 N7: "tls" alone told nobody what to do). "" for
// an error that is not about a certificate.
func certProblem(err error) string {
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	switch {
	case errors.As(err, &unknown):
		if c := unknown.Cert; c != nil && bytes.Equal(c.RawIssuer, c.RawSubject) {
			return "the certificate is self-signed (signed by an unknown authority)"
		}
		return "the certificate is signed by an unknown authority"
	case errors.As(err, &host):
		return strings.TrimPrefix(host.Error(), "x509: ")
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired && invalid.Cert != nil:
		// Expired also covers "not valid yet": the detail says which.
		c := invalid.Cert
		if time.Now().Before(c.NotBefore) {
			return "the certificate is not valid before " + c.NotBefore.UTC().Format("2006-01-02 15:04 MST")
		}
		return "the certificate expired on " + c.NotAfter.UTC().Format("2006-01-02 15:04 MST")
	case errors.As(err, &invalid):
		return strings.TrimPrefix(invalid.Error(), "x509: ")
	case errors.As(err, &verify):
		return strings.TrimPrefix(verify.Err.Error(), "x509: ")
	}
	return ""
}

// shortBodyError is a body that ended before the length its response
// announced: the server closed the connection part way, which is not a
// reset (qa4 F7). Its message is the record's note.
type shortBodyError struct {
	got, want int64
	err       error
}

func (e *shortBodyError) Error() string {
	if e.want <= 0 { // unknown, or compressed: Go drops the wire length
		return fmt.Sprintf("the body ended early, after %d bytes: the connection closed before its end", e.got)
	}
	return fmt.Sprintf("the body ended after %d of the %d bytes its Content-Length announced", e.got, e.want)
}

func (e *shortBodyError) Unwrap() error { return e.err }

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, net.ErrClosed)
}
