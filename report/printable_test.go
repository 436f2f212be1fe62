package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/store"
)

// Control characters (ESC, BEL, an OSC 8 hyperlink) and bidi overrides
// from URLs and from servers' words reach no human-readable format as they
// are; JSON and SARIF escape controls themselves for the programs that
// read them.
func TestHumanFormatsNeutraliseControls(t *testing.T) {
	t.Parallel()
	const osc8 = "\x1b]8;;https://evil.example/\x07click\x1b]8;;\x07"
	hostile := "https://example.com/" + osc8 + "\u202Egnp.exe\x1b[2J\x07"
	pageURL := "https://example.com/\u2066index\u2069"
	src := newMemSource(t, []fixturePass{{
		pass: store.Pass{StartURLs: []string{pageURL}, State: store.PassComplete, Started: night2, Finished: night2.Add(time.Minute)},
		results: []store.Result{
			page(pageURL, store.Link{URL: hostile, Line: 3, Tag: "a", Attr: "href"}),
			target(store.URLRecord{URL: hostile, Verdict: store.VerdictBroken, Status: 404, Error: "bad\x1b[31m", Note: "server said \u202Eevil\x07", FinalURL: hostile, FirstBroken: night2}),
		},
	}})
	r := build(t, src, 1, Options{})
	for _, format := range Formats() {
		if format == "json" || format == "sarif" {
			continue
		}
		out := render(t, r, format)
		for _, bad := range []string{"\x1b", "\x07", "\u202E", "\u2066", "\u2069"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s report contains %q", format, bad)
			}
		}
		if !strings.Contains(out, "example.com") {
			t.Errorf("%s report lost the URL:\n%s", format, out)
		}
	}
}

// A rune split across writes is still recognised, and what is safe passes
// through byte for byte.
func TestPrintableWriterSplitRunes(t *testing.T) {
	t.Parallel()
	in := "a\u202Eb\té\n\x1bc\xffd\u2069"
	var out bytes.Buffer
	pw := &printableWriter{w: &out}
	for i := range len(in) {
		if n, err := pw.Write([]byte{in[i]}); n != 1 || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if err := pw.flush(); err != nil {
		t.Fatal(err)
	}
	if want := "a\uFFFDb\té\n\uFFFDc\xffd\uFFFD"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}
