package report

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/linkpatrol/linkpatrol/store"
)

func render(t testing.TB, r *Report, format string) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, r, format); err != nil {
		t.Fatalf("Write %s: %v", format, err)
	}
	return buf.String()
}

// Text fills prose to the width, but never breaks a URL or a path: a line
// over the width holds one such word whole.
func TestTextNeverBreaksAURL(t *testing.T) {
	t.Parallel()
	src := fillStore(t, webHistory())
	for _, width := range []int{40, 60, 72, 80, 120} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			r := build(t, src, 2, Options{Width: width, All: true})
			out := render(t, r, "text")
			for i, line := range strings.Split(out, "\n") {
				if n := utf8.RuneCountInString(line); n > width && !strings.Contains(line, "://") {
					t.Errorf("line %d is %d runes wide, over %d, without a URL to excuse it: %q", i+1, n, width, line)
				}
			}
			for _, e := range r.Entries {
				if !strings.Contains(out, e.Record.URL+"\n") {
					t.Errorf("%s is not whole on one line", e.Record.URL)
				}
				for _, ref := range e.Referrers {
					if !strings.Contains(out, " "+ref.Page+":") {
						t.Errorf("referring page %s is not whole on one line", ref.Page)
					}
				}
			}
		})
	}
}

// Referrers are grouped by page: a URL linked 856 times from 8 pages shows
// all 8 pages, each with its first lines and a count.
func TestTextReferrersByPage(t *testing.T) {
	t.Parallel()
	var refs []Referrer
	for p := range 8 {
		n := 2
		if p == 3 {
			n = 842
		}
		for l := range n {
			refs = append(refs, Referrer{Page: fmt.Sprintf("https://example.com/p%d.html", p), Line: 10 + l})
		}
	}
	r := &Report{
		Pass:    store.Pass{ID: 1, State: store.PassComplete},
		Options: Options{Width: 80, MaxReferrers: defaultMaxReferrers, Now: time.Now()},
		Entries: []Entry{{Record: store.URLRecord{URL: "https://example.com/gone", Verdict: store.VerdictBroken, Status: 404}, Referrers: refs}},
	}
	out := render(t, r, "text")
	for p := range 8 {
		if !strings.Contains(out, fmt.Sprintf("p%d.html: lines 10, 11", p)) {
			t.Errorf("page p%d.html is not listed once with its lines:\n%s", p, out)
		}
	}
	if !strings.Contains(out, "p3.html: lines 10, 11, 12, 13, 14, 15, 16, 17, ... (842)\n") {
		t.Errorf("the page linking 842 times does not show its first lines and count:\n%s", out)
	}
	if strings.Contains(out, "more, see") {
		t.Errorf("8 pages are within the cap, yet some are left out:\n%s", out)
	}
	r.Options.MaxReferrers = 5
	if out := render(t, r, "text"); !strings.Contains(out, "and 3 more pages, see --format json") {
		t.Errorf("with a cap of 5 pages, the other 3 are not counted:\n%s", out)
	}
}

