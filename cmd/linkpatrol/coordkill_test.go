package main

import (
	"context"
	"fmt"
	neturl "net/url"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/linkpatrol/linkpatrol/cluster"
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
	// 15 pages a site: the kill comes a fifth into the web whatever its
	// size, and the restarted frontier has four fifths of it to finish.
	w := crawltest.NewWeb(crawltest.WebOptions{Sites: 6, Site: crawltest.SiteOptions{
		Pages: 15, LinksPerPage: 8, Images: 1, BrokenEvery: 10, PageBytes: 1500, Latency: 10 * time.Millisecond,
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
			n += s.Requests()
		}
		return n
	}

	front, url := serveFrontierOn(t, dir, "127.0.0.1:0")
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	ranges := shardsOf(t, 3, w.StartURLs()...)
	workers := make([]*proc, len(ranges))
	ended := make(chan int, 16)
	startW := func(i int) {
		workers[i] = startWorker(t, url, filepath.Join(dir, fmt.Sprintf("w%d.db", i+1)), ranges[i], "--concurrency", "2")
		go func(p *proc) { <-p.done; ended <- i }(workers[i])
	}
	for i := range ranges {
		startW(i)
	}
	check := inProc(append([]string{"check", "--nats", url}, args...)...)
	var out strings.Builder
	check.stdout = &out
	check.start(t)

	// Kill the coordinator once the sites have answered a fifth of the
	// web, well before the pass can end.
	awaitRequests(t, check, requests, int64(total/5), func() string { return clusterState(t, url) })
	if err := front.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-front.done
	killedAt := requests()
	if killedAt >= int64(total) {
		t.Fatalf("the sites had answered all %d URLs at the kill: it proves nothing", total)
	}
	// The same address: the workers and check reconnect to it.
	front2, _ := serveFrontierOn(t, dir, u.Host, "-v")
	restarted := time.Now()
	// The workers stop before the frontier they talk to, as they did
	// before it was started again (cleanups run last first): stopped
	// after it, each waits out its own timeouts to give its leases up.
	t.Cleanup(func() {
		for _, p := range workers {
			p.stop(t)
		}
	})

	// A worker whose leases ran out while the frontier was away (TTL/2:
	// a restart slower than that, on a loaded machine) exits 3 for its
	// supervisor to start it again; this test is that supervisor.
	restarts := 0
	timeout := time.After(2 * time.Minute)
	for following := true; following; {
		select {
		case <-check.done:
			following = false
		case i := <-ended:
			if workers[i].code != exitStopped {
				t.Fatalf("worker %d exited %d while the coordinator was away, want 3 (start it again):\n%s", i+1, workers[i].code, workers[i].errors())
			}
			restarts++
			startW(i)
		case <-timeout:
			st := runInProcess(t, "status", "--nats", url)
			var logs strings.Builder
			for i, p := range workers {
				fmt.Fprintf(&logs, "\nworker %d:\n%s", i+1, p.errors())
			}
			t.Fatalf("check --nats did not end after the restart:\n%s\nserve-frontier:\n%s%s\nstatus:\n%s%s\n%s", check.errors(), front2.errors(), logs.String(), st.stdout, st.stderr, clusterState(t, url))
		}
	}
	if check.code != exitProblems {
		t.Fatalf("check --nats: exit %d\n%s\nserve-frontier:\n%s", check.code, check.errors(), front2.errors())
	}
	if d := reportDiff(t, out.String(), single.stdout); d != "" {
		t.Errorf("after the coordinator's restart the report differs from the single-process one:\n%s", d)
	}
	var again []string
	for _, u := range w.Repeated() {
		if !strings.HasSuffix(u, "/robots.txt") {
			again = append(again, u)
		}
	}
	t.Logf("killed the coordinator after %d of %d requests; the pass ended %v after its restart; %d workers restarted, %d URLs asked again",
		killedAt, total, time.Since(restarted).Round(time.Millisecond), restarts, len(again))
	// Workers that kept running ask for no URL twice; one that gave up
	// its shards and started again may, as after a kill.
	if restarts == 0 && len(again) > 0 {
		t.Errorf("no worker restarted, and these URLs were asked for twice: %v", again)
	}
}

// Politeness holds at the servers across a worker's SIGKILL and restart
// (DISTRIBUTED.md, test 5, with real processes): with --per-host 1,
// --rate 10/s and --window 20/2.5s no site of the killed worker sees more
// than one request at a time or more than 20 starts in any window, counted
// by the sites themselves. No redirect crosses shards here: those hops are
// another worker's requests (cluster's TestPolitenessHeldAtTheServers).
func TestPolitenessAcrossWorkerKill(t *testing.T) {
	t.Parallel()
	const (
		windowMax = 20
		window    = 2500 * time.Millisecond
		jitter    = 250 * time.Millisecond // see cluster's politeness test
	)
	w := crawltest.NewWeb(crawltest.WebOptions{Sites: 6, Site: crawltest.SiteOptions{
		Pages: 40, LinksPerPage: 4, Images: 1, BrokenEvery: 8, PageBytes: 400,
	}})
	t.Cleanup(w.Close)
	dir := t.TempDir()
	ranges := shardsOf(t, 3, w.StartURLs()...)
	victim, sites := busiestWorker(t, w, ranges)
	requests := requestsAt(w, sites)
	front, url := startFrontier(t)
	dbs, procs := startWorkers(t, url, dir, ranges, "--concurrency", "4")
	// --timeout 1s: the restarted worker waits that long before its hosts'
	// first requests (the killed one's may still be at the servers).
	args := append([]string{"check", "--nats", url, "--format", "json", "--all", "--commit-batch", "4",
		"--per-host", "1", "--rate", "10/s", "--burst", "1", "--window", "20/2.5s", "--ignore-robots", "--timeout", "1s"}, w.StartURLs()...)
	check := inProc(args...)
	var out strings.Builder
	check.stdout = &out
	check.start(t)

	// Kill the victim while its window binds: once each of its sites has
	// been asked as many URLs as the window holds.
	awaitRequests(t, check, requests, int64(windowMax*len(sites)), func() string { return clusterState(t, url) })
	if err := procs[victim].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-procs[victim].done
	restarted := startWorker(t, url, dbs[victim], ranges[victim], "--concurrency", "4")
	if code := follow(t, check, append(procs, restarted, front)...); code != exitProblems {
		t.Fatalf("check --nats: exit %d\n%s", code, check.errors())
	}
	for _, i := range sites {
		st := w.Sites[i].Stats()
		starts := w.Sites[i].MaxStartsIn(window - jitter)
		t.Logf("%s: %d requests (%d distinct), max in flight %d, max starts in %s %d",
			w.URL(i), st.Requests, st.DistinctURLs, st.MaxInFlight, window-jitter, starts)
		if st.Requests <= windowMax {
			t.Errorf("%s: only %d requests, the window never binds", w.URL(i), st.Requests)
		}
		if st.MaxInFlight > 1 {
			t.Errorf("%s: %d requests in flight at once across the kill, limit 1", w.URL(i), st.MaxInFlight)
		}
		if starts > windowMax {
			t.Errorf("%s: %d requests within %s across the kill, limit %d per %s", w.URL(i), starts, window-jitter, windowMax, window)
		}
	}
}

// clusterState is what a failure message needs to say why a pass does not
// end: the tasks waiting per shard, the shard consumers that delivered
// anything, and what each worker last reported.
func clusterState(t *testing.T, url string) string {
	t.Helper()
	nc, err := cluster.Connect(url, cluster.ClientOptions{})
	if err != nil {
		return err.Error()
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	st, err := js.Stream(ctx, "LP_TODO")
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	si, err := st.Info(ctx, jetstream.WithSubjectFilter("lp.todo.*"))
	if err != nil {
		return err.Error()
	}
	for s, n := range si.State.Subjects {
		last, err := st.GetLastMsgForSubject(ctx, s)
		if err != nil {
			fmt.Fprintf(&b, "subject %s: %d (last: %v)\n", s, n, err)
			continue
		}
		fmt.Fprintf(&b, "subject %s: %d, the last at sequence %d\n", s, n, last.Sequence)
	}
	l := st.ListConsumers(ctx)
	for info := range l.Info() {
		if info.NumPending > 0 || info.NumAckPending > 0 || info.Delivered.Stream > 0 {
			fmt.Fprintf(&b, "consumer %s: pending %d ackpending %d delivered %d ackfloor %d redelivered %d\n", info.Name, info.NumPending, info.NumAckPending, info.Delivered.Stream, info.AckFloor.Stream, info.NumRedelivered)
		}
	}
	ws, _ := cluster.Workers(ctx, js)
	for _, w := range ws {
		fmt.Fprintf(&b, "worker %s idle %v acked %v\n", w.Name, w.Idle, w.Acked)
	}
	return b.String()
}
