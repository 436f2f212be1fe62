package rules

import (
	"strings"
	"testing"
	"time"
)

func TestGlob(t *testing.T) {
	tests := []struct {
		glob  string
		sep   byte
		match []string
		miss  []string
	}{
		{"/docs/*", '/', []string{"/docs/a", "/docs/"}, []string{"/docs/a/b", "/doc"}},
		{"/docs/**", '/', []string{"/docs/a", "/docs/a/b/c"}, []string{"/other/docs/a"}},
		{"/**/*.pdf", '/', []string{"/a/b.pdf", "/a/b/c.pdf"}, []string{"/a/b.pdf.html"}},
		{"/v?/", '/', []string{"/v1/", "/v2/"}, []string{"/v10/", "/v//"}},
		{"/[abc]*", '/', []string{"/apple", "/cat"}, []string{"/dog"}},
		{"/[!abc]*", '/', []string{"/dog"}, []string{"/apple"}},
		{"/[a-c]x", '/', []string{"/bx"}, []string{"/dx"}},
		{`/a\*b`, '/', []string{"/a*b"}, []string{"/axb"}},
		{"/a.b(c)+", '/', []string{"/a.b(c)+"}, []string{"/axb(c)"}},
		{"*.example.com", 0, []string{"a.example.com", "a.b.example.com"}, []string{"example.com", "a.example.com.evil"}},
		{"example.*", 0, []string{"example.org", "example.co.uk"}, []string{"www.example.org"}},
	}
	for _, tt := range tests {
		re, err := compileGlob(tt.glob, tt.sep)
		if err != nil {
			t.Errorf("compileGlob(%q): %v", tt.glob, err)
			continue
		}
		for _, s := range tt.match {
			if !re.MatchString(s) {
				t.Errorf("%q does not match %q", tt.glob, s)
			}
		}
		for _, s := range tt.miss {
			if re.MatchString(s) {
				t.Errorf("%q matches %q", tt.glob, s)
			}
		}
	}
	for _, bad := range []string{"", "/[a", `/a\`, "/[]", "/[z-a]"} {
		if _, err := compileGlob(bad, '/'); err == nil {
			t.Errorf("compileGlob(%q) succeeded", bad)
		}
	}
}

func TestRuleMatching(t *testing.T) {
	e, err := New(Config{
		Start: []string{"https://example.com/"},
		Rules: []Rule{
			{Source: "c.toml:1", PathPrefix: "/private/", Action: "skip"},
			{Source: "c.toml:4", Host: "*.example.com", Path: "/downloads/**/*.pdf", Action: "check", Timeout: "60s"},
			{Source: "c.toml:8", Scheme: "http", Host: "legacy.example.com", Action: "ignore"},
			{Source: "c.toml:11", Regex: `^https://(www\.)?linkedin\.com/`, Accept: map[string]string{"999": "unverifiable"}},
			{Source: "c.toml:14", Host: "docs.example.com", Action: "parse"},
			{Source: "c.toml:17", Host: "example.com:8443", Action: "skip"},
			{Source: "c.toml:20", Scheme: "ftp", Action: "ignore"},
			{Source: "c.toml:23", Host: "bücher.example", Action: "skip"},
			{Source: "c.toml:26", Action: "check"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in     string
		action Action
		rule   string
	}{
		{"https://example.com/", Parse, "start URL"},
		{"https://example.com/private/x", Skip, "c.toml:1: rule 1 (path_prefix /private/)"},
		{"https://a.example.com/private/x", Skip, "c.toml:1: rule 1 (path_prefix /private/)"},
		{"https://cdn.example.com/downloads/2024/q1/report.pdf", Check, "c.toml:4: rule 2 (host *.example.com, path /downloads/**/*.pdf)"},
		{"https://cdn.example.com/downloads/report.html", Check, "c.toml:26: rule 9 (every URL)"},
		{"http://legacy.example.com/", Ignore, "c.toml:8: rule 3 (scheme http, host legacy.example.com)"},
		{"https://legacy.example.com/", Check, "c.toml:26: rule 9 (every URL)"},
		{"https://www.linkedin.com/in/x", Check, "c.toml:11: rule 4 (regex ^https://(www\\.)?linkedin\\.com/); default action (other host)"},
		{"https://docs.example.com/guide", Parse, "c.toml:14: rule 5 (host docs.example.com)"},
		{"https://example.com:8443/", Skip, "c.toml:17: rule 6 (host example.com:8443)"},
		{"ftp://example.com/f", Ignore, "c.toml:20: rule 7 (scheme ftp)"},
		{"https://xn--bcher-kva.example/", Skip, "c.toml:23: rule 8 (host bücher.example)"},
		{"https://example.org/", Check, "c.toml:26: rule 9 (every URL)"},
		{"mailto:a@example.com", Ignore, "scheme mailto"},
		{"gopher://example.com/", Skip, "unsupported scheme gopher"},
	}
	for _, tt := range tests {
		d := e.Decide(mustParse(t, tt.in))
		if d.Action != tt.action || d.Rule != tt.rule {
			t.Errorf("Decide(%s) = %s %q, want %s %q", tt.in, d.Action, d.Rule, tt.action, tt.rule)
		}
	}
	// The docs.example.com rule sits after the *.example.com one, so the
	// downloads of docs are checked, not parsed: first match wins.
	if d := e.Decide(mustParse(t, "https://docs.example.com/downloads/a/b.pdf")); d.Action != Check {
		t.Errorf("first match did not win: %s by %s", d.Action, d.Rule)
	}
	if p := e.Decide(mustParse(t, "https://cdn.example.com/downloads/x/y.pdf")).Policy; p.Timeout != 60*time.Second {
		t.Errorf("rule timeout not in the policy: %+v", p)
	}
	if p := e.Decide(mustParse(t, "https://linkedin.com/x")).Policy; p.Accept[999] != "unverifiable" {
		t.Errorf("rule accept not in the policy: %+v", p)
	}
}

func TestQuickFlagsAndRules(t *testing.T) {
	e, err := New(Config{
		Start:   []string{"https://example.com/"},
		Include: []string{`^https://example\.com/docs/`, `^https://partner\.example/`},
		Exclude: []string{`\.zip$`},
		Rules: []Rule{
			{Host: "partner.example", Action: "parse"},
			{PathPrefix: "/docs/old/", Action: "skip"},
			{Host: "example.com", Headers: map[string]string{"X-A": "1"}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in     string
		action Action
		rule   string
	}{
		{"https://example.com/docs/a.zip", Skip, `--exclude \.zip$`},
		{"https://example.com/blog/", Skip, "matches no --include"},
		{"https://partner.example/x", Parse, "rule 1 (host partner.example)"},
		{"https://example.com/docs/old/x", Skip, "rule 2 (path_prefix /docs/old/)"},
		{"https://example.com/docs/new", Parse, "rule 3 (host example.com); default action (start host)"},
	}
	for _, tt := range tests {
		d := e.Decide(mustParse(t, tt.in))
		if d.Action != tt.action || d.Rule != tt.rule {
			t.Errorf("Decide(%s) = %s %q, want %s %q", tt.in, d.Action, d.Rule, tt.action, tt.rule)
		}
	}
	if d := e.Decide(mustParse(t, "https://example.com/")); d.Action != Parse || d.Policy.Header.Get("X-A") != "1" {
		t.Errorf("start URL: %s, policy %+v", d.Action, d.Policy)
	}
}

// TestCredentialsStayOnTheirHost is the contract the crawler relies on: it
// decides every request URL, redirect hops included, and sends what the
// policy holds.
func TestCredentialsStayOnTheirHost(t *testing.T) {
	e, err := New(Config{
		Start:  []string{"https://example.com/"},
		Unwrap: []string{"/go/?url="},
		Rules: []Rule{{
			Host: "staging.example.com", Headers: map[string]string{"X-Token": "${TOKEN}"},
			Cookies: map[string]string{"s": "1"}, User: "u", Password: "${TOKEN}",
			Timeout: "5s",
		}},
		LookupEnv: func(k string) (string, bool) { return "secret", k == "TOKEN" },
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in    string
		creds bool
	}{
		{"https://staging.example.com/a", true},
		// Without scheme = "http" in the rule, never in cleartext.
		{"http://staging.example.com:8080/a", false},
		{"http://staging.example.com/a", false},
		{"https://staging.example.com.evil.example/a", false},
		{"https://evil.example/?h=staging.example.com", false},
		{"https://example.com/", false},
		// The crawler may request this URL as it is: its host is not staging.
		{"https://evil.example/go/?url=https://staging.example.com/a", false},
	}
	for _, tt := range tests {
		d := e.Decide(mustParse(t, tt.in))
		p := d.Policy
		got := p.Header.Get("X-Token") != "" || p.Header.Get("Cookie") != "" || p.User != "" || p.Password != ""
		if got != tt.creds {
			t.Errorf("%s: credentials %v, want %v (policy %s)", tt.in, got, tt.creds, p)
		}
	}
	unwrapped := e.Decide(mustParse(t, "https://evil.example/go/?url=https://staging.example.com/a"))
	if unwrapped.URL != "https://staging.example.com/a" || unwrapped.Policy.Timeout != 5*time.Second {
		t.Errorf("unwrapped decision: %s %s", unwrapped.URL, unwrapped.Policy)
	}
	if p := e.Decide(mustParse(t, unwrapped.URL)).Policy; p.User != "u" {
		t.Errorf("the unwrapped URL itself gets no credentials: %s", p)
	}
}

func TestCredentialsOverHTTPOnlyWhenNamed(t *testing.T) {
	t.Parallel()
	creds := Rule{Host: "intranet.example", User: "u", Password: "p"}
	plain := creds
	plain.Scheme = "http"
	for _, tt := range []struct {
		rule     Rule
		url      string
		creds    bool
		warnings int
	}{
		{creds, "https://intranet.example/", true, 1},
		{creds, "http://intranet.example/", false, 1},
		{plain, "http://intranet.example/", true, 0},
		{plain, "https://intranet.example/", false, 0}, // the rule does not match https at all
	} {
		e, err := New(Config{Rules: []Rule{tt.rule}})
		if err != nil {
			t.Fatal(err)
		}
		if got := e.Decide(mustParse(t, tt.url)).Policy.User != ""; got != tt.creds {
			t.Errorf("scheme %q, %s: credentials %v, want %v", tt.rule.Scheme, tt.url, got, tt.creds)
		}
		if w := e.Warnings(); len(w) != tt.warnings || len(w) > 0 && !strings.Contains(w[0], `scheme = "https"`) {
			t.Errorf("scheme %q: warnings %q, want %d naming the scheme", tt.rule.Scheme, w, tt.warnings)
		}
	}
}

func TestPolicyString(t *testing.T) {
	e, err := New(Config{
		Rules: []Rule{{
			Host: "a.example", Timeout: "90s",
			Recheck:  map[string]string{"ok": "7d", "broken": "2h"},
			Accept:   map[string]string{"403": "unverifiable", "429": "transient"},
			Headers:  map[string]string{"x-audit": "linkpatrol", "Authorization": "Bearer abc", "X-Key": "k-${KEY}"},
			User:     "${USER}",
			Password: "plain",
		}},
		LookupEnv: func(k string) (string, bool) { return "v-" + k, true },
	})
	if err != nil {
		t.Fatal(err)
	}
	p := e.Decide(mustParse(t, "https://a.example/")).Policy
	want := "timeout 1m30s; recheck ok=7d broken=2h; accept 403=unverifiable 429=transient; " +
		"header Authorization: <redacted>; header X-Audit: linkpatrol; header X-Key: <from $KEY>; basic auth <from $USER>:<redacted>"
	if got := p.String(); got != want {
		t.Errorf("Policy.String() =\n%s\nwant\n%s", got, want)
	}
	if p.Header.Get("X-Key") != "k-v-KEY" || p.User != "v-USER" {
		t.Errorf("expansion: %v %q", p.Header, p.User)
	}
	var nilPolicy *Policy
	if nilPolicy.String() != "defaults" || (&Policy{}).String() != "defaults" {
		t.Error("an empty policy does not print as defaults")
	}
}

func TestExpandEnv(t *testing.T) {
	lookup := func(k string) (string, bool) {
		v, ok := map[string]string{"A": "1", "B": "two", "EMPTY": ""}[k]
		return v, ok
	}
	tests := []struct {
		in, want, err string
	}{
		{"plain", "plain", ""},
		{"$A", "$A", ""},
		{"${A}-${B}", "1-two", ""},
		{"x${A}y", "x1y", ""},
		{"${MISSING}", "", "environment variable MISSING is not set"},
		{"${EMPTY}", "", "environment variable EMPTY is empty"},
		{"${A", "", "without a closing"},
		{"${1A}", "", "is not an environment variable name"},
	}
	for _, tt := range tests {
		got, _, err := expandEnv(tt.in, lookup)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("expandEnv(%q) error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("expandEnv(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}
