package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// A host's quota that runs out leaves URLs unchecked: the pass says so on
// its first line and exits 5, never 0, when the URLs it did check are fine;
// a broken link among them still makes it 1.
func TestQuotaLeavesThePassPartlyChecked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		broken bool
		want   int
	}{
		{"nothing broken", false, exitHeldBack},
		{"a broken link too", true, exitProblems},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				switch {
				case r.URL.Path == "/":
					// The broken link comes first, so it is checked
					// before the quota runs out.
					if tc.broken {
						fmt.Fprintln(w, `<a href="/gone">gone</a>`)
					}
					for i := range 8 {
						fmt.Fprintf(w, "<a href=\"/p%d\">p</a>\n", i)
					}
				case r.URL.Path == "/gone":
					http.NotFound(w, r)
				default:
					fmt.Fprintln(w, "<p>ok</p>")
				}
			}))
			t.Cleanup(srv.Close)
			r := runInProcess(t, "check", "--db", filepath.Join(t.TempDir(), "lp.db"), "--ignore-robots",
				"--concurrency", "1", "--quota-requests", "3", srv.URL+"/")
			if r.code != tc.want {
				t.Errorf("exit %d, want %d\n%s%s", r.code, tc.want, r.stdout, r.stderr)
			}
			if !strings.HasPrefix(r.stdout, "PARTLY CHECKED: ") || !strings.Contains(r.stdout, "quota for the pass was used up") {
				t.Errorf("the first line does not say the quota held URLs back:\n%s", r.stdout)
			}
		})
	}
}
