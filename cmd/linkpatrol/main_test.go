package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/store"
)

var binary string

// TestMain builds the real binary once: the command-line contract (flags,
// exit codes, signals) is only proven by running it as a process.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "linkpatrol-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	binary = filepath.Join(dir, "linkpatrol")
	args := []string{"build", "-o", binary}
	if raceEnabled {
		args = append(args, "-race")
	}
	out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build linkpatrol: %v\n%s", err, out)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	code           int
	stdout, stderr string
}

func runBinary(t *testing.T, args ...string) result {
	t.Helper()
	return runCmd(t, exec.Command(binary, args...))
}

// runCmd runs a command of the binary to its end and returns its exit code
// and output.
func runCmd(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", cmd.Args, err)
	}
	return result{code, out.String(), errb.String()}
}

type jsonReport struct {
	Pass struct {
		ID       uint64   `json:"id"`
		Complete bool     `json:"complete"`
		Start    []string `json:"start_urls"`
	} `json:"pass"`
	Summary map[string]any `json:"summary"`
	URLs    []struct {
		URL       string `json:"url"`
		Status    int    `json:"status"`
		Error     string `json:"error"`
		Verdict   string `json:"verdict"`
		Broken    bool   `json:"broken"`
		Referrers []struct {
			Page string `json:"page"`
			Line int    `json:"line"`
		} `json:"referrers"`
	} `json:"urls"`
}

func decodeReport(t *testing.T, s string) jsonReport {
	t.Helper()
	var r jsonReport
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("decode JSON report: %v\n%s", err, s)
	}
	return r
}

func TestExitCodes(t *testing.T) {
	good := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<a href="/">self</a>`)
	}))
	defer good.Close()
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<p>\n<a href=\"/gone\">gone</a>")
	}))
	defer bad.Close()
	dir := t.TempDir()

	if r := runBinary(t, "check", "--db", filepath.Join(dir, "good.db"), good.URL); r.code != exitOK {
		t.Errorf("clean site: exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := runBinary(t, "check", "--db", filepath.Join(dir, "bad.db"), "--format", "json", bad.URL)
	if r.code != exitProblems {
		t.Errorf("broken link: exit %d, want 1\n%s", r.code, r.stderr)
	}
	rep := decodeReport(t, r.stdout)
	if len(rep.URLs) != 1 || rep.URLs[0].URL != bad.URL+"/gone" || rep.URLs[0].Status != 404 ||
		len(rep.URLs[0].Referrers) != 1 || rep.URLs[0].Referrers[0].Line != 2 {
		t.Errorf("report: %+v", rep.URLs)
	}
	// report renders the same pass again, with the same exit code.
	again := runBinary(t, "report", "--db", filepath.Join(dir, "bad.db"), "--format", "json")
	if again.code != exitProblems || !strings.Contains(again.stdout, bad.URL+"/gone") {
		t.Errorf("report again: exit %d\n%s%s", again.code, again.stdout, again.stderr)
	}

	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"check"},
		{"check", "--format", "yaml", good.URL},
		{"check", "--no-such-flag", good.URL},
		{"check", "ftp://example.com/"},
		{"report", "--db", filepath.Join(dir, "none.db")},
	} {
		r := runBinary(t, args...)
		if r.code != exitUsage {
			t.Errorf("%v: exit %d, want 2", args, r.code)
		}
		if lines := strings.Count(strings.TrimSpace(r.stderr), "\n"); r.stderr == "" || (lines > 0 && !strings.Contains(r.stderr, "Usage")) {
			t.Errorf("%v: want one line on stderr, got %q", args, r.stderr)
		}
	}
}

func TestDatabaseInUseFailsFast(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "lp.db")
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	// The lock is held until the test ends, so a command that waited for it
	// instead of giving up would never end: a generous deadline turns that
	// into a failure rather than a hung test, without timing the command.
	for _, args := range [][]string{
		{"check", "--db", path, srv.URL},
		{"report", "--db", path},
	} {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		r := runCmd(t, exec.CommandContext(ctx, binary, args...))
		cancel()
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Errorf("%v on a locked db waited for the lock instead of failing", args[0])
		}
		if r.code != exitUsage || !strings.Contains(r.stderr, "in use") {
			t.Errorf("%v on a locked db: exit %d, stderr %q", args[0], r.code, r.stderr)
		}
	}
}

func TestDamagedDatabase(t *testing.T) {
	dir := t.TempDir()
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	for name, content := range map[string][]byte{
		"text":    []byte("this is not a database\n"),
		"random":  bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, 4096),
		"zeroes":  make([]byte, 8192),
		"partial": []byte("\x00\x00\x00\x00\x00\x00\x00\x00\xed\xda\x0c\xed"),
	} {
		path := filepath.Join(dir, name+".db")
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		r := runBinary(t, "check", "--db", path, srv.URL)
		if r.code != exitUsage || strings.Contains(r.stderr, "panic") || r.stderr == "" {
			t.Errorf("%s: exit %d, stderr %q", name, r.code, r.stderr)
		}
	}
}
