package report

import (
	"strings"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/store"
)

// A custom "not found" page served with 200 answers every missing page,
// script and image of the site alike: one ETag for many URLs. The report
// cannot call it broken, but says what it saw (qa10 Q3); a site's pages
// with an ETag each, or one ETag on another host, say nothing.
func TestSamePageAnsweredForManyURLs(t *testing.T) {
	t.Parallel()
	const home = "https://example.com/"
	// As a crawl stores them: the site's own URLs are read, and an HTML
	// answer parsed, whatever the link expected.
	soft := func(u string) store.Result {
		return store.Result{Record: store.URLRecord{URL: u, Action: "parse", Parsed: true, Size: 136, Verdict: store.VerdictOK, Status: 200,
			ContentType: "text/html; charset=utf-8", ETag: `"5f-88"`, LastGood: night2, FirstSeen: night1}}
	}
	// A server that sends no ETag: the crawler's digest of what it read.
	softRead := func(u string) store.Result {
		r := soft(u)
		r.Record.ETag, r.Record.Digest = "", 0x5f88
		return r
	}
	own := func(u, etag string) store.Result {
		r := page(u)
		r.Record.ContentType, r.Record.ETag = "text/html", etag
		return r
	}
	for _, tc := range []struct {
		name    string
		results []store.Result
		want    string // "" for no line
	}{
		{"resources and pages", []store.Result{
			own(home, `"home"`),
			soft(home + "gone.html"), soft(home + "_static/app.js"), soft(home + "font.woff2"), soft(home + "old/"),
		}, `4 URLs of example.com answered 200 with the same 136-byte HTML page (ETag "5f-88"), `},
		{"no ETag, the same content", []store.Result{
			own(home, `"home"`),
			softRead(home + "gone.html"), softRead(home + "_static/app.js"), softRead(home + "font.woff2"), softRead(home + "old/"),
		}, `4 URLs of example.com answered 200 with the same 136-byte HTML page (the same content), `},
		{"two are not enough", []store.Result{own(home, `"home"`), soft(home + "a.js"), soft(home + "b.html")}, ""},
		// nginx's ETag is the file's time and length: a packaged site's
		// pages of one length share it (qa10 Q11).
		{"pages alone say nothing", []store.Result{own(home, `"home"`),
			soft(home + "1.html"), soft(home + "2.html"), soft(home + "3/"), soft(home + "4"), soft(home + "5"), soft(home + "6"),
			soft(home + "7"), soft(home + "8"), soft(home + "9"), soft(home + "10"), soft(home + "11"), soft(home + "12")}, ""},
		{"another host's", []store.Result{own(home, `"home"`),
			soft("https://cdn.example/a.js"), soft("https://cdn.example/b.js"), soft("https://cdn.example/c.js")}, ""},
		{"an ETag each", []store.Result{own(home, `"home"`), own(home+"a", `"a"`), own(home+"b", `"b"`), own(home+"c", `"c"`)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := fillStore(t, []fixturePass{{
				pass:    store.Pass{StartURLs: []string{home}, State: store.PassComplete, Started: night2, Finished: night2.Add(time.Minute)},
				results: tc.results,
			}})
			r := build(t, src, 1, Options{})
			line := r.SamePageLine()
			if tc.want == "" {
				if line != "" {
					t.Fatalf("line %q, want none", line)
				}
				return
			}
			if !strings.HasPrefix(line, tc.want) || !strings.Contains(line, "(a soft 404)?") {
				t.Fatalf("line %q, want it to start %q", line, tc.want)
			}
			for _, f := range []string{"text", "markdown", "html", "json"} {
				if out := render(t, r, f); !strings.Contains(out, "soft 404") && !strings.Contains(out, `"same_page"`) {
					t.Errorf("%s: the report does not say it", f)
				}
			}
			if !strings.Contains(r.Nothing(), "unless the") {
				t.Errorf("%q reads as a clean night", r.Nothing())
			}
			if r.HasBroken() {
				t.Error("counted broken: the report cannot know the page is an error page")
			}
			if sp := r.Summary.SamePage; sp.Resources != 2 || len(sp.Examples) == 0 || !strings.Contains(sp.Examples[0], ".js") && !strings.Contains(sp.Examples[0], ".woff2") {
				t.Errorf("resources %d, examples %v: want the resources named first", sp.Resources, sp.Examples)
			}
		})
	}
}

func TestNotHTMLByName(t *testing.T) {
	t.Parallel()
	for u, want := range map[string]bool{
		"https://e.test/_static/app.js":    true,
		"https://e.test/fonts/a.WOFF2?v=3": true,
		"https://e.test/favicon.ico#x":     true,
		"https://e.test/guide.html":        false,
		"https://e.test/dir/":              false,
		"https://e.test/v1.2/":             false,
		"https://e.test/page?file=a.png":   false,
		"https://e.test/download.pdf":      true,
		"https://e.test/archive.tar.gz":    true,
		"https://e.test/README":            false,
		"https://e.test/a.b/index":         false,
	} {
		if got := notHTMLByName(u); got != want {
			t.Errorf("%s: %v, want %v", u, got, want)
		}
	}
}
