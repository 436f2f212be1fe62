package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/cluster"
	"github.com/linkpatrol/linkpatrol/crawler/crawltest"
)

// qa4 F0, reproduction A: a second worker with the same name (the --db
// file's) on another database, started from another directory, while the
// first lives. It must not take the first one's leases: it waits for them
// to lapse, sees them renewed, and exits 2 naming the live worker and its
// file; the first keeps its shards.
func TestSecondWorkerOfANameIsRefused(t *testing.T) {
	t.Parallel()
	_, url := startFrontier(t)
	firstDB := filepath.Join(t.TempDir(), "w1.db")
	first := startWorker(t, url, firstDB, "0-127")
	second := newProc("worker", "--nats", url, "--db", filepath.Join(t.TempDir(), "w1.db"), "--shards", "0-127")
	second.start(t)
	select {
	case <-second.done:
	case <-first.done:
		t.Fatalf("the live w1 stopped, its shards taken by the second:\n%s\nthe second:\n%s", first.errors(), second.errors())
	case <-time.After(2 * time.Minute):
		t.Fatalf("the second w1 was neither refused nor stopped:\n%s", second.errors())
	}
	if second.code != exitUsage || !strings.Contains(second.errors(), `another live process of worker "w1"`) || !strings.Contains(second.errors(), firstDB) {
		t.Errorf("the second w1: exit %d, want 2 naming the live w1 and its file %s\n%s", second.code, firstDB, second.errors())
	}
	st := runInProcess(t, "status", "--nats", url)
	if !strings.Contains(st.stdout, "w1") || !strings.Contains(st.stdout, "0-127") || strings.Contains(st.stdout, "lost") {
		t.Errorf("status after the refusal:\n%s%s", st.stdout, st.stderr)
	}
	select {
	case <-first.done:
		t.Errorf("the live w1 ended:\n%s", first.errors())
	default:
	}
}

// qa4 F0, reproduction B: a worker SIGKILLed mid-pass and started again
// under its name on a fresh file (its disk lost). The URLs its first file
// held queued are checked by nobody, so check --nats must not print a
// complete pass with exit 0 on this site without broken links: the pass
// ends unfinished, exit 3, the report saying why and what to do.
func TestCheckNatsWorkerBackOnAFreshDatabase(t *testing.T) {
	t.Parallel()
	// 15 pages a site: the kill comes after 10 requests of the victim's
	// sites (killMidPass) whatever the web's size.
	w := crawltest.NewWeb(crawltest.WebOptions{Sites: 4, Site: crawltest.SiteOptions{
		Pages: 15, LinksPerPage: 8, PageBytes: 1000, Latency: 10 * time.Millisecond,
	}})
	t.Cleanup(w.Close)
	k := killMidPass(t, w)
	front, url, check, out := k.front, k.url, k.check, k.out
	if err := os.Rename(k.dbs[k.victim], k.dbs[k.victim]+".lost"); err != nil {
		t.Fatal(err)
	}
	startWorker(t, url, k.dbs[k.victim], k.ranges[k.victim], "--concurrency", "2")

	// The fresh worker waited up to a lease TTL for its shards first.
	select {
	case <-check.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("check --nats did not end:\n%s\nserve-frontier:\n%s", check.errors(), front.errors())
	}
	if check.code != exitStopped {
		t.Fatalf("check --nats: exit %d, want 3 (unfinished)\n%s\n%s", check.code, out.String(), check.errors())
	}
	if !strings.Contains(out.String(), "INCOMPLETE: a worker's database changed during the pass") || !strings.Contains(out.String(), "--new-pass") {
		t.Errorf("the report does not say why the pass is unfinished and what to do:\n%s", out.String())
	}
	st := runInProcess(t, "status", "--nats", url)
	if !strings.Contains(st.stdout, "stopped") || !strings.Contains(st.stdout, "unfinished: a worker's database changed") {
		t.Errorf("status does not say why the pass is unfinished:\n%s%s", st.stdout, st.stderr)
	}
}

