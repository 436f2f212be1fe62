package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/store"
)

// fillTallied replays history into a real store as check does, and each
// complete pass keeps the tally of its own report (keepTally), which the
// next pass's report compares with.
func fillTallied(t *testing.T, history []fixturePass) *store.DB {
	t.Helper()
	return replay(t, history, true)
}

const behindSite = "https://example.com/"

// behindHistory is QA7's Q5 and Q6 as the crawler stores them. Night 1:
// the home page links /p5.html, /p9.html and /gone; /p5.html links
// /sub5.html, which links /missing-c (404); /p9.html links /only9 (404).
// Night 2: /p5.html answers 503 with no copy recent enough to follow (the
// crawler keeps its last copy's links, not followed), so /sub5.html and
// /missing-c are not reached; /p9.html answers 404 but is followed from
// its last good copy (a ghost); the home page no longer links /gone.
func behindHistory() []fixturePass {
	const site = behindSite
	broken := func(u string, failures int, prev uint64) store.Result {
		rec := store.URLRecord{URL: site + u, Verdict: store.VerdictBroken, Status: 404, FirstSeen: night1, FirstBroken: night1, Failures: failures, FetchedAt: night1}
		if prev != 0 {
			rec.PrevVerdict, rec.PrevPass, rec.PrevFailures, rec.PrevFirstBroken = store.VerdictBroken, prev, failures-1, night1
			rec.FetchedAt = night2
		}
		return target(rec)
	}
	p5 := target(store.URLRecord{URL: site + "p5.html", Action: "parse", Verdict: store.VerdictTransient, Status: 503, FirstSeen: night1,
		LastGood: night1, FirstBroken: night2, Failures: 1, PrevVerdict: store.VerdictOK, PrevPass: 1, FetchedAt: night2})
	p9 := page(site+"p9.html", link(site+"only9", 2))
	p9.Record.Verdict, p9.Record.Status, p9.Record.Note = store.VerdictBroken, 404, store.GhostNote+"2026-11-22"
	p9.Record.LastGood, p9.Record.FirstBroken, p9.Record.Failures = night1, night2, 1
	p9.Record.PrevVerdict, p9.Record.PrevPass = store.VerdictOK, 1
	p9.SetLinks = false // a ghost keeps its links
	sub5 := page(site+"sub5.html", link(site+"missing-c", 7))
	sub5.Record.FetchedAt, sub5.Record.LastGood = night1, night1
	pass := func(at time.Time) store.Pass {
		return store.Pass{StartURLs: []string{site}, State: store.PassComplete, Started: at, Finished: at.Add(time.Minute), Elapsed: time.Minute}
	}
	return []fixturePass{
		{pass: pass(night1), results: []store.Result{
			page(site, link(site+"p5.html", 2), link(site+"p9.html", 3), link(site+"gone", 4)),
			page(site+"p5.html", link(site+"sub5.html", 5)),
			sub5,
			page(site+"p9.html", link(site+"only9", 2)),
			broken("missing-c", 1, 0), broken("only9", 1, 0), broken("gone", 1, 0),
		}},
		{pass: pass(night2), results: []store.Result{
			page(site, link(site+"p5.html", 2), link(site+"p9.html", 3)),
			p5, p9, broken("only9", 2, 1),
		}},
	}
}

// night3 is the night after behindHistory: /p5.html is back, and
// /missing-c, broken every night, is checked again.
func night3() fixturePass {
	const site = behindSite
	night3 := night2.Add(day)
	return fixturePass{
		pass: store.Pass{StartURLs: []string{site}, State: store.PassComplete, Started: night3, Finished: night3.Add(time.Minute), Elapsed: time.Minute},
		results: []store.Result{
			page(site, link(site+"p5.html", 2)),
			page(site+"p5.html", link(site+"sub5.html", 5)),
			page(site+"sub5.html", link(site+"missing-c", 7)),
			target(store.URLRecord{URL: site + "missing-c", Verdict: store.VerdictBroken, Status: 404, FirstSeen: night1, FirstBroken: night1, Failures: 2,
				PrevVerdict: store.VerdictBroken, PrevPass: 1, PrevFailures: 1, PrevFirstBroken: night1, FetchedAt: night3}),
		},
	}
}

