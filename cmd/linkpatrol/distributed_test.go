package main

import (
	"encoding/json"
	"fmt"
	neturl "net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/cluster"
	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/crawler/crawltest"
)

// startWorker runs linkpatrol worker (a process) on its own database and
// waits until it holds its shards.
func startWorker(t *testing.T, url, db, shards string, extra ...string) *proc {
	t.Helper()
	p := newProc(append([]string{"worker", "--nats", url, "--db", db, "--shards", shards}, extra...)...)
	p.start(t)
	p.waitFor(t, "waiting for a pass")
	return p
}

// shardsOf splits the shards of the hosts of urls among n workers, as
// --shards values. A worker takes, renews and gives up a lease per shard
// it owns, and at each pass watches every one for tasks and looks in the
// stream every second while one has none, so the 256 shards of real
// ranges cost a small pass about half its CPU: a test that is not about
// the ranges gives its workers the shards its sites are in, and no more.
func shardsOf(t *testing.T, n int, urls ...string) []string {
	t.Helper()
	seen := map[int]bool{}
	var all []int
	for _, raw := range urls {
		u, err := neturl.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if s := cluster.Shard(u.Host); !seen[s] {
			seen[s] = true
			all = append(all, s)
		}
	}
	// Fewer shards than workers (about one run in 65,536 for three sites
	// and two workers): the others own a shard no site is in, and idle
	// through the pass, as a worker of a real range may.
	for s := 0; len(all) < n; s++ {
		if !seen[s] {
			seen[s] = true
			all = append(all, s)
		}
	}
	out := make([]string, n)
	for k := range n {
		var mine []int
		for i := k; i < len(all); i += n {
			mine = append(mine, all[i])
		}
		slices.Sort(mine)
		out[k] = cluster.FormatShards(mine)
	}
	return out
}

// stripped is a JSON report without what differs between two runs of
// the same pass: times, the pass's ID and elapsed time, and which way a
// page was first reached.
func stripped(t *testing.T, s string) any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("decode JSON report: %v\n%s", err, s)
	}
	var strip func(any)
	strip = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			for k, val := range x {
				switch k {
				case "id", "started", "finished", "elapsed", "elapsed_seconds", "first_broken", "last_good", "fetched_at", "first_seen", "checked", "checked_at", "generated":
					delete(x, k)
				case "note":
					// Whether a page was first reached by a link or by a
					// redirect depends on the order of the crawl, in one
					// process too.
					if n, _ := val.(string); strings.HasPrefix(n, "reached by a redirect from ") {
						delete(x, k)
					}
				default:
					strip(val)
				}
			}
		case []any:
			for _, val := range x {
				strip(val)
			}
		}
	}
	strip(v)
	return v
}

// reportDiff is "" when the JSON reports got and want say the same once
// stripped, and otherwise the first lines where they differ. Equal
// decoded values print the same, so only reports that differ are printed
// (printing every report cost the distributed tests more than their
// comparisons).
func reportDiff(t *testing.T, got, want string) string {
	t.Helper()
	g, w := stripped(t, got), stripped(t, want)
	if reflect.DeepEqual(g, w) {
		return ""
	}
	gb, _ := json.MarshalIndent(g, "", " ")
	wb, _ := json.MarshalIndent(w, "", " ")
	if string(gb) == string(wb) {
		return ""
	}
	return diffLines(string(gb), string(wb))
}

