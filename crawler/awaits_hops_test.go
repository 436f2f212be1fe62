package crawler

import (
	"fmt"
	"testing"

	"github.com/linkpatrol/linkpatrol/store"
)

// In a cluster a chain that crosses workers is finished where the results
// meet (FinishChains), each recorded hop from its own URL: a hop linked
// directly reads "too many redirects" only when the chain from it is
// longer than the limit, as one process would judge a link to it. Chain
// /c/0 -> ... -> /c/22 (200): worker A followed /c/0 to /c/3, another
// host's, and recorded /c/0, /c/1 and /c/2 awaiting /c/3; worker B
// followed /c/3 for its 19 redirects. /c/0 and /c/1 have 22 and 21
// redirects, more than 20; /c/2 has 20, within the limit.
func TestFinishChainsJudgesEachHopFromItself(t *testing.T) {
	t.Parallel()
	c := func(i int) string { return fmt.Sprintf("http://a.test/c/%d", i) }
	hops := func(from, to int) []store.Hop {
		var hs []store.Hop
		for i := from; i < to; i++ {
			hs = append(hs, store.Hop{URL: c(i), Status: 302})
		}
		return hs
	}
	awaiting := map[string]store.URLRecord{}
	for i := range 3 {
		rec := store.URLRecord{URL: c(i), Pass: 4, Action: "check", Redirects: hops(i, 3)}
		via := ""
		if i > 0 {
			via = c(i - 1)
		}
		awaitEnd(&rec, c(3), via)
		awaiting[rec.URL] = rec
	}
	end := store.URLRecord{URL: c(3), Pass: 4, Verdict: store.VerdictOK, Status: 200, FinalURL: c(22), Redirects: hops(3, 22)}
	finished, err := FinishChains(awaiting, func(u string) (store.URLRecord, bool, bool, error) {
		return end, u == end.URL, false, nil
	}, 20)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []store.Verdict{store.VerdictBroken, store.VerdictBroken, store.VerdictOK} {
		if got := finished[c(i)]; got.Verdict != want || (want == store.VerdictBroken) != (got.Error == "too many redirects") {
			t.Errorf("%s: %s %q after %d redirects; want %s", c(i), got.Verdict, got.Error, len(got.Redirects), want)
		}
	}
}
