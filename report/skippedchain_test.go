package report

import (
	"strings"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/store"
)

// A redirect chain stopped short of a target the rules skip is shown as a
// failing chain is (review7 RV2 #9): one entry on the link, naming each hop
// and where it stopped and why, and the hop no page links to is part of
// that entry, not a skipped URL of its own "linked from: no referring page
// stored".
func TestSkippedChainIsOneEntryNamingItsHops(t *testing.T) {
	t.Parallel()
	const site = "https://example.com/"
	note := "redirect not followed; its target is skipped: matches no --include"
	chain := func(from int, action string) store.Result {
		rec := store.URLRecord{URL: site + "r/" + string(rune('0'+from)), Action: action, Verdict: store.VerdictSkipped, Status: 301,
			FinalURL: site + "r/3", Note: note, FirstSeen: night1, FetchedAt: night1}
		for i := from; i < 3; i++ {
			rec.Redirects = append(rec.Redirects, store.Hop{URL: site + "r/" + string(rune('0'+i)), Status: 301})
		}
		return target(rec)
	}
	at := night1
	history := []fixturePass{{
		pass: store.Pass{StartURLs: []string{site}, State: store.PassComplete, Started: at, Finished: at.Add(time.Minute), Elapsed: time.Minute},
		results: []store.Result{
			page(site, link(site+"r/0", 1), link(site+"r/2", 2)),
			chain(0, "parse"), chain(1, "check"), chain(2, "parse"),
		},
	}}
	r := build(t, newMemSource(t, history), 1, Options{All: true})
	if got := urls(r.Entries); len(got) != 3 || strings.Contains(strings.Join(got, " "), "r/1") {
		t.Errorf("entries %v: want the start page, r/0 and r/2, not the hop r/1", got)
	}
	if r.Summary.Skipped != 2 || r.Summary.SkippedHops != 1 || r.Summary.Hops != 0 {
		t.Errorf("summary: %d skipped, %d skipped hops, %d hops; want 2, 1, 0", r.Summary.Skipped, r.Summary.SkippedHops, r.Summary.Hops)
	}
	text := strings.Join(strings.Fields(render(t, r, "text")), " ")
	for _, want := range []string{
		"redirects to https://example.com/r/1 -> https://example.com/r/2 -> https://example.com/r/3, not requested: matches no --include",
		"1 URL no page links to is a hop of a redirect chain not followed to its end",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "no referring page stored") {
		t.Errorf("the hop is listed on its own:\n%s", text)
	}
	if js := render(t, r, "json"); !strings.Contains(js, `"skipped_hops": 1`) {
		t.Errorf("JSON summary lacks skipped_hops: 1")
	}
}
