package crawler_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/report"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
)

// A link in a scheme linkpatrol cannot check (ftp:, sftp:, news:, irc:)
// names something on a network that nothing verified: it is not checked,
// not "skipped on purpose", and the night is PARTLY CHECKED (exit 5) with
// the schemes named, until --exclude (or --offline, or a rule) makes
// leaving them out a choice. mailto:, tel:, javascript:, data:, about: and
// man: are no links to check: not recorded, whatever is asked (qa9 T11:
// the first were "skipped ... by a rule, --exclude, --offline or another
// host's robots.txt", exit 0, and irc: was not even listed).
func TestLinksInSchemesNotSupportedAreNotChecked(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(page(`<!doctype html>
<a href="ftp://ftp.example.org/pub/x.tar.gz">ftp</a>
<a href="sftp://files.example.org/x">sftp</a>
<a href="news:comp.lang.go">news</a>
<a href="irc://irc.libera.chat/#go-nuts">irc</a>
<a href="mailto:webmaster@example.org">mail</a> <a href="tel:+4412345">call</a>
<a href="javascript:void(0)">js</a> <a href="data:text/plain,x">data</a>
<a href="about:blank">blank</a> <a href="man:setlocale(3)">man</a>`))
	t.Cleanup(srv.Close) // the subtests run after this function returns
	unsupported := []string{"ftp://ftp.example.org/pub/x.tar.gz", "sftp://files.example.org/x", "news:comp.lang.go", "irc://irc.libera.chat/"}

	for _, tt := range []struct {
		name    string
		cfg     rules.Config
		verdict store.Verdict
		held    string // in HeldBack, the line that makes the exit code 5; "" for none
	}{
		{"by default", rules.Config{}, store.VerdictUnverifiable,
			"4 links could not be verified (not checked: schemes ftp, irc, news and sftp are not supported)"},
		{"excluded", rules.Config{Exclude: []string{"^ftp:", "^sftp:", "^news:", "^irc:"}}, store.VerdictSkipped, ""},
		{"offline", rules.Config{Offline: true}, store.VerdictSkipped, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.cfg.Start = []string{srv.URL + "/"}
			engine, err := rules.New(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			db := openDB(t)
			res := runPassWith(t, db, crawler.Config{Concurrency: 2}, engine, srv.URL+"/")
			for _, u := range unsupported {
				rec, ok := res.records[u]
				if !ok || rec.Verdict != tt.verdict {
					t.Errorf("%s: recorded %v, verdict %q %q; want %q", u, ok, rec.Verdict, rec.Error, tt.verdict)
				}
				if tt.verdict == store.VerdictUnverifiable && (rec.Error != store.ErrorUnsupportedScheme || !strings.Contains(rec.Note, "--exclude '^") || !rec.LastGood.IsZero()) {
					t.Errorf("%s: error %q, note %q; want %q and how to leave such links out", u, rec.Error, rec.Note, store.ErrorUnsupportedScheme)
				}
			}
			for u := range res.records {
				for _, s := range []string{"mailto:", "tel:", "javascript:", "data:", "about:", "man:"} {
					if strings.HasPrefix(u, s) {
						t.Errorf("%s recorded: not a link to check", u)
					}
				}
			}
			rep, err := report.Build(db, res.pass.ID, report.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := rep.HeldBack(); !strings.Contains(got, tt.held) || (tt.held == "") != (got == "") {
				t.Errorf("HeldBack = %q, want it to say %q", got, tt.held)
			}
			if rep.HasBroken() {
				t.Error("HasBroken: nothing is known to be broken")
			}
			if tt.held != "" {
				if rep.Summary.Unsupported != 4 || !strings.Contains(rep.Counts(), "4 unverifiable (4 not checked: schemes ftp, irc, news and sftp are not supported)") {
					t.Errorf("summary %+v, counts %q: want the 4 not checked said with their schemes", rep.Summary, rep.Counts())
				}
				if got := report.Problem(res.records[unsupported[0]]); got != "scheme ftp is not supported" {
					t.Errorf("Problem = %q", got)
				}
				if since := rep.Since(res.records[unsupported[0]]); since != "" {
					t.Errorf("Since = %q: a link never requested neither worked nor failed", since)
				}
			}
		})
	}
}

// A redirect to a scheme linkpatrol cannot check (a download moved to an
// ftp: mirror) is not checked, as a link written so is, and says which
// scheme; left out by --exclude it is skipped. A redirect to mailto: leads
// nowhere a link can: broken. A Windows path written as a link (C:\...,
// read as scheme "c") names a file on the author's disk: broken (review10
// R5: the redirect was "broken, never worked", the path "not checked:
// scheme c is not supported").
func TestRedirectToSchemeNotSupportedIsNotChecked(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/toftp":
			http.Redirect(w, r, "ftp://127.0.0.1/pub/moved.tgz", http.StatusFound)
		case "/tomail":
			http.Redirect(w, r, "mailto:webmaster@example.org", http.StatusFound)
		default:
			page(`<a href="/toftp">f</a> <a href="/tomail">m</a> <a href="C:\Users\me\doc.html">w</a>`)(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	for _, tt := range []struct {
		name    string
		cfg     rules.Config
		verdict store.Verdict
	}{
		{"by default", rules.Config{}, store.VerdictUnverifiable},
		{"excluded", rules.Config{Exclude: []string{"^ftp:"}}, store.VerdictSkipped},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.cfg.Start = []string{srv.URL + "/"}
			engine, err := rules.New(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			db := openDB(t)
			res := runPassWith(t, db, crawler.Config{Concurrency: 2}, engine, srv.URL+"/")
			rec := res.records[srv.URL+"/toftp"]
			if rec.Verdict != tt.verdict || rec.FinalURL != "ftp://127.0.0.1/pub/moved.tgz" || !rec.LastGood.IsZero() {
				t.Errorf("/toftp: %s %q %d final %q; want %s at the ftp: URL", rec.Verdict, rec.Error, rec.Status, rec.FinalURL, tt.verdict)
			}
			if rec := res.records[srv.URL+"/tomail"]; rec.Verdict != store.VerdictBroken || rec.Error != "redirect to mailto:" {
				t.Errorf("/tomail: %s %q; want broken, redirect to mailto:", rec.Verdict, rec.Error)
			}
			win := 0
			for u, r := range res.records {
				if strings.HasPrefix(strings.ToLower(u), "c:") {
					win++
					if r.Verdict != store.VerdictBroken || r.Error != "Windows file path, not a URL" {
						t.Errorf("%s: %s %q; want broken, a Windows file path", u, r.Verdict, r.Error)
					}
				}
			}
			if win != 1 {
				t.Errorf("%d records of the Windows path, want 1", win)
			}
			if tt.verdict != store.VerdictUnverifiable {
				return
			}
			if rec.Error != store.ErrorUnsupportedScheme || !strings.Contains(rec.Note, "--exclude '^ftp:'") {
				t.Errorf("/toftp: error %q, note %q; want %q and how to leave such links out", rec.Error, rec.Note, store.ErrorUnsupportedScheme)
			}
			rep, err := report.Build(db, res.pass.ID, report.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := rep.Chain(rec); got != "redirects to ftp://127.0.0.1/pub/moved.tgz, not requested: scheme ftp is not supported" {
				t.Errorf("Chain = %q, want the ftp: URL, not requested (nothing failed there)", got)
			}
			if got := report.Problem(rec); got != "scheme ftp is not supported" {
				t.Errorf("Problem = %q, want the redirect target's scheme", got)
			}
			if since := rep.Since(rec); since != "" {
				t.Errorf("Since = %q: its target was never requested", since)
			}
			if got := rep.HeldBack(); !strings.Contains(got, "1 link could not be verified (not checked: scheme ftp is not supported)") {
				t.Errorf("HeldBack = %q, want the ftp: redirect said", got)
			}
		})
	}
}
