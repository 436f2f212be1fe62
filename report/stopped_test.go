package report

import (
	"strings"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/store"
)

// URLs not checked because the site's server stopped answering (qa6 Q2)
// are no dead links and no change: the first line names the host, when,
// after how many requests and how many URLs; none is broken, new or fixed;
// one that was a problem last pass is listed as not checked this pass.
func TestHostStoppedAnswering(t *testing.T) {
	t.Parallel()
	const site = "https://example.com/"
	since := night2.Add(10 * time.Second)
	down := func(u string, prev store.Verdict) store.Result {
		return target(store.URLRecord{URL: u, Action: "parse", Verdict: store.VerdictTransient, Error: store.ErrorHostDown,
			Note: "not checked", DownSince: since, DownAfter: 84, PrevVerdict: prev, PrevPass: 1, FirstSeen: night1})
	}
	src := fillStore(t, []fixturePass{{
		pass: store.Pass{StartURLs: []string{site}, State: store.PassComplete, Started: night1, Finished: night1.Add(time.Minute)},
	}, {
		pass: store.Pass{StartURLs: []string{site}, State: store.PassStopped, Started: night2, Finished: night2.Add(time.Minute), Deferred: 2},
		results: []store.Result{
			page(site, link(site+"a", 2), link(site+"b", 3)),
			down(site+"a", store.VerdictOK),
			down(site+"b", store.VerdictBroken),
		},
	}})
	r := build(t, src, 2, Options{})
	want := "INCOMPLETE: example.com stopped answering at " + since.In(r.Options.Now.Location()).Format("2006-01-02 15:04:05") +
		" after 84 requests: 2 URLs not checked; they are not dead links: run the same command again to check them and finish the pass."
	if got := r.Incomplete(); got != want {
		t.Errorf("first line\n got %q\nwant %q", got, want)
	}
	s := r.Summary
	if s.Broken != 0 || s.New != 0 || s.Fixed != 0 || s.Unchecked != 1 || s.Unread != 0 {
		t.Errorf("broken %d new %d fixed %d unchecked %d unread %d; want only /b not checked (broken last pass)", s.Broken, s.New, s.Fixed, s.Unchecked, s.Unread)
	}
	for _, e := range r.Entries {
		if e.Record.URL == site+"b" && !strings.HasPrefix(r.LastChecked(e), "NOT CHECKED this pass; broken when last checked") {
			t.Errorf("/b: %q", r.LastChecked(e))
		}
	}
}
