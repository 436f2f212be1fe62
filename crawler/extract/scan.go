package extract

// span is a half-open byte range [start, end).
type span struct{ start, end int }

// rawAttr is where one attribute of a start tag lies, as offsets into the
// document.
type rawAttr struct {
	key, val span
}

// tagScanner reads a tag and where each of its attributes lies. Its rules
// are a copy of golang.org/x/net/html's Tokenizer.readTag (tag name,
// attribute key and value states, "/" noise, the "=" that starts a key,
// unquoted values) and it drops the same duplicates (a later attribute whose
// lower-cased key was seen before, and attributes with an empty key), so the
// i-th attribute it finds is the i-th attribute TagAttr returns
// (FuzzTokenizerMatchesXNetHTML).
type tagScanner struct {
	attrs []rawAttr
	seen  map[string]struct{} // only for tags with very many attributes
}

// dedupLinear is how many attributes are compared pairwise before duplicate
// detection switches to a map, so a hostile tag with thousands of attributes
// costs linear time.
const dedupLinear = 16

// scan reads the tag whose name starts at doc[nameStart], a letter right
// after "<" or "</", through its ">". It returns the name, the attributes
// when save is set (an end tag's are read and dropped, as the tokenizer
// drops them), and end, the offset after the ">". ok is false when the
// input ends inside the tag.
func (s *tagScanner) scan(doc []byte, nameStart int, save bool) (name span, attrs []rawAttr, end int, ok bool) {
	s.attrs = s.attrs[:0]
	clear(s.seen)
	n := len(doc)
	// The name runs to white space, "/" or ">"; its first letter is read.
	p := nameStart + 1
	name.start = nameStart
	for {
		if p >= n {
			return span{}, nil, n, false
		}
		c := doc[p]
		p++
		if isSpace(c) {
			name.end = p - 1
			break
		}
		if c == '/' || c == '>' {
			p--
			name.end = p
			break
		}
	}
	p = skipSpace(doc, p, n)
	for {
		if p >= n {
			return name, nil, n, false
		}
		if doc[p] == '>' {
			return name, s.attrs, p + 1, true
		}
		var a rawAttr
		var good bool
		if a, p, good = scanAttr(doc, p, n); !good {
			return name, nil, n, false
		}
		if save && a.key.end > a.key.start && !s.duplicate(doc, a.key) {
			s.attrs = append(s.attrs, a)
		}
		p = skipSpace(doc, p, n)
	}
}

// scanAttr reads one attribute starting at p, like readTagAttrKey followed
// by readTagAttrVal, and returns the position after it.
func scanAttr(doc []byte, p, end int) (a rawAttr, next int, ok bool) {
	a.key.start = p
	for {
		if p >= end {
			return a, p, false
		}
		c := doc[p]
		p++
		if c == '=' && p == a.key.start+1 {
			// An "=" before the name begins is part of the name.
			continue
		}
		if c == '=' || c == '/' || c == '>' || isSpace(c) {
			p--
			a.key.end = p
			break
		}
	}
	a.val = span{p, p}
	p = skipSpace(doc, p, end)
	if p >= end {
		return a, p, false
	}
	c := doc[p]
	p++
	if c == '/' {
		return a, p, true
	}
	if c != '=' {
		return a, p - 1, true
	}
	p = skipSpace(doc, p, end)
	if p >= end {
		return a, p, false
	}
	q := doc[p]
	p++
	switch q {
	case '>':
		return a, p - 1, true
	case '"', '\'':
		a.val.start = p
		for ; p < end; p++ {
			if doc[p] == q {
				a.val.end = p
				return a, p + 1, true
			}
		}
		return a, p, false
	default:
		a.val.start = p - 1
		for ; p < end; p++ {
			switch c := doc[p]; {
			case isSpace(c):
				a.val.end = p
				return a, p + 1, true
			case c == '>':
				a.val.end = p
				return a, p, true
			}
		}
		return a, p, false
	}
}

// duplicate reports whether an attribute with the same key (ASCII
// case-insensitive, as the tokenizer lower-cases it) was already kept.
func (s *tagScanner) duplicate(doc []byte, key span) bool {
	k := doc[key.start:key.end]
	if len(s.attrs) < dedupLinear {
		for _, a := range s.attrs {
			if equalFold(doc[a.key.start:a.key.end], k) {
				return true
			}
		}
		return false
	}
	if s.seen == nil {
		s.seen = make(map[string]struct{})
	}
	if len(s.seen) == 0 {
		for _, a := range s.attrs {
			s.seen[lowerString(doc[a.key.start:a.key.end])] = struct{}{}
		}
	}
	lk := lowerString(k)
	if _, dup := s.seen[lk]; dup {
		return true
	}
	s.seen[lk] = struct{}{}
	return false
}

// isSpace is the white space of the tokenizer's tag states (HTML's ASCII
// white space).
func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f'
}

func skipSpace[T ~string | ~[]byte](s T, p, end int) int {
	for p < end && isSpace(s[p]) {
		p++
	}
	return p
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// equalFold compares with ASCII case folding only, as the tokenizer does.
func equalFold(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

func lowerString(b []byte) string {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = lower(c)
	}
	return string(out)
}

// sameKey reports whether raw, an attribute key as written, is the key the
// tokenizer returned for it: lower-cased, with NUL bytes replaced by U+FFFD.
func sameKey(raw, tok []byte) bool {
	j := 0
	for _, c := range raw {
		if c == 0 {
			if j+3 > len(tok) || string(tok[j:j+3]) != "\uFFFD" {
				return false
			}
			j += 3
			continue
		}
		if j >= len(tok) || tok[j] != lower(c) {
			return false
		}
		j++
	}
	return j == len(tok)
}
