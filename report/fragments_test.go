package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/linkpatrol/linkpatrol/store"
)

func anchoredPage(u string, ids []string, links ...store.Link) store.Result {
	p := page(u, links...)
	p.Record.IDs = ids
	return p
}

func fragLink(u, fragment string, line int) store.Link {
	return store.Link{URL: u, Fragment: fragment, Line: line, Tag: "a", Attr: "href"}
}

// fragHistory is one pass crawled with fragment checks: links to anchors
// that exist (as written, percent-decoded, "top"), that do not, and to
// pages whose anchors cannot be judged.
func fragHistory() []fixturePass {
	const home, guide = "https://example.com/", "https://example.com/guide/"
	return []fixturePass{{
		pass: store.Pass{StartURLs: []string{home}, State: store.PassComplete, Started: night2, Finished: night2.Add(time.Minute), Elapsed: time.Minute},
		results: []store.Result{
			anchoredPage(home, []string{"intro", "main"},
				fragLink(home, "intro", 3),
				fragLink(home, "Top", 4),
				fragLink(home, "gone", 5),
				fragLink(guide, "install", 6),
				fragLink(guide, "setup", 7),
				fragLink(guide, "caf%C3%A9", 8),
				fragLink(guide, "a%20b", 9),
				fragLink(guide, `%3Cscript%3Ealert(%22x%22)%3C/script%3E`, 10),
				fragLink("https://example.com/old/", "x", 11),
				fragLink("https://example.com/legacy/", "x", 12),
				store.Link{URL: "https://example.com/icons.svg", Fragment: "star", Line: 13, Tag: "img", Attr: "src"},
				fragLink("https://example.com/empty/", "anything", 14),
				store.Link{URL: "https://example.com/docs", Line: 15, Tag: "a", Attr: "href"},
			),
			anchoredPage(guide, []string{"a%20b", "café", "install"}, fragLink(guide, "setup", 2), fragLink(home, "gone", 30)),
			// Parsed before fragment checks were on: its anchors are unknown.
			page("https://example.com/legacy/"),
			// Collected, and it has none.
			anchoredPage("https://example.com/empty/", []string{}),
			target(store.URLRecord{URL: "https://example.com/old/", Verdict: store.VerdictBroken, Status: 404, FirstSeen: night2, FirstBroken: night2, Failures: 1}),
			target(store.URLRecord{URL: "https://example.com/icons.svg", Verdict: store.VerdictOK, Status: 200, LastGood: night2}),
			// Works, through a permanent redirect: a warning, never a failure.
			target(store.URLRecord{URL: "https://example.com/docs", Verdict: store.VerdictOK, Status: 200, LastGood: night2,
				FinalURL: "https://example.com/docs/", Redirects: []store.Hop{{URL: "https://example.com/docs", Status: 301}}}),
		},
	}}
}

func TestAnchorSet(t *testing.T) {
	t.Parallel()
	a := newAnchorSet([]string{"install", "a%20b", "café", "Section", "%zz", "%25=", "%5e.", "%5Eup", "x y"})
	// Fragments as the link's URL holds them (rules.LinkedFragment);
	// expected as Chromium scrolls (qa10 Q2).
	for frag, want := range map[string]bool{
		"":          true, // the top of the page
		"top":       true,
		"TOP":       true,
		"%74op":     true, // "top" once decoded
		"install":   true,
		"Install":   false, // ids are case-sensitive
		"section":   false,
		"Section":   true,
		"caf%C3%A9": true,  // decoded
		"café":      true,  // as passes before qa10 Q2 stored it, decoded
		"a%20b":     true,  // as written
		"%zz":       true,  // an id that is not a valid escape is only itself
		"%25%3D":    false, // decodes to "%=": an id is never decoded
		"%25=":      true,
		"%5E.":      false, // escapes are compared as written: %5E is not %5e
		"%5e.":      true,
		"%5Eup":     true,
		"%5eup":     false,
		"^up":       false,
		"x%20y":     true, // <a name="x y">
		"missing":   false,
		// Text fragments scroll to text, whatever the ids.
		":~:text=hello":          true,
		"missing:~:text=a,b":     true,
		"install:~:text=install": true,
	} {
		if got := a.has(frag); got != want {
			t.Errorf("has(%q) = %v, want %v", frag, got, want)
		}
	}
}

