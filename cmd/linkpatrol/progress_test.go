package main

import (
	"bytes"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/crawler/crawltest"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// fixedSource reports the same counters every time, like a crawler that is
// between two results.
type fixedSource struct {
	progress crawler.Progress
	hosts    []throttle.HostStats
}

func (s fixedSource) Progress() crawler.Progress  { return s.progress }
func (s fixedSource) Hosts() []throttle.HostStats { return s.hosts }

// progressOnly has no Hosts, like a source that cannot tell about politeness.
type progressOnly struct{ progress crawler.Progress }

func (s progressOnly) Progress() crawler.Progress { return s.progress }

// Only a terminal is drawn on: cron mail and CI logs hold only the report.
func TestIsTerminal(t *testing.T) {
	if isTerminal(&bytes.Buffer{}) {
		t.Error("a buffer is taken for a terminal")
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Error("a regular file is taken for a terminal")
	}
	_, tty := openPTY(t)
	if !isTerminal(tty) {
		t.Error("a pty is not taken for a terminal")
	}
}

// On a terminal the progress line is drawn, unless -q, -v (whose log
// lines it would draw over) or JSON logs turn it off.
func TestProgressLineOnlyWhenWanted(t *testing.T) {
	t.Parallel()
	// Slow enough that the line is drawn several times before the end.
	site := crawltest.NewSite(crawltest.SiteOptions{Pages: 30, Latency: 100 * time.Millisecond, Seed: 1})
	srv := httptest.NewServer(site)
	t.Cleanup(srv.Close)
	frame := regexp.MustCompile(`[0-9]+/[0-9]+ URLs`)
	for _, flag := range []string{"", "-q", "-v", "--log-format=json"} {
		t.Run(flag, func(t *testing.T) {
			t.Parallel()
			ptmx, tty := openPTY(t)
			if err := pty.Setsize(tty, &pty.Winsize{Rows: 24, Cols: 160}); err != nil {
				t.Fatal(err)
			}
			out := readTerminal(t, ptmx)
			args := []string{"check", "--db", filepath.Join(t.TempDir(), "lp.db"), "--ignore-robots", "--concurrency", "2", srv.URL + "/"}
			if flag != "" {
				args = append(args, flag)
			}
			var stdout bytes.Buffer
			if code := run(t.Context(), args, strings.NewReader(""), &stdout, tty, true); code != exitOK {
				t.Fatalf("exit %d\n%s", code, stdout.String())
			}
			// Everything drawn comes before a marker written after the run.
			if _, err := tty.WriteString("marker"); err != nil {
				t.Fatal(err)
			}
			got := out.waitFor(t, func(s string) bool { return strings.Contains(s, "marker") })
			if drawn := frame.MatchString(got); drawn != (flag == "") {
				t.Errorf("progress line drawn: %v, want %v\n%q", drawn, flag == "", got)
			}
		})
	}
}

func TestProgressDrawsAndErasesOnTerminal(t *testing.T) {
	ptmx, tty := openPTY(t)
	if err := pty.Setsize(tty, &pty.Winsize{Rows: 24, Cols: 160}); err != nil {
		t.Fatal(err)
	}
	out := readTerminal(t, ptmx)
	src := fixedSource{
		progress: crawler.Progress{Done: 30, Pages: 7, Queued: 60, InFlight: 10, Problems: 2, Requests: 31},
		hosts: []throttle.HostStats{
			{Key: "a.example:443", Standing: throttle.Standing{PausedUntil: time.Now().Add(time.Hour)}},
			{Key: "b.example:443", InFlight: 2},
		},
	}

	stop := startProgress(tty, src, true, nil)
	want := "30/100 URLs"
	got := out.waitFor(t, func(s string) bool { return strings.Contains(s, "1 of 2 hosts waiting") })
	stop()
	for _, part := range []string{want, "7 pages", "60 queued", "2 problems", "req/s", "1 of 2 hosts waiting"} {
		if !strings.Contains(got, part) {
			t.Errorf("progress line lacks %q:\n%q", part, got)
		}
	}
	// mpb moves up over the line it drew and erases to the end of the
	// screen; after stop nothing is drawn again.
	const erase = "\x1b[1A\x1b[J"
	got = out.waitFor(t, func(s string) bool { return strings.HasSuffix(s, erase) })
	last := got[strings.LastIndex(got, want):]
	if !strings.HasSuffix(last, "\r\n"+erase) || strings.Count(last, erase) != 1 {
		t.Errorf("the last frame is not erased, or something followed:\n%q", last)
	}
}

func TestProgressTruncatesToNarrowTerminal(t *testing.T) {
	ptmx, tty := openPTY(t)
	if err := pty.Setsize(tty, &pty.Winsize{Rows: 24, Cols: 40}); err != nil {
		t.Fatal(err)
	}
	out := readTerminal(t, ptmx)
	stop := startProgress(tty, progressOnly{crawler.Progress{Done: 123456, Queued: 654321, Pages: 99999}}, true, nil)
	got := out.waitFor(t, func(s string) bool { return strings.Contains(s, "…") })
	stop()
	for line := range strings.Lines(got) {
		text := line
		if i := strings.LastIndex(text, "\x1b[J"); i >= 0 {
			text = text[i+len("\x1b[J"):]
		}
		text = strings.TrimRight(text, "\r\n")
		if n := len([]rune(text)); n > 40 {
			t.Errorf("a %d-column line on a 40-column terminal would wrap: %q", n, text)
		}
	}
}

func TestProgressMeterRate(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var m progressMeter
	for _, step := range []struct {
		after    time.Duration
		requests int64
		want     float64
	}{
		{0, 0, 0},                       // one sample: no interval yet
		{time.Second, 10, 10},           // 10 in 1 s
		{2 * time.Second, 30, 15},       // 30 in 2 s
		{5 * time.Second, 50, 10},       // 50 in 5 s, the window is full
		{6 * time.Second, 50, 40.0 / 5}, // the oldest (0 s) is out: 40 since 1 s
		{20 * time.Second, 50, 0},       // a stall shows as 0 within the window
	} {
		got := m.rate(step.requests, t0.Add(step.after))
		if got != step.want {
			t.Errorf("at %v with %d requests: rate %v, want %v", step.after, step.requests, got, step.want)
		}
	}
}

func TestProgressMeterWaiting(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	var m progressMeter
	first := []throttle.HostStats{
		{Key: "paused", Standing: throttle.Standing{PausedUntil: now.Add(time.Minute)}},
		{Key: "pause over", Standing: throttle.Standing{PausedUntil: now.Add(-time.Second)}},
		{Key: "backoff", Standing: throttle.Standing{BackoffUntil: now.Add(time.Second)}},
		{Key: "busy", InFlight: 3, Waited: time.Second},
		{Key: "idle", Waited: 5 * time.Second},
	}
	// The first sample has no earlier Waited to compare with.
	if w, a := m.waiting(first, now); w != 2 || a != 3 {
		t.Errorf("first sample: %d waiting of %d active, want 2 of 3", w, a)
	}
	second := []throttle.HostStats{
		{Key: "paused", Standing: throttle.Standing{PausedUntil: now.Add(time.Minute)}},
		{Key: "busy", InFlight: 3, Waited: 2 * time.Second}, // waited again
		{Key: "idle", Waited: 5 * time.Second},              // did not
		{Key: "new", Waited: time.Millisecond},              // waited since it appeared
	}
	if w, a := m.waiting(second, now); w != 3 || a != 3 {
		t.Errorf("second sample: %d waiting of %d active, want 3 of 3", w, a)
	}
}

func TestProgressLineText(t *testing.T) {
	l := progressLine{
		Progress: crawler.Progress{Done: 5, Pages: 2, Queued: 7, InFlight: 1, Problems: 1},
		Rate:     2.4,
	}
	if got, want := l.count(), "5/13 URLs "; got != want {
		t.Errorf("count = %q, want %q", got, want)
	}
	if got, want := l.details(), " 2 pages · 7 queued · 1 problems · 2 req/s"; got != want {
		t.Errorf("details without hosts = %q, want %q", got, want)
	}
	l.HostsKnown, l.Waiting, l.HostsActive = true, 1, 4
	if got, want := l.details(), " 2 pages · 7 queued · 1 problems · 2 req/s · 1 of 4 hosts waiting"; got != want {
		t.Errorf("details with hosts = %q, want %q", got, want)
	}
}

func openPTY(t *testing.T) (ptmx, tty *os.File) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() {
		tty.Close()
		ptmx.Close()
	})
	return ptmx, tty
}

