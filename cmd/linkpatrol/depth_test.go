package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/linkpatrol/linkpatrol/store"
)

// depthServer is "/" → /a → /b and /gone (404) → /c; it counts what was
// requested.
func depthServer(t *testing.T) (*httptest.Server, func(path string) int) {
	t.Helper()
	var mu sync.Mutex
	hits := map[string]int{}
	links := map[string]string{"/": `<a href="/a">a</a>`, "/a": `<a href="/b">b</a> <a href="/gone">gone</a>`, "/b": `<a href="/c">c</a>`, "/c": `end`}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		body, ok := links[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, func(path string) int {
		mu.Lock()
		defer mu.Unlock()
		return hits[path]
	}
}

// --max-depth and max_depth alike: pages past the depth are checked and
// reported, their links never requested.
func TestMaxDepthFlagAndKey(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		args func(dir string) []string
	}{
		{"flag", func(string) []string { return []string{"--max-depth", "1"} }},
		{"key", func(dir string) []string {
			path := filepath.Join(dir, "linkpatrol.toml")
			if err := os.WriteFile(path, []byte("max_depth = 1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return []string{"--config", path}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, hits := depthServer(t)
			dir := t.TempDir()
			args := append([]string{"check", "--db", filepath.Join(dir, "lp.db"), "--format", "json", "--all"}, tt.args(dir)...)
			r := runInProcess(t, append(args, srv.URL+"/")...)
			if r.code != exitProblems {
				t.Fatalf("exit %d, want %d (the broken link at depth 2)\n%s", r.code, exitProblems, r.stderr)
			}
			got := map[string]int{}
			for _, u := range decodeReport(t, r.stdout).URLs {
				got[strings.TrimPrefix(u.URL, srv.URL)] = u.Status
				if u.URL == srv.URL+"/gone" && (!u.Broken || len(u.Referrers) == 0 || u.Referrers[0].Page != srv.URL+"/a") {
					t.Errorf("/gone: %+v; want broken, linked from /a", u)
				}
			}
			for path, status := range map[string]int{"/": 200, "/a": 200, "/b": 200, "/gone": 404} {
				if got[path] != status {
					t.Errorf("%s: status %d in the report, want %d", path, got[path], status)
				}
			}
			if _, ok := got["/c"]; ok || hits("/c") != 0 {
				t.Errorf("/c (depth 3): requested %d times, reported %t; want neither", hits("/c"), ok)
			}
		})
	}
}

// A pass begun with one --max-depth is not resumed under another.
func TestMaxDepthChangesTheSettings(t *testing.T) {
	t.Parallel()
	srv, _ := depthServer(t)
	dir := t.TempDir()
	done := filepath.Join(dir, "done.db")
	r := runInProcess(t, "check", "--db", done, "--format", "json", "--max-depth", "1", srv.URL+"/")
	if r.code == exitUsage {
		t.Fatalf("first pass: exit %d\n%s", r.code, r.stderr)
	}
	db, err := store.Open(done, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, ok, err := db.LastPass()
	db.Close()
	if err != nil || !ok {
		t.Fatalf("last pass: %v, %t", err, ok)
	}
	// The same pass, unfinished, as a killed check leaves it.
	open := filepath.Join(dir, "open.db")
	db, err = store.Open(open, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.BeginPass(store.Pass{StartURLs: p.StartURLs, SettingsHash: p.SettingsHash}, []store.Task{{URL: p.StartURLs[0], Action: "parse"}})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, depth := range []string{"0", "2"} {
		r := runInProcess(t, "check", "--db", open, "--max-depth", depth, srv.URL+"/")
		if want := "began with other rules or settings"; r.code != exitUsage || !strings.Contains(r.stderr, want) {
			t.Errorf("--max-depth %s: exit %d, %q; want 2 and %q", depth, r.code, r.stderr, want)
		}
	}
	if r := runInProcess(t, "check", "--db", open, "--max-depth", "1", srv.URL+"/"); r.code == exitUsage {
		t.Errorf("--max-depth 1: exit %d, %q; want the pass resumed", r.code, r.stderr)
	}
}