// A pass over a multi-host web run by three worker processes through
// serve-frontier gives the report a single process gives, every server
// sees each URL once, and the workers' files read as one say the same.
func TestDistributedEqualsSingle(t *testing.T) {
	t.Parallel()
	w := newWeb(t, 6, 30)
	dir := t.TempDir()
	single := runInProcess(t, append([]string{"check", "--format", "json", "--all", "--db", filepath.Join(dir, "single.db")}, w.StartURLs()...)...)
	if single.code != exitProblems {
		t.Fatalf("single process: exit %d\n%s", single.code, single.stderr)
	}
	w.Reset()

	front, url := startFrontier(t)
	var workers []*proc
	for i, shards := range shardsOf(t, 3, w.StartURLs()...) {
		workers = append(workers, startWorker(t, url, filepath.Join(dir, fmt.Sprintf("w%d.db", i+1)), shards, "--concurrency", "4"))
	}
	dist := runFollowing(t, append([]string{"check", "--nats", url, "--format", "json", "--all"}, w.StartURLs()...), append([]*proc{front}, workers...)...)
	if dist.code != exitProblems {
		t.Fatalf("distributed: exit %d\n%s\nserve-frontier:\n%s", dist.code, dist.stderr, front.errors())
	}
	if d := reportDiff(t, dist.stdout, single.stdout); d != "" {
		t.Errorf("distributed report differs from the single-process one:\n%s", d)
	}
	// A redirect onto a host of another shard is handed to the worker
	// that owns it, never followed where it was met: no URL, robots.txt
	// included, is asked for twice.
	if r := w.Repeated(); len(r) > 0 {
		t.Errorf("asked for twice: %q", r)
	}
	for i, p := range workers {
		if !strings.Contains(p.errors(), "complete") {
			t.Errorf("worker %d did not say the pass completed:\n%s", i+1, p.errors())
		}
	}
	again := runInProcess(t, "report", "--nats", url, "--format", "json", "--all")
	if again.code != exitProblems || reportDiff(t, again.stdout, single.stdout) != "" {
		t.Errorf("report --nats: exit %d, or another report\n%s", again.code, again.stderr)
	}
	st := runInProcess(t, "status", "--nats", url)
	if st.code != exitOK || !strings.Contains(st.stdout, "complete") || !strings.Contains(st.stdout, "w1") {
		t.Errorf("status: exit %d\n%s%s", st.code, st.stdout, st.stderr)
	}
	// The workers' own files, read as one once they have stopped, finish
	// the chains that crossed between them as the coordinator did.
	for _, p := range workers {
		p.interrupt()
		p.wait(t)
	}
	files := runInProcess(t, "report", "--db", filepath.Join(dir, "w*.db"), "--format", "json", "--all")
	if d := reportDiff(t, files.stdout, single.stdout); files.code != exitProblems || d != "" {
		t.Errorf("report --db 'w*.db': exit %d, or another report:\n%s%s", files.code, d, files.stderr)
	}
}

// runFollowing runs check --nats (in-process) to its end, and when it does
// not end fails with what it and the cluster's commands said.
func runFollowing(t *testing.T, args []string, cluster ...*proc) result {
	t.Helper()
	p := inProc(args...)
	var out strings.Builder
	p.stdout = &out
	p.start(t)
	follow(t, p, cluster...)
	return result{p.code, out.String(), p.errors()}
}

// follow waits for check --nats to end, and when it does not end fails
// with what it and the cluster's commands said.
func follow(t *testing.T, check *proc, cluster ...*proc) int {
	t.Helper()
	select {
	case <-check.done:
	case <-time.After(2 * time.Minute):
		var logs strings.Builder
		for _, c := range cluster {
			fmt.Fprintf(&logs, "\n%v (exit %d if it ended):\n%s", c.name(), c.code, c.errors())
		}
		t.Fatalf("%v did not end:\n%s%s", check.name(), check.errors(), logs.String())
	}
	return check.code
}

