package rules

import "testing"

func TestDidYouMean(t *testing.T) {
	t.Parallel()
	keys := []string{"concurrency", "per_host", "db", "timeout", "max_size"}
	for _, tc := range []struct{ word, want string }{
		{"concurency", "concurrency"},
		{"per-host", "per_host"},
		{"timeuot", "timeout"},
		{"x", ""},
		{"b", ""},
		{"dv", ""},
		{"database", ""},
		{"max_sizes", "max_size"},
	} {
		if got := DidYouMean(tc.word, keys); got != tc.want {
			t.Errorf("DidYouMean(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
}