func TestTextMessages(t *testing.T) {
	t.Parallel()
	src := fillStore(t, webHistory())
	tests := []struct {
		name string
		opt  Options
		want []string
		not  []string
	}{
		{"default", Options{}, []string{"Broken (6)", "Since pass 1", "new since pass 1", "Fixed since pass 1 (1)", "No longer linked since pass 1 (2)", "redirects to https://example.com/posts/old-post/"}, []string{"Skipped (", "OK ("}},
		{"all", Options{All: true}, []string{"Skipped (1)", "skipped: robots", "OK (4)"}, nil},
		{"only new", Options{OnlyNew: true}, []string{"Broken (4)"}, []string{"missing.html"}},
		{"all suppressed", Options{ReportAfter: Threshold{Failures: 99}}, []string{"No problems to report (10 suppressed by --report-after)."}, []string{"Broken ("}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := render(t, build(t, src, 2, tt.opt), "text")
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("no %q in\n%s", w, out)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(out, n) {
					t.Errorf("unexpected %q in\n%s", n, out)
				}
			}
		})
	}
	clean := fillStore(t, []fixturePass{{pass: webHistory()[1].pass, results: webHistory()[1].results[:3]}})
	if out := render(t, build(t, clean, 1, Options{}), "text"); !strings.Contains(out, "No problems found.") {
		t.Errorf("a clean pass does not say so:\n%s", out)
	}
	// A start page that was fetched but could not be parsed (a text/plain
	// answer) leaves no problem listed, yet nothing was checked: the body
	// must not contradict the FAILED line above it.
	r := build(t, clean, 1, Options{})
	r.StartFailure = "FAILED: no start URL could be fetched and parsed, so nothing behind it was checked. https://example.com/: not an HTML page (text/plain)."
	for _, format := range []string{"text", "markdown"} {
		if out := render(t, r, format); strings.Contains(out, "No problems found") {
			t.Errorf("%s: a pass whose start failed says no problems were found:\n%s", format, out)
		}
	}
	// A pass cut short by a host's quota found no problems among what it
	// checked, which is not the same as none: it says how much it left.
	cut := webHistory()[1].results[:3]
	cut = append(cut, target(store.URLRecord{URL: "https://example.com/later", Verdict: store.VerdictSkipped, Error: "quota", Note: "skipped: the host's quota for this pass is used up"}))
	out := render(t, build(t, fillStore(t, []fixturePass{{pass: webHistory()[1].pass, results: cut}}), 1, Options{}), "text")
	flat := strings.Join(strings.Fields(out), " ") // the text report wraps at 80 columns
	for _, w := range []string{"1 skipped (1 not checked: a host's quota for the pass was used up, listed below)", "No problems found among the URLs checked; 1 URL was not checked", "https://example.com/later", "raise --quota-requests or --quota-bytes"} {
		if !strings.Contains(flat, w) {
			t.Errorf("no %q in\n%s", w, out)
		}
	}
}

func TestWrapTextKeepsWordsWhole(t *testing.T) {
	t.Parallel()
	long := "https://example.com/" + strings.Repeat("abcdefghij/", 10) + "page.html:1234"
	lines := wrapText("see "+long+" and more words after it", 40)
	if want := []string{"see", long, "and more words after it"}; !slices.Equal(lines, want) {
		t.Errorf("wrapText = %q, want %q", lines, want)
	}
}

// A hostile server's 32 KB Location is clipped in the text report, with
// its length, not printed whole on one line of each night's mail; a URL
// of ordinary length is untouched (TestWrapTextKeepsWordsWhole).
func TestWrapTextClipsHugeWords(t *testing.T) {
	t.Parallel()
	huge := "http://127.0.0.1/behind/" + strings.Repeat("a", 32768-24)
	lines := wrapText("redirects to "+huge+", where it fails: URL too long", 80)
	want := []string{"redirects to", huge[:clippedTo] + "… (32768 characters),", "where it fails: URL too long"}
	if !slices.Equal(lines, want) {
		t.Errorf("wrapText = %.300q, want %q", lines, want)
	}
}

// A date keeps its time, and a count its noun, on one line: a header whose
// start URL is long must not end a line in "started 2026-11-24" and begin
// the next with "07:23." (nor "0" and then "skipped").
func TestWrapTextKeepsDatesAndCountsWhole(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		s     string
		width int
		want  []string
	}{
		{"linkpatrol pass 1 of http://127.0.0.1:8080/a-long-path, started 2026-11-24 07:23.", 60,
			[]string{"linkpatrol pass 1 of http://127.0.0.1:8080/a-long-path,", "started 2026-11-24 07:23."}},
		{"1 URL: 1 broken, 0 transient, 0 unverifiable, 0 skipped; took 53ms.", 45,
			[]string{"1 URL: 1 broken, 0 transient, 0 unverifiable,", "0 skipped; took 53ms."}},
		{"broken since 2026-11-20, 3 days; lines 3, 7, 9", 30,
			[]string{"broken since 2026-11-20,", "3 days; lines 3, 7, 9"}},
	} {
		if got := wrapText(tt.s, tt.width); !slices.Equal(got, tt.want) {
			t.Errorf("wrapText(%q, %d) =\n%q\nwant\n%q", tt.s, tt.width, got, tt.want)
		}
	}
}

