package crawler

import (
	"net/url"
	"testing"

	"github.com/linkpatrol/linkpatrol/rules"
)

// FuzzResolvedKey checks the premise of the cache: two bases that give a
// reference the same key resolve it to the same URL, or both fail.
func FuzzResolvedKey(f *testing.F) {
	refs := []string{"", "a.html", "../b/", "/c", "//h/d", "?q", "#f", " ?q", "http:?x", "http:foo",
		"https://e.example/x", `\\h\p`, "mailto:x@y", "p/a:b", ".", "..", "a%zz", "\t#f"}
	bases := []string{"https://example.com/p/1.html", "https://example.com/p/2.html?x=1",
		"https://example.com/p/", "https://example.com", "http://u:p@example.com/p/1.html",
		"file:///site/p/1.html", "https://example.com/a%2Fb/c", "mailto:x@y", "https://example.com/p/1.html#top"}
	for _, r := range refs {
		f.Add(bases[0], bases[1], r)
		f.Add(bases[2], bases[0], r)
		f.Add(bases[3], bases[4], r)
		f.Add(bases[5], bases[6], r)
		f.Add(bases[8], bases[7], r)
	}
	f.Fuzz(func(t *testing.T, base1, base2, ref string) {
		b1, err1 := url.Parse(base1)
		b2, err2 := url.Parse(base2)
		if err1 != nil || err2 != nil || !b1.IsAbs() || !b2.IsAbs() {
			return
		}
		d1, f1 := baseKeys(b1)
		d2, f2 := baseKeys(b2)
		if keyFor(d1, f1, ref) != keyFor(d2, f2, ref) {
			return
		}
		if b1.Scheme != b2.Scheme {
			t.Fatalf("%q and %q share a key but not the scheme", base1, base2)
		}
		u1, err1 := rules.Resolve(b1, ref)
		u2, err2 := rules.Resolve(b2, ref)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("%q: against %q err %v, against %q err %v", ref, base1, err1, base2, err2)
		}
		if err1 == nil && u1.String() != u2.String() {
			t.Fatalf("%q: against %q is %q, against %q is %q", ref, base1, u1, base2, u2)
		}
	})
}
