package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// A missing fragment is a problem like a broken link in what changed (qa6
// Q1): the night it breaks it is new (and --only-new shows it, exit 1), the
// next night it is still there (not new: --only-new exits 0), the night it
// is repaired it is fixed, and when the link to it goes it is no longer
// linked. Before, it was never new nor fixed, and --only-new said "No new
// problems", exit 0, the night it broke.
func TestMissingFragmentIsNewStillFixedAndGone(t *testing.T) {
	t.Parallel()
	var anchor, linked atomic.Value
	anchor.Store("sec")
	linked.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/":
			if linked.Load().(bool) {
				fmt.Fprint(w, `<a href="/b.html#sec">b</a>`)
			} else {
				fmt.Fprint(w, `<a href="/b.html">b</a>`)
			}
		case "/b.html":
			fmt.Fprintf(w, `<h2 id="%s">S</h2>`, anchor.Load())
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	db := filepath.Join(t.TempDir(), "lp.db")
	check := []string{"check", "--db", db, "--check-fragments", srv.URL + "/"}
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }

	if r := runInProcess(t, check...); r.code != exitOK {
		t.Fatalf("night 1: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	anchor.Store("other")
	r := runInProcess(t, check...)
	if out := flat(r.stdout); r.code != exitProblems || !strings.Contains(out, "Since pass 1") || !strings.Contains(out, ": 1 new problem, 0 still there") ||
		!strings.Contains(out, "b.html#sec new since pass 1") {
		t.Errorf("night 2, the anchor renamed: exit %d; want 1, the fragment a new problem\n%s", r.code, r.stdout)
	}
	r = runInProcess(t, "report", "--db", db, "--only-new")
	if r.code != exitProblems || !strings.Contains(r.stdout, "b.html#sec") || strings.Contains(r.stdout, "No new problems") {
		t.Errorf("report --only-new the night it broke: exit %d; want 1, the fragment listed\n%s", r.code, r.stdout)
	}
	r = runInProcess(t, append(check, "--only-new")...)
	if out := flat(r.stdout); r.code != exitOK || !strings.Contains(out, ": 0 new problems, 1 still there") || !strings.Contains(out, "1 missing fragment") {
		t.Errorf("night 3 --only-new, still missing: exit %d; want 0, 1 still there, the count kept\n%s", r.code, r.stdout)
	}
	anchor.Store("sec")
	r = runInProcess(t, check...)
	if out := flat(r.stdout); r.code != exitOK || !strings.Contains(out, "0 still there, 1 fixed") ||
		!strings.Contains(out, "Fragments fixed since pass 3 (1)") {
		t.Errorf("night 4, repaired: exit %d; want 0 and the fragment fixed\n%s", r.code, r.stdout)
	}
	anchor.Store("other")
	if r := runInProcess(t, check...); r.code != exitProblems {
		t.Errorf("night 5, missing again: exit %d, want 1", r.code)
	}
	linked.Store(false)
	r = runInProcess(t, check...)
	if out := flat(r.stdout); r.code != exitOK || !strings.Contains(out, "0 fixed, 1 no longer linked") || !strings.Contains(out, "Fragments no longer linked since pass 5 (1)") {
		t.Errorf("night 6, the link gone: exit %d; want 0 and the fragment no longer linked\n%s", r.code, r.stdout)
	}
}

// A cluster pass keeps its missing fragments as one process does: before,
// serve-frontier never kept a complete pass's tally, so the next night
// called every missing fragment new again (an --only-new mail with the
// same problem every night, exit 1) and the trend had no points.
func TestClusterMissingFragmentIsStillThere(t *testing.T) {
	t.Parallel()
	var anchor atomic.Value
	anchor.Store("sec")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<a href="/b.html#sec">b</a>`)
		case "/b.html":
			fmt.Fprintf(w, `<h2 id="%s">S</h2>`, anchor.Load())
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	front, nats := startFrontier(t)
	worker := startWorker(t, nats, filepath.Join(t.TempDir(), "w1.db"), shardsOf(t, 1, srv.URL)[0])
	check := []string{"check", "--nats", nats, "--check-fragments", "--new-pass", srv.URL + "/"}
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }

	if r := runFollowing(t, check, front, worker); r.code != exitOK {
		t.Fatalf("night 1: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	anchor.Store("other")
	if r := runFollowing(t, check, front, worker); r.code != exitProblems || !strings.Contains(flat(r.stdout), ": 1 new problem, 0 still there") {
		t.Errorf("night 2, the anchor renamed: exit %d; want 1, the fragment a new problem\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := runFollowing(t, append(check, "--only-new"), front, worker)
	if out := flat(r.stdout); r.code != exitOK || !strings.Contains(out, ": 0 new problems, 1 still there") {
		t.Errorf("night 3 --only-new, still missing: exit %d; want 0 and 1 still there\n%s%s", r.code, r.stdout, r.stderr)
	}
}
