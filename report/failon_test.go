package report

import (
	"testing"

	"github.com/linkpatrol/linkpatrol/store"
)

func TestHasBrokenFollowsFailOn(t *testing.T) {
	t.Parallel()
	entry := func(u string, v store.Verdict) Entry { return Entry{Record: store.URLRecord{URL: u, Verdict: v}} }
	own, other := "https://example.com/gone", "https://other.org/gone"
	frag := []MissingFragment{{URL: "https://example.com/doc", Fragment: "x"}}
	tests := []struct {
		name    string
		entries []Entry
		frags   []MissingFragment
		want    map[FailOn]bool
	}{
		{"nothing", nil, nil, map[FailOn]bool{"": false, FailBroken: false, FailInternal: false, FailAny: false, FailNever: false}},
		{"own broken", []Entry{entry(own, store.VerdictBroken)}, nil, map[FailOn]bool{"": true, FailBroken: true, FailInternal: true, FailAny: true, FailNever: false}},
		{"third-party broken", []Entry{entry(other, store.VerdictBroken)}, nil, map[FailOn]bool{FailBroken: true, FailInternal: false, FailAny: true, FailNever: false}},
		{"own transient", []Entry{entry(own, store.VerdictTransient)}, nil, map[FailOn]bool{FailBroken: false, FailInternal: false, FailAny: true}},
		{"third-party then own broken", []Entry{entry(other, store.VerdictBroken), entry(own, store.VerdictBroken)}, nil, map[FailOn]bool{FailInternal: true}},
		{"missing fragment", nil, frag, map[FailOn]bool{FailBroken: true, FailInternal: true, FailAny: true, FailNever: false}},
	}
	for _, tt := range tests {
		for on, want := range tt.want {
			r := &Report{Pass: store.Pass{StartURLs: []string{"https://example.com/"}}, Entries: tt.entries, Fragments: tt.frags, Options: Options{FailOn: on}}
			if got := r.HasBroken(); got != want {
				t.Errorf("%s, fail on %q: HasBroken = %v, want %v", tt.name, on, got, want)
			}
		}
	}
}

func TestPermanentRedirectsAreListedNotFailed(t *testing.T) {
	t.Parallel()
	r := build(t, newMemSource(t, fragHistory()), 1, Options{})
	if len(r.Moved) != 1 || r.Summary.Moved != 1 {
		t.Fatalf("moved = %+v, want the one 301", r.Moved)
	}
	m := r.Moved[0]
	if m.Record.URL != "https://example.com/docs" || len(m.Referrers) != 1 || m.Referrers[0].Line != 15 || MovedTo(m.Record) != "301 Moved Permanently to" {
		t.Errorf("moved entry = %+v", m)
	}
	r.Entries, r.Fragments = nil, nil
	if r.HasBroken() {
		t.Error("a permanent redirect alone makes the exit code 1")
	}
	if only := build(t, newMemSource(t, fragHistory()), 1, Options{OnlyNew: true}); len(only.Moved) != 0 {
		t.Errorf("--only-new lists permanent redirects: %+v", only.Moved)
	}
}

func TestParseFailOn(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]FailOn{"": FailBroken, "internal": FailInternal, " any ": FailAny, "never": FailNever} {
		if got, err := ParseFailOn(in); err != nil || got != want {
			t.Errorf("ParseFailOn(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseFailOn("external"); err == nil {
		t.Error("ParseFailOn accepted external")
	}
}
