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

// --accept (key accept) takes a status as ok: a link answering 404 is not
// broken when 404 is accepted.
func TestAcceptFlagAndKey(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<a href="/gone">gone</a>`)
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "accept.toml")
	if err := os.WriteFile(cfg, []byte("accept = [404]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"without", nil, exitProblems},
		{"flag", []string{"--accept", "200,404"}, exitOK},
		{"key", []string{"--config", cfg}, exitOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"check", "-q", "--ignore-robots", "--db", filepath.Join(t.TempDir(), "lp.db")}, tc.args...)
			if r := runInProcess(t, append(args, srv.URL+"/")...); r.code != tc.want {
				t.Errorf("exit %d, want %d\n%s", r.code, tc.want, r.stderr)
			}
		})
	}
}

// -H (key header) reaches the site's own pages and not a third-party host
// it links to.
func TestHeaderFlagAndKey(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	got := map[string]string{}
	record := func(who string, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		got[who+r.URL.Path] = r.Header.Get("X-Site")
	}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record("other", r)
	}))
	t.Cleanup(other.Close)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record("site", r)
		if r.Header.Get("X-Site") != "yes" {
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<a href="/b">b</a> <a href="%s/x">x</a>`, other.URL)
	}))
	t.Cleanup(site.Close)
	cfg := filepath.Join(t.TempDir(), "h.toml")
	if err := os.WriteFile(cfg, []byte("header = [\"X-Site: yes\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-H", "X-Site: yes"}, {"--config", cfg}} {
		all := append([]string{"check", "-q", "--ignore-robots", "--db", filepath.Join(t.TempDir(), "lp.db")}, args...)
		if r := runInProcess(t, append(all, site.URL+"/")...); r.code != exitOK {
			t.Errorf("%v: exit %d, want 0\n%s", args, r.code, r.stderr)
		}
		mu.Lock()
		if _, asked := got["other/x"]; !asked || got["site/"] != "yes" || got["site/b"] != "yes" || got["other/x"] != "" {
			t.Errorf("%v: X-Site seen %v; want it on the site's pages only", args, got)
		}
		clear(got)
		mu.Unlock()
	}
	if r := runInProcess(t, "check", "-H", "no colon", site.URL+"/"); r.code != exitUsage || !strings.Contains(r.stderr, "--header") {
		t.Errorf("-H without a colon: exit %d, %q", r.code, r.stderr)
	}
}

