package report

import (
	"io"
	"strconv"
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
	for _, w := range units(s) {
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

// units are the words of s as wrapText fills them, except that a date
// and the time after it ("started 2026-11-24 07:23") and a count and
// the word it counts ("0 skipped") are one: a line that ends in a date
// or a number and goes on with its time or its noun reads as two things.
func units(s string) []string {
	words := strings.Fields(s)
	out := words[:0]
	for i := 0; i < len(words); i++ {
		w := words[i]
		if i+1 < len(words) && (isDate(w) && isClock(words[i+1]) || isCount(w)) {
			i++
			w += " " + words[i]
		}
		out = append(out, clipWord(w))
	}
	return out
}

// longestWord and clippedTo bound a word of the text report: a hostile
// server's 32 KB Location would otherwise fill each night's mail with one
// line. A URL that long cannot be read or clicked anyway; JSON keeps it
// whole.
const (
	longestWord = 400
	clippedTo   = 200
)

// clipWord is w, or its first clippedTo runes and its length when it is
// longer than longestWord: "http://a/aaaa… (32768 characters)," (the
// punctuation after a URL is kept, and not counted).
func clipWord(w string) string {
	if utf8.RuneCountInString(w) <= longestWord {
		return w
	}
	body := strings.TrimRight(w, ",.;:")
	r := []rune(body)
	return string(r[:clippedTo]) + "… (" + strconv.Itoa(len(r)) + " characters)" + w[len(body):]
}

// isDate says whether w is a date as the reports write it: 2026-11-24.
func isDate(w string) bool {
	return len(w) == 10 && w[4] == '-' && w[7] == '-' && digits(w[:4]) && digits(w[5:7]) && digits(w[8:])
}

// isClock says whether w begins with a time of day: 07:23, 07:23:05.
func isClock(w string) bool {
	return len(w) >= 5 && w[2] == ':' && digits(w[:2]) && digits(w[3:5])
}

// isCount says whether w is a number alone (1200 or 1,200).
func isCount(w string) bool {
	return w != "" && digits(strings.ReplaceAll(w, ",", "")) && w[len(w)-1] != ','
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
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
