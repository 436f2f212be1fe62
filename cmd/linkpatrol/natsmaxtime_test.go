package main

import (
	"fmt"
	neturl "net/url"
	"slices"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/cluster"
	"github.com/linkpatrol/linkpatrol/crawler/crawltest"
)

// check --nats --max-time stops the distributed pass when its budget runs
// out: the workers commit what they hold, the report says the pass is
// stopped, exit 3; the same command again resumes it, and the runs
// together give the single-process report.
func TestDistributedMaxTimeResumes(t *testing.T) {
	t.Parallel()
	w := crawltest.NewWeb(crawltest.WebOptions{Sites: 4, Site: crawltest.SiteOptions{
		Pages: 40, LinksPerPage: 6, Images: 1, BrokenEvery: 10, PageBytes: 800, Latency: 50 * time.Millisecond,
	}})
	t.Cleanup(w.Close)
	dir := t.TempDir()
	args := append([]string{"--format", "json", "--all"}, w.StartURLs()...)
	single := runInProcess(t, append([]string{"check", "--db", filepath.Join(dir, "single.db")}, args...)...)
	if single.code != exitProblems {
		t.Fatalf("single process: exit %d\n%s", single.code, single.stderr)
	}
	w.Reset()

	front, url := startFrontier(t)
	procs := []*proc{front}
	// Each worker owns only the shards of its sites, so that joining the
	// pass again at every resume costs little on a loaded machine.
	for i, shards := range siteShards(t, w, 2) {
		procs = append(procs, startWorker(t, url, filepath.Join(dir, fmt.Sprintf("w%d.db", i+1)), shards, "--concurrency", "1"))
	}
	cmd := append([]string{"check", "--nats", url, "--max-time", "2s"}, args...)
	var last result
	runs := 0
	for ; runs < 40; runs++ {
		last = runFollowing(t, cmd, procs...)
		if last.code != exitStopped {
			break
		}
		if rep := decodeReport(t, last.stdout); rep.Pass.Complete {
			t.Fatalf("run %d: exit 3 and a complete pass\n%s", runs+1, last.stderr)
		}
	}
	if runs == 0 {
		t.Fatalf("the pass ended within its first budget: the test proves nothing (exit %d)\n%s", last.code, last.stderr)
	}
	if last.code != exitProblems {
		var logs strings.Builder
		for _, p := range procs[1:] {
			p.cmd.Process.Signal(syscall.SIGQUIT)
			<-p.done
		}
		for _, p := range procs {
			fmt.Fprintf(&logs, "\n%v:\n%s", p.cmd.Args[1:3], p.errors())
		}
		t.Fatalf("run %d: exit %d, want 1\n%s%s\n%s", runs+1, last.code, last.stderr, logs.String(), debugTodo(t, url))
	}
	if a, b := normalised(t, last.stdout), normalised(t, single.stdout); a != b {
		t.Errorf("after %d stops the report differs from the single-process one:\n%s", runs, diffLines(a, b))
	}
	var again []string
	for _, u := range w.Repeated() {
		if !strings.HasSuffix(u, "/robots.txt") {
			again = append(again, u)
		}
	}
	t.Logf("%d runs of --max-time 2s stopped the pass; %d URLs were asked again: %v", runs, len(again), again)
}

// siteShards splits the shards of w's sites among n workers, as --shards
// values.
func siteShards(t *testing.T, w *crawltest.Web, n int) []string {
	t.Helper()
	seen := map[int]bool{}
	var all []int
	for i := range w.Sites {
		u, err := neturl.Parse(w.URL(i))
		if err != nil {
			t.Fatal(err)
		}
		if s := cluster.Shard(u.Host); !seen[s] {
			seen[s] = true
			all = append(all, s)
		}
	}
	if len(all) < n {
		t.Fatalf("the sites' hosts fall in %d shards, fewer than %d workers", len(all), n)
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