// --offline (key offline) never requests another host, not even through
// a redirect from the site (qa7 Q1), and the report lists both links as
// skipped rather than as fine, the redirect with where it led; exit 0.
func TestOfflineFlagAndKey(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var asked []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path)
		mu.Unlock()
		http.NotFound(w, r)
	}))
	t.Cleanup(other.Close)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/r" {
			http.Redirect(w, r, other.URL+"/moved", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<a href="%s/gone">x</a> <a href="/r">r</a>`, other.URL)
	}))
	t.Cleanup(site.Close)
	cfg := filepath.Join(t.TempDir(), "o.toml")
	if err := os.WriteFile(cfg, []byte("offline = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--offline"}, {"--config", cfg}} {
		all := append([]string{"check", "--all", "--ignore-robots", "--db", filepath.Join(t.TempDir(), "lp.db")}, args...)
		r := runInProcess(t, append(all, site.URL+"/")...)
		redirect := site.URL + "/r\n   redirect not followed; its target is skipped: --offline (another host)\n   redirects to " + other.URL + "/moved, not requested: --offline (another host)"
		if r.code != exitOK || !strings.Contains(r.stdout, "skipped: --offline") || !strings.Contains(strings.Join(strings.Fields(r.stdout), " "), strings.Join(strings.Fields(redirect), " ")) {
			t.Errorf("%v: exit %d, want 0 and the links listed as skipped by --offline, /r as\n%s\n%s%s", args, r.code, redirect, r.stdout, r.stderr)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) > 0 {
		t.Errorf("the other host was asked for %v", asked)
	}
}

// --insecure (key insecure) lets a self-signed certificate through, and
// the report says so in its first line, in check and in every later report.
func TestInsecureIsLoud(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<p>self-signed</p>")
	}))
	t.Cleanup(srv.Close)
	db := filepath.Join(t.TempDir(), "lp.db")
	r := runInProcess(t, "check", "--ignore-robots", "--db", db, srv.URL+"/")
	if r.code != exitNothing {
		t.Errorf("without --insecure: exit %d, want 4 (the certificate is not trusted)\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Why, and what the user may do about it on a host they start from
	// (qa5 N7); a link to another site's host gets the why alone.
	why := "tls; the certificate is self-signed (signed by an unknown authority); --insecure skips certificate checks"
	if got := strings.Join(strings.Fields(r.stdout), " "); !strings.HasPrefix(got, "FAILED: ") || !strings.Contains(got, why) {
		t.Errorf("without --insecure: the report does not begin FAILED with %q:\n%s", why, r.stdout)
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<a href="%s/">their staging host</a>`, srv.URL)
	}))
	t.Cleanup(site.Close)
	r = runInProcess(t, "check", "--ignore-robots", "--db", filepath.Join(t.TempDir(), "lp.db"), site.URL+"/")
	got := strings.Join(strings.Fields(r.stdout), " ")
	if r.code != exitProblems || !strings.Contains(got, "tls; never worked; the certificate is self-signed") || strings.Contains(got, "--insecure") {
		t.Errorf("a link to another host's self-signed certificate: exit %d, want 1, its reason and no --insecure advice:\n%s%s", r.code, r.stdout, r.stderr)
	}
	cfg := filepath.Join(t.TempDir(), "i.toml")
	if err := os.WriteFile(cfg, []byte("insecure = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--insecure"}, {"--config", cfg}} {
		db := filepath.Join(t.TempDir(), "lp.db")
		all := append([]string{"check", "--ignore-robots", "--db", db}, args...)
		r := runInProcess(t, append(all, srv.URL+"/")...)
		if r.code != exitOK || !strings.HasPrefix(r.stdout, "INSECURE: TLS certificates were not verified") {
			t.Errorf("%v: exit %d, want 0 and a first line saying INSECURE\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		if rep := runInProcess(t, "report", "--db", db); !strings.HasPrefix(rep.stdout, "INSECURE: ") {
			t.Errorf("%v: a later report does not say INSECURE first:\n%s%s", args, rep.stdout, rep.stderr)
		}
		if rep := runInProcess(t, "report", "--db", db, "-f", "json"); !strings.Contains(rep.stdout, `"insecure": true`) && !strings.Contains(rep.stdout, `"insecure":true`) {
			t.Errorf("%v: the JSON report does not say insecure:\n%.300s", args, rep.stdout)
		}
		if rep := runInProcess(t, "report", "--db", db, "-f", "markdown"); !strings.Contains(rep.stdout, "**INSECURE: TLS certificates were not verified") {
			t.Errorf("%v: the Markdown report does not say INSECURE:\n%.300s", args, rep.stdout)
		}
	}
}

// A [[host]] key under its former name still loads, and the warning names
// the new key, in config check and in check alike.
func TestFormerHostKeyWarns(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "old.toml")
	if err := os.WriteFile(cfg, []byte("[[host]]\nmatch = \"127.0.0.1\"\nmax_retries = 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const want = "old.toml:3:15: host.max_retries is now called retries"
	if r := runInProcess(t, "config", "check", cfg); r.code != exitOK || !strings.Contains(r.stderr, want) {
		t.Errorf("config check: exit %d, stderr %q; want 0 and %q", r.code, r.stderr, want)
	}
	if r := runInProcess(t, "explain", "--config", cfg, "--start", "http://127.0.0.1/", "http://127.0.0.1/x"); r.code != exitOK || !strings.Contains(r.stderr, want) || !strings.Contains(r.stdout, "retries 3") {
		t.Errorf("explain: exit %d, stderr %q; want 0 and %q", r.code, r.stderr, want)
	}
}
