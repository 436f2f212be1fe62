package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// -vv logs every decision about a URL, and with --log-format json every
// line on standard error is a JSON object, the status page's address and
// a final error included.
func TestDecisionLogInJSON(t *testing.T) {
	t.Parallel()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<a href="/ok">ok</a> <a href="/private/x">private</a> <a href="/hidden/y">hidden</a> <a href="/gone">gone</a>`)
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /hidden/\n")
		case "/ok":
			w.WriteHeader(http.StatusOK)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(site.Close)
	dir := t.TempDir()
	config := filepath.Join(dir, "lp.toml")
	if err := os.WriteFile(config, []byte("[[rule]]\npath_prefix = \"/private/\"\naction = \"skip\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(extra ...string) (result, []map[string]any) {
		t.Helper()
		args := append([]string{"check", "--db", filepath.Join(dir, "lp.db"), "--config", config, "-vv", "--log-format", "json"}, extra...)
		r := runInProcess(t, append(args, site.URL+"/")...)
		var recs []map[string]any
		for _, line := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
			var rec map[string]any
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Errorf("a line on stderr is not JSON: %q", line)
				continue
			}
			recs = append(recs, rec)
		}
		return r, recs
	}
	find := func(recs []map[string]any, msg, url string) map[string]any {
		for _, rec := range recs {
			if rec["msg"] == msg && rec["url"] == url {
				return rec
			}
		}
		return nil
	}

	// With a status page, whose end makes the run wait a little for a
	// viewer; the other runs go without.
	r, recs := run("--status-addr", "127.0.0.1:0")
	if r.code != exitProblems {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	if rec := find(recs, "fetched", site.URL+"/gone"); rec == nil || rec["status"] != float64(404) || rec["verdict"] != "broken" {
		t.Errorf("no fetched record for /gone with its 404: %v", rec)
	}
	if rec := find(recs, "skipped", site.URL+"/private/x"); rec == nil || !strings.Contains(fmt.Sprint(rec["why"]), "lp.toml:1") {
		t.Errorf("the rule's skip does not name the rule's file and line: %v", rec)
	}
	if rec := find(recs, "skipped", site.URL+"/hidden/y"); rec == nil || !strings.Contains(fmt.Sprint(rec["why"]), "robots.txt") {
		t.Errorf("the robots.txt skip is not logged with its reason: %v", rec)
	}
	if rec := find(recs, "status page", ""); rec != nil {
		t.Errorf("status page record without its URL: %v", rec)
	}
	status := false
	for _, rec := range recs {
		status = status || rec["msg"] == "status page" && strings.HasPrefix(fmt.Sprint(rec["url"]), "http://127.0.0.1:")
	}
	if !status {
		t.Error("the status page's address is not a JSON record")
	}

	// /ok is on the site's own host: reused only within --recheck-pages.
	_, recs = run("--recheck-pages", "1h")
	if rec := find(recs, "reused", site.URL+"/ok"); rec == nil || rec["from_pass"] != float64(1) {
		t.Errorf("the second run does not log /ok as reused from pass 1: %v", rec)
	}

	for _, bad := range []struct{ flag, says string }{{"--fail-on=sometimes", "fail-on"}, {"--no-such-flag", "no-such-flag"}} {
		r, recs = run(bad.flag)
		if r.code != exitUsage || len(recs) != 1 || recs[0]["level"] != "ERROR" || !strings.Contains(fmt.Sprint(recs[0]["msg"]), bad.says) {
			t.Errorf("%s with --log-format json: exit %d, stderr %q", bad.flag, r.code, r.stderr)
		}
	}
}