// A broken link whose only way in is a page not read tonight (503, no
// ghost) is not "no longer linked": it is listed as not checked, keeps
// exit 1, and the next night, checked again, it is still there, not new
// (qa7 Q5).
func TestProblemsBehindAPageNotRead(t *testing.T) {
	t.Parallel()
	h := behindHistory()
	db := fillTallied(t, h)
	r := build(t, db, 2, Options{})
	var gone []string
	for _, rec := range r.Gone {
		gone = append(gone, strings.TrimPrefix(rec.URL, behindSite))
	}
	if len(gone) != 1 || gone[0] != "gone" {
		t.Errorf("no longer linked = %v, want only [gone]: missing-c lies behind p5.html, not read", gone)
	}
	var held *Entry
	for i := range r.Entries {
		if r.Entries[i].Record.URL == behindSite+"missing-c" {
			held = &r.Entries[i]
		}
	}
	if held == nil {
		t.Fatalf("missing-c is not listed; entries: %+v", r.Entries)
	}
	if held.Change != ChangeUnchecked || held.Behind != behindSite+"p5.html" || held.Record.Verdict != store.VerdictBroken {
		t.Errorf("missing-c: change %q behind %q verdict %q, want unchecked, behind p5.html, broken", held.Change, held.Behind, held.Record.Verdict)
	}
	if !r.HasBroken() {
		t.Error("HasBroken = false: a link broken when last checked, not checked tonight, must keep exit 1")
	}
	text := strings.Join(strings.Fields(render(t, r, "text")), " ") // unwrapped
	for _, want := range []string{
		"NOT CHECKED this pass: only linked from behind https://example.com/p5.html, which could not be read",
		"broken when last checked (pass 1, 2026-11-22 03:01)",
		"https://example.com/sub5.html:7 (from its copy of 2026-11-22; the page was not reached this pass)",
		"1 not checked this pass",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q:\n%s", want, text)
		}
	}
	if got := r.Tally().Unchecked; len(got) != 1 || got[0] != behindSite+"missing-c" {
		t.Errorf("tally keeps %v as not checked, want [missing-c]", got)
	}

	db = fillTallied(t, append(h, night3()))
	r = build(t, db, 3, Options{Now: night2.Add(day + time.Hour)})
	for _, e := range r.Entries {
		if e.Record.URL == behindSite+"missing-c" && e.Change != ChangeStill {
			t.Errorf("night 3: missing-c, broken every night, is %q, want still", e.Change)
		}
	}
	if r.Summary.New != 0 {
		t.Errorf("night 3: %d new problems, want 0", r.Summary.New)
	}
}

// A link found only on a ghost page's last good copy says so in every
// format that names referrers: the page may be gone, and the line is one
// of that copy (qa7 Q6).
func TestGhostReferrerSaysItIsAnOldCopy(t *testing.T) {
	t.Parallel()
	r := build(t, fillTallied(t, behindHistory()), 2, Options{})
	const mark = "from its last good copy of 2026-11-22; the page now answers 404 Not Found"
	for _, format := range Formats() {
		out := render(t, r, format)
		switch format {
		case "json":
			if !strings.Contains(out, `"ghost_from": "2026-11-22T03:00:00Z"`) || !strings.Contains(out, `"page_now": "404 Not Found"`) {
				t.Errorf("json lacks ghost_from and page_now on p9.html's referrer:\n%s", out)
			}
		default:
			if !strings.Contains(out, mark) {
				t.Errorf("%s lacks %q:\n%s", format, mark, out)
			}
		}
	}
	var buf bytes.Buffer
	_ = buf
}

