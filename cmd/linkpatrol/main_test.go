package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/internal/testmain"
	"github.com/linkpatrol/linkpatrol/store"
)

var binary string

// programName is the name under which the test binary runs as the program.
const programName = "linkpatrol"

// TestMain makes the test binary the program too, for what only a process
// shows: signals, SIGKILL, a full disk (ulimit), a terminal, the working
// directory and the environment. binary is a link to this test binary
// named linkpatrol, and run under that name it is main, and only main:
// the same code a go build would link, with this build's race detector,
// without linking a second binary first. Everything else runs in-process
// through run, which is main without its process: runInProcess, and
// inProc for a command that runs while the test goes on (check --nats
// following a pass).
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == programName {
		main()
		panic("main returned") // it exits
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	dir, err := os.MkdirTemp("", "linkpatrol-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	binary = filepath.Join(dir, programName)
	if err := os.Symlink(exe, binary); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	// A race-built program sleeps a second before it exits 0, so that a race
	// in a goroutine still running is reported. The commands' code runs
	// in-process here too, under this binary's race detector, so the
	// children need not wait: most of their runs exit 0.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	code := testmain.RunWaiting(m) // the tests mostly wait on children and servers
	os.RemoveAll(dir)
	testmain.Exit(code)
}

type result struct {
	code           int
	stdout, stderr string
}

// runInProcess runs the command as main would, without the binary.
func runInProcess(t *testing.T, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), args, strings.NewReader(""), &stdout, &stderr, false)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
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