// A URL reached only by a redirect (the second URL of a loop /a -> /b -> /a)
// is linked from no page; the report says it belongs to the redirect, not
// that referring pages were lost.
func TestRedirectTargetNamesWhereItWasReachedFrom(t *testing.T) {
	t.Parallel()
	r := &Report{
		Pass:    store.Pass{ID: 1, State: store.PassComplete, StartURLs: []string{"http://127.0.0.1:8080/a"}},
		Options: Options{Width: 80, MaxReferrers: defaultMaxReferrers, Now: time.Now()},
		Entries: []Entry{{Record: store.URLRecord{URL: "http://127.0.0.1:8080/b", Verdict: store.VerdictBroken,
			Error: "redirect loop", Note: store.RedirectNote + "http://127.0.0.1:8080/a"}}},
	}
	for _, format := range []string{"text", "markdown", "junit", "github", "sarif", "html"} {
		out := strings.Join(strings.Fields(render(t, r, format)), " ")
		if strings.Contains(out, "no referring page stored") || !strings.Contains(out, "no page; reached only by a redirect from http://127.0.0.1:8080/a") {
			t.Errorf("%s: the loop's second URL does not say it was reached by the redirect:\n%s", format, out)
		}
		// Said once: the note that says the same is not shown as well.
		if n := strings.Count(out, "redirect from"); n != 1 {
			t.Errorf("%s: %d times 'redirect from', want once:\n%s", format, n, out)
		}
	}
}

// A pass that has not finished says how long it ran only when that is
// known: one still running (a distributed pass's coordinator never runs it,
// so it saves no time) read "killed after 0s" and "took 0s" after 40 s
// (qa4 F7).
func TestUnfinishedPassTime(t *testing.T) {
	t.Parallel()
	// A run's heartbeat (Alive) tells a killed one from one still going:
	// after three missed beats, the pass was interrupted, and is said so.
	now := time.Date(2026, 11, 23, 3, 10, 0, 0, time.UTC)
	for _, tt := range []struct {
		name        string
		elapsed     time.Duration
		alive       time.Time
		first, took string
	}{
		{"time unknown", 0, time.Time{}, "(it is still running, or it was killed; started 2026-11-23 03:00)", "; not finished."},
		{"time saved", 40 * time.Second, time.Time{}, "(it is still running, or it was killed after 40s)", "; took 40s."},
		{"heartbeat fresh", 40 * time.Second, now.Add(-store.Heartbeat), "(it is still running, or it was killed after 40s)", "; took 40s."},
		{"heartbeat stale", 40 * time.Second, now.Add(-time.Minute), "pass 1 was interrupted (its run was last seen 2026-11-23 03:09:00, after 40s of work)", "; took 40s."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := cutHistory()
			h[0].pass.State, h[0].pass.Finished, h[0].pass.Elapsed = store.PassRunning, time.Time{}, tt.elapsed
			if !tt.alive.IsZero() {
				h[0].pass.RunStarted, h[0].pass.Alive = now.Add(-10*time.Minute), tt.alive
			}
			r := build(t, fillStore(t, h), 1, Options{BaseDir: "/work", Now: now})
			if !strings.Contains(r.Incomplete(), tt.first) || !strings.HasSuffix(r.Counts(), tt.took) {
				t.Errorf("first line %q, counts %q; want %q and %q", r.Incomplete(), r.Counts(), tt.first, tt.took)
			}
		})
	}
}