// A start page that comes back empty (200, no links) after a night of
// several pages is no clean night: the first line says what was not
// reached (exit 5), once; the night after compares with the empty one
// and says nothing, so a site meant to be that small is said once
// (qa7 Q3).
func TestEmptyStartPageIsSaid(t *testing.T) {
	t.Parallel()
	const site = behindSite
	pass := func(at time.Time) store.Pass {
		return store.Pass{StartURLs: []string{site}, State: store.PassComplete, Started: at, Finished: at.Add(time.Minute), Elapsed: time.Minute}
	}
	empty := page(site)
	history := []fixturePass{
		{pass: pass(night1), results: []store.Result{
			page(site, link(site+"a.html", 2), link(site+"b.html", 3)),
			page(site+"a.html", link(site+"b.html", 1)),
			page(site + "b.html"),
		}},
		{pass: pass(night2), results: []store.Result{empty}},
		{pass: pass(night2.Add(day)), results: []store.Result{empty}},
	}
	r := build(t, fillTallied(t, history[:2]), 2, Options{})
	const want = "PARTLY CHECKED: the start page https://example.com/ has no links this pass, so 2 pages of pass 1 were not reached"
	if got := r.HeldBack(); !strings.HasPrefix(got, want) {
		t.Errorf("HeldBack = %q, want it to begin %q", got, want)
	}
	for _, format := range Formats() {
		if out := render(t, r, format); format != "csv" && !strings.Contains(strings.Join(strings.Fields(out), " "), "has no links this pass, so 2 pages of pass 1 were not reached") {
			t.Errorf("%s does not say the start page has no links:\n%s", format, out) // CSV is data only (README)
		}
	}
	if got := r.Nothing(); got == "No problems found." {
		t.Errorf("Nothing = %q: a night that reached 1 page of 3 reads as clean", got)
	}
	db := fillTallied(t, history)
	if got := build(t, db, 3, Options{}).HeldBack(); got != "" {
		t.Errorf("the night after, compared with the empty one: HeldBack = %q, want none", got)
	}
}

// Each URL of the summary has one verdict: a problem not checked this pass
// is one of its URLs as well as one of its broken (RV2 #6), and the line
// says which were not checked.
func TestUncheckedCountsAddUp(t *testing.T) {
	t.Parallel()
	r := build(t, fillTallied(t, behindHistory()), 2, Options{})
	s := r.Summary
	if sum := s.Broken + s.Transient + s.Unverifiable + s.Skipped + s.OK; sum != s.URLs {
		t.Errorf("%d URLs, but %d broken + %d transient + %d unverifiable + %d skipped + %d ok = %d",
			s.URLs, s.Broken, s.Transient, s.Unverifiable, s.Skipped, s.OK, sum)
	}
	if want := "(1 not checked this pass, counted as when last checked)"; !strings.Contains(r.Counts(), want) {
		t.Errorf("Counts = %q, want it to say %q", r.Counts(), want)
	}
}

// --only-new does not list a problem not checked this pass (it is not
// new), so the change line must not promise it below (RV2 #7).
func TestOnlyNewDoesNotPromiseUnchecked(t *testing.T) {
	t.Parallel()
	r := build(t, fillTallied(t, behindHistory()), 2, Options{OnlyNew: true})
	for _, e := range r.Entries {
		if e.Behind != "" {
			t.Fatalf("--only-new lists %s, not checked this pass", e.Record.URL)
		}
	}
	if line := r.ChangeLine(); !strings.Contains(line, "1 not checked this pass") || strings.Contains(line, "listed below") {
		t.Errorf("ChangeLine = %q: it counts the problem not checked, and lists it nowhere", line)
	}
}

// A second start URL that never had links (a plain article) is not an
// empty deploy: a night that drops a page elsewhere is not PARTLY CHECKED
// (RV2 #2). One that had links in the compared pass and has none now is.
func TestEmptyStartHadLinksBefore(t *testing.T) {
	t.Parallel()
	const site = behindSite
	pass := func(at time.Time) store.Pass {
		return store.Pass{StartURLs: []string{site, site + "leaf"}, State: store.PassComplete, Started: at, Finished: at.Add(time.Minute), Elapsed: time.Minute}
	}
	night1 := fixturePass{pass: pass(night1), results: []store.Result{
		page(site, link(site+"a.html", 2), link(site+"extra.html", 3)),
		page(site + "a.html"), page(site + "extra.html"), page(site + "leaf"),
	}}
	dropped := fixturePass{pass: pass(night2), results: []store.Result{
		page(site, link(site+"a.html", 2)), page(site + "a.html"), page(site + "leaf"),
	}}
	r := build(t, fillTallied(t, []fixturePass{night1, dropped}), 2, Options{})
	if r.EmptyStart != "" || r.HeldBack() != "" {
		t.Errorf("a start page that never had links: EmptyStart %q, HeldBack %q, want none", r.EmptyStart, r.HeldBack())
	}
	emptied := fixturePass{pass: pass(night2), results: []store.Result{page(site), page(site + "leaf")}}
	r = build(t, fillTallied(t, []fixturePass{night1, emptied}), 2, Options{})
	if r.EmptyStart != site {
		t.Errorf("the start page that lost its links: EmptyStart %q, want %s", r.EmptyStart, site)
	}
}

