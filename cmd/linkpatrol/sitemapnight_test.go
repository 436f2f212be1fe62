package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// A sitemap that fails one night (a 503, or cut mid-stream) turned every
// broken URL it lists into "no longer linked" (exit 1 -> 5), and the next
// night into "new problems" (qa9 T6). It is followed from its last good
// copy as a page is: its entries are checked again, named with the
// sitemap's line of that copy, still there, exit 1. A sitemap cut on its
// first night, with no copy to follow, names itself and the line as the
// referrer of the entries it did list.
func TestSitemapThatFailsKeepsItsEntries(t *testing.T) {
	t.Parallel()
	const entries = 6
	var mu sync.Mutex
	mode := "whole"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintln(w, `<a href="/ok">ok</a>`)
		case "/ok":
			fmt.Fprintln(w, "ok")
		case "/sitemap.xml":
			mu.Lock()
			m := mode
			mu.Unlock()
			var b strings.Builder
			b.WriteString("<?xml version=\"1.0\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n")
			for i := range entries {
				fmt.Fprintf(&b, "<url><loc>http://%s/gone/%d</loc></url>\n", r.Host, i) // entry i on line 3+i
			}
			b.WriteString("</urlset>\n")
			switch m {
			case "emptyset":
				w.Header().Set("Content-Type", "application/xml")
				fmt.Fprint(w, "<?xml version=\"1.0\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n</urlset>\n")
			case "503":
				http.Error(w, "busy", http.StatusServiceUnavailable)
			case "cut":
				conn, _, err := w.(http.Hijacker).Hijack()
				if err != nil {
					return
				}
				body := b.String()
				half := strings.Index(body, "/gone/3<")
				fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Length: %d\r\n\r\n%s", len(body), body[:half])
				conn.Close()
			default:
				w.Header().Set("Content-Type", "application/xml")
				fmt.Fprint(w, b.String())
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	sitemap := srv.URL + "/sitemap.xml"
	night := func(db, m string) (result, string) {
		t.Helper()
		mu.Lock()
		mode = m
		mu.Unlock()
		r := runInProcess(t, "check", "--db", db, "--ignore-robots", "--retries", "0", "--sitemap", sitemap, srv.URL+"/")
		return r, strings.Join(strings.Fields(r.stdout), " ")
	}
	referrer := func(i int) string { return fmt.Sprintf("%s:%d", sitemap, 3+i) }

	db := filepath.Join(t.TempDir(), "lp.db")
	if r, _ := night(db, "whole"); r.code != exitProblems || !strings.Contains(r.stdout, fmt.Sprintf("Broken (%d)", entries)) {
		t.Fatalf("night 1, whole: exit %d, want %d with %d broken\n%s%s", r.code, exitProblems, entries, r.stdout, r.stderr)
	}
	// The sitemap itself is the one new problem of night 2, still there
	// on night 3.
	for n, m := range []string{"503", "cut"} {
		since := fmt.Sprintf("1 new problem, %d still there, 0 fixed, 0 no longer linked", entries)
		if n == 1 {
			since = fmt.Sprintf("0 new problems, %d still there, 0 fixed, 0 no longer linked", entries+1)
		}
		r, flat := night(db, m)
		if r.code != exitProblems {
			t.Errorf("night %d, sitemap %s: exit %d, want %d: its %d broken entries are still listed\n%s%s", n+2, m, r.code, exitProblems, entries, r.stdout, r.stderr)
		}
		for _, want := range []string{
			since,
			"the links of its last good copy were checked",
			referrer(0) + " (from its last good copy of",
			referrer(entries-1) + " (from its last good copy of",
		} {
			if !strings.Contains(flat, want) {
				t.Errorf("night %d, sitemap %s: no %q in\n%s", n+2, m, want, r.stdout)
			}
		}
		if strings.Contains(r.stdout, "No longer linked") {
			t.Errorf("night %d, sitemap %s: its entries are listed as no longer linked:\n%s", n+2, m, r.stdout)
		}
	}
	r, flat := night(db, "whole")
	if want := fmt.Sprintf("0 new problems, %d still there, 1 fixed, 0 no longer linked", entries); r.code != exitProblems || !strings.Contains(flat, want) {
		t.Errorf("night 4, whole again: exit %d, want %d and %q\n%s%s", r.code, exitProblems, want, r.stdout, r.stderr)
	}

	// A well-formed sitemap that comes back listing nothing (a broken
	// generator after a deploy) was "No problems found.", exit 0 (qa9 T6,
	// E1 for sitemaps): for one night it is not read, and followed from
	// its last good copy; empty again the next night, it is believed.
	db = filepath.Join(t.TempDir(), "lp.db")
	night(db, "whole")
	r, flat = night(db, "emptyset")
	if want := fmt.Sprintf("1 new problem, %d still there, 0 fixed, 0 no longer linked", entries); r.code != exitProblems || !strings.Contains(flat, want) || !strings.Contains(flat, "empty sitemap") {
		t.Errorf("sitemap emptied: exit %d, want %d, %q and the sitemap empty\n%s%s", r.code, exitProblems, want, r.stdout, r.stderr)
	}
	r, flat = night(db, "emptyset")
	if want := fmt.Sprintf("0 new problems, 0 still there, 1 fixed, %d no longer linked", entries); r.code != exitOK || !strings.Contains(flat, want) {
		t.Errorf("sitemap empty a second night: exit %d, want %d and %q\n%s%s", r.code, exitOK, want, r.stdout, r.stderr)
	}

	// A first night cut after 3 entries: no copy to follow. The 3 read
	// are checked and name the sitemap; the pass is partly checked.
	db = filepath.Join(t.TempDir(), "lp.db")
	r, flat = night(db, "cut")
	if r.code != exitProblems || !strings.Contains(r.stdout, "Broken (3)") {
		t.Errorf("first night cut: exit %d, want %d with 3 broken\n%s%s", r.code, exitProblems, r.stdout, r.stderr)
	}
	for _, want := range []string{"PARTLY CHECKED: 1 page of the site could not be read", "linked from: " + referrer(0), "linked from: " + referrer(2)} {
		if !strings.Contains(flat, want) {
			t.Errorf("first night cut: no %q in\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "no referring page stored") {
		t.Errorf("first night cut: an entry read from the sitemap names no referrer:\n%s", r.stdout)
	}
}
