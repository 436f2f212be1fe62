package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/linkpatrol/linkpatrol/store"
)

// chainSite serves / linking an endless redirect chain (/redir/N -> N+1
// for ever), a finite one of 25 redirects (/c/0 -> ... -> /c/25, a page),
// a hop of that one linked directly (/c/12, 13 redirects from its end),
// and redirects to a missing page (/m -> /m2 -> /m3 -> /gone).
func chainSite(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		p := r.URL.Path
		switch {
		case p == "/":
			fmt.Fprint(w, "<a href=\"/redir/0\">a</a>\n<a href=\"/c/0\">b</a>\n<a href=\"/c/12\">c</a>\n<a href=\"/m\">d</a>\n")
		case p == "/m", p == "/m2", p == "/m3":
			next := map[string]string{"/m": "/m2", "/m2": "/m3", "/m3": "/gone"}[p]
			http.Redirect(w, r, next, http.StatusFound)
		case strings.HasPrefix(p, "/redir/"):
			n, _ := strconv.Atoi(strings.TrimPrefix(p, "/redir/"))
			http.Redirect(w, r, fmt.Sprintf("/redir/%d", n+1), http.StatusFound)
		case strings.HasPrefix(p, "/c/"):
			n, _ := strconv.Atoi(strings.TrimPrefix(p, "/c/"))
			if n < 25 {
				http.Redirect(w, r, fmt.Sprintf("/c/%d", n+1), http.StatusFound)
				return
			}
			fmt.Fprint(w, "<p>the end</p>")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

type chainReport struct {
	Summary struct {
		Broken       int `json:"broken"`
		URLs         int `json:"urls"`
		RedirectHops int `json:"redirect_hops"`
	} `json:"summary"`
	URLs []struct {
		URL       string `json:"url"`
		Verdict   string `json:"verdict"`
		Note      string `json:"note"`
		Error     string `json:"error"`
		Referrers []struct {
			Page string `json:"page"`
			Line int    `json:"line"`
		} `json:"referrers"`
	} `json:"urls"`
}

// A link whose redirect chain fails is one problem, on the link the page
// has, naming the chain and why it failed; the hops no page links to are
// not problems of their own in any format, and each hop that is stored
// names the URL that really redirected to it (qa5 N1).
func TestFailingRedirectChainIsOneProblem(t *testing.T) {
	t.Parallel()
	srv := chainSite(t)
	db := filepath.Join(t.TempDir(), "lp.db")
	r := runInProcess(t, "check", "--db", db, srv.URL+"/")
	if r.code != exitProblems {
		t.Fatalf("check: exit %d, want %d\n%s%s", r.code, exitProblems, r.stdout, r.stderr)
	}
	flat := strings.Join(strings.Fields(r.stdout), " ")
	for _, want := range []string{
		": 3 broken,",
		"redirects to " + srv.URL + "/redir/1 -> " + srv.URL + "/redir/2 -> ... (",
		"-> " + srv.URL + "/redir/21 and on: more than 20 redirects, not followed further",
		"redirects to " + srv.URL + "/m2 -> " + srv.URL + "/m3 -> " + srv.URL + "/gone, which answers 404 Not Found",
		"no page links to are hops of a failing redirect chain",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("text report lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(flat, "reached only by a redirect") || strings.Contains(flat, "no referring page stored") {
		t.Errorf("text report lists a hop as a problem of its own:\n%s", r.stdout)
	}

	r = runInProcess(t, "report", "--db", db, "--format", "json")
	var rep chainReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("report --format json: %v\n%s", err, r.stdout)
	}
	var listed []string
	for _, u := range rep.URLs {
		listed = append(listed, strings.TrimPrefix(u.URL, srv.URL))
		if len(u.Referrers) != 1 || u.Referrers[0].Page != srv.URL+"/" {
			t.Errorf("%s: referrers %+v, want the one link of /", u.URL, u.Referrers)
		}
	}
	slices.Sort(listed)
	if got := strings.Join(listed, " "); got != "/c/0 /m /redir/0" {
		t.Errorf("JSON lists %q, want the three links whose chains fail", got)
	}
	// /c/1../c/4 (/c/5 is 20 redirects from the end), /m2, /m3 and
	// /gone; /redir/1.. are not recorded at all: the chain was given up
	// before any of them reached its own end.
	if rep.Summary.Broken != 3 || rep.Summary.RedirectHops != 7 {
		t.Errorf("JSON summary: broken %d, redirect_hops %d; want 3 and 7", rep.Summary.Broken, rep.Summary.RedirectHops)
	}

	for _, format := range []string{"junit", "sarif", "github", "csv", "markdown"} {
		r := runInProcess(t, "report", "--db", db, "--format", format)
		if strings.Contains(r.stdout, srv.URL+"/redir/5\"") || strings.Contains(r.stdout, "link "+srv.URL+"/redir/5:") ||
			strings.Contains(r.stdout, "broken,"+srv.URL+"/redir/5,") || strings.Contains(r.stdout, "reached only by a redirect") {
			t.Errorf("%s lists the hop /redir/5 as a problem:\n%s", format, r.stdout)
		}
	}
	r = runInProcess(t, "report", "--db", db, "--format", "junit")
	if !strings.Contains(r.stdout, `tests="3" failures="3"`) {
		t.Errorf("junit: want 3 failing tests:\n%s", r.stdout)
	}

	// Every hop stored says which URL redirected to it, not the first
	// of the chain.
	st, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for hop, from := range map[string]string{"/m2": "/m", "/m3": "/m2", "/gone": "/m3"} {
		rec, ok, err := st.Get(srv.URL + hop)
		if want := "reached by a redirect from " + srv.URL + from; err != nil || !ok || rec.Note != want {
			t.Errorf("%s: %v %v, note %q, want %q", hop, ok, err, rec.Note, want)
		}
	}
	if _, ok, _ := st.Get(srv.URL + "/redir/5"); ok {
		t.Errorf("/redir/5, a hop of a chain given up before it ended, has a record")
	}
}

// A hop of a chain given up past --max-redirects that a page links to
// is checked on its own, whenever that link is found: from it the chain
// is shorter, and ends at a page (qa5 N1).
func TestHopOfAChainGivenUpIsCheckedOnItsOwn(t *testing.T) {
	t.Parallel()
	reached := make(chan struct{})
	var once sync.Once
	chain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		p := r.URL.Path
		switch {
		case p == "/":
			fmt.Fprint(w, "<a href=\"/c/0\">chain</a>\n")
		case strings.HasPrefix(p, "/c/"):
			n, _ := strconv.Atoi(strings.TrimPrefix(p, "/c/"))
			if n == 20 {
				once.Do(func() { close(reached) })
			}
			if n < 25 {
				http.Redirect(w, r, fmt.Sprintf("/c/%d", n+1), http.StatusFound)
				return
			}
			fmt.Fprint(w, "<p>the end</p>")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(chain.Close)
	// The other site's page links /c/10 only once the chain from /c/0
	// has claimed it.
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		select {
		case <-reached:
		case <-r.Context().Done():
			return
		}
		fmt.Fprintf(w, "<a href=\"%s/c/10\">hop</a>\n", chain.URL)
	}))
	t.Cleanup(other.Close)
	db := filepath.Join(t.TempDir(), "lp.db")
	r := runInProcess(t, "check", "--db", db, "--format", "json", "--all", chain.URL+"/", other.URL+"/")
	var rep chainReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("check --format json: %v\n%s%s", err, r.stdout, r.stderr)
	}
	verdicts := map[string]string{}
	for _, u := range rep.URLs {
		verdicts[strings.TrimPrefix(u.URL, chain.URL)] = u.Verdict + " " + u.Error
		if u.URL == chain.URL+"/c/10" && (len(u.Referrers) != 1 || u.Referrers[0].Page != other.URL+"/") {
			t.Errorf("/c/10: referrers %+v, want %s/", u.Referrers, other.URL)
		}
	}
	if verdicts["/c/0"] != "broken too many redirects" || verdicts["/c/10"] != "ok " || verdicts["/c/25"] != "ok " {
		t.Errorf("verdicts: /c/0 %q, /c/10 %q, /c/25 %q; want broken (too many redirects), ok, ok", verdicts["/c/0"], verdicts["/c/10"], verdicts["/c/25"])
	}
	if rep.Summary.Broken != 1 {
		t.Errorf("summary: %d broken, want 1 (/c/0)", rep.Summary.Broken)
	}
}