// The problems an empty start page no longer reaches are not checked this
// pass, not "no longer linked" (exit 5), and so not "new" the night the
// page is back (RV2 #2b, qa7 Q3).
func TestProblemsBehindAnEmptyStartPage(t *testing.T) {
	t.Parallel()
	const site = behindSite
	pass := func(at time.Time) store.Pass {
		return store.Pass{StartURLs: []string{site}, State: store.PassComplete, Started: at, Finished: at.Add(time.Minute), Elapsed: time.Minute}
	}
	sub := page(site+"a.html", link(site+"missing", 4))
	sub.Record.FetchedAt, sub.Record.LastGood = night1, night1
	history := []fixturePass{
		{pass: pass(night1), results: []store.Result{
			page(site, link(site+"a.html", 2)), sub,
			target(store.URLRecord{URL: site + "missing", Verdict: store.VerdictBroken, Status: 404, FirstSeen: night1, FirstBroken: night1, Failures: 1, FetchedAt: night1}),
		}},
		{pass: pass(night2), results: []store.Result{page(site)}},
	}
	r := build(t, fillTallied(t, history), 2, Options{})
	if r.EmptyStart != site {
		t.Fatalf("EmptyStart = %q, want %s", r.EmptyStart, site)
	}
	if len(r.Gone) != 0 {
		t.Errorf("no longer linked = %v, want none: the page linking it was not reached", r.Gone)
	}
	var held *Entry
	for i := range r.Entries {
		if r.Entries[i].Record.URL == site+"missing" {
			held = &r.Entries[i]
		}
	}
	if held == nil || held.Change != ChangeUnchecked || held.Behind != site {
		t.Fatalf("missing: %+v, want not checked, behind the start page", held)
	}
	if !r.HasBroken() {
		t.Error("HasBroken = false: broken when last checked, it keeps exit 1")
	}
	text := strings.Join(strings.Fields(render(t, r, "text")), " ")
	if want := "only linked from behind https://example.com/, the start page, which has no links this pass"; !strings.Contains(text, want) {
		t.Errorf("text lacks %q:\n%s", want, text)
	}
	if got := r.Tally().Unchecked; len(got) != 1 || got[0] != site+"missing" {
		t.Errorf("tally keeps %v as not checked, want [missing]", got)
	}
}

