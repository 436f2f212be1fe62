package crawler_test

import (
	"context"
	"crypto/tls"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler/crawltest"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// A certificate that is not to be trusted is the same at the next try:
// the URL is requested once (and robots.txt once), the host is not backed
// off, and the record says why in words while its error class stays "tls"
// (qa5 N7: "tls" after six handshakes and 24 s of backoff).
func TestUntrustedCertificateIsSaidAtOnce(t *testing.T) {
	t.Parallel()
	now := time.Now()
	tests := []struct {
		name  string
		cert  func(t *testing.T) *crawltest.Cert // nil: httptest's own, which nothing trusts
		trust bool                               // the crawler's transport trusts cert
		note  string
	}{
		{name: "self-signed", note: "the certificate is self-signed (signed by an unknown authority)"},
		{name: "expired", cert: certFor([]string{"127.0.0.1"}, now.Add(-48*time.Hour), now.Add(-24*time.Hour)), trust: true,
			note: "the certificate expired on " + now.Add(-24*time.Hour).UTC().Format("2006-01-02")},
		{name: "another name", cert: certFor([]string{"127.0.0.2"}, now.Add(-time.Hour), now.Add(time.Hour)), trust: true,
			note: "certificate is valid for 127.0.0.2, not 127.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewUnstartedServer(page(`<a href="/x">x</a>`))
			srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes refused
			var tr http.RoundTripper
			if tt.cert != nil {
				c := tt.cert(t)
				srv.TLS = &tls.Config{Certificates: []tls.Certificate{c.TLS}}
				if tt.trust {
					tr = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: c.Pool()}}
				}
			}
			srv.StartTLS()
			defer srv.Close()
			start := srv.URL + "/"
			_, recs, hosts := politeRunVia(t, openDB(t), start, throttle.Settings{MaxPause: 10 * time.Minute, MaxRetries: 2}, context.Background(), tr)
			rec := recs[start]
			if rec.Verdict != store.VerdictBroken || rec.Error != "tls" || !strings.Contains(rec.Note, tt.note) {
				t.Errorf("%s: %s %q, note %q; want broken \"tls\", note with %q", start, rec.Verdict, rec.Error, rec.Note, tt.note)
			}
			for _, h := range hosts {
				// robots.txt and the page, once each.
				if h.Requests != 2 || h.BackoffLevel != 0 {
					t.Errorf("%s: %d requests, backoff level %d; want 2 and 0", h.Key, h.Requests, h.BackoffLevel)
				}
			}
		})
	}
}

// certFor makes a self-signed certificate for names, valid from nb to na.
func certFor(names []string, nb, na time.Time) func(t *testing.T) *crawltest.Cert {
	return func(t *testing.T) *crawltest.Cert {
		t.Helper()
		c, err := crawltest.NewCert(names, nb, na)
		if err != nil {
			t.Fatal(err)
		}
		return &c
	}
}
