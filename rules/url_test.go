package rules

import (
	"net/url"
	"testing"
)

func mustParse(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	return u
}

func TestResolve(t *testing.T) {
	const base = "https://example.com/docs/guide/page.html?x=1#top"
	tests := []struct {
		name, ref, want string
	}{
		{"relative file", "other.html", "https://example.com/docs/guide/other.html"},
		{"parent", "../index.html", "https://example.com/docs/index.html"},
		{"too many parents", "../../../../a", "https://example.com/a"},
		{"absolute path", "/about/", "https://example.com/about/"},
		{"protocol relative", "//cdn.example.net/x.js", "https://cdn.example.net/x.js"},
		{"absolute", "http://other.org/p", "http://other.org/p"},
		{"empty is the page itself", "", "https://example.com/docs/guide/page.html?x=1"},
		{"fragment only", "#sec", "https://example.com/docs/guide/page.html?x=1#sec"},
		{"query only", "?y=2", "https://example.com/docs/guide/page.html?y=2"},
		{"surrounding whitespace", " \t\n other.html \r\n", "https://example.com/docs/guide/other.html"},
		{"newline inside", "oth\ner.ht\tml", "https://example.com/docs/guide/other.html"},
		{"backslashes", `..\img\a.png`, "https://example.com/docs/img/a.png"},
		{"backslash in authority", `\\cdn.example.net\x.js`, "https://cdn.example.net/x.js"},
		{"backslash kept in query", `a.html?p=a\b`, `https://example.com/docs/guide/a.html?p=a\b`},
		{"same-scheme opaque http", "https:other.html", "https://example.com/docs/guide/other.html"},
		{"other-scheme opaque http", "http:other.org/x", "http://other.org/x"},
		{"mailto", "mailto:someone@example.com", "mailto:someone@example.com"},
		{"javascript", "javascript:void(0)", "javascript:void(0)"},
		{"upper-case scheme", "HTTPS://Example.COM/A", "https://Example.COM/A"},
		{"space inside path", "a b.html", "https://example.com/docs/guide/a%20b.html"},
		// A "%" that starts no escape is written %25 in a path and a
		// fragment (a URL holds it no other way); a query keeps it as
		// written, and a browser sends it so (qa11 §6).
		{"stray percent in fragment", "#%_sec_6.2", "https://example.com/docs/guide/page.html?x=1#%25_sec_6.2"},
		{"stray percent in path", "/a%zz", "https://example.com/a%25zz"},
		{"stray percent alone", "%", "https://example.com/docs/guide/%25"},
		{"stray percent at the end", "100%", "https://example.com/docs/guide/100%25"},
		{"stray and real escapes", "/a%2Fb%g?q=%41%", "https://example.com/a%2Fb%25g?q=%41%"},
		{"stray percent in query", "a.html?q=100%&r=%zz#%x", "https://example.com/docs/guide/a.html?q=100%&r=%zz#%25x"},
		{"escaped percent in query", "a.html?q=100%25", "https://example.com/docs/guide/a.html?q=100%25"},
		{"question mark in fragment only", "a%.html#x?%", "https://example.com/docs/guide/a%25.html#x?%25"},
		// A colon before any "/", "?" or "#" after characters that cannot
		// start a scheme is part of a relative path, as browsers read it
		// (wiki dumps, file names with times; qa8 U1).
		{"colon after an underscore", "Help_talk:Contents.html", "https://example.com/docs/guide/Help_talk:Contents.html"},
		{"colon after a digit first", "2024-01-01T12:00.html", "https://example.com/docs/guide/2024-01-01T12:00.html"},
		{"colon after a comma", "a,b:c.html", "https://example.com/docs/guide/a,b:c.html"},
		{"colon first", ":x.html", "https://example.com/docs/guide/:x.html"},
		{"colon with a query and fragment", "User_talk:Me?a=1#s", "https://example.com/docs/guide/User_talk:Me?a=1#s"},
		{"colon after a slash is a path", "a_b/c:d.html", "https://example.com/docs/guide/a_b/c:d.html"},
	}
	b := mustParse(t, base)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resolve(b, tt.ref)
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tt.ref, err)
			}
			if got.String() != tt.want {
				t.Errorf("Resolve(%q) = %s, want %s", tt.ref, got, tt.want)
			}
		})
	}
}

func TestResolveBackslashesInFileURLs(t *testing.T) {
	got, err := Resolve(mustParse(t, "file:///site/a/index.html"), `..\b\c.html`)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != "file:///site/b/c.html" {
		t.Errorf("got %s", got)
	}
}

func TestResolveErrors(t *testing.T) {
	b := mustParse(t, "https://example.com/")
	for _, ref := range []string{
		"http://exa mple.com/",
		"http://[::1/",
		"http://host:port/",
		"http:///nohost",
		"a\x00b",
	} {
		if u, err := Resolve(b, ref); err == nil {
			t.Errorf("Resolve(%q) = %s, want an error", ref, u)
		}
	}
	if _, err := Resolve(nil, "relative/path"); err == nil {
		t.Error("a relative reference without a base resolved")
	}
}

func TestCanonicalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"HTTP://EXAMPLE.COM/", "http://example.com/"},
		{"http://example.com", "http://example.com/"},
		{"http://example.com:80/a", "http://example.com/a"},
		{"https://example.com:443/a", "https://example.com/a"},
		{"http://example.com:443/a", "http://example.com:443/a"},
		{"https://example.com:8443/a", "https://example.com:8443/a"},
		{"http://example.com:/a", "http://example.com/a"},
		{"http://example.com:0080/a", "http://example.com/a"},
		{"http://example.com./a", "http://example.com/a"},
		{"http://example.com/a/./b/../c", "http://example.com/a/c"},
		{"http://example.com/a/b/..", "http://example.com/a/"},
		{"http://example.com/a/b/.", "http://example.com/a/b/"},
		{"http://example.com/../../a", "http://example.com/a"},
		{"http://example.com/a/%2E%2E/b", "http://example.com/b"},
		{"http://example.com/a/.hidden/..x", "http://example.com/a/.hidden/..x"},
		{"http://example.com/a//b", "http://example.com/a//b"},
		{"http://example.com/%7euser", "http://example.com/~user"},
		{"http://example.com/%7Euser/%41%62", "http://example.com/~user/Ab"},
		{"http://example.com/a%2fb", "http://example.com/a%2Fb"},
		{"http://example.com/a%2Fb", "http://example.com/a%2Fb"},
		{"http://example.com/a b", "http://example.com/a%20b"},
		{"http://example.com/a%20b", "http://example.com/a%20b"},
		{"http://example.com/caf%c3%a9", "http://example.com/caf%C3%A9"},
		{"http://example.com/café", "http://example.com/caf%C3%A9"},
		{"http://example.com/[x]", "http://example.com/%5Bx%5D"},
		{"http://example.com/a!$&'()*+,;=:@b", "http://example.com/a!$&'()*+,;=:@b"},
		{"http://example.com/?q=a b&r=%7e&s=%2f", "http://example.com/?q=a%20b&r=~&s=%2F"},
		{"http://example.com/?z=1&a=2", "http://example.com/?z=1&a=2"},
		{"http://example.com/?a=1+2", "http://example.com/?a=1+2"},
		{"http://example.com/?a=%zz", "http://example.com/?a=%zz"},
		{"http://example.com/?a=%25zz", "http://example.com/?a=%25zz"},
		{"http://example.com/?a=%7e%z%e9%", "http://example.com/?a=~%z%E9%"},
		{"http://example.com/a?", "http://example.com/a"},
		{"http://example.com/a#frag", "http://example.com/a"},
		{"http://example.com/a?b#", "http://example.com/a?b"},
		{"http://user:pa%20ss@Example.com/", "http://user:pa%20ss@example.com/"},
		{"http://[::1]:80/", "http://[::1]/"},
		{"http://[0:0:0:0:0:0:0:1]:8080/x", "http://[::1]:8080/x"},
		{"http://[2001:DB8::A]/", "http://[2001:db8::a]/"},
		{"http://127.0.0.1:80/", "http://127.0.0.1/"},
		{"http://BÜCHER.example/", "http://xn--bcher-kva.example/"},
		{"http://xn--bcher-kva.example/", "http://xn--bcher-kva.example/"},
		{"http://例え.テスト/", "http://xn--r8jz45g.xn--zckzah/"},
		{"MAILTO:Someone@Example.com", "mailto:Someone@Example.com"},
		{"file:///site/a/../b.html", "file:///site/b.html"},
		{"file:", "file:///"},
		{"file:///site/?q=1", "file:///site/"},
		{"file:///site/style.css?v=3#x", "file:///site/style.css"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			in := mustParse(t, tt.in)
			before := in.String()
			got := Canonicalize(in).String()
			if got != tt.want {
				t.Errorf("Canonicalize(%s) = %s, want %s", tt.in, got, tt.want)
			}
			if in.String() != before {
				t.Errorf("input modified: %s became %s", before, in)
			}
			if again := Canonicalize(mustParse(t, got)).String(); again != got {
				t.Errorf("not idempotent: %s became %s", got, again)
			}
		})
	}
}

func TestActionNames(t *testing.T) {
	for _, a := range []Action{Parse, Check, Skip, Ignore} {
		got, err := ParseAction(" " + a.String() + " ")
		if err != nil || got != a {
			t.Errorf("ParseAction(%q) = %v, %v", a.String(), got, err)
		}
	}
	if _, err := ParseAction("follow"); err == nil {
		t.Error("ParseAction accepted an unknown name")
	}
	if got := Action(0).String(); got != "Action(0)" {
		t.Errorf("zero action prints %q", got)
	}
}

