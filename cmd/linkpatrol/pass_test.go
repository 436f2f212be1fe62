package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkpatrol/linkpatrol/store"
)

// The crawler's refusals to open a pass end in exit code 2 with what the
// user can do about them.
func TestPassRefusalsExitTwo(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<a href="/">self</a>`)
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	site, other := srv.URL+"/", srv.URL+"/other"

	done := filepath.Join(dir, "done.db")
	r := runInProcess(t, "check", "--db", done, "--format", "json", site)
	if r.code != exitOK {
		t.Fatalf("first pass: exit %d\n%s", r.code, r.stderr)
	}
	starts := decodeReport(t, r.stdout).Pass.Start

	// An unfinished pass, as a killed check leaves it.
	unfinished := func(name, hash string, starts []string) string {
		path := filepath.Join(dir, name)
		db, err := store.Open(path, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.BeginPass(store.Pass{StartURLs: starts, SettingsHash: hash}, []store.Task{{URL: starts[0], Action: "parse"}}); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"other site", []string{"--db", done, other}, "holds the passes of " + site + "; use another --db for this site, or add --new-pass"},
		{"other pass unfinished", []string{"--db", unfinished("open.db", "", []string{other}), site}, "holds an unfinished pass 1 of " + other + "; run that again to resume it, add --new-pass to abandon it"},
		{"other settings", []string{"--db", unfinished("settings.db", "x", starts), site}, "pass 1 in " + filepath.Join(dir, "settings.db") + " began with other rules or settings (config file"},
		{"excluded start", []string{"--db", filepath.Join(dir, "excluded.db"), "--exclude", "/other", other}, "start URL " + other + " is excluded by"},
	} {
		r := runInProcess(t, append([]string{"check"}, tt.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%s: exit %d, %q; want 2 and %q", tt.name, r.code, r.stderr, tt.want)
		}
	}
}
