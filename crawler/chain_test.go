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
