package main

import (
	"bytes"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// runBinaryEnv runs the binary with extra environment variables.
func runBinaryEnv(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	return runCmd(t, cmd)
}

// secretsSeen records which of a rule's secrets each request carried.
type secretsSeen struct {
	mu   sync.Mutex
	reqs map[string]string // "host path" -> the secrets it carried
}

func (s *secretsSeen) wrap(name string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var got []string
		if r.Header.Get("X-Token") != "" {
			got = append(got, "token")
		}
		if strings.Contains(r.Header.Get("Cookie"), "session=") {
			got = append(got, "cookie")
		}
		if _, _, ok := r.BasicAuth(); ok {
			got = append(got, "auth")
		}
		s.mu.Lock()
		if s.reqs == nil {
			s.reqs = make(map[string]string)
		}
		s.reqs[name+" "+r.URL.Path] = strings.Join(got, ",")
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// An https page that redirects to http on the same host (another port), or
// to https on another port, must not take the rule's headers, cookie and
// basic auth along: they stay with the origin they were configured for,
// and never go over plain http unless the rule says scheme = "http".
func TestCredentialsNeverLeaveTheirOrigin(t *testing.T) {
	t.Parallel()
	var seen secretsSeen
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	plain := httptest.NewServer(seen.wrap("http", ok))
	defer plain.Close()
	otherPort := httptest.NewTLSServer(seen.wrap("https-other-port", ok))
	defer otherPort.Close()
	site := httptest.NewTLSServer(seen.wrap("https", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<a href="/ok">ok</a> <a href="/down">down</a> <a href="/port">port</a> <a href="%s/written">http link</a>`, plain.URL)
		case "/down":
			http.Redirect(w, r, plain.URL+"/leak", http.StatusFound)
		case "/port":
			http.Redirect(w, r, otherPort.URL+"/leak", http.StatusFound)
		case "/ok":
			fmt.Fprint(w, "ok")
		default:
			http.NotFound(w, r)
		}
	})))
	defer site.Close()

	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: site.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "linkpatrol.toml")
	if err := os.WriteFile(cfg, []byte(`
[[rule]]
host = "127.0.0.1"
headers = { "X-Token" = "${LP_TOKEN}" }
cookies = { session = "${LP_TOKEN}" }
user = "audit"
password = "${LP_TOKEN}"
`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"SSL_CERT_FILE=" + ca, "LP_TOKEN=t0k3n"}
	r := runBinaryEnv(t, env, "check", "--db", filepath.Join(dir, "lp.db"), "--config", cfg, site.URL+"/")
	if r.code != exitOK {
		t.Fatalf("exit %d, want 0 (is the CA trusted?)\n%s%s", r.code, r.stdout, r.stderr)
	}
	seen.mu.Lock()
	defer seen.mu.Unlock()
	want := map[string]string{
		"https /":                "token,cookie,auth",
		"https /ok":              "token,cookie,auth",
		"https /down":            "token,cookie,auth",
		"http /leak":             "",
		"http /written":          "",
		"https-other-port /leak": "",
		"https /port":            "token,cookie,auth",
	}
	for req, secrets := range want {
		got, ok := seen.reqs[req]
		if !ok {
			t.Errorf("%s was never requested", req)
		} else if got != secrets {
			t.Errorf("%s carried %q, want %q", req, got, secrets)
		}
	}
	if strings.Contains(r.stdout+r.stderr, "t0k3n") {
		t.Error("the secret is printed")
	}

	r = runBinaryEnv(t, env, "config", "check", cfg)
	if r.code != exitOK || !strings.Contains(r.stderr, `scheme = "https"`) {
		t.Errorf("config check of a credentials rule without a scheme: exit %d, stderr %q; want a warning", r.code, r.stderr)
	}
}

// A start URL (or a sitemap URL) with user:password@ is refused with
// advice, before anything is fetched, printed or stored, and the refusal
// itself never shows the password.
func TestPasswordInStartURLRefused(t *testing.T) {
	t.Parallel()
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<a href="/a">a</a>`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	withPW := strings.Replace(srv.URL, "://", "://audit:hunter2pw@", 1) + "/"
	cfg := filepath.Join(dir, "linkpatrol.toml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("start = [%q]\n", withPW)), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "lp.db")
	for _, args := range [][]string{
		{withPW},
		{"--config", cfg},
		{"--sitemap", strings.TrimSuffix(withPW, "/") + "/sitemap.xml", srv.URL + "/"},
		{"-v", "--format", "json", "http://audit:hunter2pw@[::1/"},
	} {
		r := runInProcess(t, append([]string{"check", "--db", db}, args...)...)
		if r.code != exitUsage {
			t.Errorf("%v: exit %d, want 2", args, r.code)
		}
		if strings.Contains(r.stdout+r.stderr, "hunter2pw") {
			t.Errorf("%v: the password is printed:\n%s%s", args, r.stdout, r.stderr)
		}
		if len(args) < 4 && !strings.Contains(r.stderr, `password = "${`) {
			t.Errorf("%v: no advice on where credentials go:\n%s", args, r.stderr)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests were sent", n)
	}
	if b, err := os.ReadFile(db); err == nil && bytes.Contains(b, []byte("hunter2pw")) {
		t.Error("the password is in the database")
	}
}

// A -H "HOST=Name: value" goes over https only. For a host linked over
// plain http it was dropped without a word, and the host's 401 read as its
// own fault (qa4 F16): now the check warns, naming the header, a URL it was
// withheld from and the http://HOST= form, which sends it. One naming a
// start host given over http is not refused: the site may redirect to
// https, where it is sent; where it was withheld, the warning says so.
func TestHostHeaderOverHTTPIsNeverSilent(t *testing.T) {
	t.Parallel()
	var got atomic.Value
	got.Store("")
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("X-Secret"))
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(other.Close)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<a href=%q>other</a>", other.URL+"/landing")
	}))
	t.Cleanup(site.Close)
	host := strings.TrimPrefix(other.URL, "http://")
	check := func(header string) result {
		return runInProcess(t, "check", "--db", filepath.Join(t.TempDir(), "lp.db"), "-H", header, site.URL+"/")
	}

	r := check(host + "=X-Secret: s3")
	if r.code != exitOK || got.Load() != "" {
		t.Fatalf("exit %d, header seen %q; want 0 and none\n%s", r.code, got.Load(), r.stderr)
	}
	if flat := strings.ReplaceAll(r.stderr, `\"`, `"`); !strings.Contains(flat, `-H "`+host+`=X-Secret: ..." was not sent to `+other.URL+"/landing") ||
		!strings.Contains(flat, `-H "http://`+host+`=X-Secret: ..."`) {
		t.Errorf("no warning naming the header, the URL and http://HOST=:\n%s", r.stderr)
	}

	r = check("http://" + host + "=X-Secret: s3")
	if r.code != exitOK || got.Load() != "s3" || strings.Contains(r.stderr, "was not sent") {
		t.Errorf("http://HOST=: exit %d, header seen %q; want 0 and s3, no warning\n%s", r.code, got.Load(), r.stderr)
	}

	r = check(strings.TrimPrefix(site.URL, "http://") + "=X-Secret: s3")
	if r.code != exitOK || !strings.Contains(r.stderr, "was not sent to "+site.URL+"/") {
		t.Errorf("HOST= naming the http start host: exit %d, want %d and a warning\n%s", r.code, exitOK, r.stderr)
	}
}
