package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// leafSite serves / linking to /m/0../m/n-1 on l; after the served-th
// request for a leaf it closes itself (listener and connections), as a
// server that dies part way through a pass. served 0: it never does.
func leafSite(t *testing.T, l net.Listener, n int, served int64) *httptest.Server {
	t.Helper()
	var leaves atomic.Int64
	died := make(chan struct{})
	var once sync.Once
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/" {
			for i := range n {
				fmt.Fprintf(w, "<a href=\"/m/%d\">%d</a>\n", i, i)
			}
			return
		}
		fmt.Fprint(w, "leaf")
		if served > 0 && leaves.Add(1) == served {
			once.Do(func() { close(died) })
		}
	}))
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	go func() {
		<-died
		srv.Close() // waits for the handler that said so
	}()
	return srv
}

// The site's own server dies part way through the pass (qa6 Q2): the URLs
// it did not get to are not dead links. The report's first line says the
// host stopped answering, when and after how many requests, and how many
// URLs were not checked; nothing is "broken"; the exit code is 3, for check
// and report alike. Run again while it is still down, the same (a refusal
// from a host that answered earlier in the pass, in an earlier run, is
// still not a dead link); run again once it is back, those URLs are
// checked and the pass finishes clean.
func TestSiteServerDyingMidPassIsNotDeadLinks(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	leafSite(t, l, 30, 5)
	db := filepath.Join(t.TempDir(), "lp.db")
	start := "http://" + addr + "/"
	args := []string{"check", "--db", db, "--per-host", "2", "--retries", "1", start}

	for _, run := range []string{"the night it dies", "again, still down"} {
		r := runInProcess(t, args...)
		first, _, _ := strings.Cut(r.stdout, "\n\n")
		first = strings.Join(strings.Fields(first), " ")
		if r.code != exitStopped || !strings.HasPrefix(first, "INCOMPLETE: "+addr+" stopped answering at ") ||
			!strings.Contains(first, " after ") || !strings.Contains(first, "URLs not checked") {
			t.Errorf("%s: exit %d, first paragraph %q; want 3 and %s stopped answering\n%s", run, r.code, first, addr, r.stderr)
		}
		if strings.Contains(r.stdout, "Broken (") || strings.Contains(r.stdout, "refused; never worked") {
			t.Errorf("%s: URLs the dead server did not get to reported as dead links:\n%s", run, r.stdout)
		}
		// No --group-hosts was given: each held URL's note names the
		// host itself, never "held back with" another (or with "", as
		// a resumed run did, review7 RV2 1).
		if strings.Contains(r.stdout, "--group-hosts") || !strings.Contains(r.stdout, "not checked: "+addr+" answered ") {
			t.Errorf("%s: the held URLs' notes do not name %s alone:\n%s", run, addr, r.stdout)
		}
		if again := runInProcess(t, "report", "--db", db); again.code != exitStopped {
			t.Errorf("%s: report: exit %d, want 3", run, again.code)
		}
	}

	l, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the port of the dead server was taken meanwhile: %v", err)
	}
	leafSite(t, l, 30, 0)
	r := runInProcess(t, args...)
	if r.code != exitOK || !strings.Contains(r.stdout, "No problems found.") {
		t.Errorf("back up: exit %d; want 0, every URL checked\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