func TestMissingFragments(t *testing.T) {
	t.Parallel()
	src := fillStore(t, fragHistory())
	r := build(t, src, 1, Options{CheckFragments: true})
	var got []string
	for _, m := range r.Fragments {
		var refs []string
		for _, ref := range m.Referrers {
			refs = append(refs, fmt.Sprintf("%s:%d", ref.Page, ref.Line))
		}
		got = append(got, m.Link()+" <- "+strings.Join(refs, " "))
	}
	want := []string{
		"https://example.com/#gone <- https://example.com/:5 https://example.com/guide/:30",
		"https://example.com/empty/#anything <- https://example.com/:14",
		`https://example.com/guide/#%3Cscript%3Ealert(%22x%22)%3C/script%3E <- https://example.com/:10`,
		"https://example.com/guide/#setup <- https://example.com/:7 https://example.com/guide/:2",
	}
	if !slices.Equal(got, want) {
		t.Errorf("missing fragments:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if r.Summary.MissingFragments != 4 || !r.HasBroken() {
		t.Errorf("summary %d, HasBroken %v", r.Summary.MissingFragments, r.HasBroken())
	}
	if !strings.Contains(r.Counts(), "4 missing fragments") {
		t.Errorf("counts %q do not mention the missing fragments", r.Counts())
	}

	if r := build(t, src, 1, Options{}); len(r.Fragments) != 0 || strings.Contains(r.Counts(), "fragment") {
		t.Error("fragments checked without CheckFragments")
	}
	if r := build(t, src, 1, Options{CheckFragments: true, OnlyNew: true}); len(r.Fragments) != 4 || r.Summary.New != 5 || !r.HasBroken() {
		t.Errorf("OnlyNew without a previous pass: %d listed, %d new, HasBroken %v; want all 4 new (and /old/, 5), as every problem is then (qa6 Q1)",
			len(r.Fragments), r.Summary.New, r.HasBroken())
	}
}

// A missing fragment is new, still there, fixed or no longer linked by
// the list the previous complete pass kept with its tally (qa6 Q1).
func TestMissingFragmentChanges(t *testing.T) {
	t.Parallel()
	const home, guide = "https://example.com/", "https://example.com/guide/"
	prev := store.Pass{StartURLs: []string{home}, State: store.PassComplete, Started: night1, Finished: night1.Add(time.Minute),
		Tally: &store.Tally{FragmentsChecked: true, Fragments: []string{guide + "#fixed", guide + "#gone", guide + "#still"}}}
	now := fixturePass{
		pass: store.Pass{StartURLs: []string{home}, State: store.PassComplete, Started: night2, Finished: night2.Add(time.Minute)},
		results: []store.Result{
			anchoredPage(home, []string{}, fragLink(guide, "fixed", 3), fragLink(guide, "still", 4), fragLink(guide, "new", 5)),
			anchoredPage(guide, []string{"fixed"}),
		},
	}
	src := fillStore(t, []fixturePass{{pass: prev}, now})
	r := build(t, src, 2, Options{CheckFragments: true})
	changes := map[string]Change{}
	for _, m := range r.Fragments {
		changes[m.Fragment] = m.Change
	}
	if changes["new"] != ChangeNew || changes["still"] != ChangeStill || len(changes) != 2 {
		t.Errorf("missing fragments %v; want #new new, #still still", changes)
	}
	if len(r.FixedFragments) != 1 || r.FixedFragments[0].Fragment != "fixed" || len(r.FixedFragments[0].Referrers) != 1 {
		t.Errorf("fixed %+v; want #fixed, with its referrer", r.FixedFragments)
	}
	if len(r.GoneFragments) != 1 || r.GoneFragments[0].Fragment != "gone" {
		t.Errorf("no longer linked %+v; want #gone", r.GoneFragments)
	}
	s := r.Summary
	if s.New != 1 || s.StillBroken != 1 || s.Fixed != 1 || s.Gone != 1 || !strings.Contains(r.ChangeLine(), "1 new problem, 1 still there, 1 fixed, 1 no longer linked") {
		t.Errorf("changes %q (new %d still %d fixed %d gone %d)", r.ChangeLine(), s.New, s.StillBroken, s.Fixed, s.Gone)
	}
	if tally := r.Tally(); !tally.FragmentsChecked || !slices.Equal(tally.Fragments, []string{guide + "#new", guide + "#still"}) {
		t.Errorf("tally keeps %v (checked %v); want #new and #still for the next pass", tally.Fragments, tally.FragmentsChecked)
	}
	// Every format that lists fixed broken links lists the fixed and the
	// no longer linked fragments too; before, only text and JSON did.
	for _, format := range []string{"text", "markdown", "html"} {
		var b strings.Builder
		if err := Write(&b, r, format); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"Fragments fixed since pass 1 (1)", guide + "#fixed", "Fragments no longer linked since pass 1 (1)", guide + "#gone"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("%s: no %q", format, want)
			}
		}
	}
	r = build(t, src, 2, Options{CheckFragments: true, OnlyNew: true})
	if len(r.Fragments) != 1 || r.Fragments[0].Fragment != "new" || !r.HasBroken() || !slices.Equal(r.Tally().Fragments, []string{guide + "#new", guide + "#still"}) {
		t.Errorf("OnlyNew lists %+v, HasBroken %v, tally %v; want #new alone, failing, the tally whole", r.Fragments, r.HasBroken(), r.Tally().Fragments)
	}
}

