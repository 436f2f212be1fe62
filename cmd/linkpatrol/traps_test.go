package main

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkpatrol/linkpatrol/crawler/crawltest"
)

// TestTrapsHeldBackAndListed runs check on a site without broken links but
// with spider traps: the traps are held back by default and listed
// (without --all) with the setting that lets them through. Nothing is known
// to be broken, but the pass did not check them, so it exits 5, never 0
// ("all clear"). A flag and a config key each move a limit.
func TestTrapsHeldBackAndListed(t *testing.T) {
	t.Parallel()
	ts := crawltest.NewTrapSite(crawltest.NewSite(crawltest.SiteOptions{Pages: 50, Seed: 4}))
	srv := httptest.NewServer(ts)
	defer srv.Close()
	dir := t.TempDir()
	starts := []string{srv.URL + "/", srv.URL + crawltest.TrapsPath}
	check := func(args ...string) (result, map[string]string) {
		t.Helper()
		args = append([]string{"check", "--db", filepath.Join(dir, t.Name()+".db"), "--new-pass", "--format", "json", "--ignore-robots"}, args...)
		r := runInProcess(t, append(args, starts...)...)
		var rep struct {
			URLs []struct {
				URL, Verdict, Error string
				Referrers           []struct{ Page string }
			} `json:"urls"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("check %v: exit %d, %v\n%s", args, r.code, err, r.stderr)
		}
		held := map[string]string{}
		for _, u := range rep.URLs {
			if u.Error == "trap" {
				if u.Verdict != "skipped" || len(u.Referrers) == 0 {
					t.Errorf("%s: verdict %s, %d referrers", u.URL, u.Verdict, len(u.Referrers))
				}
				held[strings.TrimPrefix(u.URL, srv.URL)] = u.Verdict
			}
		}
		return r, held
	}

	r, held := check()
	if r.code != exitHeldBack {
		t.Errorf("exit %d with only traps held back, want %d\n%s", r.code, exitHeldBack, r.stderr)
	}
	if _, ok := held["/traps/grow/a/a/a/"]; !ok || len(held) < 3 {
		t.Errorf("held back: %v", held)
	}
	text := runInProcess(t, "report", "--db", filepath.Join(dir, t.Name()+".db"))
	if !strings.Contains(text.stdout, "suspected trap (path-repeats:") || !strings.Contains(text.stdout, "--max-path-repeats") ||
		!strings.Contains(text.stdout, "held back as suspected spider traps, listed below") ||
		!strings.HasPrefix(text.stdout, "PARTLY CHECKED: ") || text.code != exitHeldBack {
		t.Errorf("the text report does not say what was held back and why:\n%s", text.stdout)
	}

	// The flag lets the growing path go one step further.
	if _, held := check("--max-path-repeats", "3"); !hasKey(held, "/traps/grow/a/a/a/a/") || hasKey(held, "/traps/grow/a/a/a/") {
		t.Errorf("--max-path-repeats 3: held back %v", held)
	}
	// A config key in a [[rule]] turns the query limit off for the listing.
	cfg := filepath.Join(dir, "linkpatrol.toml")
	doc := "max_template_run = 10\n\n[[rule]]\npath_prefix = \"/traps/facets/\"\nmax_query_variants = 0\n"
	if err := os.WriteFile(cfg, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	_, held = check("--config", cfg)
	for u := range held {
		if strings.HasPrefix(u, "/traps/facets/") {
			t.Errorf("%s held back though its rule turns max_query_variants off", u)
		}
	}
	if st := ts.Requests()[crawltest.TrapCalendar]; st.Requests == 0 {
		t.Fatal("the calendar was never asked for")
	}
	if !hasKey(held, "/traps/cal/2027/10") || hasKey(held, "/traps/cal/2027/9") {
		t.Errorf("max_template_run = 10 from /traps/cal/2026/11: held back %v", held)
	}
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}
