package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runIn runs the binary in dir, where it finds ./linkpatrol.toml.
func runIn(t *testing.T, dir string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	return runCmd(t, cmd)
}

func fragmentServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, "<a href=\"/doc#install\">ok</a>\n<a href=\"/doc#nowhere\">missing</a>")
		case "/doc":
			fmt.Fprint(w, `<h2 id="install">Install</h2>`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// What check found, report shows: missing fragments found with
// --check-fragments stay without the flag, the config file picked up from
// the working directory is named, and an older pass is refused rather than
// shown empty and clean.
func TestReportShowsWhatTheCheckFound(t *testing.T) {
	t.Parallel()
	srv := fragmentServer(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "linkpatrol.toml"), []byte("timeout = \"10s\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	check := runIn(t, dir, "check", "--check-fragments", "--ignore-robots", srv.URL+"/")
	if check.code != exitProblems || !strings.Contains(check.stdout, "#nowhere") {
		t.Fatalf("check: exit %d, want 1 with the missing fragment\n%s%s", check.code, check.stdout, check.stderr)
	}
	if !strings.Contains(strings.Join(strings.Fields(check.stdout), " "), "config linkpatrol.toml.") {
		t.Errorf("the header does not name the config file it loaded:\n%s", check.stdout)
	}
	rep := runIn(t, dir, "report")
	if rep.code != exitProblems || !strings.Contains(rep.stdout, "#nowhere") || strings.Contains(rep.stdout, "No problems found") {
		t.Errorf("report without --check-fragments: exit %d, want 1 with the missing fragment\n%s%s", rep.code, rep.stdout, rep.stderr)
	}

	if second := runIn(t, dir, "check", "--ignore-robots", srv.URL+"/"); second.code != exitOK {
		t.Fatalf("second check, without fragments: exit %d\n%s%s", second.code, second.stdout, second.stderr)
	}
	old := runIn(t, dir, "report", "--pass", "1")
	if old.code != exitUsage || !strings.Contains(old.stderr, "cannot report pass 1") || old.stdout != "" {
		t.Errorf("report --pass 1 after pass 2: exit %d, want 2 and a refusal\nstdout %q\nstderr %q", old.code, old.stdout, old.stderr)
	}
	if newest := runIn(t, dir, "report", "--pass", "2"); newest.code != exitOK {
		t.Errorf("report --pass 2 (the newest): exit %d\n%s", newest.code, newest.stderr)
	}
}
