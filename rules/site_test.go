package rules

import (
	"net/url"
	"testing"
)

// FollowStart adds to the site the host a start URL redirects to, unless
// the rules say otherwise; nothing else adds one.
func TestFollowStart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, from, to string
		cfg            Config
		want           string
	}{
		{name: "apex to www over https", from: "http://example.com/", to: "https://www.example.com/home", want: "https://www.example.com"},
		{name: "loopback port to port", from: "http://127.0.0.1:8080/", to: "http://localhost:9090/", want: "http://localhost:9090"},
		{name: "with --offline", from: "http://example.com/", to: "https://www.example.com/", cfg: Config{Offline: true}, want: "https://www.example.com"},
		{name: "not a start URL", from: "http://example.com/old", to: "https://elsewhere.example/"},
		{name: "the site already", from: "http://example.com/", to: "https://example.com/"},
		{name: "excluded", from: "http://example.com/", to: "https://www.example.com/", cfg: Config{Exclude: []string{`^https://www\.`}}},
		{name: "a rule checks it", from: "http://example.com/", to: "https://www.example.com/", cfg: Config{Rules: []Rule{{Host: "www.example.com", Action: "check"}}}},
		{name: "not the web", from: "http://example.com/", to: "ftp://example.com/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := tc.cfg
			cfg.Start = []string{"http://example.com/", "http://127.0.0.1:8080/"}
			e, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			to, _ := url.Parse(tc.to)
			if got := e.FollowStart(tc.from, to); got != tc.want {
				t.Fatalf("FollowStart(%s, %s) = %q, want %q", tc.from, tc.to, got, tc.want)
			}
			if d := e.Decide(to); tc.want != "" && (d.Action != Parse || !e.StartHost(to.Host)) {
				t.Errorf("after it, %s is %s (start host %v), want parsed as the site's", tc.to, d.Action, e.StartHost(to.Host))
			}
			if got := e.SiteOrigins(); tc.want == "" && len(got) != 0 || tc.want != "" && (len(got) != 1 || got[0] != tc.want) {
				t.Errorf("SiteOrigins() = %q, want [%s]", got, tc.want)
			}
		})
	}
}
