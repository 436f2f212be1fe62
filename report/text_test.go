package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func render(t testing.TB, r *Report, format string) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, r, format); err != nil {
		t.Fatalf("Write %s: %v", format, err)
	}
	return buf.String()
}

func TestTextFitsWidth(t *testing.T) {
	src := fillStore(t, webHistory())
	for _, width := range []int{40, 60, 72, 80, 120} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			r := build(t, src, 2, Options{Width: width, All: true})
			out := render(t, r, "text")
			for i, line := range strings.Split(out, "\n") {
				if n := utf8.RuneCountInString(line); n > width {
					t.Errorf("line %d is %d runes wide, over %d: %q", i+1, n, width, line)
				}
			}
			// Each referrer keeps its page's end and its line number on one line.
			for _, want := range []string{"example.com/:12\n", "about/:22\n", "blog/:130\n"} {
				if !strings.Contains(out, want) {
					t.Errorf("no line ends with %q", want)
				}
			}
		})
	}
}

func TestTextReferrerCap(t *testing.T) {
	src := fillStore(t, webHistory())
	tests := []struct {
		max      int
		lines    int
		trailing string
	}{
		{0, 20, "and 3 more, see --format json"},
		{5, 5, "and 18 more, see --format json"},
		{-1, 23, ""},
		{23, 23, ""},
	}
	for _, tt := range tests {
		out := render(t, build(t, src, 2, Options{MaxReferrers: tt.max}), "text")
		if got := strings.Count(out, "https://example.com/blog/:1"); got != tt.lines+1 { // +1: the long URL's referrer at :130
			t.Errorf("MaxReferrers %d: %d referrer lines of the blog page, want %d", tt.max, got-1, tt.lines)
		}
		if tt.trailing != "" && !strings.Contains(out, tt.trailing) {
			t.Errorf("MaxReferrers %d: no %q", tt.max, tt.trailing)
		}
		if tt.trailing == "" && strings.Contains(out, "more, see") {
			t.Errorf("MaxReferrers %d: says some were left out, but none were", tt.max)
		}
	}
}

func TestTextMessages(t *testing.T) {
	src := fillStore(t, webHistory())
	tests := []struct {
		name string
		opt  Options
		want []string
		not  []string
	}{
		{"default", Options{}, []string{"Broken (6)", "Since pass 1", "new since pass 1", "Fixed since pass 1 (1)", "No longer linked since pass 1 (2)", "redirects to https://example.com/posts/old-post/"}, []string{"Skipped (", "OK ("}},
		{"all", Options{All: true}, []string{"Skipped (1)", "skipped: robots", "OK (4)"}, nil},
		{"only new", Options{OnlyNew: true}, []string{"Broken (4)"}, []string{"missing.html"}},
		{"all suppressed", Options{ReportAfter: Threshold{Failures: 99}}, []string{"No problems to report (10 suppressed)."}, []string{"Broken ("}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := render(t, build(t, src, 2, tt.opt), "text")
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("no %q in\n%s", w, out)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(out, n) {
					t.Errorf("unexpected %q in\n%s", n, out)
				}
			}
		})
	}
	clean := fillStore(t, []fixturePass{{pass: webHistory()[1].pass, results: webHistory()[1].results[:3]}})
	if out := render(t, build(t, clean, 1, Options{}), "text"); !strings.Contains(out, "No problems found.") {
		t.Errorf("a clean pass does not say so:\n%s", out)
	}
}

func TestWrapLong(t *testing.T) {
	long := strings.Repeat("abcdefghij/", 40) + "page.html:1234"
	tests := []struct {
		s     string
		width int
		keep  int
	}{
		{"https://example.com/short:12", 80, 3},
		{long, 40, 5},
		{long, 24, 5},
		{long[:100] + ":7", 30, 2},
		{strings.Repeat("x", 200) + ":99999", 10, 6},
	}
	for _, tt := range tests {
		lines := wrapLong(tt.s, tt.width, tt.keep)
		width := max(tt.width, minWrap)
		for _, l := range lines {
			if n := utf8.RuneCountInString(l); n > width {
				t.Errorf("wrapLong(%.20q..., %d): line %q is %d wide", tt.s, tt.width, l, n)
			}
		}
		if len(lines) > maxWrapLines {
			t.Errorf("wrapLong(%.20q..., %d): %d lines, want at most %d", tt.s, tt.width, len(lines), maxWrapLines)
		}
		last := lines[len(lines)-1]
		if suffix := tt.s[len(tt.s)-tt.keep:]; !strings.HasSuffix(last, suffix) {
			t.Errorf("wrapLong(%.20q..., %d): last line %q lost %q", tt.s, tt.width, last, suffix)
		}
		if joined := strings.Join(lines, ""); len(tt.s) <= maxWrapLines*width && joined != tt.s {
			t.Errorf("wrapLong(%.20q..., %d) changed the text: %q", tt.s, tt.width, joined)
		}
	}
}
