package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// URLs of the site that its own robots.txt disallows were a bare "2
// skipped" under "No problems found." (qa4 F8): they are part of the site
// not checked, so they are listed with their referrers and the setting
// that lets them through, like spider traps, and counted in the summary.
// The exit code stays as the checked links make it (README: exit codes).
func TestOwnRobotsSkipsAreListed(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /sub/\n")
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<a href=\"/ok\">ok</a>\n<a href=\"/sub/a\">a</a>\n<a href=\"/sub/gone\">gone</a>\n")
		case "/ok":
			fmt.Fprint(w, "ok")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	db := filepath.Join(t.TempDir(), "lp.db")
	r := runInProcess(t, "check", "--db", db, srv.URL+"/")
	if r.code != exitOK {
		t.Errorf("exit %d, want %d (a robots.txt skip is the site's choice)\n%s%s", r.code, exitOK, r.stdout, r.stderr)
	}
	flat := strings.Join(strings.Fields(r.stdout), " ")
	for _, want := range []string{"2 skipped (2 on the site's own hosts, which their robots.txt disallows, listed below; --ignore-robots checks them)",
		"Skipped (2)", srv.URL + "/sub/a", srv.URL + "/sub/gone", "--ignore-robots checks the site's own hosts anyway", srv.URL + "/:2", srv.URL + "/:3"} {
		if !strings.Contains(flat, want) {
			t.Errorf("text report lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "No problems found") {
		t.Errorf("reads as a fully checked site:\n%s", r.stdout)
	}
	r = runInProcess(t, "report", "--db", db, "--format", "json")
	var rep struct {
		Summary struct{ Skipped, Robots int }
		URLs    []struct {
			URL       string
			Referrers []struct{ Line int }
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Summary.Robots != 2 || len(rep.URLs) != 2 || len(rep.URLs[0].Referrers) != 1 {
		t.Errorf("JSON: summary %+v, urls %+v; want robots 2 and both listed with their referrer", rep.Summary, rep.URLs)
	}
	r = runInProcess(t, "check", "--db", filepath.Join(t.TempDir(), "lp.db"), "--ignore-robots", srv.URL+"/")
	if r.code != exitProblems || !strings.Contains(r.stdout, srv.URL+"/sub/gone") {
		t.Errorf("--ignore-robots: exit %d, want %d with /sub/gone broken\n%s%s", r.code, exitProblems, r.stdout, r.stderr)
	}
}
