package report

import (
	"testing"

	"github.com/linkpatrol/linkpatrol/store"
)

// Which records are pages of the site the pass could not read, hiding
// what is behind them (qa5 N4).
func TestUnreadPage(t *testing.T) {
	t.Parallel()
	const u = "https://example.com/section/"
	tests := []struct {
		name string
		rec  store.URLRecord
		want bool
	}{
		{"a page answering 503", store.URLRecord{Action: "parse", Verdict: store.VerdictTransient, Status: 503}, true},
		{"a page timing out", store.URLRecord{Action: "parse", Verdict: store.VerdictTransient, Error: "timeout"}, true},
		{"a page answering 403", store.URLRecord{Action: "parse", Verdict: store.VerdictUnverifiable, Status: 403}, true},
		{"a page answering 429 after its retries", store.URLRecord{Action: "parse", Verdict: store.VerdictUnverifiable, Status: 429}, true},
		{"a sitemap answering 503", store.URLRecord{Action: "sitemap", Verdict: store.VerdictTransient, Status: 503}, true},
		{"a page its host's robots.txt keeps us off", store.URLRecord{Action: "parse", Verdict: store.VerdictTransient, Error: "robots.txt answered 500: the host is failing"}, true},
		{"a ghost: its last good copy's links were followed, but links added since are unseen (as past a cut)",
			store.URLRecord{Action: "parse", Verdict: store.VerdictTransient, Status: 503, Parsed: true, Note: "ghost: following its links from 2026-11-22"}, true},
		{"a broken page fails the pass already", store.URLRecord{Action: "parse", Verdict: store.VerdictBroken, Status: 404}, false},
		{"a page read", store.URLRecord{Action: "parse", Verdict: store.VerdictOK, Status: 200, Parsed: true}, false},
		{"a link only checked (another site, an image)", store.URLRecord{Action: "check", Verdict: store.VerdictTransient, Status: 503}, false},
		{"a redirect: its target has a record of its own",
			store.URLRecord{Action: "parse", Verdict: store.VerdictTransient, Status: 503, FinalURL: u + "index.html", Redirects: []store.Hop{{URL: u, Status: 301}}}, false},
		{"held back by a Retry-After: the pass is unfinished (exit 3)", store.URLRecord{Action: "parse", Verdict: store.VerdictTransient, Error: "rate-limited"}, false},
		{"held back because its host stopped answering: the pass is unfinished (exit 3)", store.URLRecord{Action: "parse", Verdict: store.VerdictTransient, Error: store.ErrorHostDown}, false},
		{"another site's page a rule parses, held back by its pause: settled as unverifiable", store.URLRecord{Action: "parse", Verdict: store.VerdictUnverifiable, Error: store.ErrorRateLimited}, false},
		{"skipped on purpose", store.URLRecord{Action: "skip", Verdict: store.VerdictSkipped}, false},
		{"a PDF answering 403: no page, nothing behind it", store.URLRecord{Action: "parse", Verdict: store.VerdictUnverifiable, Status: 403, ContentType: "application/pdf"}, false},
		{"an image answering 503", store.URLRecord{Action: "parse", Verdict: store.VerdictTransient, Status: 503, ContentType: "image/png"}, false},
		{"a page answering 403 with an HTML body", store.URLRecord{Action: "parse", Verdict: store.VerdictUnverifiable, Status: 403, ContentType: "text/html; charset=utf-8"}, true},
		{"a page answering 503 with a text body", store.URLRecord{Action: "parse", Verdict: store.VerdictTransient, Status: 503, ContentType: "text/plain; charset=utf-8"}, true},
		{"a page answering 401 with a JSON problem", store.URLRecord{Action: "parse", Verdict: store.VerdictUnverifiable, Status: 401, ContentType: "application/problem+json"}, true},
		{"a sitemap answering 503 with XML", store.URLRecord{Action: "sitemap", Verdict: store.VerdictTransient, Status: 503, ContentType: "application/xml"}, true},
		{"a page answering 503 with a body of no named type", store.URLRecord{Action: "parse", Verdict: store.VerdictTransient, Status: 503, ContentType: "application/octet-stream"}, true},
	}
	for _, tt := range tests {
		rec := tt.rec
		rec.URL = u
		if got := unreadPage(&rec); got != tt.want {
			t.Errorf("%s: unreadPage = %v, want %v", tt.name, got, tt.want)
		}
	}
}
