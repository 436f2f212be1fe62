package report

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// minWrap keeps a tiny width from putting every word on its own line.
const minWrap = 24

// wrapText fills words into lines of at most width runes. A word longer
// than a line (a URL, a path) stands alone on its line, whole: a URL broken
// in two cannot be clicked or copied, so a long line overflows instead.
func wrapText(s string, width int) []string {
	width = max(width, minWrap)
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	if line != "" || len(lines) == 0 {
		lines = append(lines, line)
	}
	return lines
}

// printable replaces control characters (found only in the raw text of an
// invalid URL or in a server's words) so they cannot break a line in two,
// move the cursor or ring a bell in a plain-text report.
func printable(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return utf8.RuneError
		}
		return r
	}, s)
}
