package report

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/store"
)

func urls(entries []Entry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Record.URL
	}
	return out
}

func TestWorstFirst(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	entry := func(u string, v store.Verdict, lastGood, firstBroken time.Time, pages ...string) Entry {
		e := Entry{Record: store.URLRecord{URL: u, Verdict: v, LastGood: lastGood, FirstBroken: firstBroken}}
		for i, p := range pages {
			e.Referrers = append(e.Referrers, Referrer{Page: p, Line: i + 1})
		}
		return e
	}
	tests := []struct {
		name    string
		entries []Entry
		want    []string
	}{
		{
			name: "never good before long broken",
			entries: []Entry{
				entry("a", store.VerdictBroken, t0, t0.Add(time.Hour)),
				entry("b", store.VerdictBroken, time.Time{}, t0.Add(48*time.Hour)),
			},
			want: []string{"b", "a"},
		},
		{
			name: "longest since last good first, by day",
			entries: []Entry{
				entry("a", store.VerdictBroken, t0, t0.Add(48*time.Hour)),
				entry("b", store.VerdictBroken, t0.Add(-48*time.Hour), t0.Add(time.Hour)),
				entry("c", store.VerdictBroken, t0.Add(24*time.Hour), time.Time{}),
			},
			want: []string{"b", "a", "c"},
		},
		{
			name: "last good the same day: more referring pages first",
			entries: []Entry{
				entry("a", store.VerdictBroken, t0.Add(time.Hour), t0, "p1"),
				entry("b", store.VerdictBroken, t0, t0, "p1", "p2"),
			},
			want: []string{"b", "a"},
		},
		{
			name: "more referring pages first, repeated links on one page count once",
			entries: []Entry{
				entry("a", store.VerdictBroken, t0, t0, "p1", "p1", "p1"),
				entry("b", store.VerdictBroken, t0, t0, "p1", "p2"),
				entry("c", store.VerdictBroken, t0, t0),
			},
			want: []string{"b", "a", "c"},
		},
		{
			name: "URL breaks ties",
			entries: []Entry{
				entry("b", store.VerdictBroken, t0, t0),
				entry("a", store.VerdictBroken, t0, t0),
			},
			want: []string{"a", "b"},
		},
		{
			name: "sections beat age",
			entries: []Entry{
				entry("ok", store.VerdictOK, t0, time.Time{}),
				entry("skip", store.VerdictSkipped, time.Time{}, time.Time{}),
				entry("unver", store.VerdictUnverifiable, time.Time{}, t0),
				entry("trans", store.VerdictTransient, time.Time{}, t0),
				entry("broken", store.VerdictBroken, t0, t0.Add(time.Hour)),
			},
			want: []string{"broken", "trans", "unver", "skip", "ok"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := slices.Clone(tt.entries)
			slices.SortStableFunc(got, compareEntries)
			if !slices.Equal(urls(got), tt.want) {
				t.Errorf("order = %v, want %v", urls(got), tt.want)
			}
		})
	}
}