// ptyOutput collects what a terminal was sent.
type ptyOutput struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // receives after every read; never blocks the reader
}

func readTerminal(t *testing.T, r io.Reader) *ptyOutput {
	o := &ptyOutput{changed: make(chan struct{}, 1)}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := r.Read(b)
			o.mu.Lock()
			o.buf.Write(b[:n])
			o.mu.Unlock()
			select {
			case o.changed <- struct{}{}:
			default:
			}
			// A closed master reads EIO on Linux, or ErrClosed: either
			// way the test is over.
			if err != nil {
				return
			}
		}
	}()
	return o
}

// waitFor returns the output once cond holds for it.
func (o *ptyOutput) waitFor(t *testing.T, cond func(string) bool) string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		o.mu.Lock()
		s := o.buf.String()
		o.mu.Unlock()
		if cond(s) {
			return s
		}
		select {
		case <-o.changed:
		case <-deadline:
			t.Fatalf("the terminal never got what was expected; it got:\n%q", s)
		}
	}
}

// Ctrl-C on a terminal leaves a clean line: the progress line gives way to
// one saying what happens now, and no frame is drawn after it; the next run
// says it resumes, and how much was done.
func TestInterruptOnTerminalLeavesACleanLine(t *testing.T) {
	t.Parallel()
	site := crawltest.NewSite(crawltest.SiteOptions{Pages: 400, Latency: 20 * time.Millisecond, Seed: 2})
	srv := httptest.NewServer(site)
	defer srv.Close()
	db := filepath.Join(t.TempDir(), "tty.db")
	args := []string{"check", "--db", db, "--ignore-robots", "--concurrency", "2", srv.URL + "/"}

	ptmx, tty := openPTY(t)
	if err := pty.Setsize(tty, &pty.Winsize{Rows: 24, Cols: 160}); err != nil {
		t.Fatal(err)
	}
	out := readTerminal(t, ptmx)
	cmd := exec.Command(binary, args...)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out.waitFor(t, func(s string) bool { return strings.Contains(s, " URLs ") })
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitStopped {
		t.Fatalf("after Ctrl-C: %v, want exit %d", err, exitStopped)
	}
	line := strings.TrimSuffix(stoppingLine, "\n") // the terminal turns \n into \r\n
	got := out.waitFor(t, func(s string) bool { return strings.Contains(s, line) })
	if after := got[strings.LastIndex(got, line)+len(line):]; strings.Contains(after, "URLs") {
		t.Errorf("a progress frame was drawn after the stopping line:\n%q", after)
	}
	if !strings.Contains(stdout.String(), "INCOMPLETE") || strings.Contains(stdout.String(), "No problems found.") {
		t.Errorf("the report of the interrupted pass:\n%s", stdout.String())
	}

	ptmx2, tty2 := openPTY(t)
	out2 := readTerminal(t, ptmx2)
	cmd = exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = io.Discard, tty2
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out2.waitFor(t, func(s string) bool {
		return regexp.MustCompile(`resuming pass 1: [0-9,]+ URLs already done\r?\n`).MatchString(s)
	})
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
}
