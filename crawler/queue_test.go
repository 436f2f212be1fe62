package crawler

import (
	"math"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
)

// TestQueuedGivesBackTheTask: every task comes back from its host's queue
// as it went in, with its decision's URL, whether it was kept small or
// whole; and tasks decided alike share one decision while they wait.
func TestQueuedGivesBackTheTask(t *testing.T) {
	t.Parallel()
	policy := &rules.Policy{Timeout: time.Second}
	decided := func(u string, a rules.Action) *rules.Decision {
		return &rules.Decision{URL: u, Fragment: "top", Action: a, Rule: "start host", Request: policy, Policy: policy, Traps: rules.DefaultTraps()}
	}
	page := func(u string) task {
		return task{Task: store.Task{URL: u, Action: "parse", Depth: 3, Run: 2}, host: "h", robotsOK: true, dec: decided(u, rules.Parse)}
	}
	tests := []struct {
		name  string
		t     task
		small bool
	}{
		{"a page found by a link", page("http://h/a"), true},
		{"a check", task{Task: store.Task{URL: "http://h/b.png", Action: "check", Depth: 1}, host: "h", dec: decided("http://h/b.png", rules.Check)}, true},
		{"from the stored frontier, undecided", task{Task: store.Task{URL: "http://h/c", Action: "parse"}, host: "h"}, true},
		{"a sitemap", task{Task: store.Task{URL: "http://h/sitemap.xml", Action: actionSitemap}, host: "h"}, true},
		{"a retry", func() task { t := page("http://h/d"); t.attempt = 2; return t }(), false},
		{"a delayed GET", func() task { t := page("http://h/e"); t.getNext = true; return t }(), false},
		{"robots.txt's sitemaps", task{Task: store.Task{URL: "http://h/robots.txt"}, host: "h", sitemapsOf: "http"}, false},
		{"an unknown action", task{Task: store.Task{URL: "http://h/f", Action: "fetch"}, host: "h"}, false},
		{"a depth past int32", task{Task: store.Task{URL: "http://h/g", Action: "check", Depth: math.MaxInt32 + 1}, host: "h"}, false},
		{"a clipped URL", func() task { t := page("http://h/h"); t.dec = decided("http://h/hhhh", rules.Parse); return t }(), false},
	}
	d := &dispatcher{decisions: make(map[rules.Decision]*rules.Decision)}
	for _, tt := range tests {
		e := d.queue(tt.t)
		if small := e.full == nil; small != tt.small {
			t.Errorf("%s: kept small %v, want %v", tt.name, small, tt.small)
		}
		got := e.task(tt.t.host)
		withURL(&got)
		gotDec, wantDec := got.dec, tt.t.dec
		got.dec, tt.t.dec = nil, nil
		if got != tt.t {
			t.Errorf("%s: got back %+v, want %+v", tt.name, got, tt.t)
		}
		switch {
		case (gotDec == nil) != (wantDec == nil):
			t.Errorf("%s: decision %v, want %v", tt.name, gotDec, wantDec)
		case gotDec == nil:
		case gotDec.URL != wantDec.URL || gotDec.Action != wantDec.Action || gotDec.Rule != wantDec.Rule ||
			gotDec.Request != wantDec.Request || gotDec.Policy != wantDec.Policy || gotDec.Traps != wantDec.Traps:
			t.Errorf("%s: decision %+v, want %+v", tt.name, *gotDec, *wantDec)
		}
	}
	a, b := d.queue(page("http://h/x")), d.queue(page("http://h/y"))
	if a.dec == nil || a.dec != b.dec {
		t.Errorf("two pages decided alike wait with decisions %p and %p, want one shared", a.dec, b.dec)
	}
	if len(d.decisions) != 2 {
		t.Errorf("%d shared decisions, want 2 (the page's and the check's)", len(d.decisions))
	}
}