func TestChange(t *testing.T) {
	t.Parallel()
	prev := &store.Pass{ID: 6, State: store.PassComplete, Started: night1, Finished: night1.Add(time.Minute)}
	tests := []struct {
		name      string
		previous  *store.Pass
		after     Threshold
		rec       store.URLRecord
		want      Change
		suppessed bool
	}{
		{"no previous pass: problems are new", nil, Threshold{}, store.URLRecord{Verdict: store.VerdictBroken}, ChangeNew, false},
		{"no previous pass: ok is nothing", nil, Threshold{}, store.URLRecord{Verdict: store.VerdictOK}, ChangeNone, false},
		{"was ok", prev, Threshold{}, store.URLRecord{Verdict: store.VerdictBroken, PrevVerdict: store.VerdictOK, PrevPass: 6}, ChangeNew, false},
		{"was broken", prev, Threshold{}, store.URLRecord{Verdict: store.VerdictBroken, PrevVerdict: store.VerdictBroken, PrevPass: 6, Failures: 2}, ChangeStill, false},
		{"transient then broken is still a problem", prev, Threshold{}, store.URLRecord{Verdict: store.VerdictBroken, PrevVerdict: store.VerdictTransient, PrevPass: 6}, ChangeStill, false},
		{"broken in an older pass, unlinked in the previous one", prev, Threshold{}, store.URLRecord{Verdict: store.VerdictBroken, PrevVerdict: store.VerdictBroken, PrevPass: 4}, ChangeNew, false},
		{"first seen", prev, Threshold{}, store.URLRecord{Verdict: store.VerdictUnverifiable}, ChangeNew, false},
		{"fixed", prev, Threshold{}, store.URLRecord{Verdict: store.VerdictOK, PrevVerdict: store.VerdictBroken, PrevPass: 6}, ChangeFixed, false},
		{"ok before, ok now", prev, Threshold{}, store.URLRecord{Verdict: store.VerdictOK, PrevVerdict: store.VerdictOK, PrevPass: 6}, ChangeNone, false},
		{"skipped after broken is not fixed", prev, Threshold{}, store.URLRecord{Verdict: store.VerdictSkipped, PrevVerdict: store.VerdictBroken, PrevPass: 6}, ChangeNone, false},
		{"too few failures: suppressed", prev, Threshold{Failures: 3}, store.URLRecord{Verdict: store.VerdictBroken, PrevVerdict: store.VerdictBroken, PrevPass: 6, Failures: 2}, ChangeNew, true},
		{"reaching the count makes it new, not still", prev, Threshold{Failures: 3}, store.URLRecord{Verdict: store.VerdictBroken, PrevVerdict: store.VerdictBroken, PrevPass: 6, Failures: 3}, ChangeNew, false},
		{"past the count it is still broken", prev, Threshold{Failures: 3}, store.URLRecord{Verdict: store.VerdictBroken, PrevVerdict: store.VerdictBroken, PrevPass: 6, Failures: 4}, ChangeStill, false},
		{"too young: suppressed", prev, Threshold{Age: 3 * day}, store.URLRecord{Verdict: store.VerdictBroken, FirstBroken: now.Add(-2 * day), Failures: 2, PrevVerdict: store.VerdictBroken, PrevPass: 6}, ChangeNew, true},
		{"old enough now, young at the previous pass: new", prev, Threshold{Age: 36 * time.Hour}, store.URLRecord{Verdict: store.VerdictBroken, FirstBroken: now.Add(-40 * time.Hour), Failures: 2, PrevVerdict: store.VerdictBroken, PrevPass: 6}, ChangeNew, false},
		{"old enough at both passes: still", prev, Threshold{Age: 36 * time.Hour}, store.URLRecord{Verdict: store.VerdictBroken, FirstBroken: now.Add(-4 * day), Failures: 4, PrevVerdict: store.VerdictBroken, PrevPass: 6}, ChangeStill, false},
		{"age falls back to first seen", prev, Threshold{Age: day}, store.URLRecord{Verdict: store.VerdictBroken, FirstSeen: now.Add(-time.Hour)}, ChangeNew, true},
		{"count and age: both must be reached", prev, Threshold{Failures: 2, Age: day}, store.URLRecord{Verdict: store.VerdictBroken, FirstBroken: now.Add(-2 * day), Failures: 1}, ChangeNew, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Report{Previous: tt.previous, Options: Options{ReportAfter: tt.after, Now: now}}
			rec := tt.rec
			if got := r.change(&rec); got != tt.want {
				t.Errorf("change = %q, want %q", got, tt.want)
			}
			if got := rec.Verdict.Problem() && r.young(&rec, rec.Failures, now); got != tt.suppessed {
				t.Errorf("suppressed = %v, want %v", got, tt.suppessed)
			}
		})
	}
}