// FuzzResolveCanonicalize checks that no reference panics Resolve or
// Canonicalize, and that the canonical form is a fixed point.
func FuzzResolveCanonicalize(f *testing.F) {
	for _, s := range []string{
		"", "a.html", "../x/./y", "//h/p", "http://Ex.COM:80/%7e?a=b#c", `\\h\p`,
		"http://[::1]:8080/", "mailto:x@y", "http://例え.テスト/", "?", "#", "%2e%2E/",
		"http://h/a b?c d", "https:foo", "file:///a/b",
		"http://u:p@h/", "http://h/a(b)/%41?", "http://h/a;jsessionid=1?q", "http://h/%29%29x))/", "HTTP://H_x/",
	} {
		f.Add("https://example.com/dir/page.html", s)
	}
	f.Fuzz(func(t *testing.T, base, ref string) {
		b, err := url.Parse(base)
		if err != nil || !b.IsAbs() {
			b = nil
		}
		u, err := Resolve(b, ref)
		if err != nil {
			return
		}
		if got, want := canonicalString(u), u.String(); got != want {
			t.Fatalf("canonicalString(%q) = %q, String() = %q", ref, got, want)
		}
		cu := Canonicalize(u)
		c := cu.String()
		if got := canonicalString(cu); got != c {
			t.Fatalf("canonicalString(Canonicalize(%q)) = %q, String() = %q", ref, got, c)
		}
		p, err := url.Parse(c)
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", c, ref, err)
		}
		if again := Canonicalize(p).String(); again != c {
			t.Fatalf("not idempotent for %q: %q then %q", ref, c, again)
		}
	})
}

// resolvePlain, where it answers, gives what resolve gives, field for field.
func FuzzResolvePlain(f *testing.F) {
	for _, s := range []string{
		"a.html", "p/12.html#sec-2", "/p/3.html", "./p/5.html", "../x", "a/./b", "a/..", "//h/p",
		"a.html#", "#top", "a b", "a%20b", "a:b", "a?q", "a.html#x y", "a//b", ".", "..", "...", "a/...",
		"~u/x_y-z.html", "/", "a/", "A.HTML",
	} {
		f.Add("https://example.com/dir/page.html", s)
		f.Add("http://u:p@h:8080/a//b/", s)
		f.Add("https://h", s)
	}
	f.Add("https://h/%7Edir/x", "a.html")
	f.Add("https://h/./d/", "a.html")
	f.Add("https://h//d/", "a.html")
	f.Add("HTTP://h/d/", "a.html")
	f.Add("mailto:x@y", "a.html")
	f.Add("http://0", ".//")
	f.Add("https://h/a/b/c", "../../../../x")
	f.Add("https://h/a//b/c", "../../x#f")
	f.Fuzz(func(t *testing.T, base, ref string) {
		b, err := url.Parse(base)
		if err != nil || !b.IsAbs() {
			return
		}
		ref = cleanRef(ref)
		fast := resolvePlain(b, ref)
		if fast == nil {
			return
		}
		slow, err := resolve(b, ref)
		if err != nil {
			t.Fatalf("resolvePlain(%q, %q) = %s, resolve fails: %v", base, ref, fast, err)
		}
		if *fast != *slow || fast.User != slow.User {
			t.Fatalf("resolvePlain(%q, %q) = %#v\nresolve gives %#v", base, ref, *fast, *slow)
		}
	})
}

// BenchmarkResolvePlain is the reference pages write most, through
// Resolve's plain path and through the general one.
//
//	go test -run '^$' -bench ResolvePlain -benchmem ./rules/
func BenchmarkResolvePlain(b *testing.B) {
	base := mustParse(b, "https://example.com/docs/guide/page.html")
	refs := []string{"other.html", "/p/3060.html#sec-2", "img/photo.jpg", "p/8106.html"}
	for _, bb := range []struct {
		name    string
		resolve func(*url.URL, string) (*url.URL, error)
	}{{"plain", Resolve}, {"general", resolve}} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := bb.resolve(base, refs[i%len(refs)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A link's fragment is kept as a browser's URL holds it, the form HTML
// compares with ids first (qa10 Q2): as written, with only controls,
// spaces, quotes, <, >, ` and non-ASCII percent-encoded.
func TestLinkedFragment(t *testing.T) {
	t.Parallel()
	base := mustParse(t, "https://example.com/dir/page.html")
	for _, tc := range []struct{ ref, want string }{
		{"#intro", "intro"},
		{"other.html#%5eup", "%5eup"},
		{"#%5Eup", "%5Eup"},
		{"#^up", "^up"},
		{"#%25%3D", "%25%3D"},
		{"#%25=", "%25="},
		{"#x y", "x%20y"},
		{"#x%20y", "x%20y"},
		{"#naïve", "na%C3%AFve"},
		{"#a\"b<c>`d", "a%22b%3Cc%3E%60d"},
		{"#q?x=1&y=/z", "q?x=1&y=/z"},
		{"#", ""},
		{"page.html", ""},
	} {
		u, err := Resolve(base, tc.ref)
		if err != nil {
			t.Errorf("%q: %v", tc.ref, err)
			continue
		}
		if got := LinkedFragment(u); got != tc.want {
			t.Errorf("%q: fragment %q, want %q", tc.ref, got, tc.want)
		}
	}
}
