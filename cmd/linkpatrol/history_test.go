package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// nightSite is a loopback site whose pages change from one night (pass)
// to the next; the test says which night it is. Night 2 is interrupted:
// hold.html answers only when its request is given up, so the pass never
// completes, and seen says when the night's other pages were all asked.
type nightSite struct {
	mu    sync.Mutex
	night int
	seen  map[string]bool // paths asked this night
	asked chan struct{}   // closed and replaced at every request
}

func newNightSite(t *testing.T) (*nightSite, string) {
	s := &nightSite{night: 1, seen: map[string]bool{}, asked: make(chan struct{})}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv.URL + "/"
}

func (s *nightSite) setNight(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.night, s.seen = n, map[string]bool{}
}

// waitAsked waits until every path has been asked this night.
func (s *nightSite) waitAsked(t *testing.T, p *proc, paths ...string) {
	t.Helper()
	for {
		s.mu.Lock()
		all := true
		for _, path := range paths {
			all = all && s.seen[path]
		}
		asked := s.asked
		s.mu.Unlock()
		if all {
			return
		}
		select {
		case <-asked:
		case <-p.done:
			t.Fatalf("the check ended (exit %d) before asking for %v:\n%s", p.code, paths, p.errors())
		}
	}
}

func (s *nightSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	night := s.night
	s.seen[r.URL.Path] = true
	close(s.asked)
	s.asked = make(chan struct{})
	s.mu.Unlock()
	// Which nights each page is broken on.
	broken := map[string][]int{
		"/gone.html":     {1, 2, 3}, // broken since night 1
		"/fix.html":      {1, 2},    // fixed on night 3: fixed since pass 1
		"/flap.html":     {2},       // broken only in the unfinished night
		"/new.html":      {2, 3},    // broken since the unfinished night: new since pass 1
		"/unlinked.html": {1, 2},    // no longer linked on night 3
	}
	switch {
	case r.URL.Path == "/":
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><body>
<a href="gone.html">gone</a>
<a href="fix.html">fix</a>
<a href="flap.html">flap</a>
<a href="new.html">new</a>
<a href="hold.html">hold</a>
`)
		if night < 3 {
			fmt.Fprint(w, `<a href="unlinked.html">unlinked</a>`)
		}
		fmt.Fprint(w, "</body></html>")
	case r.URL.Path == "/hold.html" && night == 2:
		<-r.Context().Done() // the interrupted check gives it up
	case slices.Contains(broken[r.URL.Path], night):
		http.NotFound(w, r)
	case r.URL.Path == "/robots.txt":
		http.NotFound(w, r)
	default:
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body>fine</body></html>")
	}
}

// nightTwo are the pages night 2 asks for before it is interrupted.
var nightTwo = []string{"/gone.html", "/fix.html", "/flap.html", "/new.html", "/unlinked.html", "/hold.html"}

// historyReport is what a JSON report says changed.
type historyReport struct {
	Pass struct {
		ID       uint64 `json:"id"`
		Complete bool   `json:"complete"`
	} `json:"pass"`
	Changes *struct {
		PreviousPass uint64 `json:"previous_pass"`
		New          int    `json:"new"`
		StillBroken  int    `json:"still_broken"`
		Fixed        []struct {
			URL string `json:"url"`
		} `json:"fixed"`
		NoLongerLinked []struct {
			URL string `json:"url"`
		} `json:"no_longer_linked"`
	} `json:"changes"`
	URLs []struct {
		URL         string `json:"url"`
		Change      string `json:"change"`
		FirstBroken string `json:"first_broken"`
	} `json:"urls"`
}

// After a pass stopped part way (SIGINT), the next complete pass compares
// with the last complete one by what that pass recorded, whatever the
// stopped one rechecked meanwhile (qa6 Q3): a link broken then is still
// there with its age, not "new since pass 1"; one broken only in the
// stopped pass and fine again is not "fixed"; one fine then and broken
// since is new; one broken then and fine now is fixed.
func TestStoppedPassIsNotTheHistory(t *testing.T) {
	t.Parallel()
	site, url := newNightSite(t)
	db := filepath.Join(t.TempDir(), "nn.db")

	first := runInProcess(t, "check", "--db", db, "--format", "json", url)
	if first.code != exitProblems {
		t.Fatalf("night 1: exit %d, want 1\n%s", first.code, first.stderr)
	}
	night1 := decodeHistory(t, first.stdout)

	// Night 2 is interrupted once it has rechecked every page but hold.html,
	// which it never gets an answer from.
	site.setNight(2)
	p := newProc("check", "--db", db, "--timeout", "10m", url)
	p.start(t)
	site.waitAsked(t, p, nightTwo...)
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t); code != exitStopped {
		t.Fatalf("night 2, interrupted: exit %d, want 3\n%s", code, p.errors())
	}

	site.setNight(3)
	third := runInProcess(t, "check", "--db", db, "--new-pass", "--format", "json", url)
	if third.code != exitProblems {
		t.Fatalf("night 3: exit %d, want 1\n%s", third.code, third.stderr)
	}
	checkNight3(t, third, night1, url)

	// The mail that shows only what changed names new.html alone.
	only := runInProcess(t, "report", "--db", db, "--only-new")
	if only.code != exitProblems || !strings.Contains(only.stdout, "new.html") || strings.Contains(only.stdout, "gone.html") {
		t.Errorf("report --only-new: exit %d, want 1 naming new.html and not gone.html\n%s%s", only.code, only.stdout, only.stderr)
	}
}

// checkNight3 checks what the complete pass after the interrupted night
// says changed since night 1 (TestStoppedPassIsNotTheHistory).
func checkNight3(t *testing.T, third result, night1 historyReport, url string) {
	t.Helper()
	rep := decodeHistory(t, third.stdout)
	if !rep.Pass.Complete || rep.Pass.ID != 3 || rep.Changes == nil || rep.Changes.PreviousPass != 1 {
		t.Fatalf("night 3: pass %d complete %v compared with %+v, want pass 3 complete, compared with pass 1\n%s", rep.Pass.ID, rep.Pass.Complete, rep.Changes, third.stdout)
	}
	changes := map[string]string{}
	for _, u := range rep.URLs {
		changes[strings.TrimPrefix(u.URL, url)] = u.Change
		if strings.HasSuffix(u.URL, "/gone.html") {
			for _, v := range night1.URLs {
				if v.URL == u.URL && v.FirstBroken != u.FirstBroken {
					t.Errorf("gone.html: first broken %s, want night 1's %s", u.FirstBroken, v.FirstBroken)
				}
			}
		}
	}
	if want := map[string]string{"gone.html": "still", "new.html": "new"}; !maps.Equal(changes, want) {
		t.Errorf("night 3's problems: %v, want %v\n%s", changes, want, third.stdout)
	}
	var fixed []string
	for _, f := range rep.Changes.Fixed {
		fixed = append(fixed, strings.TrimPrefix(f.URL, url))
	}
	var unlinked []string
	for _, f := range rep.Changes.NoLongerLinked {
		unlinked = append(unlinked, strings.TrimPrefix(f.URL, url))
	}
	if !slices.Equal(unlinked, []string{"unlinked.html"}) {
		t.Errorf("night 3: no longer linked %v, want [unlinked.html] (broken in night 1, rechecked in night 2)", unlinked)
	}
	if rep.Changes.New != 1 || rep.Changes.StillBroken != 1 || !slices.Equal(fixed, []string{"fix.html"}) {
		t.Errorf("night 3: %d new, %d still, fixed %v; want 1 new (new.html), 1 still (gone.html), fixed [fix.html] (flap.html was broken only in the stopped pass)\n%s",
			rep.Changes.New, rep.Changes.StillBroken, fixed, third.stdout)
	}
}

func decodeHistory(t *testing.T, s string) historyReport {
	t.Helper()
	var rep historyReport
	if err := json.Unmarshal([]byte(s), &rep); err != nil {
		t.Fatalf("decode JSON report: %v\n%s", err, s)
	}
	return rep
}

// The same nights over a cluster: night 2's pass is left unfinished (its
// follower gone, hold.html unanswered) and night 3 is README's advice,
// check --nats --new-pass. The workers' history is relative to the last
// complete pass too: the coordinator gives its Base to the workers.
func TestStoppedClusterPassIsNotTheHistory(t *testing.T) {
	t.Parallel()
	site, url := newNightSite(t)
	dir := t.TempDir()
	front, nats := startFrontier(t)
	worker := startWorker(t, nats, filepath.Join(dir, "w1.db"), shardsOf(t, 1, url)[0], "--concurrency", "2")

	first := runFollowing(t, []string{"check", "--nats", nats, "--format", "json", url}, front, worker)
	if first.code != exitProblems {
		t.Fatalf("night 1: exit %d, want 1\n%s", first.code, first.stderr)
	}
	night1 := decodeHistory(t, first.stdout)

	site.setNight(2)
	follower := inProc("check", "--nats", nats, "--timeout", "10m", url)
	follower.start(t)
	site.waitAsked(t, follower, nightTwo...)

	site.setNight(3)
	third := runFollowing(t, []string{"check", "--nats", nats, "--new-pass", "--format", "json", url}, front, worker)
	if third.code != exitProblems {
		t.Fatalf("night 3: exit %d, want 1\n%s\n%s", third.code, third.stderr, worker.errors())
	}
	checkNight3(t, third, night1, url)
	if code := follower.wait(t); code == exitOK || code == exitProblems {
		t.Errorf("night 2's follower: exit %d, want its pass replaced\n%s", code, follower.errors())
	}
}