func TestBuild(t *testing.T) {
	t.Parallel()
	src := fillStore(t, webHistory())
	r := build(t, src, 2, Options{})

	want := Summary{Pages: 3, Links: 38, URLs: 15, OK: 4, Broken: 6, Transient: 2, Unverifiable: 2, Unverified: 4, Skipped: 1,
		New: 6, StillBroken: 4, Fixed: 1, Gone: 2, Elapsed: 90 * time.Second}
	if !reflect.DeepEqual(r.Summary, want) {
		t.Errorf("summary =\n%+v, want\n%+v", r.Summary, want)
	}
	if r.Previous == nil || r.Previous.ID != 1 {
		t.Fatalf("previous = %+v, want pass 1", r.Previous)
	}
	wantOrder := []string{
		"https://example.com/missing.html", longURL, xssURL, "https://gone.example.org/",
		"https://example.com/old-post", "https://cdn.example.net/img/photo-2x.jpg",
		"https://slow.example.com/", "https://api.example.com/status",
		"https://www.linkedin.com/in/someone", "https://example.com/private/",
	}
	if got := urls(r.Entries); !slices.Equal(got, wantOrder) {
		t.Errorf("entries =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantOrder, "\n"))
	}
	missing := r.Entries[0]
	wantRefs := []Referrer{
		{Page: "https://example.com/", Line: 12, Tag: "a", Attr: "href"},
		{Page: "https://example.com/", Line: 40, Tag: "a", Attr: "href"},
		{Page: "https://example.com/about/", Line: 7, Tag: "a", Attr: "href"},
	}
	if !slices.Equal(missing.Referrers, wantRefs) || missing.Pages() != 2 {
		t.Errorf("referrers of missing.html = %+v (%d pages), want %+v (2 pages)", missing.Referrers, missing.Pages(), wantRefs)
	}
	if !r.HasBroken() {
		t.Error("HasBroken = false with six broken URLs listed")
	}
	if got := []string{r.Fixed[0].URL, r.Gone[0].URL, r.Gone[1].URL}; !slices.Equal(got, []string{
		"https://example.com/fixed.html", "https://example.com/removed-page", "https://old.example.com/",
	}) {
		t.Errorf("fixed and gone = %v", got)
	}
	var secs []store.Verdict
	for _, s := range r.Sections() {
		secs = append(secs, s.Verdict)
	}
	if !slices.Equal(secs, []store.Verdict{store.VerdictBroken, store.VerdictTransient, store.VerdictUnverifiable}) {
		t.Errorf("sections = %v", secs)
	}
}

func TestBuildOptions(t *testing.T) {
	t.Parallel()
	src := fillStore(t, webHistory())
	t.Run("all lists every URL of the pass", func(t *testing.T) {
		r := build(t, src, 2, Options{All: true})
		if len(r.Entries) != r.Summary.URLs {
			t.Fatalf("%d entries, want all %d URLs", len(r.Entries), r.Summary.URLs)
		}
		last := r.Entries[len(r.Entries)-1]
		if last.Record.Verdict != store.VerdictOK {
			t.Errorf("last entry is %s, want the ok section last", last.Record.Verdict)
		}
		fixed := slices.IndexFunc(r.Entries, func(e Entry) bool { return e.Record.URL == "https://example.com/fixed.html" })
		if fixed < 0 || r.Entries[fixed].Change != ChangeFixed || len(r.Entries[fixed].Referrers) != 1 {
			t.Errorf("fixed.html entry = %+v", r.Entries[fixed])
		}
	})
	t.Run("only new", func(t *testing.T) {
		r := build(t, src, 2, Options{OnlyNew: true})
		for _, e := range r.Entries {
			if e.Change != ChangeNew {
				t.Errorf("%s listed with change %q", e.Record.URL, e.Change)
			}
		}
		if len(r.Entries) != 6 || r.Summary.Broken != 6 {
			t.Errorf("%d entries, summary %d broken; want the 6 new and the whole pass counted", len(r.Entries), r.Summary.Broken)
		}
	})
	t.Run("report after hides young problems and counts them", func(t *testing.T) {
		r := build(t, src, 2, Options{ReportAfter: Threshold{Failures: 3}})
		want := []string{"https://example.com/missing.html", "https://example.com/old-post", "https://slow.example.com/", "https://www.linkedin.com/in/someone"}
		if got := urls(r.Entries); !slices.Equal(got, want) {
			t.Errorf("entries = %v, want %v", got, want)
		}
		if r.Summary.Suppressed != 6 || r.Summary.Broken != 6 {
			t.Errorf("suppressed %d, broken %d; want 6 and 6", r.Summary.Suppressed, r.Summary.Broken)
		}
		if !strings.Contains(r.Counts(), "6 suppressed by --report-after 3") {
			t.Errorf("counts %q do not mention the suppressed problems", r.Counts())
		}
	})
	t.Run("nothing broken shown means exit 0", func(t *testing.T) {
		r := build(t, src, 2, Options{ReportAfter: Threshold{Failures: 50}})
		if r.HasBroken() || len(r.Entries) != 0 {
			t.Errorf("HasBroken = %v with %d entries, want false and none", r.HasBroken(), len(r.Entries))
		}
	})
	t.Run("incomplete pass: nothing is no longer linked yet", func(t *testing.T) {
		h := webHistory()
		h[1].pass.State = store.PassStopped
		h[1].pass.Finished = time.Time{}
		r := build(t, fillStore(t, h), 2, Options{})
		if len(r.Gone) != 0 || r.Summary.Gone != 0 {
			t.Errorf("gone = %d records on an incomplete pass", len(r.Gone))
		}
		if !strings.HasPrefix(r.Incomplete(), "INCOMPLETE: stopped after 1m30s") {
			t.Errorf("Incomplete() = %q", r.Incomplete())
		}
	})
	t.Run("first pass has no previous", func(t *testing.T) {
		r := build(t, src, 1, Options{})
		if r.Previous != nil || r.ChangeLine() != "" {
			t.Errorf("previous = %+v, change line %q", r.Previous, r.ChangeLine())
		}
	})
}

type failingSource struct{ *store.DB }

var errDisk = errors.New("disk on fire")

func (failingSource) PageLinks(uint64, func(*store.URLRecord, []store.Link) error) error {
	return errDisk
}

func TestBuildErrors(t *testing.T) {
	t.Parallel()
	src := fillStore(t, webHistory())
	if _, err := Build(src, 9, Options{}); err == nil || !strings.Contains(err.Error(), "pass 9") {
		t.Errorf("Build of a missing pass: err = %v", err)
	}
	if _, err := Build(failingSource{src}, 2, Options{}); !errors.Is(err, errDisk) {
		t.Errorf("Build with a failing source: err = %v, want it wrapped", err)
	}
}

func TestLocation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		root, base string
		relative   bool
		url, want  string
	}{
		{"/work/site", "/work", true, "file:///work/site/about/", "site/about/index.html"},
		{"/work/site", "/work", true, "file:///work/site/", "site/index.html"},
		{"/work/site", "/work", true, "file:///work/site", "site/index.html"},
		{"/work/site", "/work", true, "file:///work/site/a%20b.html", "site/a b.html"},
		{"/work/site", "/work/site", true, "file:///work/site/x/y.png", "x/y.png"},
		{"/srv/site", "/home/me", true, "file:///srv/site/about/", "../../srv/site/about/index.html"},
		{"/srv/site", "/srv", false, "file:///srv/site/about/", "/srv/site/about/index.html"},
		// However the link climbs, the file named is the one read: inside.
		{"/work/site", "/work", true, "file:///work/site/a/..%2F..%2F..%2Fetc%2Fpasswd", "site/etc/passwd"},
		{"/work/site", "/work", true, "file:///work/site/%2E%2E/%2e%2e/etc/passwd", "site/etc/passwd"},
		{"/work/site", "/work", true, "file:///work/sitemap.html", "file:///work/sitemap.html"},
		{"/work/site", "/work", true, "file:///etc/passwd", "file:///etc/passwd"},
		{"/work/site", "/work", true, "https://example.com/", "https://example.com/"},
		{"", "/work", true, "file:///about/", "file:///about/"},
	}
	for _, tt := range tests {
		r := &Report{Pass: store.Pass{Root: tt.root, RelativePaths: tt.relative}, baseDir: tt.base}
		if got := r.Location(tt.url); got != tt.want {
			t.Errorf("root %q base %q: Location(%q) = %q, want %q", tt.root, tt.base, tt.url, got, tt.want)
		}
	}
}