// The workers' files of a cluster read as one (report --db 'w*.db') know
// what lies behind a page not read as one file does: the walk from the
// unread page goes on through pages whose records and links sit in
// another worker's file, so the problem behind it is not checked (exit 1),
// not "no longer linked" (exit 5), and the next night it is still there.
func TestProblemsBehindAPageNotReadAcrossFiles(t *testing.T) {
	t.Parallel()
	full := append(behindHistory(), night3())
	for _, c := range []struct {
		pass uint64
		opt  Options
	}{
		{2, Options{}},
		{2, Options{All: true}},
		{3, Options{Now: night2.Add(day + time.Hour)}},
	} {
		// The report of pass n from the files as they are after night n,
		// each pass with the tally check kept (worker 0 keeps it).
		history := slices.Clone(full[:c.pass])
		one := fillTallied(t, history)
		for i := range history {
			p, err := one.Pass(uint64(i + 1))
			if err != nil {
				t.Fatal(err)
			}
			history[i].pass.Tally = p.Tally
		}
		// p5.html (not read on night 2) and missing-c with worker 0;
		// sub5.html, which only p5.html's kept copy leads to, with
		// worker 1: the way to missing-c crosses the files.
		parts := splitBy(history, 2, func(u string) int {
			if u == behindSite+"sub5.html" || u == behindSite+"p9.html" {
				return 1
			}
			return 0
		})
		srcs := make([]Source, len(parts))
		for w, part := range parts {
			srcs[w] = fillStore(t, part)
		}
		want, got := build(t, one, c.pass, c.opt), build(t, Merge(srcs...), c.pass, c.opt)
		if got.HasBroken() != want.HasBroken() || len(got.Gone) != len(want.Gone) || got.Summary.New != want.Summary.New {
			t.Errorf("pass %d: merged files: broken %v, %d no longer linked, %d new; one file: %v, %d, %d",
				c.pass, got.HasBroken(), len(got.Gone), got.Summary.New, want.HasBroken(), len(want.Gone), want.Summary.New)
		}
		for _, format := range Formats() {
			if a, b := render(t, got, format), render(t, want, format); a != b {
				t.Errorf("pass %d %+v: %s of the merged files differs from one file's:\n%s\n---\n%s", c.pass, c.opt, format, a, b)
			}
		}
	}
}

// A broken link right on a start page that has no links this pass is not
// checked this pass, as one behind a page it linked is: the start page's
// old links were replaced by its empty read, so nothing says the link is
// gone (FX2 left). It keeps exit 1 and the tally, so the next night calls
// it still there.
func TestProblemOnAnEmptyStartPageIsNotChecked(t *testing.T) {
	t.Parallel()
	const site = behindSite
	pass := func(at time.Time) store.Pass {
		return store.Pass{StartURLs: []string{site}, State: store.PassComplete, Started: at, Finished: at.Add(time.Minute), Elapsed: time.Minute}
	}
	sub := page(site+"a.html", link(site+"missing", 4))
	sub.Record.FetchedAt, sub.Record.LastGood = night1, night1
	broken := func(u string) store.Result {
		return target(store.URLRecord{URL: u, Verdict: store.VerdictBroken, Status: 404, FirstSeen: night1, FirstBroken: night1, Failures: 1, FetchedAt: night1})
	}
	history := []fixturePass{
		{pass: pass(night1), results: []store.Result{
			page(site, link(site+"a.html", 2), link(site+"direct", 3)), sub,
			broken(site + "missing"), broken(site + "direct"),
		}},
		{pass: pass(night2), results: []store.Result{page(site)}},
	}
	r := build(t, fillTallied(t, history), 2, Options{})
	if len(r.Gone) != 0 {
		t.Errorf("no longer linked = %v, want none: the start page's old links are not known", r.Gone)
	}
	for _, u := range []string{site + "missing", site + "direct"} {
		var held *Entry
		for i := range r.Entries {
			if r.Entries[i].Record.URL == u {
				held = &r.Entries[i]
			}
		}
		if held == nil || held.Change != ChangeUnchecked || held.Behind != site {
			t.Errorf("%s: %+v, want not checked, behind the start page", u, held)
		}
	}
	if !r.HasBroken() {
		t.Error("HasBroken = false: broken when last checked, it keeps exit 1")
	}
	if got := r.Tally().Unchecked; !slices.Equal(got, []string{site + "direct", site + "missing"}) {
		t.Errorf("tally keeps %v as not checked, want direct and missing", got)
	}
	text := strings.Join(strings.Fields(render(t, r, "text")), " ")
	if want := "NOT CHECKED this pass: linked from no page read this pass, perhaps from https://example.com/ itself, the start page, which has no links this pass"; !strings.Contains(text, want) {
		t.Errorf("text lacks %q:\n%s", want, text)
	}
}

