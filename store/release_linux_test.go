package store

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"
)

// mappedKiB is how much of the file at path this process has resident
// through its mappings, from /proc/self/smaps.
func mappedKiB(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	total, in := 0, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":"):
			in = len(fields) >= 6 && fields[5] == path
		case in && len(fields) == 3 && fields[0] == "Rss:":
			kb, err := strconv.Atoi(fields[1])
			if err != nil {
				t.Fatalf("smaps: %q: %v", sc.Text(), err)
			}
			total += kb
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return total
}

// TestMappedFileStaysSmall: commits that read all over a file, and scans
// of it, leave about mappedBudget of it resident, and everything still
// reads back; under the budget nothing is dropped. Reading the same bucket
// straight through bbolt, which nothing here does, maps the whole file:
// the yardstick that shows the measure works.
//
// It runs in a process of its own, this test binary run again for it
// alone (aloneEnv): the budget is measured for the whole process, and
// another test's file dropped meanwhile would move the base this one
// measures from. So the test is parallel with the others, where it was
// the package's one serial test and ran before all of them, about 3 s
// of the package's 4.
func TestMappedFileStaysSmall(t *testing.T) {
	if os.Getenv(aloneEnv) != t.Name() {
		t.Parallel()
		runAlone(t)
		return
	}
	// Commits that wait for no fsync: the mapping is the same either way,
	// and 200 fsyncs of pages all over a 32 MiB file are most of the
	// test's time on a busy disk.
	db, err := Open(filepath.Join(t.TempDir(), "linkpatrol.db"), Options{SyncEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if _, ok := db.statm.residentFile(); !ok {
		t.Skip("no /proc/self/statm")
	}
	// A file of 16 MiB is quicker to write than one big enough for the
	// real settings. No budget while it is written.
	db.releaseAbove, db.mappedBudget = 8<<20, 1<<40
	p := begin(t, db, "http://h/")
	rng := rand.New(rand.NewPCG(1, 2))
	// 1,200 pages make a file of 16 MiB (bbolt grows it by doubling;
	// 1,000 did too, 800 made 8 MiB). With no budget, commits all over it
	// left 10.6 MiB resident, against a limit of 5.3; with the budget,
	// 0.7. 2,000 pages made 32 MiB and took twice the CPU (3.3 CPU-s under
	// -race) for the same proportions.
	const pages, links, perCommit = 1200, 40, 4
	// Long URLs that share little with each other make a big file of
	// few links.
	tail := strings.Repeat("/a-long-path-segment", 9)
	urls := make([]string, pages)
	for i := range urls {
		urls[i] = fmt.Sprintf("http://h/%08x", rng.Uint32())
	}
	// relink commits every page again with new links, per pages a
	// commit, in a random order: each replaced list is deleted where it
	// lies, so the commits read pages all over the file.
	relink := func(per int) {
		t.Helper()
		var batch []Result
		for i, j := range rng.Perm(pages) {
			r := Result{Record: record(urls[j]), SetLinks: true}
			for k := range links {
				r.Links = append(r.Links, Link{URL: fmt.Sprintf("http://h/%016x%s", rng.Uint64(), tail), Line: k + 1, Tag: "a", Attr: "href"})
			}
			if batch = append(batch, r); len(batch) == per || i == pages-1 {
				if err := db.Commit(p.ID, batch); err != nil {
					t.Fatalf("commit %d: %v", i, err)
				}
				batch = batch[:0]
			}
		}
	}
	// The file is written 100 pages a commit: these commits only make
	// it. What is measured below comes from commits of a few pages each,
	// as a crawl's are (commit_batch, 32 by default): under -race a
	// commit's own cost, not its pages', was most of this test's CPU
	// with one page a commit.
	relink(100)
	size := db.Size()
	if size < 16<<20 {
		t.Fatalf("the file is %d bytes; the test needs 16 MiB or more", size)
	}
	limit := int(size>>10) / 3

	relink(perCommit)
	if got := mappedKiB(t, db.Path()); got < limit {
		t.Errorf("with no budget, commits all over the file left %d KiB of the %d KiB file resident: something dropped it, or the commits read too little of it to test", got, size>>10)
	}

	// Now a budget of 1 MiB: the drops keep what is resident near it,
	// for commits (the next write transaction notices) and scans (every
	// scanCheck bytes read) alike.
	db.mappedBudget = 1 << 20
	relink(perCommit)
	if got := mappedKiB(t, db.Path()); got > limit {
		t.Errorf("after %d commits all over the file %d KiB of the %d KiB file are resident, want at most %d", pages/perCommit, got, size>>10, limit)
	}
	n := 0
	err = db.PageLinks(p.ID, func(_ *URLRecord, l []Link) error {
		n += len(l)
		return nil
	})
	if err != nil || n != pages*links {
		t.Fatalf("PageLinks: %d links, %v; want %d", n, err, pages*links)
	}
	if got := mappedKiB(t, db.Path()); got > limit {
		t.Errorf("after a scan %d KiB of the %d KiB file are resident, want at most %d", got, size>>10, limit)
	}

	err = db.view(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketLinks).ForEach(func(_, v []byte) error {
			n += int(v[0])
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := mappedKiB(t, db.Path()); got < limit {
		t.Errorf("a plain bbolt scan left %d KiB of the %d KiB file resident: the measure does not see the mapping", got, size>>10)
	}
}

// aloneEnv names the one test a run of this test binary is for (runAlone).
const aloneEnv = "LINKPATROL_STORE_ALONE"

// runAlone runs the test t in a process of its own: this test binary again,
// for t alone, with aloneEnv set to its name. Its failures, and what it
// logged, are t's; a skip there is t's skip. With -cover, what the child
// covers is not in the parent's profile.
func runAlone(t *testing.T) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), aloneEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	switch {
	case err != nil:
		t.Fatalf("%s in a process of its own: %v\n%s", t.Name(), err, out)
	case strings.Contains(string(out), "--- SKIP: "+t.Name()):
		t.Skipf("skipped in a process of its own:\n%s", out)
	case !strings.Contains(string(out), "--- PASS: "+t.Name()):
		t.Fatalf("%s in a process of its own did not pass:\n%s", t.Name(), out)
	}
}