func TestSince(t *testing.T) {
	t.Parallel()
	r := &Report{Options: Options{Now: now}}
	tests := []struct {
		rec  store.URLRecord
		want string
	}{
		{store.URLRecord{Verdict: store.VerdictBroken}, "never worked"},
		{store.URLRecord{Verdict: store.VerdictBroken, LastGood: now.Add(-10 * day), FirstBroken: now.Add(-3*day - time.Hour)}, "broken since 2026-11-20, 3 days"},
		{store.URLRecord{Verdict: store.VerdictBroken, LastGood: now.Add(-10 * day), FirstBroken: now.Add(-25 * time.Hour)}, "broken since 2026-11-22, 1 day"},
		{store.URLRecord{Verdict: store.VerdictTransient, LastGood: now.Add(-day), FirstBroken: now.Add(-5 * time.Hour)}, "failing since 2026-11-23 03:00, 5 hours"},
		{store.URLRecord{Verdict: store.VerdictUnverifiable, LastGood: now.Add(-day), FirstBroken: now.Add(-90 * time.Second)}, "failing since 2026-11-23 07:58, 1 minute"},
		{store.URLRecord{Verdict: store.VerdictOK, LastGood: now}, ""},
	}
	for _, tt := range tests {
		if got := r.Since(tt.rec); got != tt.want {
			t.Errorf("Since(%+v) = %q, want %q", tt.rec, got, tt.want)
		}
	}
}

