package rules

import (
	"strings"
	"testing"
)

func TestTrapsCheckPath(t *testing.T) {
	t.Parallel()
	tr := DefaultTraps()
	tests := []struct {
		url  string
		rule string // "" when the URL passes
	}{
		{"https://example.com/", ""},
		{"https://example.com/a/a/", ""},                    // twice is allowed, as in Heritrix
		{"https://example.com/grow/a/a/a/", "path-repeats"}, // a relative a/ linking a/a/
		{"https://example.com/grow/a/a/a", "path-repeats"},  // without the last slash too
		{"https://example.com/x/y/x/y/x/y/", "path-repeats"},
		{"https://example.com/docs/img/docs/img/", ""},
		{"https://example.com/1/2/3/4/5/6/7/8/9/10/11/12/13/14/15/16/17/18/19/20", ""},
		{"https://example.com/1/2/3/4/5/6/7/8/9/10/11/12/13/14/15/16/17/18/19/20/21", "path-segments"},
		{"https://example.com/" + strings.Repeat("a/b/c/d/e/f/g/h/i/", 3), "path-segments"}, // a run longer than 8 segments is not looked for
	}
	for _, tc := range tests {
		trap, held := tr.CheckPath(mustParse(t, tc.url))
		if got := trap.Rule.Name; got != tc.rule || held != (tc.rule != "") {
			t.Errorf("%s: held %v by %q (%s), want %q", tc.url, held, got, trap.Reason, tc.rule)
		}
	}
	if _, held := (Traps{}).CheckPath(mustParse(t, "https://example.com/a/a/a/a/a/")); held {
		t.Error("limits of 0 held a URL back")
	}
}

func TestTrapsCountedLimits(t *testing.T) {
	t.Parallel()
	tr := DefaultTraps()
	if _, held := tr.CheckHops(50); held {
		t.Error("hop 50 held back")
	}
	if trap, held := tr.CheckHops(51); !held || trap.Rule != TrapHops {
		t.Error("hop 51 let through")
	}
	if _, held := tr.CheckRun(40, "x/cal/#/#"); held {
		t.Error("run 40 held back")
	}
	trap, held := tr.CheckRun(41, "x/cal/#/#")
	if !held || !strings.Contains(trap.Note(), "--max-template-run") || !strings.Contains(trap.Note(), "max_template_run") ||
		!strings.HasPrefix(trap.Note(), "skipped: suspected trap (template-run: 41 pages of x/cal/#/#") {
		t.Errorf("run 41: %v %q", held, trap.Note())
	}
	if _, held := tr.CheckQuery(99, "x/shop"); held {
		t.Error("the 100th query string held back")
	}
	if _, held := tr.CheckQuery(100, "x/shop"); !held {
		t.Error("the 101st query string let through")
	}
}

func TestTemplate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ a, b string }{
		{"https://example.com/cal/2026/11", "https://example.com/cal/2027/1"},
		{"https://example.com/p/7.html", "https://example.com/p/12345.html"},
		{"https://example.com/list?page=2&sort=a", "https://example.com/list?page=30&sort=b"},
	} {
		if ta, tb := Template(mustParse(t, tc.a)), Template(mustParse(t, tc.b)); ta != tb {
			t.Errorf("%s is %s but %s is %s", tc.a, ta, tc.b, tb)
		}
	}
	for _, tc := range []struct{ a, b string }{
		{"https://example.com/cal/2026/11", "https://example.com/cal/2026"},
		{"https://example.com/list?page=2", "https://example.com/list?sort=2"},
		{"https://example.com/a/1", "https://example.org/a/1"},
	} {
		if Template(mustParse(t, tc.a)) == Template(mustParse(t, tc.b)) {
			t.Errorf("%s and %s share a template", tc.a, tc.b)
		}
	}
}

