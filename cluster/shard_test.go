package cluster

import (
	"slices"
	"strconv"
	"testing"
)

func TestShardKey(t *testing.T) {
	t.Parallel()
	tests := []struct{ host, want string }{
		{"example.com", "example.com"},
		{"www.example.com", "example.com"},
		{"static.example.com:8443", "example.com"},
		{"WWW.Example.COM.", "example.com"},
		{"a.b.example.co.uk", "example.co.uk"},
		{"user.github.io", "user.github.io"}, // a private suffix: each user is its own domain
		{"127.0.0.1:8080", "127.0.0.1:8080"},
		{"127.0.0.1", "127.0.0.1"},
		{"[::1]:9000", "[::1]:9000"},
		{"localhost:3000", "localhost:3000"},
		{"site7.test", "site7.test"},
	}
	for _, tt := range tests {
		if got := shardKey(tt.host); got != tt.want {
			t.Errorf("shardKey(%q) = %q, want %q", tt.host, got, tt.want)
		}
	}
}

// Hosts that must share an owner do; and shards spread: 256 loopback ports
// land in many shards, not a few.
func TestShard(t *testing.T) {
	t.Parallel()
	for _, pair := range [][2]string{
		{"example.com", "www.example.com:443"},
		{"example.com:80", "cdn.example.com"},
		{"blog.example.co.uk", "example.co.uk"},
	} {
		if a, b := Shard(pair[0]), Shard(pair[1]); a != b {
			t.Errorf("Shard(%q) = %d, Shard(%q) = %d; one domain must have one owner", pair[0], a, pair[1], b)
		}
	}
	seen := map[int]bool{}
	for port := 20000; port < 20256; port++ {
		s := Shard("127.0.0.1:" + strconv.Itoa(port))
		if s < 0 || s >= Shards {
			t.Fatalf("Shard = %d, out of range", s)
		}
		seen[s] = true
	}
	if len(seen) < 128 {
		t.Errorf("256 loopback ports fell into %d shards only", len(seen))
	}
}

func TestParseShards(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    []int
		wantErr bool
	}{
		{"0-3", []int{0, 1, 2, 3}, false},
		{"5", []int{5}, false},
		{"7, 1-2,2,255", []int{1, 2, 7, 255}, false},
		{"0-255", nil, false}, // checked by length below
		{"", nil, true},
		{"256", nil, true},
		{"-1", nil, true},
		{"3-1", nil, true},
		{"a-b", nil, true},
		{"1,,2", nil, true},
	}
	for _, tt := range tests {
		got, err := ParseShards(tt.in)
		switch {
		case tt.wantErr:
			if err == nil {
				t.Errorf("ParseShards(%q) = %v, want an error", tt.in, got)
			}
		case err != nil:
			t.Errorf("ParseShards(%q): %v", tt.in, err)
		case tt.in == "0-255":
			if len(got) != Shards {
				t.Errorf("ParseShards(0-255) has %d shards", len(got))
			}
		case !slices.Equal(got, tt.want):
			t.Errorf("ParseShards(%q) = %v, want %v", tt.in, got, tt.want)
		}
		if err == nil {
			if back, err := ParseShards(FormatShards(got)); err != nil || !slices.Equal(back, got) {
				t.Errorf("FormatShards(%v) = %q reads back as %v, %v", got, FormatShards(got), back, err)
			}
		}
	}
	if got := FormatShards([]int{9, 0, 1, 2, 5, 6, 2}); got != "0-2,5-6,9" {
		t.Errorf("FormatShards = %q", got)
	}
}

// A name gives its shard only when it is exactly the name of that shard:
// the stream, the consumers and the lease bucket hold other names too.
func TestNameShard(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		parse func(string) (int, bool)
		name  string
		want  int
		ok    bool
	}{
		{subjectShard, "lp.todo.0", 0, true},
		{subjectShard, "lp.todo.255", 255, true},
		{subjectShard, "lp.todo.256", 0, false},
		{subjectShard, "lp.todo.07", 0, false},
		{subjectShard, "lp.res.7", 0, false},
		{subjectShard, "lp.todo.", 0, false},
		{subjectShard, "", 0, false},
		{consumerShard, "todo-12", 12, true},
		{consumerShard, "todo-12x", 0, false},
		{consumerShard, "results", 0, false},
		{leaseShard, "shard.200", 200, true},
		{leaseShard, "shard.-1", 0, false},
		{leaseShard, "worker.5", 0, false},
	} {
		if got, ok := tc.parse(tc.name); got != tc.want || ok != tc.ok {
			t.Errorf("shard of %q = %d, %v; want %d, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