// The exit code table of README, row by row, as run returns it: every code,
// for check and report alike, and the one line a mistake gets on stderr.
func TestExitCodes(t *testing.T) {
	t.Parallel()
	good := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<a href="/">self</a>`)
	}))
	t.Cleanup(good.Close)
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<p>\n<a href=\"/gone\">gone</a>")
	}))
	t.Cleanup(bad.Close)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close() // connections are refused: the site is down

	dir := t.TempDir()
	db := func(name string) string { return filepath.Join(dir, name+".db") }
	damaged := db("damaged")
	if err := os.WriteFile(damaged, []byte("this is not a database\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stopped, stop := context.WithCancel(t.Context())
	stop() // a stop signal before the pass began

	for _, tc := range []struct {
		name string
		ctx  context.Context // default t.Context()
		args []string
		code int
		then []string // a second command on the same database, with the same code
	}{
		{name: "clean site", args: []string{"check", "--db", db("good"), good.URL}, code: exitOK,
			then: []string{"report", "--db", db("good")}},
		{name: "broken link", args: []string{"check", "--db", db("bad"), bad.URL}, code: exitProblems,
			then: []string{"report", "--db", db("bad")}},
		{name: "fail-on never", args: []string{"check", "--db", db("never"), "--fail-on", "never", bad.URL}, code: exitOK},
		{name: "stopped", ctx: stopped, args: []string{"check", "--db", db("stopped"), good.URL}, code: exitStopped,
			then: []string{"report", "--db", db("stopped")}},
		{name: "max-time", args: []string{"check", "--db", db("maxtime"), "--max-time", "1ns", good.URL}, code: exitStopped},
		{name: "site down", args: []string{"check", "--db", db("down"), closed.URL + "/"}, code: exitNothing,
			then: []string{"report", "--db", db("down")}},
		{name: "no command", args: []string{}, code: exitUsage},
		{name: "unknown command", args: []string{"frobnicate"}, code: exitUsage},
		{name: "no start URL", args: []string{"check"}, code: exitUsage},
		{name: "unknown format", args: []string{"check", "--format", "yaml", good.URL}, code: exitUsage},
		{name: "unknown flag", args: []string{"check", "--no-such-flag", good.URL}, code: exitUsage},
		{name: "not http", args: []string{"check", "ftp://example.com/"}, code: exitUsage},
		{name: "no database", args: []string{"report", "--db", db("none")}, code: exitUsage},
		{name: "damaged database", args: []string{"check", "--db", damaged, good.URL}, code: exitUsage},
		{name: "bad config", args: []string{"config", "check", filepath.Join(dir, "none.toml")}, code: exitUsage},
		{name: "help", args: []string{"check", "--help"}, code: exitOK},
		{name: "version", args: []string{"version"}, code: exitOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := tc.ctx
			if ctx == nil {
				ctx = t.Context()
			}
			for _, args := range [][]string{tc.args, tc.then} {
				if args == nil {
					continue
				}
				var stdout, stderr bytes.Buffer
				code := run(ctx, args, strings.NewReader(""), &stdout, &stderr, false)
				if code != tc.code {
					t.Errorf("%v: exit %d, want %d\n%s%s", args, code, tc.code, stdout.String(), stderr.String())
				}
				// A mistake is one line, or the usage that explains it.
				msg := strings.TrimSpace(stderr.String())
				if lines := strings.Count(msg, "\n"); code == exitUsage && (msg == "" || (lines > 0 && !strings.Contains(msg, "Usage"))) {
					t.Errorf("%v: want one line on stderr, got %q", args, msg)
				}
			}
		})
	}
}

// check reports a broken link with its referring page and line, and
// report renders the same pass again.
func TestReportRendersTheCheckAgain(t *testing.T) {
	t.Parallel()
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<p>\n<a href=\"/gone\">gone</a>")
	}))
	defer bad.Close()
	db := filepath.Join(t.TempDir(), "bad.db")
	r := runInProcess(t, "check", "--db", db, "--format", "json", bad.URL)
	rep := decodeReport(t, r.stdout)
	if len(rep.URLs) != 1 || rep.URLs[0].URL != bad.URL+"/gone" || rep.URLs[0].Status != 404 ||
		len(rep.URLs[0].Referrers) != 1 || rep.URLs[0].Referrers[0].Line != 2 {
		t.Errorf("report: %+v", rep.URLs)
	}
	again := runInProcess(t, "report", "--db", db, "--format", "json")
	if again.stdout != r.stdout {
		t.Errorf("report differs from check:\n%s\nwant:\n%s", again.stdout, r.stdout)
	}
}

// Each error becomes its exit code, and its line gets the advice its cause
// calls for.
func TestExitStatus(t *testing.T) {
	corrupt := fmt.Errorf("read %q: %w (restore it from a backup)", "x", store.ErrCorrupt)
	for _, tc := range []struct {
		err  error
		code int
		msg  string
	}{
		{nil, exitOK, ""},
		{errProblems, exitProblems, ""},
		{jsonError{errProblems}, exitProblems, ""},
		{errUnfinished, exitStopped, ""},
		{errNothingChecked, exitNothing, ""},
		{errUsageShown, exitUsage, ""},
		{errors.New("unknown format"), exitUsage, "unknown format"},
		{passError{3, io.ErrShortWrite}, exitUsage, "pass 3: short write (what was committed is kept; run again to resume)"},
		// Running again would fail the same way.
		{passError{3, corrupt}, exitUsage, "pass 3: " + corrupt.Error()},
	} {
		code, msg := exitStatus(tc.err)
		if code != tc.code || msg != tc.msg {
			t.Errorf("exitStatus(%v) = %d, %q; want %d, %q", tc.err, code, msg, tc.code, tc.msg)
		}
	}
}

// The first stop signal asks for a clean stop, the second for one that
// does not wait.
func TestStopOnSignals(t *testing.T) {
	sigs := make(chan os.Signal)
	ctx, cancel := stopOnSignals(t.Context(), sigs)
	defer cancel()
	hard := hardStop(ctx)
	if ctx.Err() != nil || hard.Err() != nil {
		t.Fatal("stopped before any signal")
	}
	sigs <- syscall.SIGTERM
	<-ctx.Done()
	if hard.Err() != nil {
		t.Error("the first signal stopped hard")
	}
	sigs <- syscall.SIGINT
	<-hard.Done()
	if hardStop(t.Context()).Done() != nil {
		t.Error("without signals there is a hard stop")
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
		done := make(chan result, 1)
		go func() { done <- runInProcess(t, args...) }()
		select {
		case r := <-done:
			if r.code != exitUsage || !strings.Contains(r.stderr, "in use") {
				t.Errorf("%v on a locked db: exit %d, stderr %q", args[0], r.code, r.stderr)
			}
		case <-time.After(time.Minute):
			t.Errorf("%v on a locked db waited for the lock instead of failing", args[0])
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
		r := runInProcess(t, "check", "--db", path, srv.URL)
		if r.code != exitUsage || strings.Contains(r.stderr, "panic") || r.stderr == "" {
			t.Errorf("%s: exit %d, stderr %q", name, r.code, r.stderr)
		}
	}
}