// diffLines shows the first lines where a and b differ.
func diffLines(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			out = append(out, fmt.Sprintf("line %d:\n  got  %s\n  want %s", i+1, x, y))
			if len(out) == 10 {
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

// One owner per shard: a worker asking for shards another holds is refused
// with exit 2, naming the holder, and the holder keeps them.
func TestOverlappingShardsRefused(t *testing.T) {
	t.Parallel()
	_, url := startFrontier(t)
	dir := t.TempDir()
	first := startWorker(t, url, filepath.Join(dir, "first.db"), "0-127")
	r := runInProcess(t, "worker", "--nats", url, "--db", filepath.Join(dir, "second.db"), "--shards", "100-200")
	if r.code != exitUsage || !strings.Contains(r.stderr, "first") || !strings.Contains(r.stderr, "100-127") {
		t.Errorf("overlapping worker: exit %d, want 2 naming worker first and shards 100-127\n%s", r.code, r.stderr)
	}
	st := runInProcess(t, "status", "--nats", url)
	if !strings.Contains(st.stdout, "first") || !strings.Contains(st.stdout, "0-127") || strings.Contains(st.stdout, "second") {
		t.Errorf("status after the refusal:\n%s%s", st.stdout, st.stderr)
	}
	select {
	case <-first.done:
		t.Errorf("the first worker ended:\n%s", first.errors())
	default:
	}
}

// A worker SIGKILLed mid-pass and started again on its database loses no
// URL: the pass completes with the single-process report, and its hosts
// are asked again only for what it had not committed.
func TestWorkerKilledMidPass(t *testing.T) {
	t.Parallel()
	const concurrency, batch = 2, 8
	// 15 pages a site: the kill's moment is a count of requests, not a
	// share of the web, and what comes after it only has to end.
	w := crawltest.NewWeb(crawltest.WebOptions{Sites: 6, Site: crawltest.SiteOptions{
		Pages: 15, LinksPerPage: 8, Images: 1, BrokenEvery: 10, PageBytes: 1500, Latency: 10 * time.Millisecond,
	}})
	t.Cleanup(w.Close)
	dir := t.TempDir()
	// The worker restarted after the kill waits --timeout before its
	// hosts' first requests (the server may still be serving the killed
	// one's): 3s, not the default 20s, which 10ms pages never come near.
	args := append([]string{"--format", "json", "--all", "--commit-batch", strconv.Itoa(batch), "--timeout", "3s"}, w.StartURLs()...)
	single := runInProcess(t, append([]string{"check", "--db", filepath.Join(dir, "single.db")}, args...)...)
	if single.code != exitProblems {
		t.Fatalf("single process: exit %d\n%s", single.code, single.stderr)
	}
	w.Reset()

	ranges := shardsOf(t, 3, w.StartURLs()...)
	victim, sites := busiestWorker(t, w, ranges)
	requests := requestsAt(w, sites)

	front, url := startFrontier(t)
	dbs, procs := startWorkers(t, url, dir, ranges, "--concurrency", strconv.Itoa(concurrency))
	check := inProc(append([]string{"check", "--nats", url}, args...)...)
	var out strings.Builder
	check.stdout = &out
	check.start(t)

	// Kill the victim once its hosts have answered a few requests, well
	// before they answered all.
	awaitRequests(t, check, requests, 20, func() string { return "" })
	if err := procs[victim].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-procs[victim].done
	before, theirs := requests(), 0
	for _, i := range sites {
		theirs += w.Sites[i].Expected().URLs
	}
	if before >= int64(theirs) {
		t.Fatalf("the victim's hosts had answered all %d requests at the kill: it proves nothing", before)
	}
	// On its own file, it takes its shards back at once: its leases'
	// database is this file, whose lock it holds.
	restarted := startWorker(t, url, dbs[victim], ranges[victim], "--concurrency", strconv.Itoa(concurrency))
	if strings.Contains(restarted.errors(), "waiting up to") {
		t.Errorf("the worker restarted on its own file waited for its leases to lapse:\n%s", restarted.errors())
	}

	if code := follow(t, check, append(procs, restarted, front)...); code != exitProblems {
		t.Fatalf("check --nats: exit %d\n%s", code, check.errors())
	}
	if d := reportDiff(t, out.String(), single.stdout); d != "" {
		t.Errorf("after the kill the report differs from the single-process one:\n%s", d)
	}
	var repeated []string
	for _, i := range sites {
		repeated = append(repeated, w.Sites[i].Repeated()...)
	}
	// What a kill loses is what the crawler had not committed, as for one
	// process (resume_test.go): its one batch, the tasks in its workers'
	// hands and the one outcome its dispatcher is handing over; and each
	// host's robots.txt, asked again by the restarted worker.
	again := len(repeated)
	if limit := batch + crawler.Workers(concurrency) + 1 + len(sites); again > limit {
		t.Errorf("the victim's hosts were asked %d URLs again; at most %d (commit batch %d + the tasks in hand at concurrency %d + 1 + robots.txt of %d hosts): %v",
			again, limit, batch, concurrency, len(sites), repeated)
	}
	t.Logf("killed worker %d (%d sites) after %d requests; %d URLs asked again", victim+1, len(sites), before, again)
}

// The workers decide URLs by the pass's config file, the one check was run
// with, not by a linkpatrol.toml of their own working directory.
func TestWorkersUseThePassConfig(t *testing.T) {
	t.Parallel()
	w := newWeb(t, 3, 20)
	site, other := t.TempDir(), t.TempDir()
	// check's file skips the missing pages; the workers' own would skip
	// every page of the first site.
	if err := os.WriteFile(filepath.Join(site, "linkpatrol.toml"), []byte("exclude = ['/missing/']\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "linkpatrol.toml"), []byte("exclude = ['/p/']\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--format", "json", "--all"}, w.StartURLs()...)
	single := runIn(t, site, append([]string{"check", "--db", filepath.Join(t.TempDir(), "single.db")}, args...)...)
	if single.code != exitOK {
		t.Fatalf("single process: exit %d, want 0 (the broken links are excluded)\n%s", single.code, single.stderr)
	}
	w.Reset()
	front, url := startFrontier(t)
	procs := []*proc{front}
	for i, shards := range shardsOf(t, 2, w.StartURLs()...) {
		p := newProc("worker", "--nats", url, "--db", filepath.Join(other, fmt.Sprintf("w%d.db", i)), "--shards", shards)
		p.cmd.Dir = other
		p.start(t)
		p.waitFor(t, "waiting for a pass")
		procs = append(procs, p)
	}
	check := newProc(append([]string{"check", "--nats", url}, args...)...)
	check.cmd.Dir = site
	var out strings.Builder
	check.stdout = &out
	check.start(t)
	select {
	case <-check.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("check --nats did not end:\n%s\n%s\n%s", check.errors(), procs[1].errors(), procs[2].errors())
	}
	if check.code != exitOK {
		t.Fatalf("distributed: exit %d, want 0\n%s", check.code, check.errors())
	}
	if d := reportDiff(t, out.String(), single.stdout); d != "" {
		t.Errorf("the distributed pass did not run check's config:\n%s", d)
	}
}

// awaitRequests waits until requests() reaches n, the moment a test kills
// something. It fails if check ends first, or if the sites have not been
// asked that much in two minutes (state says what the cluster was doing).
func awaitRequests(t *testing.T, check *proc, requests func() int64, n int64, state func() string) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	stuck := time.After(2 * time.Minute)
	for requests() < n {
		select {
		case <-tick.C:
		case <-check.done:
			t.Fatalf("the pass ended before the kill:\n%s", check.errors())
		case <-stuck:
			t.Fatalf("the sites were asked %d requests in 2 minutes, the kill waits for %d:\n%s\n%s", requests(), n, check.errors(), state())
		}
	}
}

// startWorkers starts one worker per shard range, each on its own file
// wN.db in dir, with the extra flags args.
func startWorkers(t *testing.T, url, dir string, ranges []string, args ...string) (dbs []string, procs []*proc) {
	t.Helper()
	dbs = make([]string, len(ranges))
	procs = make([]*proc, len(ranges))
	for k, r := range ranges {
		dbs[k] = filepath.Join(dir, fmt.Sprintf("w%d.db", k+1))
		procs[k] = startWorker(t, url, dbs[k], r, args...)
	}
	return dbs, procs
}

// requestsAt counts the requests the web's sites numbered sites have had.
func requestsAt(w *crawltest.Web, sites []int) func() int64 {
	return func() (n int64) {
		for _, i := range sites {
			n += w.Sites[i].Requests()
		}
		return n
	}
}

// busiestWorker is, of workers owning ranges of shards, the one whose
// shards hold the most sites of w, and the indexes of those sites.
func busiestWorker(t *testing.T, w *crawltest.Web, ranges []string) (victim int, sites []int) {
	t.Helper()
	owned := make([][]int, len(ranges))
	for i := range w.Sites {
		u, _ := neturl.Parse(w.URL(i))
		s, found := cluster.Shard(u.Host), false
		for k, r := range ranges {
			if shards, _ := cluster.ParseShards(r); slices.Contains(shards, s) {
				owned[k], found = append(owned[k], i), true
			}
		}
		if !found {
			t.Fatalf("shard %d is in no range", s)
		}
	}
	for k := range owned {
		if len(owned[k]) > len(owned[victim]) {
			victim = k
		}
	}
	return victim, owned[victim]
}
