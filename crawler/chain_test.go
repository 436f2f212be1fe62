package crawler

import (
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
