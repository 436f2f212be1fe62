package crawler

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
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
		// Found by a link: it carries the digest of the page that linked to it.
		return task{Task: store.Task{URL: u, Action: "parse", Depth: 3, Run: 2, From: 0x0102030405060708}, host: "h", robotsOK: true, dec: decided(u, rules.Parse)}
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
	d := &dispatcher{decisions: make(map[rules.Decision]uint32)}
	q := &hostQueue{name: "h"}
	for _, tt := range tests {
		e := d.queue(q, tt.t)
		if small := e.full == 0; small != tt.small {
			t.Errorf("%s: kept small %v, want %v", tt.name, small, tt.small)
		}
		got := d.task(q, &e)
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
	a, b := d.queue(q, page("http://h/x")), d.queue(q, page("http://h/y"))
	if a.dec == 0 || a.dec != b.dec {
		t.Errorf("two pages decided alike wait with decisions %d and %d, want one shared", a.dec, b.dec)
	}
	if len(d.decisions) != 2 {
		t.Errorf("%d shared decisions, want 2 (the page's and the check's)", len(d.decisions))
	}
}

// TestQueueArena: tasks queued last, due and due first, small and whole,
// mixed with thousands of takes, come off a host's queue in the order a
// list would give them and as they went in, while the arena of the
// queue's URLs is compacted under them; the arena never holds more than
// twice the bytes of the URLs still queued (and a little), and the whole
// tasks' numbers are reused.
func TestQueueArena(t *testing.T) {
	t.Parallel()
	d := newDispatcher(&Crawler{cfg: Config{PerHost: 1 << 20}}, store.Pass{}, newClaims())
	rng := rand.New(rand.NewPCG(1, 2))
	var again, tasks []task // the model: what the queue should hand out, in order
	live := 0               // bytes of the small entries' URLs still queued
	n := 0
	for step := range 40000 {
		if d.queued != len(again)+len(tasks) {
			t.Fatalf("step %d: %d queued, want %d", step, d.queued, len(again)+len(tasks))
		}
		if q := d.hosts["h"]; q != nil && len(q.urls) > 2*live+minCompact {
			t.Fatalf("step %d: arena of %d bytes for %d bytes queued", step, len(q.urls), live)
		}
		// Grow to about 3,000 queued, then drain, twice.
		take := d.queued > 0 && (rng.IntN(2) == 0 || step%20000 >= 14000)
		if !take {
			n++
			tk := task{Task: store.Task{URL: fmt.Sprintf("http://h/%d/%s", n, strings.Repeat("x", rng.IntN(80))), Action: "parse", Depth: rng.IntN(9)}, host: "h"}
			if rng.IntN(10) == 0 {
				tk.attempt = 1 // kept whole
			} else {
				live += len(tk.URL)
			}
			switch rng.IntN(8) {
			case 0:
				d.queueOn(tk, queueDue)
				again = append(again, tk)
			case 1:
				d.queueOn(tk, queueDueFirst)
				again = slices.Insert(again, 0, tk)
			default:
				d.queueOn(tk, queueLast)
				tasks = append(tasks, tk)
			}
			continue
		}
		q := d.hosts["h"]
		got := d.task(q, q.head())
		var want task
		if len(again) > 0 {
			want, again = again[0], again[1:]
		} else {
			want, tasks = tasks[0], tasks[1:]
		}
		if want.attempt == 0 {
			live -= len(want.URL)
		}
		d.pop(q)
		if got != want {
			t.Fatalf("step %d: took %+v, want %+v", step, got, want)
		}
	}
	if max := len(d.fulls); max > 1000 {
		t.Errorf("%d numbers for whole tasks, for at most a few hundred queued at once", max)
	}
}