// A worker started on a fresh file while its killed old process's leases
// have not lapsed yet waits for them; Ctrl-C meanwhile is a clean stop,
// exit 0.
func TestWorkerStoppedWhileItWaitsForLeases(t *testing.T) {
	t.Parallel()
	_, url := startFrontier(t)
	old := startWorker(t, url, filepath.Join(t.TempDir(), "w1.db"), "0-127")
	if err := old.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	old.wait(t)
	again := newProc("worker", "--nats", url, "--db", filepath.Join(t.TempDir(), "w1.db"), "--shards", "0-127")
	again.start(t)
	again.waitFor(t, "for their leases to lapse")
	if err := again.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := again.wait(t); code != exitOK {
		t.Errorf("worker stopped while it waited for leases: exit %d, want 0\n%s", code, again.errors())
	}
}

// Once a signal came, only the cancellation it caused is a clean stop: a
// refusal found meanwhile is still exit 2 (with the signal ignored, it
// was exit 0).
func TestWorkerStartErr(t *testing.T) {
	t.Parallel()
	stopped, stop := context.WithCancel(context.Background())
	stop()
	held := &cluster.HeldError{Holder: "w1", Shards: []int{0, 1}, Twin: true}
	for _, c := range []struct {
		name  string
		stop  context.Context
		err   error
		clean bool
	}{
		{"signal while waiting", stopped, context.Canceled, true},
		{"signal during a lease read", stopped, fmt.Errorf("lease of shard 3: %w", context.Canceled), true},
		{"refused, then a signal", stopped, errors.Join(held), false},
		{"NATS failed, then a signal", stopped, errors.New("nats: no responders available for request"), false},
		{"refused", context.Background(), held, false},
	} {
		err := workerStartErr(c.stop, "w1", c.err)
		if (err == nil) != c.clean {
			t.Errorf("%s: %v, want clean stop %v", c.name, err, c.clean)
		}
		if code, _ := exitStatus(err); !c.clean && code != exitUsage {
			t.Errorf("%s: exit %d, want 2", c.name, code)
		}
	}
}

// The same rule holds once the worker runs: a pass it refused (its
// settings unreadable here) or a database error, with a signal after it,
// was exit 0 (review5 #4); only the signal's own cancellation is a clean
// stop, and a lost lease is exit 3 whatever came after.
func TestWorkerEnd(t *testing.T) {
	t.Parallel()
	signalled, signal := context.WithCancel(context.Background())
	signal()
	runOf := func(stop context.Context, cause error) context.Context {
		run, cancel := context.WithCancelCause(stop)
		if cause != nil {
			cancel(cause)
		}
		t.Cleanup(func() { cancel(nil) })
		return run
	}
	lost := errors.New("leases not renewed for 16s (their TTL is 15s): giving up shards 0-127")
	for _, c := range []struct {
		name      string
		stop, run context.Context
		err       error
		code      int
	}{
		{"signal while waiting for a pass", signalled, runOf(signalled, nil), context.Canceled, exitOK},
		{"signal during a pass", signalled, runOf(signalled, nil), fmt.Errorf("pass 3: %w", context.Canceled), exitOK},
		{"refused a pass, then a signal", signalled, runOf(signalled, nil), errors.New("pass 3: its settings: unknown flag --frobnicate"), exitUsage},
		{"database error, then a signal", signalled, runOf(signalled, nil), errors.New("save pass 3: disk full"), exitUsage},
		{"lease lost", context.Background(), runOf(context.Background(), lost), lost, exitStopped},
		{"lease lost, then a signal", signalled, runOf(context.Background(), lost), lost, exitStopped},
		{"refused a pass", context.Background(), runOf(context.Background(), nil), errors.New("pass 3: its settings: bad"), exitUsage},
	} {
		err := workerEnd(c.stop, c.run, io.Discard, "w1", c.err)
		if code, _ := exitStatus(err); code != c.code {
			t.Errorf("%s: %v, exit %d; want %d", c.name, err, code, c.code)
		}
	}
}
