package crawler

import (
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/store"
)

// history compares with the pass's Base: a record last resolved in a pass
// between (stopped, abandoned) carries what the Base pass recorded, while
// the run of failures goes on counting what every pass saw (qa6 Q3).
func TestHistoryPassesOverUnfinishedPasses(t *testing.T) {
	t.Parallel()
	t1 := time.Date(2026, 11, 21, 3, 0, 0, 0, time.UTC)
	t2, now := t1.Add(24*time.Hour), t1.Add(48*time.Hour)
	pass := store.Pass{ID: 3, Base: 1}
	type want struct {
		prev         store.Verdict
		prevPass     uint64
		prevFailures int
		prevFirst    time.Time
		failures     int
	}
	for _, tc := range []struct {
		name string
		pass store.Pass
		prev store.URLRecord
		now  store.Verdict
		want want
	}{
		{"broken in the base, rechecked broken in the stopped pass: still", pass,
			store.URLRecord{Pass: 2, Verdict: store.VerdictBroken, Failures: 2, FirstBroken: t1, PrevVerdict: store.VerdictBroken, PrevPass: 1, PrevFailures: 1, PrevFirstBroken: t1},
			store.VerdictBroken, want{store.VerdictBroken, 1, 1, t1, 3}},
		{"broken in the base, fixed in the stopped pass, ok: fixed since the base", pass,
			store.URLRecord{Pass: 2, Verdict: store.VerdictOK, PrevVerdict: store.VerdictBroken, PrevPass: 1, PrevFailures: 1, PrevFirstBroken: t1},
			store.VerdictOK, want{store.VerdictBroken, 1, 1, t1, 0}},
		{"ok in the base, broken only in the stopped pass: nothing fixed", pass,
			store.URLRecord{Pass: 2, Verdict: store.VerdictBroken, Failures: 1, FirstBroken: t2, PrevVerdict: store.VerdictOK, PrevPass: 1},
			store.VerdictOK, want{store.VerdictOK, 1, 0, time.Time{}, 0}},
		{"a record of the stopped pass written before the run of then was kept", pass,
			store.URLRecord{Pass: 2, Verdict: store.VerdictBroken, Failures: 2, FirstBroken: t1, PrevVerdict: store.VerdictBroken, PrevPass: 1},
			store.VerdictOK, want{store.VerdictBroken, 1, 1, t1, 0}},
		{"first seen in the stopped pass: nothing in the base", pass,
			store.URLRecord{Pass: 2, Verdict: store.VerdictBroken, Failures: 1, FirstBroken: t2},
			store.VerdictBroken, want{"", 0, 0, time.Time{}, 2}},
		{"last resolved in the base itself", pass,
			store.URLRecord{Pass: 1, Verdict: store.VerdictBroken, Failures: 1, FirstBroken: t1},
			store.VerdictBroken, want{store.VerdictBroken, 1, 1, t1, 2}},
		{"no complete pass before: nothing passed over", store.Pass{ID: 3},
			store.URLRecord{Pass: 2, Verdict: store.VerdictBroken, Failures: 1, FirstBroken: t2, PrevVerdict: store.VerdictOK, PrevPass: 1},
			store.VerdictBroken, want{store.VerdictBroken, 2, 1, t2, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.prev.URL, tc.prev.FirstSeen = "http://a.test/x", t1
			rec := store.URLRecord{URL: tc.prev.URL, Pass: tc.pass.ID, Verdict: tc.now}
			history(&rec, &tc.prev, tc.pass, now)
			got := want{rec.PrevVerdict, rec.PrevPass, rec.PrevFailures, rec.PrevFirstBroken, rec.Failures}
			if got != tc.want {
				t.Errorf("history: %+v, want %+v", got, tc.want)
			}
			// A result reused from prev compares the same way.
			if tc.now == tc.prev.Verdict {
				c := &Crawler{}
				r := c.reused(tc.pass, task{}, tc.prev, now).Record
				if r.PrevVerdict != tc.want.prev || r.PrevPass != tc.want.prevPass || r.PrevFailures != tc.want.prevFailures {
					t.Errorf("reused: %s in pass %d, run %d; want %+v", r.PrevVerdict, r.PrevPass, r.PrevFailures, tc.want)
				}
			}
		})
	}
}
