package report

import (
	"strconv"
	"testing"

	"github.com/linkpatrol/linkpatrol/store"
)

// Only a permanent redirect a page links to is listed: the hops of a
// chain that follow it are reached by no link, and there is nothing to
// edit for them. A 25-hop chain listed 20 of its hops, each "linked from:
// no page" (qa11 §8).
func TestPermanentRedirectsListOnlyLinkedHops(t *testing.T) {
	t.Parallel()
	const home = "https://example.com/"
	c := func(n int) string { return home + "c/" + strconv.Itoa(n) }
	// chain is the redirect chain from c(n) down to c(to), each a 301.
	chain := func(n, to int) []store.Hop {
		var hops []store.Hop
		for i := n; i > to; i-- {
			hops = append(hops, store.Hop{URL: c(i), Status: 301})
		}
		return hops
	}
	moved := func(n int) store.Result {
		rec := store.URLRecord{URL: c(n), Verdict: store.VerdictOK, Status: 200, LastGood: night2, FinalURL: c(0), Redirects: chain(n, 0)}
		if n != 2 {
			rec.Note = store.RedirectNote + c(n+1)
		}
		return target(rec)
	}
	results := []store.Result{
		page(home, link(c(8), 11), link(c(2), 12)),
		// Too many redirects: it gave up at c/4, which was then checked
		// on its own, through c/2, down to c/0.
		target(store.URLRecord{URL: c(8), Verdict: store.VerdictBroken, Error: "too many redirects", Status: 301,
			FirstSeen: night2, FirstBroken: night2, Failures: 1, Redirects: chain(8, 3), FinalURL: c(3)}),
		target(store.URLRecord{URL: c(0), Verdict: store.VerdictOK, Status: 200, LastGood: night2}),
	}
	for n := 1; n <= 3; n++ {
		results = append(results, moved(n))
	}
	r := build(t, newMemSource(t, []fixturePass{{
		pass:    store.Pass{StartURLs: []string{home}, State: store.PassComplete, Started: night2, Finished: night2.Add(1), Elapsed: 1},
		results: results,
	}}), 1, Options{})
	var got []string
	for _, e := range r.Moved {
		got = append(got, e.Record.URL)
	}
	if len(got) != 1 || got[0] != c(2) || r.Summary.Moved != 1 || len(r.Moved[0].Referrers) != 1 || r.Moved[0].Referrers[0].Line != 12 {
		t.Errorf("permanent redirects %q (summary %d); want only %s, linked at line 12", got, r.Summary.Moved, c(2))
	}
}
