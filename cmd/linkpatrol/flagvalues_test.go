package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A value the file accepts, the command line accepts, and a value the file
// refuses, the command line refuses: one parser and one check for both.
func TestFlagValuesReadAndCheckedLikeTheFile(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<p>nothing to follow</p>")
	}))
	t.Cleanup(srv.Close)
	accepted := [][]string{
		{"--ghost", "7d"}, {"--recheck-ok", "1d"}, {"--recheck-broken", "2w"},
		{"--max-size", "10MiB"}, {"--timeout", "1m"}, {"--commit-every", "2s"},
	}
	for _, flag := range accepted {
		t.Run(strings.Join(flag, " "), func(t *testing.T) {
			t.Parallel()
			args := append([]string{"check", "-q", "--ignore-robots", "--db", filepath.Join(t.TempDir(), "lp.db")}, flag...)
			r := runInProcess(t, append(args, srv.URL+"/")...)
			if r.code != exitOK {
				t.Errorf("exit %d, want 0\n%s", r.code, r.stderr)
			}
		})
	}
	refused := []struct {
		flag []string
		want string
	}{
		{[]string{"--timeout=-5s"}, `for "--timeout" flag: duration "-5s" is negative`},
		{[]string{"--timeout=0s"}, "--timeout must be more than 0"},
		{[]string{"--concurrency=0"}, "--concurrency must be at least 1"},
		{[]string{"--per-host=0"}, "--per-host must be at least 1"},
		{[]string{"--max-size=0"}, "--max-size must be more than 0"},
		{[]string{"--keep-passes=0"}, "--keep-passes must be at least 1"},
		{[]string{"--commit-batch=0"}, "--commit-batch must be at least 1"},
		{[]string{"--commit-every=0s"}, "--commit-every must be more than 0"},
		{[]string{"--concurrency=2", "--per-host=4"}, "--per-host 4 is more than --concurrency 2"},
		{[]string{"--ghost=7 days"}, "--ghost"},
	}
	for _, tc := range refused {
		t.Run(strings.Join(tc.flag, " "), func(t *testing.T) {
			t.Parallel()
			args := append([]string{"check", "--db", filepath.Join(t.TempDir(), "lp.db")}, tc.flag...)
			r := runInProcess(t, append(args, srv.URL+"/")...)
			if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", r.code, r.stderr, tc.want)
			}
		})
	}
}

// report reads linkpatrol.toml as check does: a db set there is the one
// both use.
func TestReportReadsTheConfigFile(t *testing.T) {
	t.Parallel()
	srv := fragmentServer(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "linkpatrol.toml"), []byte("db = \"site.db\"\nformat = \"json\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runIn(t, dir, "check", "-q", "--ignore-robots", srv.URL+"/"); r.code != exitOK {
		t.Fatalf("check: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "site.db")); err != nil {
		t.Fatalf("check did not use the file's db: %v", err)
	}
	r := runIn(t, dir, "report")
	if r.code != exitOK || !strings.HasPrefix(strings.TrimSpace(r.stdout), "{") {
		t.Errorf("report: exit %d, want 0 and JSON from site.db\nstdout %.200q\nstderr %q", r.code, r.stdout, r.stderr)
	}
}
