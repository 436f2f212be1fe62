package cluster

import (
	"fmt"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/store"
)

// The coordinator finishes every awaiting record of a pass from its end's
// record when the pass is over: through a chain of two workers' hops, round
// a loop, and with an end that never came (complete: said so; stopped: kept
// waiting for the next run, as one held back by a pause is).
func TestFinishChainsInTheMergedDatabase(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC)
	awaits := func(u, end string) store.URLRecord {
		return store.URLRecord{URL: u, Action: "check", Verdict: store.VerdictSkipped, Status: 301, FetchedAt: now, FirstSeen: now,
			FinalURL: end, Awaits: end, Redirects: []store.Hop{{URL: u, Status: 301}}}
	}
	final := func(u string, v store.Verdict, status int, errClass string) store.URLRecord {
		return store.URLRecord{URL: u, Action: "check", Verdict: v, Status: status, Error: errClass, FetchedAt: now, FirstSeen: now}
	}
	const a, b, c, d, l1, l2, m, h, hx = "http://a.test/", "http://b.test/", "http://c.test/", "http://d.test/",
		"http://l1.test/", "http://l2.test/", "http://m.test/", "http://h.test/", "http://hx.test/"
	const in = "http://in.test/"
	results := []store.Result{
		{Record: awaits(a, b)}, {Record: awaits(b, c)}, {Record: final(c, store.VerdictBroken, 404, "404")},
		{Record: awaits(d, c)},
		{Record: awaits(l1, l2)}, {Record: awaits(l2, l1)}, {Record: awaits(in, l1)},
		{Record: awaits(m, "http://nowhere.test/")},
		{Record: awaits(h, hx)}, {Record: final(hx, store.VerdictTransient, 0, "rate-limited")},
	}
	show := func(r store.URLRecord) string {
		return fmt.Sprintf("%s %d %s -> %s %v awaits %q", r.Verdict, r.Status, r.Error, r.FinalURL, r.Redirects, r.Awaits)
	}
	// Complete three times: the order of a map decides where the loop is
	// entered, which must not change how it reads.
	for _, state := range []store.PassState{store.PassStopped, store.PassComplete, store.PassComplete, store.PassComplete} {
		t.Run(string(state), func(t *testing.T) {
			t.Parallel()
			db := openDB(t, "merged.db", false)
			p, err := db.BeginPass(store.Pass{StartURLs: []string{a}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Commit(p.ID, results); err != nil {
				t.Fatal(err)
			}
			p.State = state
			co := &Coordinator{cfg: CoordinatorConfig{DB: db}}
			if err := co.finishChains(p, 0); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{
				a:  "broken 404 404 -> http://c.test/ [{http://a.test/ 301} {http://b.test/ 301}] awaits \"\"",
				b:  "broken 404 404 -> http://c.test/ [{http://b.test/ 301}] awaits \"\"",
				d:  "broken 404 404 -> http://c.test/ [{http://d.test/ 301}] awaits \"\"",
				l1: "broken 301 redirect loop -> http://l1.test/ [{http://l1.test/ 301} {http://l2.test/ 301}] awaits \"\"",
				m:  "transient 0 not checked -> http://nowhere.test/ [{http://m.test/ 301}] awaits \"\"",
				h:  "transient 0 rate-limited -> http://hx.test/ [{http://h.test/ 301}] awaits \"\"",
			}
			if state == store.PassStopped {
				m2, h2 := awaits(m, "http://nowhere.test/"), awaits(h, hx)
				want[m], want[h] = show(m2), show(h2)
			}
			for u, w := range want {
				got, ok, err := db.Get(u)
				if err != nil || !ok {
					t.Fatalf("%s: %v %v", u, ok, err)
				}
				if show(got) != w {
					t.Errorf("%s:\n got %s\nwant %s", u, show(got), w)
				}
			}
			// However the loop is entered, and by a chain into it too.
			want[l2] = "broken 301 redirect loop -> http://l2.test/ [{http://l2.test/ 301} {http://l1.test/ 301}] awaits \"\""
			want[in] = "broken 301 redirect loop -> http://l1.test/ [{http://in.test/ 301} {http://l1.test/ 301} {http://l2.test/ 301}] awaits \"\""
		})
	}
}
