package rules

import (
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestDecideDefaults(t *testing.T) {
	e, err := New(Config{Start: []string{"https://Example.com/docs/", "http://127.0.0.1:8080/"}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in, url, frag string
		action        Action
		rule          string
	}{
		{"https://example.com/docs/", "https://example.com/docs/", "", Parse, "start URL"},
		{"https://example.com/other#x", "https://example.com/other", "x", Parse, "start host"},
		{"https://EXAMPLE.com:443/a/../b", "https://example.com/b", "", Parse, "start host"},
		// The start host's name under the other scheme, both on default
		// ports, is the same site (qa9 T9); on another port it is not.
		{"http://example.com/", "http://example.com/", "", Parse, "start host"},
		{"http://example.com:8080/", "http://example.com:8080/", "", Check, "other host"},
		{"https://example.com:8443/", "https://example.com:8443/", "", Check, "other host"},
		{"https://www.example.com/", "https://www.example.com/", "", Check, "other host"},
		{"http://127.0.0.1:8080/x", "http://127.0.0.1:8080/x", "", Parse, "start host"},
		{"http://127.0.0.1/x", "http://127.0.0.1/x", "", Check, "other host"},
		{"https://example.com/page#caf%C3%A9", "https://example.com/page", "caf%C3%A9", Parse, "start host"},
		{"mailto:a@example.com", "mailto:a@example.com", "", Ignore, "scheme mailto"},
		{"tel:+4912345", "tel:+4912345", "", Ignore, "scheme tel"},
		{"JavaScript:void(0)", "javascript:void(0)", "", Ignore, "scheme javascript"},
		{"data:image/png;base64,AAAA", "data:image/png;base64,AAAA", "", Ignore, "scheme data"},
		{"ftp://example.com/file", "ftp://example.com/file", "", Skip, "unsupported scheme ftp"},
		{"file:///etc/passwd", "file:///etc/passwd", "", Skip, "file outside the start directory"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			d := e.Decide(mustParse(t, tt.in))
			if d.URL != tt.url || d.Fragment != tt.frag || d.Action != tt.action || d.Rule != tt.rule {
				t.Errorf("Decide(%s) = {%s %q %s %q}, want {%s %q %s %q}",
					tt.in, d.URL, d.Fragment, d.Action, d.Rule, tt.url, tt.frag, tt.action, tt.rule)
			}
			if d.Policy == nil {
				t.Error("nil policy")
			}
		})
	}
}

func TestDecideFileRoot(t *testing.T) {
	e, err := New(Config{Start: []string{"file:///site/index.html"}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in     string
		action Action
		rule   string
	}{
		{"file:///site/index.html", Parse, "start URL"},
		{"file:///site/about/", Parse, "start directory"},
		{"file:///site/a/../../etc/passwd", Skip, "file outside the start directory"},
		{"file:///sitemap.xml", Skip, "file outside the start directory"},
		{"https://example.com/", Check, "other host"},
	}
	for _, tt := range tests {
		d := e.Decide(mustParse(t, tt.in))
		if d.Action != tt.action || d.Rule != tt.rule {
			t.Errorf("Decide(%s) = %s %q, want %s %q", tt.in, d.Action, d.Rule, tt.action, tt.rule)
		}
	}
}

func TestDecideIncludeExclude(t *testing.T) {
	e, err := New(Config{
		Start:   []string{"https://example.com/"},
		Include: []string{`^https://example\.com/docs/`, `^https://api\.example\.com/`},
		Exclude: []string{`/private/`, `\.pdf$`},
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
		{"https://example.com/docs/a", Parse, `--include ^https://example\.com/docs/`},
		{"https://api.example.com/v1", Check, `--include ^https://api\.example\.com/`},
		{"https://example.com/blog/", Skip, "matches no --include"},
		{"https://example.com/docs/private/x", Skip, "--exclude /private/"},
		{"https://example.com/docs/a.pdf", Skip, `--exclude \.pdf$`},
		{"mailto:x@example.com", Ignore, "scheme mailto"},
	}
	for _, tt := range tests {
		d := e.Decide(mustParse(t, tt.in))
		if d.Action != tt.action || d.Rule != tt.rule {
			t.Errorf("Decide(%s) = %s %q, want %s %q", tt.in, d.Action, d.Rule, tt.action, tt.rule)
		}
	}
}

func TestExcludedStartURL(t *testing.T) {
	e, err := New(Config{Start: []string{"https://example.com/"}, Exclude: []string{"example"}})
	if err != nil {
		t.Fatal(err)
	}
	if d := e.Decide(mustParse(t, "https://example.com/")); d.Action != Skip {
		t.Errorf("an excluded start URL got %s by %q", d.Action, d.Rule)
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{Start: []string{"ftp://example.com/"}}, `start URL "ftp://example.com/"`},
		{Config{Start: []string{"http://exa mple.com/"}}, `start URL "http://exa mple.com/"`},
		{Config{Include: []string{"("}}, `--include "("`},
		{Config{Exclude: []string{"[a"}}, `--exclude "[a"`},
	}
	for _, tt := range tests {
		_, err := New(tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) error = %v, want one naming %s", tt.cfg, err, tt.want)
		}
	}
}

// BenchmarkLink is the per-link work of the crawler: resolve an attribute
// value against its page, canonicalize and decide.
func BenchmarkLink(b *testing.B) {
	e, err := New(Config{Start: []string{"https://example.com/"}})
	if err != nil {
		b.Fatal(err)
	}
	base := mustParse(b, "https://example.com/docs/guide/page.html")
	refs := []string{
		"other.html", "../index.html#top", "/about/", "https://cdn.example.net/lib.js",
		"img/photo.jpg", "?page=2", "mailto:hello@example.com", "https://Example.com/Docs/%7Euser/",
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		u, err := Resolve(base, refs[i%len(refs)])
		if err != nil {
			b.Fatal(err)
		}
		_ = e.Decide(u)
	}
}

// BenchmarkDecideGeneratedSite is Decide alone on the link forms of
// cmd/sitegen's pages, which the crawler decides on every miss of its
// resolved-link cache (three links in four there). Instructions per op,
// counted with callgrind, are steadier than ns/op on a busy machine.
func BenchmarkDecideGeneratedSite(b *testing.B) {
	e, err := New(Config{Start: []string{"http://127.0.0.1:8080/"}})
	if err != nil {
		b.Fatal(err)
	}
	base := mustParse(b, "http://127.0.0.1:8080/p/5.html")
	var us []*url.URL
	for _, ref := range []string{"4090.html", "/p/9602.html#sec-2", "../p/8471.html", "/img/497.png", "/p/3341.html", "/static/site.css"} {
		u, err := Resolve(base, ref)
		if err != nil {
			b.Fatal(err)
		}
		us = append(us, u)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = e.Decide(us[i%len(us)])
	}
}

// BenchmarkLinkExampleConfig is BenchmarkLink with the rules and rewrites
// of the example config.
func BenchmarkLinkExampleConfig(b *testing.B) {
	f, err := ParseConfig("example.toml", []byte(ExampleRules()), func(string) (string, bool) { return "", false }, Settings{})
	if err != nil {
		b.Fatal(err)
	}
	e, err := New(f.Config)
	if err != nil {
		b.Fatal(err)
	}
	base := mustParse(b, "https://example.com/docs/guide/page.html")
	refs := []string{
		"other.html?utm_source=x&id=2", "../index.html#top", "/private/x", "https://cdn.example.com/downloads/a/b.pdf",
		"http://www.example.com/img/photo.jpg", "?page=2", "mailto:hello@example.com", "https://www.linkedin.com/in/x",
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		u, err := Resolve(base, refs[i%len(refs)])
		if err != nil {
			b.Fatal(err)
		}
		_ = e.Decide(u)
	}
}

// A URL with a stray "%" is kept as %25, but a person writes patterns from
// the page's source: they match it as written too.
func TestRulesMatchStrayPercentAsWritten(t *testing.T) {
	e, err := New(Config{
		Start:   []string{"https://example.com/"},
		Exclude: []string{`/100%_off`},
		Rules:   []Rule{{Regex: `/legacy%zz`, Action: "ignore"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	b := mustParse(t, "https://example.com/")
	for _, tt := range []struct {
		ref    string
		action Action
	}{
		{"/100%_off.html", Skip},
		{"/legacy%zz/a", Ignore},
		{"/100%25_off.html", Skip}, // written escaped, the same URL
		{"/a%2541", Parse},         // a literal "%41", not a stray "%"
	} {
		u, err := Resolve(b, tt.ref)
		if err != nil {
			t.Fatalf("Resolve(%q): %v", tt.ref, err)
		}
		if d := e.Decide(u); d.Action != tt.action {
			t.Errorf("Decide(%s) = %s (%s), want %s", u, d.Action, d.Rule, tt.action)
		}
	}
	if got := asWritten("https://example.com/a%25zz/%2541%25"); got != "https://example.com/a%zz/%2541%" {
		t.Errorf("asWritten = %s", got)
	}
}

// --accept takes a status as ok everywhere, under a rule's own accept for
// the same status.
func TestRunAccept(t *testing.T) {
	t.Parallel()
	e, err := New(Config{
		Start:  []string{"https://example.com/"},
		Accept: []int{429, 403},
		Rules:  []Rule{{Host: "strict.example", Accept: map[string]string{"403": "broken"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		url    string
		status int
		want   string
	}{
		{"https://example.com/a", 429, "ok"},
		{"https://other.example/", 403, "ok"},
		{"https://strict.example/", 403, "broken"},
		{"https://strict.example/", 429, "ok"},
		{"https://example.com/a", 404, ""},
	} {
		if got := e.Decide(mustParse(t, tc.url)).Policy.Accept[tc.status]; got != tc.want {
			t.Errorf("%s %d: %q, want %q", tc.url, tc.status, got, tc.want)
		}
	}
	if _, err := New(Config{Accept: []int{42}}); err == nil || !strings.Contains(err.Error(), "--accept 42: not an HTTP status code") {
		t.Errorf("accept 42: %v", err)
	}
}

// -H goes to the start origins, or to the https host it names, and never
// anywhere else: not to another host, not to the named host over http.
func TestHeaderFlags(t *testing.T) {
	t.Parallel()
	var hs []HeaderFlag
	for _, s := range []string{"X-Site: 1", "api.example=X-Api: k=v", "Authorization: Bearer t"} {
		h, err := ParseHeaderFlag(s)
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	if hs[1] != (HeaderFlag{Host: "api.example", Name: "X-Api", Value: "k=v"}) {
		t.Errorf("parsed %+v", hs[1])
	}
	e, err := New(Config{
		Start:   []string{"http://127.0.0.1:8080/"},
		Headers: hs,
		Rules:   []Rule{{Host: "127.0.0.1:8080", Scheme: "http", Headers: map[string]string{"X-Site": "rule", "X-Rule": "r"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		url  string
		want string
	}{
		{"http://127.0.0.1:8080/a", "Authorization=Bearer t X-Rule=r X-Site=1"},
		{"https://api.example/v1", "X-Api=k=v"},
		{"http://api.example/v1", ""},
		{"http://127.0.0.1:9090/", ""},
		{"https://other.example/", ""},
	} {
		var got []string
		h := e.Decide(mustParse(t, tc.url)).Policy.Header
		for _, k := range slices.Sorted(maps.Keys(h)) {
			got = append(got, k+"="+h.Get(k))
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s: headers %q, want %q", tc.url, strings.Join(got, " "), tc.want)
		}
	}
	env, err := New(Config{
		Start:     []string{"https://example.com/"},
		Headers:   []HeaderFlag{{Name: "X-Key", Value: "${KEY}"}},
		LookupEnv: func(string) (string, bool) { return "s3cret", true },
	})
	if err != nil {
		t.Fatal(err)
	}
	p := env.Decide(mustParse(t, "https://example.com/")).Policy
	if p.Header.Get("X-Key") != "s3cret" || strings.Contains(p.String(), "s3cret") {
		t.Errorf("${KEY}: header %q, shown as %q; want the value sent and redacted", p.Header.Get("X-Key"), p.String())
	}
	if _, err := New(Config{Headers: []HeaderFlag{{Name: "X-Key", Value: "${NOPE_UNSET}"}}, LookupEnv: func(string) (string, bool) { return "", false }}); err == nil {
		t.Error("unset ${NOPE_UNSET}: no error")
	}
	for s, want := range map[string]HeaderFlag{
		"X-Token:a=b:c":         {Name: "X-Token", Value: "a=b:c"},
		"X-Token:=b:c":          {Name: "X-Token", Value: "=b:c"},
		"127.0.0.1:9090=X: y":   {Host: "127.0.0.1:9090", Name: "X", Value: "y"},
		"[::1]:9090=X: y":       {Host: "[::1]:9090", Name: "X", Value: "y"},
		"http://a.example=X: y": {Host: "a.example", Name: "X", Value: "y", Cleartext: true},
	} {
		if h, err := ParseHeaderFlag(s); err != nil || h != want {
			t.Errorf("ParseHeaderFlag(%q) = %+v, %v; want %+v", s, h, err, want)
		}
	}
	for _, bad := range []string{"no colon", "Bad Name: x", "http://=X: y", "http://a.example/path=X: y"} {
		if _, err := ParseHeaderFlag(bad); err == nil {
			t.Errorf("ParseHeaderFlag(%q): no error", bad)
		}
	}
}

// headerRow is a URL with the -H headers sent to it and those withheld
// (names, sorted, space-separated).
type headerRow struct{ url, sent, withheld string }

// checkHeaders checks what e sends to and withholds from each row's URL,
// and that no header is both: a warning would say a header was not sent
// when it was (review10 R1).
func checkHeaders(t *testing.T, e *Engine, rows []headerRow) {
	t.Helper()
	for _, tc := range rows {
		u := mustParse(t, tc.url)
		header := e.Decide(u).Policy.Header
		sent := slices.Sorted(maps.Keys(header))
		var withheld []string
		for _, h := range e.Withheld(u) {
			withheld = append(withheld, h.Name)
			if header.Get(h.Name) != "" {
				t.Errorf("%s: %s both sent and withheld", tc.url, h.Name)
			}
		}
		if strings.Join(sent, " ") != tc.sent || strings.Join(withheld, " ") != tc.withheld {
			t.Errorf("%s: sent %q, withheld %q; want %q, %q", tc.url, sent, withheld, tc.sent, tc.withheld)
		}
	}
}

// A -H for another host goes over plain http only when written
// http://HOST=; otherwise Withheld names it for each http URL of the host,
// so a check can say it was never sent, and one naming a start host that
// is only reached over http is refused: it could never be sent (qa4 F16).
func TestHeaderFlagsOverHTTP(t *testing.T) {
	t.Parallel()
	parse := func(s string) HeaderFlag {
		h, err := ParseHeaderFlag(s)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	plain, clear, tls := parse("127.0.0.1:9090=X-Secret: s3"), parse("http://127.0.0.1:9191=X-Clear: c"), parse("https://api.example=X-Api: k")
	if !clear.Cleartext || clear.Host != "127.0.0.1:9191" || plain.Cleartext || tls.Cleartext || tls.Host != "api.example" {
		t.Fatalf("parsed %+v, %+v, %+v", plain, clear, tls)
	}
	e, err := New(Config{Start: []string{"http://127.0.0.1:8080/"}, Headers: []HeaderFlag{plain, clear, tls}})
	if err != nil {
		t.Fatal(err)
	}
	checkHeaders(t, e, []headerRow{
		{"http://127.0.0.1:9090/landing", "", "X-Secret"},
		{"https://127.0.0.1:9090/landing", "X-Secret", ""},
		{"http://127.0.0.1:9191/", "X-Clear", ""},
		{"https://127.0.0.1:9191/", "X-Clear", ""},
		{"http://api.example/", "", "X-Api"},
		{"http://other.example/", "", ""},
		{"http://127.0.0.1:8080/", "", ""},
	})
	if !e.WithholdsAny() {
		t.Error("WithholdsAny: false with https-only host headers")
	}
	// A header without HOST= goes to the start URLs' exact origins: not to
	// the start host under the other scheme, though its pages are the
	// site's own (qa9 T9); Withheld names it there, so that a 401 on
	// http://start-host/… is explained (review9).
	own := parse("Authorization: Bearer t")
	e, err = New(Config{Start: []string{"https://site.example/", "http://127.0.0.1:8080/"}, Headers: []HeaderFlag{own}})
	if err != nil {
		t.Fatal(err)
	}
	checkHeaders(t, e, []headerRow{
		{"https://site.example/a", "Authorization", ""},
		{"http://site.example/a", "", "Authorization"},
		{"http://site.example:8443/a", "", ""},
		{"http://127.0.0.1:8080/a", "Authorization", ""},
		{"https://127.0.0.1:8080/a", "", ""},
		{"https://other.example/", "", ""},
	})
	if !e.WithholdsAny() {
		t.Error("WithholdsAny: false with a start-host header and a start host on its default port")
	}
	// The -H a warning asks for, given too, sends the header there: it is
	// not withheld, or the warning says a header was not sent when it was
	// and nothing silences it (review10 R1).
	e, err = New(Config{Start: []string{"https://site.example/"}, Headers: []HeaderFlag{own, parse("http://site.example=Authorization: Bearer t"), plain, parse("http://127.0.0.1:9090=X-Secret: s3")}})
	if err != nil {
		t.Fatal(err)
	}
	checkHeaders(t, e, []headerRow{
		{"http://site.example/a", "Authorization", ""},
		{"http://127.0.0.1:9090/landing", "X-Secret", ""},
	})
	if only, _ := New(Config{Headers: []HeaderFlag{clear}}); only.WithholdsAny() {
		t.Error("WithholdsAny: true with only an http:// host header")
	}
	// The site may redirect to https, where the header is sent: not a
	// refusal (the check warns where it was withheld).
	if _, err := New(Config{Start: []string{"http://127.0.0.1:8080/"}, Headers: []HeaderFlag{parse("127.0.0.1:8080=X-Secret: s3")}}); err != nil {
		t.Errorf("HOST= for an http start host: %v", err)
	}
	if _, err := New(Config{Start: []string{"http://127.0.0.1:8080/"}, Headers: []HeaderFlag{parse("http://127.0.0.1:8080=X-Secret: s3")}}); err != nil {
		t.Errorf("http://HOST= for an http start host: %v", err)
	}
}

// --offline skips other hosts unless a rule gives them an action; the
// site's own pages are parsed as ever.
func TestOffline(t *testing.T) {
	t.Parallel()
	e, err := New(Config{
		Start:   []string{"https://example.com/"},
		Offline: true,
		Rules:   []Rule{{Host: "cdn.example", Action: "check"}, {Host: "api.example", Timeout: "5s"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		url  string
		want Action
	}{
		{"https://example.com/a", Parse},
		{"https://other.example/", Skip},
		{"https://api.example/", Skip},
		{"https://cdn.example/x.js", Check},
	} {
		if d := e.Decide(mustParse(t, tc.url)); d.Action != tc.want {
			t.Errorf("%s: %v (%s), want %v", tc.url, d.Action, d.Rule, tc.want)
		}
	}
}