// A pass whose only problem is a missing fragment fails: HasBroken is the
// exit code's question.
func TestMissingFragmentAloneFails(t *testing.T) {
	t.Parallel()
	const home = "https://example.com/"
	src := fillStore(t, []fixturePass{{
		pass:    store.Pass{StartURLs: []string{home}, State: store.PassComplete, Started: night2},
		results: []store.Result{anchoredPage(home, []string{"a"}, fragLink(home, "b", 1))},
	}})
	r := build(t, src, 1, Options{CheckFragments: true})
	if len(r.Entries) != 0 || !r.HasBroken() {
		t.Fatalf("entries %d, HasBroken %v; want no entry and a failure", len(r.Entries), r.HasBroken())
	}
	for _, format := range []string{"text", "markdown", "html"} {
		if out := render(t, r, format); strings.Contains(out, "No problems found") {
			t.Errorf("%s says no problems found next to a missing fragment", format)
		}
	}
}

func TestMissingFragmentsJSON(t *testing.T) {
	t.Parallel()
	const home = "https://example.com/"
	src := fillStore(t, []fixturePass{{
		pass:    store.Pass{StartURLs: []string{home}, State: store.PassComplete, Started: night2},
		results: []store.Result{anchoredPage(home, []string{"a"}, fragLink(home, "a", 1))},
	}})
	decode := func(r *Report) map[string]any {
		var doc map[string]any
		if err := json.Unmarshal([]byte(render(t, r, "json")), &doc); err != nil {
			t.Fatal(err)
		}
		return doc
	}
	doc := decode(build(t, src, 1, Options{}))
	if _, ok := doc["missing_fragments"]; ok {
		t.Error("missing_fragments present although fragments were not checked")
	}
	doc = decode(build(t, src, 1, Options{CheckFragments: true}))
	if list, ok := doc["missing_fragments"].([]any); !ok || len(list) != 0 {
		t.Errorf("missing_fragments = %#v, want an empty list: checked, none missing", doc["missing_fragments"])
	}
	if n, ok := doc["summary"].(map[string]any)["missing_fragments"]; !ok || n != 0.0 {
		t.Errorf("summary.missing_fragments = %v, want 0", n)
	}
}