func TestSessionIDsDropped(t *testing.T) {
	t.Parallel()
	e, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ in, want string }{
		{"https://example.com/shop/1?sid=9f8e7d6c5b4a39281706f5e4d3c2b1a0", "https://example.com/shop/1"},
		{"https://example.com/shop/1?id=3&SID=9f8e7d6c5b4a39281706f5e4d3c2b1a0&x=1", "https://example.com/shop/1?id=3&x=1"},
		{"https://example.com/page;jsessionid=A1B2C3D4E5F6A7B8?x=1", "https://example.com/page?x=1"},
		{"https://example.com/(S(lit3py55t21z5v55vlm25s55))/page.aspx", "https://example.com/page.aspx"},
		{"https://example.com/app?my_sessid=abcdef0123456789abcd", "https://example.com/app"},
		// Not session ids: a story id, a short value, a word.
		{"https://example.com/article.pl?sid=05/01/01/123456", "https://example.com/article.pl?sid=05/01/01/123456"},
		{"https://example.com/a?sid=42", "https://example.com/a?sid=42"},
		{"https://example.com/a?session=autumnconference", "https://example.com/a?session=autumnconference"},
	}
	for _, tc := range tests {
		if got := e.Decide(mustParse(t, tc.in)).URL; got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.in, got, tc.want)
		}
	}
	keep, err := New(Config{KeepSessionIDs: true})
	if err != nil {
		t.Fatal(err)
	}
	in := "https://example.com/shop/1?sid=9f8e7d6c5b4a39281706f5e4d3c2b1a0"
	if got := keep.Decide(mustParse(t, in)).URL; got != in {
		t.Errorf("keep_session_ids: got %s", got)
	}
}

func TestTrapRuleOverrides(t *testing.T) {
	t.Parallel()
	doc := `
[[rule]]
path_prefix = "/archive/"
max_hops = 600
max_query_variants = 0

[[rule]]
host = "shop.example.com"
keep_session_ids = true
`
	f, err := ParseConfig("t.toml", []byte(doc), noEnv, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := f.Config
	cfg.Start = []string{"https://example.com/"}
	cfg.Traps = DefaultTraps()
	cfg.Traps.MaxHops = 10
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := e.Decide(mustParse(t, "https://example.com/archive/2001/"))
	want := DefaultTraps()
	want.MaxHops, want.MaxQueryVariants = 600, 0
	if d.Traps != want {
		t.Errorf("archive: %+v, want %+v", d.Traps, want)
	}
	if d := e.Decide(mustParse(t, "https://example.com/docs/")); d.Traps.MaxHops != 10 || d.Traps.MaxQueryVariants != 100 {
		t.Errorf("docs: %+v", d.Traps)
	}
	sid := "https://shop.example.com/item?sid=9f8e7d6c5b4a39281706f5e4d3c2b1a0"
	if d := e.Decide(mustParse(t, sid)); d.URL != sid {
		t.Errorf("a rule's keep_session_ids: got %s", d.URL)
	}
	x := e.Explain(sid)
	if x.URL != sid || len(x.Steps) != 0 {
		t.Errorf("explain keeps the session id: %+v", x)
	}
}

func TestTrapConfigErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ doc, want string }{
		{"[[rule]]\npath_prefix = \"/a/\"\nmax_template_run = -2\n", "t.toml:3:20: rule 1 (t.toml:1) max_template_run: -2 is negative"},
		{"[[rule]]\npath_prefix = \"/a/\"\naction = \"skip\"\nmax_hops = 3\n", "would have no effect"},
	} {
		_, err := ParseConfig("t.toml", []byte(tc.doc), noEnv, Settings{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.doc, err, tc.want)
		}
	}
}

// FuzzTrapChecks: no URL makes the trap checks panic, and a URL held back
// by its path says which rule and why.
func FuzzTrapChecks(f *testing.F) {
	for _, s := range []string{"https://example.com/a/a/a/", "https://e/x/y/x/y/x/y?q=1&r", "https://e//////", "https://e/%2F/%2F/%2F/"} {
		f.Add(s)
	}
	tr := DefaultTraps()
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := Resolve(nil, raw)
		if err != nil {
			return
		}
		_ = Template(u)
		_ = QueryPath(u)
		if trap, held := tr.CheckPath(u); held && (trap.Rule.Name == "" || trap.Reason == "") {
			t.Errorf("%q held back without a rule or a reason: %+v", raw, trap)
		}
	})
}
