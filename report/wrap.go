package report

import (
	"io"
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
// move the cursor or ring a bell in a plain-text report, and bidi controls
// so they cannot make text read in another order than it is written.
func printable(s string) string {
	if !strings.ContainsFunc(s, unsafeRune) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unsafeRune(r) {
			return utf8.RuneError
		}
		return r
	}, s)
}

// unsafeRune says whether r must not reach a person's screen as it is: a
// control character (ESC starts terminal sequences, OSC 8 hyperlinks among
// them; BEL rings) or a bidi control, which reorders what is shown
// (Trojan Source, CVE-2021-42574).
func unsafeRune(r rune) bool {
	switch {
	case unicode.IsControl(r):
		return true
	case r == '\u061C', r == '\u200E', r == '\u200F',
		'\u202A' <= r && r <= '\u202E', '\u2066' <= r && r <= '\u2069':
		return true
	}
	return false
}

// printableWriter passes a human-readable report through with every
// unsafe rune replaced, except the line breaks and tabs the format itself
// writes: one filter for every such format, whatever field the text came
// from. A rune split across writes is held until it is whole.
type printableWriter struct {
	w     io.Writer
	carry []byte
	buf   []byte
}

func (p *printableWriter) Write(b []byte) (int, error) {
	data := b
	if len(p.carry) > 0 {
		data = append(p.carry, b...)
		p.carry = nil
	}
	// Hold back an incomplete rune at the end for the next write.
	for k := 1; k < utf8.UTFMax && k <= len(data); k++ {
		if c := data[len(data)-k]; utf8.RuneStart(c) {
			if !utf8.FullRune(data[len(data)-k:]) {
				p.carry = append([]byte(nil), data[len(data)-k:]...)
				data = data[:len(data)-k]
			}
			break
		}
	}
	out := p.buf[:0]
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r != '\n' && r != '\t' && unsafeRune(r) && size > 0 && !(r == utf8.RuneError && size == 1) {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, data[i:i+size]...)
		}
		i += size
	}
	p.buf = out
	if _, err := p.w.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}

// flush writes what is held back: bytes that never became a rune.
func (p *printableWriter) flush() error {
	if len(p.carry) == 0 {
		return nil
	}
	_, err := p.w.Write(p.carry)
	p.carry = nil
	return err
}
