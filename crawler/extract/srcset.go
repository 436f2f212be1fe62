package extract

// srcsetURLs appends the URL of every image candidate in a srcset value,
// following the HTML standard's "parse a srcset attribute" algorithm as far
// as it decides where URLs start and end: candidates are separated by
// commas, a URL runs to the next white space, trailing commas end it, and
// commas inside a descriptor's parentheses do not split. Descriptors are not
// validated (see the package doc).
func srcsetURLs(s string, dst []span) []span {
	i := 0
	for {
		for i < len(s) && (isSpace(s[i]) || s[i] == ',') {
			i++
		}
		if i >= len(s) {
			return dst
		}
		start := i
		for i < len(s) && !isSpace(s[i]) {
			i++
		}
		end := i
		if s[end-1] == ',' {
			for end > start && s[end-1] == ',' {
				end--
			}
		} else {
			i = skipDescriptors(s, i)
		}
		if end > start {
			dst = append(dst, span{start, end})
		}
	}
}

// skipDescriptors returns the position after the comma that ends the
// descriptors starting at i, or len(s).
func skipDescriptors(s string, i int) int {
	inParens := false
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case inParens:
			inParens = c != ')'
		case c == ',':
			return i + 1
		case c == '(':
			inParens = true
		}
	}
	return i
}
