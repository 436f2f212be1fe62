package rules

import (
	"strings"
	"testing"
)

// TestExplainGolden runs a handful of URLs through the example config and
// compares what explain prints with testdata/explain.golden.
func TestExplainGolden(t *testing.T) {
	env := func(k string) (string, bool) { return "s3cret-" + k, true }
	doc := uncommentExample() + `
[[rule]]
host = "intranet.example.org"
headers = { "X-Token" = "${INTRANET_TOKEN}" }
user = "audit"
password = "${INTRANET_PASSWORD}"
`
	// The example ends with a rule for every ftp URL; this one comes
	// after it and is reached by its host.
	f, err := ParseConfig("linkpatrol.toml", []byte(doc), env, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	// The settings of the command's example, uncommented as well.
	f.Config.Start = []string{"https://example.com/"}
	f.Config.Exclude = []string{`\.(zip|tar\.gz|iso)$`}
	f.Config.Accept = []int{429}
	f.Config.Headers = []HeaderFlag{{Name: "Accept-Language", Value: "en"}}
	f.Config.Traps = DefaultTraps()
	e, err := New(f.Config)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, u := range []string{
		"HTTP://WWW.Example.COM:80/docs/./guide/../index.html?utm_source=news&page=2#Install",
		"https://example.com/private/report.html",
		"https://cdn.example.com/downloads/2024/q1/report.pdf",
		"https://t.example.org/go/?url=https%3A%2F%2Fblog.example.com%2F2024%2Fhello%3Ffbclid%3Dx",
		"https://www.linkedin.com/company/example",
		"https://intranet.example.org/wiki/",
		"https://staging.example.com/",
		"http://10.1.2.3:8080/status",
		"mailto:webmaster@example.com",
		"ftp://ftp.example.com/pub/",
		"not a url",
	} {
		if err := e.Explain(u).Write(&b); err != nil {
			t.Fatal(err)
		}
		b.WriteString("\n")
	}
	out := b.String()
	if strings.Contains(out, "s3cret") {
		t.Errorf("explain prints a secret:\n%s", out)
	}
	golden(t, "explain.golden", out)
}

// TestExplainPolicyAfterRewrite: the policy explain shows is the one the
// crawl sends, to the URL after rewrites; the URL as written gets its
// rule's header only where a request goes to it as written (a redirect
// hop), which here it never may, being on another host.
func TestExplainPolicyAfterRewrite(t *testing.T) {
	t.Parallel()
	e, err := New(Config{
		Start:    []string{"https://example.com/"},
		Rewrites: []Rewrite{{Regex: `^https://old\.example\.com/(.*)$`, Replace: "https://example.com/$1"}},
		Rules:    []Rule{{Scheme: "https", Host: "example.com", Headers: map[string]string{"X-Token": "t"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	x := e.Explain("https://old.example.com/a")
	if x.URL != "https://example.com/a" || !strings.Contains(x.Policy, "X-Token") {
		t.Errorf("explain: %s, policy %q; want the rule's header on https://example.com/a", x.URL, x.Policy)
	}
	d := e.Decide(mustParse(t, "https://old.example.com/a"))
	if d.Request.Header.Get("X-Token") != "t" || d.Policy.Header.Get("X-Token") != "" {
		t.Errorf("Request %s, Policy %s: want the header for the rewritten URL only", d.Request, d.Policy)
	}
}
