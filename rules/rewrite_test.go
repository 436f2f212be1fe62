package rules

import (
	"net/url"
	"strings"
	"testing"
)

func TestRewrites(t *testing.T) {
	cfg := Config{
		Start:           []string{"https://example.com/"},
		AliasStartHosts: true,
		Aliases:         map[string][]string{"https://docs.example.com": {"https://manual.example.org", "http://manual.example.org:8080"}},
		Rewrites: []Rewrite{
			{Regex: `^https://blog\.example\.com/(\d{4})/(.*)$`, Replace: "https://example.com/blog/$1/$2"},
			{Regex: `^https://old\.example\.com/`, Replace: "not a url"},
		},
		Unwrap:          []string{"/go/?url=", "out.example.net/r?to="},
		DropParams:      []string{"utm_*", "fbclid", "jsessionid"},
		StripIndex:      true,
		CollapseSlashes: true,
	}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, in, want string
		steps          []string
	}{
		{"nothing to do", "https://example.com/a?b=1", "https://example.com/a?b=1", nil},
		{"www alias", "https://www.example.com/a", "https://example.com/a", []string{"alias https://www.example.com = https://example.com"}},
		{"http alias", "http://example.com/a", "https://example.com/a", []string{"alias http://example.com = https://example.com"}},
		{"http www alias", "http://WWW.example.com:80/a", "https://example.com/a", []string{"alias http://www.example.com = https://example.com"}},
		{"configured alias", "https://manual.example.org/x", "https://docs.example.com/x", []string{"alias https://manual.example.org = https://docs.example.com"}},
		{"configured alias with port", "http://manual.example.org:8080/x", "https://docs.example.com/x", []string{"alias http://manual.example.org:8080 = https://docs.example.com"}},
		{"other port is another origin", "https://example.com:8443/a", "https://example.com:8443/a", nil},
		{"regex", "https://blog.example.com/2024/post?utm_source=x", "https://example.com/blog/2024/post",
			[]string{"rewrite 1 (^https://blog\\.example\\.com/(\\d{4})/(.*)$ -> https://example.com/blog/$1/$2)", "drop_params (utm_source)"}},
		{"regex giving no URL is ignored", "https://old.example.com/a", "https://old.example.com/a", nil},
		{"drop params keeps order", "https://example.com/?b=2&utm_source=x&a=1&UTM_Medium=y&fbclid=z", "https://example.com/?b=2&a=1", []string{"drop_params (utm_source, UTM_Medium, fbclid)"}},
		{"drop every param", "https://example.com/?utm_source=x", "https://example.com/", []string{"drop_params (utm_source)"}},
		{"drop a path parameter", "https://example.com/shop;jsessionid=ABC123/cart;jsessionid=1;x=2", "https://example.com/shop/cart;x=2", []string{"drop_params (jsessionid, jsessionid)"}},
		{"encoded param name", "https://example.com/?utm%5Fsource=x&k=v", "https://example.com/?k=v", []string{"drop_params (utm_source)"}},
		{"strip index.html", "https://example.com/docs/index.html", "https://example.com/docs/", []string{"strip_index"}},
		{"strip index.htm keeps query", "https://example.com/index.htm?p=2", "https://example.com/?p=2", []string{"strip_index"}},
		{"not a whole segment", "https://example.com/myindex.html", "https://example.com/myindex.html", nil},
		{"collapse", "https://example.com//a///b/", "https://example.com/a/b/", []string{"collapse_slashes"}},
		{"unwrap any host", "https://t.example.org/go/?url=https%3A%2F%2Fexample.com%2Fdocs%2F%3Futm_source%3Dmail", "https://example.com/docs/",
			[]string{"unwrap /go/?url=", "drop_params (utm_source)"}},
		{"unwrap relative target", "https://example.com/go/?url=/about/", "https://example.com/about/", []string{"unwrap /go/?url="}},
		{"unwrap nested", "https://out.example.net/r?to=https://x.example.org/go/%3Furl%3Dhttps://www.example.com/", "https://example.com/",
			[]string{"unwrap out.example.net/r?to=", "unwrap /go/?url=", "alias https://www.example.com = https://example.com"}},
		{"unwrap host glob", "https://out.example.com/r?to=https://a.example/", "https://out.example.com/r?to=https://a.example/", nil},
		{"unwrap refuses other schemes", "https://example.com/go/?url=javascript:alert(1)", "https://example.com/go/?url=javascript:alert(1)", nil},
		{"unwrap without the param", "https://example.com/go/?next=x", "https://example.com/go/?next=x", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := e.Explain(tt.in)
			if x.Err != "" {
				t.Fatal(x.Err)
			}
			if x.URL != tt.want {
				t.Errorf("%s became %s, want %s", tt.in, x.URL, tt.want)
			}
			var got []string
			for _, s := range x.Steps {
				got = append(got, s.Rewrite)
			}
			if strings.Join(got, " | ") != strings.Join(tt.steps, " | ") {
				t.Errorf("steps %q, want %q", got, tt.steps)
			}
			if d := e.Decide(mustParse(t, tt.in)); d.URL != x.URL {
				t.Errorf("Decide gave %s, Explain %s", d.URL, x.URL)
			}
			if again := e.Decide(mustParse(t, x.URL)); again.URL != x.URL {
				t.Errorf("rewriting is not idempotent: %s became %s", x.URL, again.URL)
			}
		})
	}
}

