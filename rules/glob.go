package rules

import (
	"errors"
	"regexp"
	"strings"
)

// compileGlob turns a glob into an anchored regexp. '?' matches one
// character and '[...]' ('[!...]' negated) one of a class. With sep '/'
// (paths) '*' stops at a slash and '**' crosses slashes; with sep 0 (hosts)
// '*' matches anything, so "*.example.com" covers every subdomain. A
// backslash makes the next character literal.
func compileGlob(glob string, sep byte) (*regexp.Regexp, error) {
	if glob == "" {
		return nil, errors.New("empty glob")
	}
	notSep := "."
	if sep != 0 {
		notSep = "[^" + regexp.QuoteMeta(string(sep)) + "]"
	}
	var b strings.Builder
	b.WriteString(`^`)
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; c {
		case '*':
			if sep != 0 && i+1 < len(glob) && glob[i+1] == '*' {
				b.WriteString(".*")
				i++
			} else {
				b.WriteString(notSep + "*")
			}
		case '?':
			b.WriteString(notSep)
		case '[':
			end, class, err := globClass(glob, i)
			if err != nil {
				return nil, err
			}
			b.WriteString(class)
			i = end
		case '\\':
			if i+1 == len(glob) {
				return nil, errors.New("glob ends in a lone backslash")
			}
			i++
			b.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		default:
			b.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		}
	}
	b.WriteString(`$`)
	return regexp.Compile(b.String())
}

// globClass translates the class starting at glob[start] == '[' and
// returns the index of its closing ']'.
func globClass(glob string, start int) (int, string, error) {
	i := start + 1
	var b strings.Builder
	b.WriteByte('[')
	if i < len(glob) && (glob[i] == '!' || glob[i] == '^') {
		b.WriteByte('^')
		i++
	}
	first := i
	for ; i < len(glob); i++ {
		c := glob[i]
		switch {
		case c == ']' && i > first:
			b.WriteByte(']')
			return i, b.String(), nil
		case c == '\\' && i+1 < len(glob):
			i++
			b.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		case c == '-' && i > first && i+1 < len(glob) && glob[i+1] != ']':
			b.WriteByte('-')
		case c == '[' || c == ']' || c == '^' || c == '\\' || c == '-':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return 0, "", errors.New("unclosed [ in glob")
}