// FuzzFragmentWriters feeds hostile page URLs and fragments through every
// format's missing fragments section.
func FuzzFragmentWriters(f *testing.F) {
	f.Add("https://example.com/", "<script>alert(1)</script>", 12, "", 80)
	f.Add("file:///a b/", "]]>\x00\n::error::x", -3, "/work/site", 40)
	f.Add("=cmd|' /C calc'!A0", "`|*_[x](y)", 1<<30, "", 24)
	f.Fuzz(func(t *testing.T, pageURL, fragment string, line int, root string, width int) {
		if pageURL == "" || alwaysThere(fragment) {
			return
		}
		src := newMemSource(t, []fixturePass{{
			pass:    store.Pass{StartURLs: []string{pageURL}, Root: root, State: store.PassComplete, Started: night2},
			results: []store.Result{anchoredPage(pageURL, []string{}, store.Link{URL: pageURL, Fragment: fragment, Line: line, Tag: "a", Attr: "href"})},
		}})
		r := build(t, src, 1, Options{Width: width % 200, BaseDir: "/work", CheckFragments: true})
		if len(r.Fragments) != 1 || !r.HasBroken() {
			t.Fatalf("%d missing fragments, want 1", len(r.Fragments))
		}
		if w := r.Options.Width; w >= 40 {
			for i, l := range strings.Split(render(t, r, "text"), "\n") {
				if n := utf8.RuneCountInString(l); n > w {
					t.Errorf("text line %d is %d wide (width %d): %q", i+1, n, w, l)
				}
			}
		}
		var doc map[string]any
		if err := json.Unmarshal([]byte(render(t, r, "json")), &doc); err != nil {
			t.Fatalf("json: %v", err)
		}
		if err := json.Unmarshal([]byte(render(t, r, "sarif")), &doc); err != nil {
			t.Fatalf("sarif: %v", err)
		}
		if err := validateJUnit([]byte(render(t, r, "junit"))); err != nil {
			t.Fatalf("junit: %v", err)
		}
		rows, err := csv.NewReader(strings.NewReader(render(t, r, "csv"))).ReadAll()
		if err != nil || len(rows) != 2 || rows[1][4] != "missing fragment" || rows[1][13] != shown(cell(fragment)) {
			t.Fatalf("csv: %v, rows %q", err, rows)
		}
		for _, l := range strings.Split(strings.TrimSuffix(render(t, r, "github"), "\n"), "\n") {
			if !strings.HasPrefix(l, "::error ") && !strings.HasPrefix(l, "linkpatrol pass 1 of ") {
				t.Fatalf("github: a line that is neither an annotation nor the summary: %q", l)
			}
		}
		hdoc, err := html.Parse(strings.NewReader(render(t, r, "html")))
		if err != nil {
			t.Fatal(err)
		}
		scripts := 0
		walk(hdoc, func(n *html.Node) {
			if n.Type == html.ElementNode && n.DataAtom == atom.Script {
				scripts++
			}
		})
		if scripts != 1 {
			t.Fatalf("html: %d script elements, want only ours", scripts)
		}
		if prose := stripCodeSpans(render(t, r, "markdown")); strings.Contains(prose, "<script") {
			t.Fatalf("markdown: raw <script> outside a code span")
		}
	})
}

// A fragment missing last pass whose page this pass could not read is
// listed, not checked, and fails the run: the summary of every format
// counts it among the missing fragments and says it was not checked,
// rather than "0 missing fragments" above a list of one (qa7 Q9 nit).
func TestUncheckedFragmentCounted(t *testing.T) {
	t.Parallel()
	const home, guide = "https://example.com/", "https://example.com/guide/"
	prev := store.Pass{StartURLs: []string{home}, State: store.PassComplete, Started: night1, Finished: night1.Add(time.Minute),
		Tally: &store.Tally{FragmentsChecked: true, Fragments: []string{guide + "#nope"}}}
	down := store.Result{Record: store.URLRecord{URL: guide, Action: "parse", Verdict: store.VerdictTransient, Status: 503, FirstSeen: night1, LastGood: night1}}
	now := fixturePass{
		pass:    store.Pass{StartURLs: []string{home}, State: store.PassComplete, Started: night2, Finished: night2.Add(time.Minute)},
		results: []store.Result{anchoredPage(home, []string{}, fragLink(guide, "nope", 3)), down},
	}
	r := build(t, fillStore(t, []fixturePass{{pass: prev}, now}), 2, Options{CheckFragments: true})
	if len(r.Fragments) != 1 || r.Fragments[0].Change != ChangeUnchecked || !r.HasBroken() {
		t.Fatalf("fragments %+v, HasBroken %v; want #nope not checked, failing", r.Fragments, r.HasBroken())
	}
	if s := r.Summary; s.MissingFragments != 1 || s.FragmentsUnchecked != 1 {
		t.Errorf("summary: %d missing fragments, %d of them not checked; want 1 and 1", s.MissingFragments, s.FragmentsUnchecked)
	}
	for format, want := range map[string]string{
		"text":     "1 missing fragment (not checked this pass: its page could not be read)",
		"html":     "1 missing fragment (not checked this pass: its page could not be read)",
		"markdown": "1 missing fragments (1 not checked this pass)",
		"json":     `"missing_fragments": 1,`,
	} {
		out := strings.Join(strings.Fields(render(t, r, format)), " ")
		if !strings.Contains(out, want) {
			t.Errorf("%s: no %q in\n%s", format, want, out)
		}
		if strings.Contains(out, "0 missing fragments") || strings.Contains(out, `"missing_fragments": 0`) {
			t.Errorf("%s still counts 0 missing fragments", format)
		}
	}
	if out := strings.Join(strings.Fields(render(t, r, "json")), " "); !strings.Contains(out, `"missing_fragments_not_checked": 1`) {
		t.Errorf("json: no missing_fragments_not_checked")
	}
}
