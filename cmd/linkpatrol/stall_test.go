package main

import (
	"fmt"
	neturl "net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/linkpatrol/linkpatrol/cluster"
	"github.com/linkpatrol/linkpatrol/crawler/crawltest"
)

// A worker that cannot apply the pass's settings (here: a secret of the
// pass's config file is not set where it runs) makes check --nats fail at
// once with the worker's reason, exit 2, instead of waiting for it.
func TestCheckNatsWorkerRefusesThePass(t *testing.T) {
	t.Parallel()
	w := newWeb(t, 2, 10)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "linkpatrol.toml")
	if err := os.WriteFile(cfg, []byte("[[rule]]\nhost = \"127.0.0.1\"\nheaders = { \"X-Token\" = \"${LP_F2_REFUSAL_TOKEN}\" }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	front, url := startFrontier(t)
	worker := startWorker(t, url, filepath.Join(dir, "w1.db"), shardsOf(t, 1, w.StartURLs()...)[0])
	check := newProc(append([]string{"check", "--nats", url, "--config", cfg}, w.StartURLs()...)...)
	check.cmd.Env = append(os.Environ(), "LP_F2_REFUSAL_TOKEN=s3cret")
	check.start(t)
	select {
	case <-check.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("check --nats did not end:\n%s\nworker:\n%s\nserve-frontier:\n%s", check.errors(), worker.errors(), front.errors())
	}
	if check.code != exitUsage || !strings.Contains(check.errors(), "worker w1 cannot run pass") || !strings.Contains(check.errors(), "LP_F2_REFUSAL_TOKEN") {
		t.Errorf("check --nats: exit %d, want 2 with the worker's reason\n%s", check.code, check.errors())
	}
	if code := worker.wait(t); code != exitUsage {
		t.Errorf("the worker: exit %d, want 2\n%s", code, worker.errors())
	}
}

// A worker SIGKILLed mid-pass and not started again: check --nats does
// not wait for ever. Once the worker's leases lapsed and --owner-wait
// passed, it prints what was done, names the shards and the command that
// starts their worker, and exits 3; status shows the worker lost. Started
// again, the worker finishes the pass, and the same check follows it to
// its end.
func TestCheckNatsGivesUpOnALostWorker(t *testing.T) {
	t.Parallel()
	// 15 pages a site: the kill comes after 10 requests of the victim's
	// sites (killMidPass) whatever the web's size.
	w := crawltest.NewWeb(crawltest.WebOptions{Sites: 4, Site: crawltest.SiteOptions{
		Pages: 15, LinksPerPage: 8, BrokenEvery: 10, PageBytes: 1000, Latency: 10 * time.Millisecond,
	}})
	t.Cleanup(w.Close)
	// --timeout bounds the wait the restarted worker owes the killed one's
	// requests (F23, F27): 1 s, not the default 20.
	k := killMidPass(t, w, "--owner-wait", "1s", "--timeout", "1s", "--format", "json", "--all")
	front, url, ranges, dbs, victim, check, out, args := k.front, k.url, k.ranges, k.dbs, k.victim, k.check, k.out, k.args
	select {
	case <-check.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("check --nats still waits for the killed worker:\n%s\nserve-frontier:\n%s", check.errors(), front.errors())
	}
	name := fmt.Sprintf("w%d", victim+1)
	start := fmt.Sprintf("linkpatrol worker --nats %s --db %s --shards %s --name %s", url, dbs[victim], ranges[victim], name)
	if check.code != exitStopped || !strings.Contains(check.errors(), "waits for a worker (giving up at") || !strings.Contains(check.errors(), "no live worker") || !strings.Contains(check.errors(), start) {
		t.Fatalf("check --nats: exit %d, want 3 naming the shards and %q\n%s", check.code, start, check.errors())
	}
	stripped(t, out.String()) // what was done so far, as a JSON report

	st := runInProcess(t, "status", "--nats", url)
	if !strings.Contains(st.stdout, "lost (lease lapsed)") || !strings.Contains(st.stdout, "lapsed ") || !strings.Contains(st.stdout, start) {
		t.Errorf("status does not show %s lost with the command to start it:\n%s%s", name, st.stdout, st.stderr)
	}

	startWorker(t, url, dbs[victim], ranges[victim], "--concurrency", "2")
	again := runFollowing(t, args, front)
	if again.code != exitProblems || strings.Contains(again.stderr, "no live worker") {
		t.Errorf("check --nats after the restart: exit %d, want 1\n%s", again.code, again.stderr)
	}
}

// status --nats during a pass shows what each worker holds on its own
// frontier, not only what waits in the stream (qa4 F12): a site whose
// pages a rate limit keeps queued at the worker shows QUEUED above 0, the
// worker's DONE, and a progress line.
func TestStatusShowsWhatWorkersHold(t *testing.T) {
	t.Parallel()
	w := newWeb(t, 1, 40)
	dir := t.TempDir()
	front, url := startFrontier(t)
	worker := startWorker(t, url, filepath.Join(dir, "w1.db"), shardsOf(t, 1, w.StartURLs()...)[0])
	check := inProc(append([]string{"check", "--nats", url, "--rate", "4/s"}, w.StartURLs()...)...)
	check.start(t)
	// The row of w1: WORKER SHARDS PASS STATE QUEUED DONE ...
	row := func(out string) []string {
		for line := range strings.Lines(out) {
			if f := strings.Fields(line); len(f) > 6 && f[0] == "w1" {
				return f
			}
		}
		return nil
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		st := runInProcess(t, "status", "--nats", url)
		f := row(st.stdout)
		if st.code == exitOK && f != nil && f[3] == "busy" && f[4] != "0" && f[5] != "0" && strings.Contains(st.stdout, "progress: ") {
			t.Logf("status:\n%s", st.stdout)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never showed w1's own queue and progress while it crawled:\n%s%s\nworker:\n%s\nserve-frontier:\n%s", st.stdout, st.stderr, worker.errors(), front.errors())
		}
		select {
		case <-check.done:
			t.Fatalf("the pass ended before status showed w1's queue:\n%s%s", st.stdout, check.errors())
		case <-time.After(200 * time.Millisecond): // polling a condition: the worker's next report
		}
	}
}

// A read status cannot make (here the task stream is gone) is named, and
// everything else shown: one failed read is not an empty status (qa4 F19).
func TestStatusPartial(t *testing.T) {
	t.Parallel()
	_, url := startFrontier(t)
	startWorker(t, url, filepath.Join(t.TempDir(), "w1.db"), "0-255")
	nc, err := cluster.Connect(url, cluster.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	if err := js.DeleteStream(t.Context(), "LP_TODO"); err != nil {
		t.Fatal(err)
	}
	st := runInProcess(t, "status", "--nats", url)
	if st.code != exitOK || !strings.Contains(st.stdout, "partial status: could not read") || !strings.Contains(st.stdout, "the streams' backlog") ||
		!strings.Contains(st.stdout, "renewed ") || !strings.Contains(st.stdout, "0-255") {
		t.Errorf("status without the task stream: exit %d, want 0 with w1's leases and what could not be read\n%s%s", st.code, st.stdout, st.stderr)
	}
}

// killedMidPass is a cluster of two workers over a web whose busiest
// worker was SIGKILLed mid-pass, with check --nats following the pass.
type killedMidPass struct {
	front       *proc
	url         string
	ranges, dbs []string
	victim      int
	check       *proc
	out         *strings.Builder // check's standard output
	args        []string         // check's command line
}

// killMidPass starts serve-frontier, two workers (siteRanges) and check
// --nats with flags over w, and SIGKILLs the worker owning most sites
// once they have answered 10 requests.
func killMidPass(t *testing.T, w *crawltest.Web, flags ...string) killedMidPass {
	t.Helper()
	k := killedMidPass{ranges: siteRanges(t, w), out: new(strings.Builder)}
	victim, sites := busiestWorker(t, w, k.ranges)
	k.victim = victim
	// Both tests using it wait for the killed worker's leases to lapse:
	// 8s instead of the default 15s. Not less: the workers that live on
	// must renew theirs in time on a loaded machine.
	k.front, k.url = startFrontier(t, "--lease-ttl", "8s")
	dbs, procs := startWorkers(t, k.url, t.TempDir(), k.ranges, "--concurrency", "2")
	k.dbs = dbs
	k.args = append(append([]string{"check", "--nats", k.url}, flags...), w.StartURLs()...)
	k.check = inProc(k.args...)
	k.check.stdout = k.out
	k.check.start(t)
	awaitRequests(t, k.check, requestsAt(w, sites), 10, func() string {
		return procs[0].errors() + "\n" + procs[1].errors() + "\n" + k.front.errors()
	})
	if err := procs[victim].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-procs[victim].done
	return k
}

// siteRanges splits the shards of w's sites between two workers. Each
// worker owns only its sites' shards: a worker renewing 128 leases, one
// fsync each, may miss a round on a loaded machine and stop, which the
// tests using it are not about.
func siteRanges(t *testing.T, w *crawltest.Web) []string {
	t.Helper()
	var distinct []int
	for i := range w.Sites {
		u, _ := neturl.Parse(w.URL(i))
		if s := cluster.Shard(u.Host); !slices.Contains(distinct, s) {
			distinct = append(distinct, s)
		}
	}
	if len(distinct) < 2 {
		t.Skip("every site hashed to one shard") // about 1 run in 16 million
	}
	var shards [2][]int
	for k, s := range distinct {
		shards[k%2] = append(shards[k%2], s)
	}
	for k := range shards {
		slices.Sort(shards[k])
	}
	return []string{cluster.FormatShards(shards[0]), cluster.FormatShards(shards[1])}
}
