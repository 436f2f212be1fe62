package report

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// minWrap keeps a tiny width from turning every URL into a column of
// single characters.
const minWrap = 24

// wrapText fills words into lines of at most width runes. A word longer than
// a line (a long URL) is broken with wrapLong.
func wrapText(s string, width int) []string {
	width = max(width, minWrap)
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "" && utf8.RuneCountInString(w) > width:
			parts := wrapLong(w, width, 0)
			lines = append(lines, parts[:len(parts)-1]...)
			line = parts[len(parts)-1]
		case line == "":
			line = w
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = ""
			if utf8.RuneCountInString(w) > width {
				parts := wrapLong(w, width, 0)
				lines = append(lines, parts[:len(parts)-1]...)
				line = parts[len(parts)-1]
			} else {
				line = w
			}
		}
	}
	if line != "" || len(lines) == 0 {
		lines = append(lines, line)
	}
	return lines
}

// maxWrapLines is how many lines one URL may take before its middle is
// abbreviated: the start (host, top path) and the end (file, line number)
// are what a person needs to find it; the full text is in the JSON report.
const maxWrapLines = 3

// wrapLong splits a string without spaces (a URL, a path) into pieces of at
// most width runes, preferring to break after a URL delimiter, and never
// inside its last keep runes (the ":12" of a page and line). A string longer
// than maxWrapLines lines loses its middle to "...".
func wrapLong(s string, width, keep int) []string {
	width = max(width, minWrap)
	r := []rune(s)
	abbreviated := false
	if limit := maxWrapLines * width; len(r) > limit {
		abbreviated = true
		head := limit/2 - 2
		tail := limit - head - 3
		r = append(append(r[:head:head], []rune("...")...), r[len(r)-tail:]...)
		keep = min(keep, tail)
	}
	var out []string
	for len(r) > width {
		cut := width
		// A break must leave the kept tail whole on the last line.
		if len(r)-keep < cut {
			cut = max(len(r)-keep, 1)
		}
		// Cut exactly at the width once abbreviated, so it stays within
		// maxWrapLines.
		for i := cut; !abbreviated && i > cut*2/3; i-- {
			if strings.ContainsRune("/?&=#.-_,;", r[i-1]) {
				cut = i
				break
			}
		}
		out = append(out, string(r[:cut]))
		r = r[cut:]
	}
	return append(out, string(r))
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