// A page of the site that comes back empty (200, 0 bytes) hides its
// section as an empty start page hides the site: the pages of the compared
// pass it led to are not reached, so the first line says so (exit 5) and
// the broken link behind it is not checked this pass, never "no longer
// linked" (qa8 E1). A page read with no links that is not empty, or empty
// but unchanged since it was last read, or empty while every page was
// reached, is no such case.
func TestEmptyInnerPageHidesItsSection(t *testing.T) {
	t.Parallel()
	const site = behindSite
	pass := func(at time.Time) store.Pass {
		return store.Pass{StartURLs: []string{site}, State: store.PassComplete, Started: at, Finished: at.Add(time.Minute), Elapsed: time.Minute}
	}
	sub := func(u string, links ...store.Link) store.Result {
		p := page(site+u, links...)
		p.Record.FetchedAt, p.Record.LastGood, p.Record.ContentType, p.Record.Size = night1, night1, "text/html", 120
		return p
	}
	night1 := fixturePass{pass: pass(night1), results: []store.Result{
		page(site, link(site+"sec/", 2), link(site+"about.html", 3)),
		sub("sec/", link(site+"sec/p1.html", 4), link(site+"sec/p2.html", 5)),
		sub("about.html"),
		sub("sec/p1.html"),
		sub("sec/p2.html", link(site+"sec/q7.html", 6)),
		target(store.URLRecord{URL: site + "sec/q7.html", Verdict: store.VerdictBroken, Status: 404, FirstSeen: night1, FirstBroken: night1, Failures: 1, FetchedAt: night1}),
	}}
	const line = "PARTLY CHECKED: the page https://example.com/sec/ came back empty (0 bytes) this pass, so 2 pages of pass 1 were not reached"
	for _, tc := range []struct {
		name      string
		sec       func(*store.URLRecord)
		keepPages bool // night 2 reaches p1 and p2 some other way
		held      bool
	}{
		{name: "empty body", sec: func(*store.URLRecord) {}, held: true},
		{name: "a body with no links", sec: func(rec *store.URLRecord) { rec.Size = 300 }},
		{name: "empty and unchanged", sec: func(rec *store.URLRecord) { rec.Unchanged = true }},
		{name: "no content type", sec: func(rec *store.URLRecord) { rec.ContentType = "" }},
		{name: "every page reached", sec: func(*store.URLRecord) {}, keepPages: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sec := page(site + "sec/")
			sec.Record.ContentType, sec.Record.FetchedAt = "text/html", night2
			tc.sec(&sec.Record)
			home := page(site, link(site+"sec/", 2), link(site+"about.html", 3))
			results := []store.Result{sec, sub("about.html")}
			if tc.keepPages {
				home = page(site, link(site+"sec/", 2), link(site+"about.html", 3), link(site+"sec/p1.html", 4), link(site+"sec/p2.html", 5))
				results = append(results, sub("sec/p1.html"), sub("sec/p2.html"))
			}
			night2 := fixturePass{pass: pass(night2), results: append([]store.Result{home}, results...)}
			r := build(t, fillTallied(t, []fixturePass{night1, night2}), 2, Options{})
			got := r.HeldBack()
			if !tc.held {
				if r.EmptyStart != "" || got != "" {
					t.Errorf("EmptyStart %q, HeldBack %q, want none", r.EmptyStart, got)
				}
				return
			}
			if !strings.HasPrefix(got, line) {
				t.Errorf("HeldBack = %q, want it to begin %q", got, line)
			}
			if len(r.Gone) != 0 {
				t.Errorf("no longer linked = %v, want none: nothing behind /sec/ was checked", r.Gone)
			}
			var held *Entry
			for i := range r.Entries {
				if r.Entries[i].Record.URL == site+"sec/q7.html" {
					held = &r.Entries[i]
				}
			}
			if held == nil || held.Change != ChangeUnchecked || held.Behind != site+"sec/" {
				t.Fatalf("sec/q7.html: %+v, want not checked, behind sec/", held)
			}
			if !r.HasBroken() {
				t.Error("HasBroken = false: broken when last checked, it keeps exit 1")
			}
			text := strings.Join(strings.Fields(render(t, r, "text")), " ")
			if want := "only linked from behind https://example.com/sec/, which came back empty (0 bytes) this pass"; !strings.Contains(text, want) {
				t.Errorf("text lacks %q:\n%s", want, text)
			}
		})
	}
}
