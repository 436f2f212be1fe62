package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// check --nats of other start URLs while the cluster's pass of other sites
// is unfinished is refused at once with exit 2, naming that pass and what
// to do: never that pass's report and exit code as its own (qa5 N12). The
// same start URLs, in any order, follow it; --new-pass abandons it.
func TestCheckNATSOtherSitesRefused(t *testing.T) {
	t.Parallel()
	front, url := startFrontier(t)
	// No worker runs: the pass of site A stays running, its shards waiting.
	siteA := []string{"http://127.0.0.1:9/a/", "http://127.0.0.1:10/a/"}
	siteB := "http://127.0.0.1:11/b/"
	first := inProc(append([]string{"check", "--nats", url, "--owner-wait", "1h"}, siteA...)...)
	first.start(t)
	first.waitFor(t, "waits for a worker")

	r := runInProcess(t, "check", "--nats", url, "--owner-wait", "1s", siteB)
	for _, want := range append([]string{"of other start URLs is running", "status --nats", "--new-pass"}, siteA...) {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("check of site B: stderr lacks %q", want)
		}
	}
	if r.code != exitUsage || r.stdout != "" {
		t.Fatalf("check of site B while site A's pass runs: exit %d, want 2 and no report\nstdout:\n%s\nstderr:\n%s\nserve-frontier:\n%s", r.code, r.stdout, r.stderr, front.errors())
	}

	// Site A's own command, its start URLs in another order, follows
	// its pass: no worker, so it gives up after --owner-wait, exit 3.
	same := runInProcess(t, "check", "--nats", url, "--owner-wait", "1s", siteA[1], siteA[0])
	if same.code != exitStopped || strings.Contains(same.stderr, "other start URLs") {
		t.Errorf("check of site A again: exit %d, want 3 following its pass\n%s", same.code, same.stderr)
	}

	// --new-pass is the explicit way: site A's pass is abandoned, and
	// its follower says so.
	nb := runInProcess(t, "check", "--nats", url, "--owner-wait", "1s", "--new-pass", "--format", "json", siteB)
	if nb.code != exitStopped || !strings.Contains(nb.stdout, siteB) || strings.Contains(nb.stdout, siteA[0]) {
		t.Errorf("check --new-pass of site B: exit %d, want 3 with site B's report\n%s\n%s", nb.code, nb.stdout, nb.stderr)
	}
	if code := first.wait(t); code != exitUsage || !strings.Contains(first.errors(), "was replaced by pass") {
		t.Errorf("site A's follower after --new-pass: exit %d\n%s", code, first.errors())
	}

	// A pass stopped by --max-time is unfinished too: resumed by its own
	// command, refused to others.
	if r := runInProcess(t, "check", "--nats", url, "--max-time", "1s", "--owner-wait", "1h", siteB); r.code != exitStopped {
		t.Fatalf("check --max-time 1s of site B: exit %d, want 3\n%s", r.code, r.stderr)
	}
	r = runInProcess(t, append([]string{"check", "--nats", url}, siteA...)...)
	if r.code != exitUsage || !strings.Contains(r.stderr, "of other start URLs is stopped") || !strings.Contains(r.stderr, siteB) || !strings.Contains(r.stderr, "resume it") {
		t.Errorf("check of site A while site B's pass is stopped: exit %d, want 2 naming it\n%s", r.code, r.stderr)
	}
}

// A pass of site B in a database holding site A's passes (a cluster's
// merged one, or one process's after --new-pass) is compared with site B's
// own history only: site A's broken links are never "no longer linked"
// there, nor "fixed" (qa5 N6). Site A's next pass still compares with its
// last one.
func TestOtherSitesPassesAreNoHistory(t *testing.T) {
	t.Parallel()
	a, b := newWeb(t, 1, 20), newWeb(t, 1, 20)
	db := filepath.Join(t.TempDir(), "lp.db")
	if r := runInProcess(t, append([]string{"check", "--db", db}, a.StartURLs()...)...); r.code != exitProblems {
		t.Fatalf("site A: exit %d, want 1 (its broken links)\n%s", r.code, r.stderr)
	}
	r := runInProcess(t, append([]string{"check", "--db", db, "--new-pass"}, b.StartURLs()...)...)
	if r.code != exitProblems || strings.Contains(r.stdout, "no longer linked") || strings.Contains(r.stdout, "Since pass") {
		t.Errorf("site B after site A: exit %d, want 1 with no comparison with site A's pass\n%s%s", r.code, r.stdout, r.stderr)
	}
	host := strings.TrimSuffix(strings.TrimPrefix(a.StartURLs()[0], "http://"), "/")
	if strings.Contains(r.stdout, host) {
		t.Errorf("site B's report names site A (%s):\n%s", host, r.stdout)
	}
	r = runInProcess(t, append([]string{"check", "--db", db, "--new-pass"}, a.StartURLs()...)...)
	if r.code != exitProblems || !strings.Contains(r.stdout, "Since pass 1") {
		t.Errorf("site A again: exit %d, want 1 compared with its pass 1\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// The same in a cluster, whose merged database holds every site's passes:
// README's cluster runs client A's sites, then client B's (qa5 N6).
func TestClusterOtherSitesPassesAreNoHistory(t *testing.T) {
	t.Parallel()
	a, b := newWeb(t, 1, 20), newWeb(t, 1, 20)
	front, url := startFrontier(t)
	w := startWorker(t, url, filepath.Join(t.TempDir(), "w.db"), shardsOf(t, 1, append(a.StartURLs(), b.StartURLs()...)...)[0])
	if r := runFollowing(t, append([]string{"check", "--nats", url}, a.StartURLs()...), front, w); r.code != exitProblems {
		t.Fatalf("site A: exit %d, want 1 (its broken links)\n%s", r.code, r.stderr)
	}
	r := runFollowing(t, append([]string{"check", "--nats", url}, b.StartURLs()...), front, w)
	host := strings.TrimSuffix(strings.TrimPrefix(a.StartURLs()[0], "http://"), "/")
	if r.code != exitProblems || strings.Contains(r.stdout, "no longer linked") || strings.Contains(r.stdout, host) {
		t.Errorf("site B after site A: exit %d, want 1 and nothing of site A (%s)\n%s%s", r.code, host, r.stdout, r.stderr)
	}
}
