package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
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
		Pages: 20, LinksPerPage: 6, Images: 1, BrokenEvery: 10, PageBytes: 800, Latency: 50 * time.Millisecond,
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
	for i, shards := range shardsOf(t, 2, w.StartURLs()...) {
		procs = append(procs, startWorker(t, url, filepath.Join(dir, fmt.Sprintf("w%d.db", i+1)), shards, "--concurrency", "1"))
	}
	cmd := append([]string{"check", "--nats", url, "--max-time", "1s"}, args...)
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
			fmt.Fprintf(&logs, "\n%v:\n%s", p.name(), p.errors())
		}
		t.Fatalf("run %d: exit %d, want 1\n%s%s\n%s", runs+1, last.code, last.stderr, logs.String(), clusterState(t, url))
	}
	if d := reportDiff(t, last.stdout, single.stdout); d != "" {
		t.Errorf("after %d stops the report differs from the single-process one:\n%s", runs, d)
	}
	var again []string
	for _, u := range w.Repeated() {
		if !strings.HasSuffix(u, "/robots.txt") {
			again = append(again, u)
		}
	}
	t.Logf("%d runs of --max-time 1s stopped the pass; %d URLs were asked again: %v", runs, len(again), again)
}

// check --nats --sitemap: the sitemap is read once, by the worker owning
// its host; what it names on another worker's host is forwarded there;
// the report is the single-process one.
func TestDistributedSitemap(t *testing.T) {
	t.Parallel()
	var sitemapReads atomic.Int64
	var b *httptest.Server
	a := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<a href="/linked">linked</a>`)
		case "/linked", "/orphan":
			// A page each: of two alike, whichever came first would be
			// read, and the two reports differ in which.
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<p>a page: %s</p>`, r.URL.Path)
		case "/sitemap.xml":
			sitemapReads.Add(1)
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprintf(w, `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>http://%s/orphan</loc></url><url><loc>%s/only-in-sitemap</loc></url><url><loc>%s/gone</loc></url></urlset>`, r.Host, b.URL, b.URL)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(a.Close)
	b = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/only-in-sitemap" {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<a href="/also-gone">x</a>`)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(b.Close)
	shardOf := func(s *httptest.Server) int {
		u, _ := neturl.Parse(s.URL)
		return cluster.Shard(u.Host)
	}
	if shardOf(a) == shardOf(b) {
		t.Skip("both test servers fell in one shard")
	}
	dir := t.TempDir()
	args := []string{"--format", "json", "--all", "--sitemap", a.URL + "/sitemap.xml", a.URL + "/"}
	single := runInProcess(t, append([]string{"check", "--db", filepath.Join(dir, "single.db")}, args...)...)
	if single.code != exitProblems {
		t.Fatalf("single process: exit %d\n%s", single.code, single.stderr)
	}
	for _, want := range []string{"/only-in-sitemap", "/gone", "/orphan"} {
		if !strings.Contains(single.stdout, want) {
			t.Fatalf("the single-process report lacks %s: the sitemap was not read\n%s", want, single.stdout)
		}
	}
	sitemapReads.Store(0)

	front, url := startFrontier(t)
	procs := []*proc{front}
	for i, s := range []*httptest.Server{a, b} {
		procs = append(procs, startWorker(t, url, filepath.Join(dir, fmt.Sprintf("w%d.db", i+1)), fmt.Sprint(shardOf(s))))
	}
	dist := runFollowing(t, append([]string{"check", "--nats", url}, args...), procs...)
	if dist.code != exitProblems {
		t.Fatalf("distributed: exit %d\n%s", dist.code, dist.stderr)
	}
	if d := reportDiff(t, dist.stdout, single.stdout); d != "" {
		t.Errorf("the distributed report with --sitemap differs from the single-process one:\n%s", d)
	}
	if n := sitemapReads.Load(); n != 1 {
		t.Errorf("the sitemap was read %d times, want once (by its host's owner)", n)
	}
}

// A header given as a flag travels in the pass record on the NATS server:
// check --nats says so for each, and not for a config file's ${ENV}
// header, which workers expand themselves.
func TestDistributedHeaderFlagWarns(t *testing.T) {
	t.Parallel()
	_, url := startFrontier(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "linkpatrol.toml"), []byte("[[rule]]\nhost = \"a.example\"\nheaders = { \"X-Token\" = \"${LP_TEST_TOKEN}\" }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// No worker: the pass waits, and --max-time ends the run.
	cmd := exec.Command(binary, "check", "--nats", url, "--max-time", "1s", "-H", "Authorization: Bearer s3cret", "https://a.example/")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LP_TEST_TOKEN=t0ken")
	r := runCmd(t, cmd)
	if r.code != exitStopped {
		t.Fatalf("exit %d, want 3 (stopped by --max-time)\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "warning: the value of -H Authorization is stored in the pass record") {
		t.Errorf("no warning about -H Authorization:\n%s", r.stderr)
	}
	if strings.Contains(r.stderr, "X-Token") || strings.Contains(r.stderr, "s3cret") {
		t.Errorf("the warning names the config file's header, or shows a value:\n%s", r.stderr)
	}
}