// With --report-after, a problem that was never reported is not reported
// fixed, and one first reported after a night held back says so rather
// than "new since" the night it was already broken in (qa5 N9).
func TestReportAfterSaysWhatWasReported(t *testing.T) {
	t.Parallel()
	var up, unlinked atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/":
			if unlinked.Load() {
				fmt.Fprint(w, "<a href=\"/g.html\">g</a>\n")
				return
			}
			fmt.Fprint(w, "<a href=\"/f.html\">f</a>\n<a href=\"/g.html\">g</a>\n")
		case "/g.html":
			fmt.Fprint(w, "<p>g</p>")
		case "/f.html":
			if up.Load() {
				fmt.Fprint(w, "<p>f</p>")
				return
			}
			http.NotFound(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	db := filepath.Join(t.TempDir(), "lp.db")
	night := func(n int, fUp bool) (result, string) {
		t.Helper()
		up.Store(fUp)
		r := runInProcess(t, "check", "--db", db, "--report-after", "2", srv.URL+"/")
		return r, fmt.Sprintf("night %d", n)
	}
	r, name := night(1, false)
	if r.code != exitOK || !strings.Contains(r.stdout, "1 suppressed by --report-after") {
		t.Fatalf("%s: exit %d, want %d with f.html suppressed\n%s%s", name, r.code, exitOK, r.stdout, r.stderr)
	}
	r, name = night(2, true)
	flat := strings.Join(strings.Fields(r.stdout), " ")
	if strings.Contains(flat, "Fixed since") || !strings.Contains(flat, "0 fixed") {
		t.Errorf("%s: f.html, never reported, is reported fixed:\n%s", name, r.stdout)
	}
	if r, name = night(3, false); r.code != exitOK {
		t.Errorf("%s: exit %d, want %d (suppressed)\n%s", name, r.code, exitOK, r.stdout)
	}
	r, name = night(4, false)
	flat = strings.Join(strings.Fields(r.stdout), " ")
	if r.code != exitProblems || strings.Contains(flat, "new since pass 3") ||
		!strings.Contains(flat, "first reported now: a problem in pass 3 too, not reported then (--report-after 2)") {
		t.Errorf("%s: exit %d; want f.html first reported now, broken in pass 3 too:\n%s", name, r.code, r.stdout)
	}
	r, name = night(5, true)
	flat = strings.Join(strings.Fields(r.stdout), " ")
	if !strings.Contains(flat, "1 fixed") || !strings.Contains(flat, "Fixed since pass 4 (1)") {
		t.Errorf("%s: f.html, reported in pass 4, is not reported fixed:\n%s", name, r.stdout)
	}
	if r, name = night(6, false); r.code != exitOK {
		t.Errorf("%s: exit %d, want %d (suppressed)\n%s", name, r.code, exitOK, r.stdout)
	}
	// Taken off the site while held back: it was never reported, so it
	// is not "no longer linked" either.
	unlinked.Store(true)
	r = runInProcess(t, "check", "--db", db, "--report-after", "2", srv.URL+"/")
	if strings.Contains(r.stdout, "No longer linked") {
		t.Errorf("night 7: f.html, never reported, is reported no longer linked:\n%s", r.stdout)
	}
}

// A page that fails now but was good lately has its old links followed:
// it is counted apart from the pages read, and its last good copy's links
// to itself do not make it its own referrer (qa5 N9).
func TestGhostPageCountedApart(t *testing.T) {
	t.Parallel()
	var gone atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, "<a href=\"/a.html\">a</a>\n<a href=\"/b.html\">b</a>\n")
		case "/a.html":
			if gone.Load() {
				http.NotFound(w, r)
				return
			}
			fmt.Fprint(w, "<a href=\"/a.html#top\">top</a>\n<a href=\"/c.html\">c</a>\n<a href=\"/a.html\">self</a>\n")
		case "/b.html", "/c.html":
			// A page each: a copy of another is not read (samecontent.go).
			fmt.Fprintf(w, "<p>page %s</p>", r.URL.Path)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	db := filepath.Join(t.TempDir(), "lp.db")
	if r := runInProcess(t, "check", "--db", db, "--no-reuse", srv.URL+"/"); r.code != exitOK {
		t.Fatalf("night 1: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	gone.Store(true)
	r := runInProcess(t, "check", "--db", db, "--no-reuse", srv.URL+"/")
	flat := strings.Join(strings.Fields(r.stdout), " ")
	if r.code != exitProblems || !strings.Contains(flat, "3 pages parsed, 1 failing page's links followed from its last good copy,") {
		t.Errorf("night 2: exit %d; want 3 pages parsed (/, b, c) and the ghost counted apart:\n%s", r.code, r.stdout)
	}
	r = runInProcess(t, "report", "--db", db, "--format", "json")
	var rep struct {
		Summary struct {
			Pages  int `json:"pages"`
			Ghosts int `json:"ghosts"`
		} `json:"summary"`
		URLs []struct {
			URL       string `json:"url"`
			Referrers []struct {
				Page string `json:"page"`
			} `json:"referrers"`
		} `json:"urls"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("report --format json: %v", err)
	}
	if rep.Summary.Pages != 3 || rep.Summary.Ghosts != 1 {
		t.Errorf("summary: pages %d, ghosts %d; want 3 and 1", rep.Summary.Pages, rep.Summary.Ghosts)
	}
	if len(rep.URLs) != 1 || len(rep.URLs[0].Referrers) != 1 || rep.URLs[0].Referrers[0].Page != srv.URL+"/" {
		t.Errorf("want a.html linked from / alone, got %+v", rep.URLs)
	}
}
