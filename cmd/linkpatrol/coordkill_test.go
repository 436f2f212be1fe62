package main

import (
	"fmt"
	neturl "net/url"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler/crawltest"
)

// serveFrontierOn runs serve-frontier on a given store, merged database
// and listen address, so that a test can start it again on the same ones.
func serveFrontierOn(t *testing.T, dir, listen string, extra ...string) (*proc, string) {
	t.Helper()
	return startFrontier(t, append([]string{"--listen", listen, "--store", filepath.Join(dir, "js"), "--db", filepath.Join(dir, "merged.db")}, extra...)...)
}

// The coordinator SIGKILLed mid-pass and started again on its store and
// merged database continues the pass: the workers and check --nats wait
// for it, and the pass completes with the single-process report.
func TestCoordinatorKilledMidPass(t *testing.T) {
	t.Parallel()
	w := crawltest.NewWeb(crawltest.WebOptions{Sites: 6, Site: crawltest.SiteOptions{
		Pages: 50, LinksPerPage: 8, Images: 1, BrokenEvery: 10, PageBytes: 1500, Latency: 10 * time.Millisecond,
	}})
	t.Cleanup(w.Close)
	dir := t.TempDir()
	args := append([]string{"--format", "json", "--all", "--commit-batch", "8"}, w.StartURLs()...)
	single := runInProcess(t, append([]string{"check", "--db", filepath.Join(dir, "single.db")}, args...)...)
	if single.code != exitProblems {
		t.Fatalf("single process: exit %d\n%s", single.code, single.stderr)
	}
	total := w.Expected().URLs
	w.Reset()
	requests := func() (n int64) {
		for _, s := range w.Sites {
			n += s.Stats().Requests
		}
		return n
	}

	front, url := serveFrontierOn(t, dir, "127.0.0.1:0")
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	var workers []*proc
	for i, shards := range []string{"0-85", "86-170", "171-255"} {
		workers = append(workers, startWorker(t, url, filepath.Join(dir, fmt.Sprintf("w%d.db", i+1)), shards, "--concurrency", "2"))
	}
	check := newProc(append([]string{"check", "--nats", url}, args...)...)
	var out strings.Builder
	check.cmd.Stdout = &out
	check.start(t)

	// Kill the coordinator once the sites have answered a fifth of the
	// web, well before the pass can end.
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for requests() < int64(total/5) {
		select {
		case <-tick.C:
		case <-check.done:
			t.Fatalf("the pass ended before the kill:\n%s", check.errors())
		}
	}
	if err := front.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-front.done
	killedAt := requests()
	if killedAt >= int64(total) {
		t.Fatalf("the sites had answered all %d URLs at the kill: it proves nothing", total)
	}
	// The same address: the workers and check reconnect to it.
	again, _ := serveFrontierOn(t, dir, u.Host, "-v")
	restarted := time.Now()

	select {
	case <-check.done:
	case <-time.After(2 * time.Minute):
		st := runInProcess(t, "status", "--nats", url)
		var logs strings.Builder
		for i, p := range workers {
			fmt.Fprintf(&logs, "\nworker %d:\n%s", i+1, p.errors())
		}
		t.Fatalf("check --nats did not end after the restart:\n%s\nserve-frontier:\n%s%s\nstatus:\n%s%s", check.errors(), again.errors(), logs.String(), st.stdout, st.stderr)
	}
	if check.code != exitProblems {
		t.Fatalf("check --nats: exit %d\n%s\nserve-frontier:\n%s", check.code, check.errors(), again.errors())
	}
	if a, b := normalised(t, out.String()), normalised(t, single.stdout); a != b {
		t.Errorf("after the coordinator's restart the report differs from the single-process one:\n%s", diffLines(a, b))
	}
	t.Logf("killed the coordinator after %d of %d requests; the pass ended %v after its restart", killedAt, total, time.Since(restarted).Round(time.Millisecond))
	// The workers were never killed: every URL was asked for once.
	for _, u := range w.Repeated() {
		if !strings.HasSuffix(u, "/robots.txt") {
			t.Errorf("%s was asked for twice", u)
		}
	}
	for i, p := range workers {
		select {
		case <-p.done:
			t.Errorf("worker %d ended (exit %d) while the coordinator was away:\n%s", i+1, p.code, p.errors())
		default:
		}
	}
}
