package crawler_test

import (
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