func TestDefaultDropParams(t *testing.T) {
	e, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	d := e.Decide(mustParse(t, "https://example.com/?id=7&utm_campaign=x&gclid=1&PHPSESSID=2&ASPSESSIONIDQQ=3"))
	if d.URL != "https://example.com/?id=7" {
		t.Errorf("default drop list left %s", d.URL)
	}
	none, err := New(Config{DropParams: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if d := none.Decide(mustParse(t, "https://example.com/?utm_source=x")); d.URL != "https://example.com/?utm_source=x" {
		t.Errorf("an empty drop list dropped: %s", d.URL)
	}
}

// A drop_params entry without a wildcard is a name, matched whole and in
// any case; one with *, ?, [...] or a backslash is a glob. Only plain
// names here, with session ids kept, so nothing but the names drops.
func TestDropParamsNamesAndGlobs(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		drop     []string
		in, want string
	}{
		{[]string{"fbclid"}, "https://example.com/?fbclid=1&fbclid2=2&xfbclid=3&a=4", "https://example.com/?fbclid2=2&xfbclid=3&a=4"},
		{[]string{" FBCLID "}, "https://example.com/?FbClId=1&a=2", "https://example.com/?a=2"},
		{[]string{"ref", "src"}, "https://example.com/p;ref=1;x=2?src=3&srcset=4", "https://example.com/p;x=2?srcset=4"},
		{[]string{"ref?"}, "https://example.com/?ref=1&ref1=2&ref12=3", "https://example.com/?ref=1&ref12=3"},
		{[]string{"v[0-9]"}, "https://example.com/?v1=1&v=2&va=3", "https://example.com/?v=2&va=3"},
		{[]string{`a\*b`}, "https://example.com/?a*b=1&axb=2", "https://example.com/?axb=2"},
		{[]string{"x_*"}, "https://example.com/?x_1=1&x=2", "https://example.com/?x=2"},
	} {
		e, err := New(Config{DropParams: tt.drop, KeepSessionIDs: true})
		if err != nil {
			t.Fatalf("%q: %v", tt.drop, err)
		}
		if d := e.Decide(mustParse(t, tt.in)); d.URL != tt.want {
			t.Errorf("drop_params %q: %s became %s, want %s", tt.drop, tt.in, d.URL, tt.want)
		}
	}
	if _, err := New(Config{DropParams: []string{" "}}); err == nil {
		t.Error("an empty drop_params entry was taken")
	}
}

// BenchmarkNewDefaults is New with the defaults, as every check starts.
func BenchmarkNewDefaults(b *testing.B) {
	for b.Loop() {
		if _, err := New(Config{Start: []string{"http://127.0.0.1:8080/"}}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestAliasStartHostsLeavesOtherStartsAlone(t *testing.T) {
	e, err := New(Config{Start: []string{"https://example.com/", "http://example.com/legacy/", "http://127.0.0.1:8080/"}, AliasStartHosts: true})
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"http://example.com/a":       "http://example.com/a", // a start origin itself
		"https://www.example.com/a":  "https://example.com/a",
		"https://127.0.0.1:8080/a":   "http://127.0.0.1:8080/a",
		"http://www.127.0.0.1:8080/": "http://www.127.0.0.1:8080/",
	} {
		if d := e.Decide(mustParse(t, in)); d.URL != want {
			t.Errorf("%s became %s, want %s", in, d.URL, want)
		}
	}
}

func TestAliasErrors(t *testing.T) {
	for _, aliases := range []map[string][]string{
		{"https://a.example": {"https://a.example"}},
		{"https://a.example": {"https://b.example"}, "https://b.example": {"https://c.example"}},
		{"mailto:x": {"https://b.example"}},
	} {
		if _, err := New(Config{Aliases: aliases}); err == nil {
			t.Errorf("aliases %v compiled", aliases)
		}
	}
}

// FuzzRewrite runs arbitrary URLs through an engine with every rewrite
// on: no panic, the result parses, and deciding the result again changes
// nothing (the crawler decides each request URL again).
func FuzzRewrite(f *testing.F) {
	e, err := New(Config{
		Start:           []string{"https://example.com/"},
		AliasStartHosts: true,
		Aliases:         map[string][]string{"https://docs.example.com": {"https://manual.example.org"}},
		Rewrites:        []Rewrite{{Regex: `^https://old\.example\.com/(.*)$`, Replace: "https://example.com/$1"}},
		Unwrap:          []string{"/go/?url=", "*.example.net/r?to="},
		StripIndex:      true,
		CollapseSlashes: true,
	})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		"https://www.example.com//a//index.html?utm_source=x&b=1",
		"https://x.example.net/r?to=https%3A%2F%2Fold.example.com%2Fgo%2F%3Furl%3D%2Fa",
		"http://manual.example.org/a;jsessionid=1;b=2/c?fbclid=1",
		"https://example.com/go/?url=https://example.com/go/?url=https://example.com/go/?url=https://example.com/go/?url=https://example.com/go/?url=https://example.com/go/?url=/x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil || !u.IsAbs() {
			return
		}
		d := e.Decide(u)
		if d.Action == Ignore {
			return
		}
		again, err := url.Parse(d.URL)
		if err != nil {
			t.Fatalf("%q decided as %q, which does not parse: %v", raw, d.URL, err)
		}
		// Callers read the host, path and query from d.Parsed instead of
		// parsing d.URL again: they must be the same.
		if p := d.Parsed; p.String() != d.URL || p.Host != again.Host || p.EscapedPath() != again.EscapedPath() || p.RawQuery != again.RawQuery {
			t.Fatalf("%q: Parsed %#v is not URL %q parsed (%#v)", raw, p, d.URL, again)
		}
		if d2 := e.Decide(again); d2.URL != d.URL && strings.Count(raw, "url=")+strings.Count(raw, "to=") < maxUnwrap {
			t.Fatalf("not stable: %q -> %q -> %q", raw, d.URL, d2.URL)
		}
	})
}

func TestStartURLMovedByAlias(t *testing.T) {
	e, err := New(Config{
		Start:   []string{"https://example.net/"},
		Aliases: map[string][]string{"https://example.com": {"https://example.net"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]Action{"https://example.net/": Parse, "https://example.net/a": Parse, "https://example.com/b": Parse, "https://other.example/": Check} {
		if d := e.Decide(mustParse(t, in)); d.Action != want {
			t.Errorf("%s: %s by %s, want %s", in, d.Action, d.Rule, want)
		}
	}
}
