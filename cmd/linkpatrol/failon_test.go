package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// A CI job can fail only on the site's own links (--fail-on internal), and
// permanent redirects are a warning with their target, never a failure.
func TestFailOnAndPermanentRedirects(t *testing.T) {
	t.Parallel()
	ext := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "/there", http.StatusPermanentRedirect)
		case "/there":
			w.WriteHeader(http.StatusOK)
		case "/busy":
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(ext.Close)
	var goneFixed atomic.Bool
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, "<a href=\"/gone\">a</a>\n<a href=\"/old\">b</a>\n<a href=\"%[1]s/dead\">c</a>\n<a href=\"%[1]s/moved\">d</a>\n<a href=\"%[1]s/busy\">e</a>\n", ext.URL)
		case "/old":
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
		case "/new":
			w.WriteHeader(http.StatusOK)
		case "/gone":
			if goneFixed.Load() {
				w.WriteHeader(http.StatusOK)
				return
			}
			http.NotFound(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(site.Close)
	dir := t.TempDir()
	// The third-party host's conservative default rate would make each run
	// take seconds.
	config := filepath.Join(dir, "fast.toml")
	host := strings.TrimPrefix(ext.URL, "http://")
	if err := os.WriteFile(config, []byte("[[host]]\nmatch = \""+host+"\"\nrate = \"unlimited\"\nretries = 0\nignore_robots = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(db string, flags ...string) result {
		t.Helper()
		args := append([]string{"check", "--db", filepath.Join(dir, db), "--config", config, "--ignore-robots", "--retries", "0"}, flags...)
		return runInProcess(t, append(args, site.URL+"/")...)
	}

	r := check("a.db")
	if r.code != exitProblems {
		t.Fatalf("default: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	text := strings.Join(strings.Fields(r.stdout), " ")
	for _, want := range []string{
		"Permanent redirects (2)", "not counted in the exit code",
		site.URL + "/old 301 Moved Permanently to " + site.URL + "/new linked from: " + site.URL + "/:2",
		ext.URL + "/moved 308 Permanent Redirect to " + ext.URL + "/there",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q:\n%s", want, r.stdout)
		}
	}
	if r := check("a.db", "--fail-on", "internal"); r.code != exitProblems {
		t.Errorf("--fail-on internal with /gone broken on the site: exit %d, want 1", r.code)
	}

	goneFixed.Store(true)
	for _, c := range []struct {
		failOn string
		want   int
	}{
		{"internal", exitOK},     // only third-party rot (and a redirect) left
		{"broken", exitProblems}, // the dead third-party link
		{"any", exitProblems},
		{"never", exitOK},
	} {
		r := check("a.db", "--fail-on", c.failOn, "--format", "json")
		if r.code != c.want {
			t.Errorf("--fail-on %s: exit %d, want %d\n%s", c.failOn, r.code, c.want, r.stderr)
		}
		if !strings.Contains(r.stdout, ext.URL+"/dead") {
			t.Errorf("--fail-on %s: the dead third-party link is no longer reported", c.failOn)
		}
	}
	if r := check("a.db", "--fail-on", "sometimes"); r.code != exitUsage || !strings.Contains(r.stderr, "internal") {
		t.Errorf("--fail-on sometimes: exit %d, want 2 naming the choices\n%s", r.code, r.stderr)
	}
}
