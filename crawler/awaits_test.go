package crawler

import (
	"reflect"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/store"
)

// A record that awaited another crawler's URL, once finished from that
// URL's record, is the record one process makes when it follows the chain
// itself (chainEnd, then history from the URL's previous record): same
// verdict, status, chain, note and history, whatever the past.
func TestFinishChainEqualsOneProcess(t *testing.T) {
	t.Parallel()
	const s, y, x = "http://a.test/s", "http://a.test/y", "http://b.test/x"
	now := time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC)
	day := func(n int) time.Time { return now.AddDate(0, 0, -n) }
	goodBefore := &store.URLRecord{URL: s, Pass: 3, Verdict: store.VerdictOK, FirstSeen: day(9), LastGood: day(2)}
	brokenBefore := &store.URLRecord{URL: s, Pass: 3, Verdict: store.VerdictBroken, FirstSeen: day(9), LastGood: day(5),
		FirstBroken: day(3), Failures: 2, PrevVerdict: store.VerdictBroken, PrevPass: 2}
	okEnd := store.URLRecord{URL: x, Pass: 4, Verdict: store.VerdictOK, Status: 200}
	goneEnd := store.URLRecord{URL: x, Pass: 4, Verdict: store.VerdictBroken, Status: 404, Error: "404"}
	hop := func(u string) store.Hop { return store.Hop{URL: u, Status: 301} }
	tests := []struct {
		name string
		hops []store.Hop
		via  string
		prev *store.URLRecord
		end  store.URLRecord
		max  int
	}{
		{"ok end, new URL", []store.Hop{hop(s)}, "", nil, okEnd, 0},
		{"broken end, good before", []store.Hop{hop(s)}, "", goodBefore, goneEnd, 0},
		{"ok end, broken before", []store.Hop{hop(s)}, "", brokenBefore, okEnd, 0},
		{"broken end, broken before", []store.Hop{hop(s)}, "", brokenBefore, goneEnd, 0},
		{"two hops here, one there", []store.Hop{hop(s), hop(y)}, "", goodBefore,
			store.URLRecord{URL: x, Pass: 4, Verdict: store.VerdictOK, Status: 200, FinalURL: "http://b.test/z", Redirects: []store.Hop{hop(x)}}, 0},
		{"too many redirects in all", []store.Hop{hop(s), hop(y)}, "", nil,
			store.URLRecord{URL: x, Pass: 4, Verdict: store.VerdictOK, Status: 200, FinalURL: "http://b.test/z", Redirects: []store.Hop{hop(x)}}, 2},
		{"a target reached by a redirect", []store.Hop{hop(y)}, s, nil, goneEnd, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			max := tc.max
			if max == 0 {
				max = DefaultMaxRedirects
			}
			base := store.URLRecord{URL: tc.hops[0].URL, Pass: 4, Action: "check", FetchedAt: now, Redirects: tc.hops}
			// One process: the chain's end is known at once.
			want := base
			want.Redirects = append([]store.Hop(nil), tc.hops...)
			chainEnd(&want, tc.end, max, true)
			if tc.via != "" && want.Note == "" {
				want.Note = viaNote(tc.via)
			}
			history(&want, tc.prev, store.Pass{ID: 4}, now)
			// A worker that hands the hop to x's owner.
			got := base
			got.Redirects = append([]store.Hop(nil), tc.hops...)
			awaitEnd(&got, x, tc.via)
			history(&got, tc.prev, store.Pass{ID: 4}, now)
			if got.Verdict != store.VerdictSkipped || got.FinalURL != x || got.Awaits != x {
				t.Errorf("awaiting record: %s -> %s awaits %q", got.Verdict, got.FinalURL, got.Awaits)
			}
			FinishChain(&got, &tc.end, tc.max)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("finished:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

// Chains of two crawlers that lead round to each other end as a redirect
// loop; a chain whose end never got a result says so instead of passing
// for good.
func TestFinishChainLoopsAndMissingEnds(t *testing.T) {
	t.Parallel()
	const s, x = "http://a.test/s", "http://b.test/x"
	now := time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC)
	partial := func(from, to string) store.URLRecord {
		r := store.URLRecord{URL: from, Pass: 4, Action: "check", FetchedAt: now, Redirects: []store.Hop{{URL: from, Status: 302}}}
		awaitEnd(&r, to, "")
		history(&r, nil, store.Pass{ID: 4}, now)
		return r
	}
	rec, end := partial(s, x), partial(x, s)
	FinishChain(&rec, &end, 0)
	if rec.Verdict != store.VerdictBroken || rec.Error != "redirect loop" || rec.Status != 302 || rec.Awaits != "" {
		t.Errorf("loop: %s %d %q awaits %q, want broken 302 redirect loop", rec.Verdict, rec.Status, rec.Error, rec.Awaits)
	}
	rec = partial(s, x)
	FinishChain(&rec, nil, 0)
	if rec.Verdict != store.VerdictTransient || rec.Error != "not checked" || rec.FinalURL != x || rec.FirstBroken != now {
		t.Errorf("missing end: %+v", rec)
	}
}