func TestProblem(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rec  store.URLRecord
		want string
	}{
		{store.URLRecord{Status: 404}, "404 Not Found"},
		{store.URLRecord{Status: 999}, "999"},
		{store.URLRecord{Error: "timeout"}, "timeout"},
		{store.URLRecord{Error: "redirect loop", Status: 301}, "redirect loop (301 Moved Permanently)"},
		{store.URLRecord{Verdict: store.VerdictSkipped}, "skipped"},
	}
	for _, tt := range tests {
		if got := Problem(tt.rec); got != tt.want {
			t.Errorf("Problem(%+v) = %q, want %q", tt.rec, got, tt.want)
		}
	}
}

// A start URL is where the pass began, not a page the site forgot to link
// to: it is never an orphan, on the web or on disk (where the directory's
// URL is its index page), while a page of a checked directory that no other
// page links to still is.
func TestStartPagesAreNeverOrphans(t *testing.T) {
	t.Parallel()
	seed := func(r store.Result) store.Result { r.Record.Seed = true; return r }
	for _, tc := range []struct {
		name  string
		start string
		pages []store.Result
		want  []string
	}{
		{"web", "https://example.com/", []store.Result{
			seed(page("https://example.com/", link("https://example.com/a", 3))),
			page("https://example.com/a"),
		}, nil},
		{"web, a start page that links to itself", "https://example.com/", []store.Result{
			seed(page("https://example.com/", link("https://example.com/", 3))),
		}, nil},
		{"directory", "file:///work/site/", []store.Result{
			seed(page("file:///work/site/", link("file:///work/site/a.html", 3))),
			seed(page("file:///work/site/a.html")),
			seed(page("file:///work/site/old/forgotten.html")),
		}, []string{"file:///work/site/old/forgotten.html"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := store.Pass{StartURLs: []string{tc.start}, State: store.PassComplete, Started: night2, Finished: night2.Add(time.Minute)}
			r := build(t, newMemSource(t, []fixturePass{{pass: p, results: tc.pages}}), 1, Options{})
			if !slices.Equal(r.Orphans, tc.want) || r.Summary.Orphans != len(tc.want) {
				t.Errorf("orphans %v (%d), want %v", r.Orphans, r.Summary.Orphans, tc.want)
			}
		})
	}
}
