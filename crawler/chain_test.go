package crawler

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/linkpatrol/linkpatrol/store"
)

// TestEndsInClaims: a result of a claimed URL that is only a verdict and a
// status is kept in its claims entry, anything else whole; the latest put
// wins either way; and a result never makes a URL claimed that was not.
func TestEndsInClaims(t *testing.T) {
	t.Parallel()
	plain := func(u string, v store.Verdict, status int) store.URLRecord {
		return store.URLRecord{URL: u, Verdict: v, Status: status}
	}
	moved := store.URLRecord{URL: "http://h/m", Verdict: store.VerdictOK, Status: 200, FinalURL: "http://h/n",
		Redirects: []store.Hop{{URL: "http://h/m", Status: 301}}}
	tests := []struct {
		name    string
		puts    []store.URLRecord
		claimed bool
		want    store.URLRecord
		inFull  bool
	}{
		{"ok", []store.URLRecord{plain("http://h/a", store.VerdictOK, 200)}, true, plain("http://h/a", store.VerdictOK, 200), false},
		{"broken", []store.URLRecord{plain("http://h/a", store.VerdictBroken, 404)}, true, plain("http://h/a", store.VerdictBroken, 404), false},
		{"skipped, no status", []store.URLRecord{plain("http://h/a", store.VerdictSkipped, 0)}, true, plain("http://h/a", store.VerdictSkipped, 0), false},
		{"redirected", []store.URLRecord{moved}, true, moved, true},
		{"an error", []store.URLRecord{{URL: "http://h/a", Verdict: store.VerdictBroken, Error: "dns"}}, true,
			store.URLRecord{URL: "http://h/a", Verdict: store.VerdictBroken, Error: "dns"}, true},
		{"a verdict claims cannot keep", []store.URLRecord{plain("http://h/a", "odd", 200)}, true, plain("http://h/a", "odd", 200), true},
		{"not claimed", []store.URLRecord{plain("http://h/a", store.VerdictOK, 200)}, false, plain("http://h/a", store.VerdictOK, 200), true},
		{"plain, then whole", []store.URLRecord{plain("http://h/m", store.VerdictBroken, 503), moved}, true, moved, true},
		{"whole, then plain", []store.URLRecord{moved, plain("http://h/m", store.VerdictBroken, 410)}, true, plain("http://h/m", store.VerdictBroken, 410), false},
	}
	for _, tt := range tests {
		seen := newClaims()
		u := tt.puts[0].URL
		if tt.claimed && !seen.claim(u) {
			t.Fatalf("%s: a new URL was not claimed", tt.name)
		}
		e := newEnds(seen)
		for i := range tt.puts {
			e.put(&tt.puts[i])
		}
		got, ok := e.get(u)
		if !ok || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: get = %+v, %v; want %+v", tt.name, got, ok, tt.want)
		}
		if _, full := e.full[u]; full != tt.inFull {
			t.Errorf("%s: kept whole %v, want %v", tt.name, full, tt.inFull)
		}
		if _, in := seen.get(u); in != tt.claimed {
			t.Errorf("%s: claimed %v after the puts, want %v", tt.name, in, tt.claimed)
		}
		if _, ok := e.get("http://h/other"); ok {
			t.Errorf("%s: a URL with no result has one", tt.name)
		}
	}
}

// TestClaimLink: a link claims a URL nobody has; to a URL claimed already
// it only notes, on a redirect target whose chain has not ended, that a
// page links it (what dropped needs to queue it on its own).
func TestClaimLink(t *testing.T) {
	t.Parallel()
	const u = "http://h/a"
	tests := []struct {
		name       string
		before     func(claims)
		new        bool
		wantLinked bool
	}{
		{"unclaimed", func(claims) {}, true, false},
		{"claimed by a task", func(c claims) { c.claim(u) }, false, false},
		{"claimed by a chain", func(c claims) { c.claimHop(u) }, false, true},
		{"claimed by a chain that ended", func(c claims) { c.claimHop(u); c.set(u, claimed{hop: true, end: 1}) }, false, false},
	}
	for _, tt := range tests {
		c := newClaims()
		tt.before(c)
		if got := c.claimLink(u); got != tt.new {
			t.Errorf("%s: claimLink = %v, want %v", tt.name, got, tt.new)
		}
		e, ok := c.get(u)
		if !ok || e.linked != tt.wantLinked {
			t.Errorf("%s: after claimLink %+v (claimed %v), want claimed, linked %v", tt.name, e, ok, tt.wantLinked)
		}
		if c.claimLink(u) {
			t.Errorf("%s: a second claimLink claimed it again", tt.name)
		}
	}
}

// TestClaimTable runs random adds, updates and removes on a claimTable
// that starts at 8 slots, against a map: after each, every key the map has
// is found with its entry, no other key is, and the table is at most half
// full. Keys share homes on purpose, so that probes wrap around the end
// and removes shift runs of keys back, across doublings.
func TestClaimTable(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(17, 4))
	pool := make([]urlKey, 64)
	for i := range pool {
		// Homes 5, 6 and 7 in the first 8 slots, all over the larger ones.
		pool[i] = urlKey{r.Uint64()&^7 | uint64(5+i%3), r.Uint64() | 1}
	}
	tab := &claimTable{slots: make([]claimSlot, 8)}
	model := make(map[urlKey]claimed)
	for step := range 20000 {
		k := pool[r.IntN(len(pool))]
		switch op := r.IntN(3); {
		case op == 0 || len(model) < 4:
			e := claimed{status: int32(step)}
			if s := tab.find(k); s.used() {
				s.e = e
			} else {
				tab.add(s, k, e)
			}
			model[k] = e
		case op == 1:
			tab.remove(k)
			delete(model, k)
		default:
			if len(model) > 40 { // shrink the set now and then, to remove from long runs
				for mk := range model {
					tab.remove(mk)
					delete(model, mk)
					if len(model) < 8 {
						break
					}
				}
			}
		}
		if tab.n != len(model) || 2*tab.n > len(tab.slots) {
			t.Fatalf("step %d: %d keys in %d slots, want %d, at most half full", step, tab.n, len(tab.slots), len(model))
		}
		for _, pk := range pool {
			s := tab.find(pk)
			want, in := model[pk]
			if s.used() != in || (in && (s.k != pk || s.e != want)) {
				t.Fatalf("step %d: key %x found %v (%+v), want %v (%+v)", step, pk, s.used(), s.e, in, want)
			}
		}
	}
}

// TestClaimsDrop: a dropped URL is unclaimed and can be claimed again,
// while the URLs claimed with it stay claimed.
func TestClaimsDrop(t *testing.T) {
	t.Parallel()
	c := newClaims()
	urls := make([]string, 3000) // past a few doublings of the table
	for i := range urls {
		urls[i] = fmt.Sprintf("http://h/p/%d.html", i)
		if !c.claim(urls[i]) {
			t.Fatalf("%s: new, but not claimed", urls[i])
		}
	}
	for i := 0; i < len(urls); i += 3 {
		c.drop(urls[i])
	}
	for i, u := range urls {
		if _, ok := c.get(u); ok != (i%3 != 0) {
			t.Fatalf("%s: claimed %v after dropping every third", u, ok)
		}
		if got := c.claim(u); got != (i%3 == 0) {
			t.Fatalf("%s: claim = %v after dropping every third", u, got)
		}
	}
}
