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
		{name: "loopback port to port", from: "http://127.0.0.1:8080/", to: "http://127.0.0.1:9090/", want: "http://127.0.0.1:9090"},
		{name: "an address to a name", from: "http://127.0.0.1:8080/", to: "http://localhost:9090/"},
		{name: "to a login host", from: "http://127.0.0.1:8080/", to: "http://127.0.0.2:8080/login?next=http%3A%2F%2F127.0.0.1%3A8080%2F"},
		{name: "to another site", from: "http://example.com/", to: "https://sso.example.net/"},
		{name: "to a login page of the domain", from: "http://example.com/", to: "https://www.example.com/login?next=/"},
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
			if got, _ := e.FollowStart(tc.from, to); got != tc.want {
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

// StartRedirect keeps a start URL's redirect within the site it names: a
// login, SSO, CDN or parking host is not the site (review11 H1).
func TestStartRedirect(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		from, to string
		want     Landing
	}{
		{"http://example.com/", "https://example.com/", SameSite},
		{"http://example.com/", "https://www.example.com/home", SameSite},
		{"https://www.example.com/", "https://example.com/", SameSite},
		{"http://Example.COM./", "https://docs.example.com:8443/", SameSite},
		{"http://example.co.uk/", "https://www.example.co.uk/", SameSite},
		{"http://localhost:8080/", "http://localhost:9090/", SameSite},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:9090/x", SameSite},
		{"http://[::1]:8080/", "https://[::1]/", SameSite},
		{"http://127.0.0.1:8080/", "http://127.0.0.2:8080/", OtherSite},
		{"http://127.0.0.1:8080/", "http://localhost:8080/", OtherSite},
		{"http://example.com/", "https://example.net/", OtherSite},
		{"http://example.com/", "https://example.com.cdn.net/", OtherSite},
		{"http://other.co.uk/", "https://example.co.uk/", OtherSite},
		{"https://alice.github.io/", "https://bob.github.io/", OtherSite},
		{"http://app.example.com/", "https://sso.example.com/login?next=https%3A%2F%2Fapp.example.com%2F", LoginPage},
		{"http://app.example.com/", "https://idp.example.net/authorize?client_id=1&redirect_uri=https://app.example.com/cb", LoginPage},
		{"http://127.0.0.1:1/", "http://127.0.0.2:2/login?next=http://127.0.0.1:1/", LoginPage},
		{"https://example.com/wiki/", "https://www.example.com/login?return_to=/wiki/", LoginPage},
		{"https://example.com/", "https://cas.example.com/login?service=https%3A%2F%2Fexample.com%2F", LoginPage},
		{"https://example.com/", "https://www.example.com/?lang=en&from=", SameSite},
		{"https://example.com/", "https://www.example.com/?page=/", SameSite},
	} {
		t.Run(tc.from+" to "+tc.to, func(t *testing.T) {
			t.Parallel()
			from, _ := url.Parse(tc.from)
			to, _ := url.Parse(tc.to)
			if got := StartRedirect(from, to); got != tc.want {
				t.Errorf("StartRedirect(%s, %s) = %d, want %d", tc.from, tc.to, got, tc.want)
			}
		})
	}
}
