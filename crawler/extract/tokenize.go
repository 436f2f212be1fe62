package extract

import "bytes"

// tokenType is the kind of one token of the document. Start and
// self-closing tags are one kind: Extract treats them alike.
type tokenType uint8

const (
	tokEOF tokenType = iota
	tokText
	tokStartTag
	tokEndTag
	tokComment
	tokDoctype
)

// tokenizer splits a document into tokens at exactly the byte offsets
// golang.org/x/net/html's Tokenizer does (its Raw, token by token, with
// NextIsNotRawText called after every <noscript>), and reads the attribute
// positions of a start tag in the same pass. FuzzTokenizerMatchesXNetHTML
// holds the two to the byte. It works on the document in place and
// allocates nothing per token: the x/net/html Tokenizer copies the document
// into its own buffer and allocates for every attribute key it checks for
// duplicates, which made it the largest single cost of Extract.
//
// As there, the document ends at the first tag that is not closed before
// the end of the input (the tokenizer's ErrorToken): what follows an
// unclosed "<a href=" is not markup anyone can see.
type tokenizer struct {
	doc []byte
	pos int
	// raw is the lower-case name of the element whose raw text (or
	// RCDATA) the next token is, "" in ordinary markup.
	raw string
	// eof is set once a token ran into the end of the input.
	eof bool
	// scanner holds the attributes of the last start tag.
	scanner tagScanner
	name    span      // the last start tag's name
	attrs   []rawAttr // and its attributes, valid until the next call
}

func newTokenizer(doc []byte) tokenizer {
	return tokenizer{doc: doc}
}

// next returns the next token as doc[start:end].
func (z *tokenizer) next() (tt tokenType, start, end int) {
	start = z.pos
	if z.eof || start >= len(z.doc) {
		z.eof = true
		return tokEOF, start, start
	}
	if z.raw != "" {
		end := z.rawText(start)
		z.raw = ""
		if end > start {
			z.pos = end
			return tokText, start, end
		}
	}
	doc := z.doc
	p := start
	for {
		i := bytes.IndexByte(doc[p:], '<')
		if i < 0 || p+i+1 >= len(doc) {
			// Text to the end, a lone "<" at the very end included.
			z.pos, z.eof = len(doc), true
			return tokText, start, len(doc)
		}
		lt := p + i
		c := doc[lt+1]
		if !isLetter(c) && c != '/' && c != '!' && c != '?' {
			p = lt + 1
			continue
		}
		if lt > start {
			z.pos = lt
			return tokText, start, lt
		}
		break
	}
	// doc[start] is "<" and doc[start+1] one of letter, "/", "!", "?".
	switch c := doc[start+1]; {
	case isLetter(c):
		name, attrs, end, ok := z.scanner.scan(doc, start+1, true)
		if !ok {
			return z.stop(start)
		}
		z.name, z.attrs, z.pos = name, attrs, end
		z.raw = rawTextElement(doc[name.start:name.end])
		return tokStartTag, start, end
	case c == '/':
		if start+2 >= len(doc) {
			z.pos, z.eof = len(doc), true
			return tokText, start, len(doc) // "</" at the end is text
		}
		switch c := doc[start+2]; {
		case c == '>':
			z.pos = start + 3
			return tokComment, start, z.pos
		case isLetter(c):
			_, _, end, ok := z.scanner.scan(doc, start+2, false)
			if !ok {
				return z.stop(start)
			}
			z.pos = end
			return tokEndTag, start, end
		}
		return tokComment, start, z.untilCloseAngle(start + 2)
	case c == '!':
		return z.markupDeclaration(start)
	}
	// "<?": a bogus comment.
	return tokComment, start, z.untilCloseAngle(start + 1)
}

// stop ends the document at a tag that runs into the end of the input.
func (z *tokenizer) stop(start int) (tokenType, int, int) {
	z.pos, z.eof = len(z.doc), true
	return tokEOF, start, start
}

// untilCloseAngle ends a token at the first ">" from p on, or at the end of
// the input.
func (z *tokenizer) untilCloseAngle(p int) int {
	if i := bytes.IndexByte(z.doc[p:], '>'); i >= 0 {
		z.pos = p + i + 1
	} else {
		z.pos, z.eof = len(z.doc), true
	}
	return z.pos
}

// markupDeclaration reads "<!...": a comment, a doctype, or a bogus comment.
func (z *tokenizer) markupDeclaration(start int) (tokenType, int, int) {
	doc := z.doc
	p := start + 2
	if p+2 > len(doc) {
		z.pos, z.eof = len(doc), true
		return tokComment, start, len(doc)
	}
	if doc[p] == '-' && doc[p+1] == '-' {
		return tokComment, start, z.comment(p + 2)
	}
	tt := tokComment
	if len(doc)-p >= len("DOCTYPE") && equalFold(doc[p:p+len("DOCTYPE")], []byte("doctype")) {
		tt = tokDoctype
	}
	return tt, start, z.untilCloseAngle(p)
}

// comment finds the end of a comment whose text starts at p, as the
// tokenizer's readComment does: "-->", "--!>", and "<!-->" or "<!--->" right
// at the start.
func (z *tokenizer) comment(p int) int {
	doc := z.doc
	dashes := 0
	beginning := true
	for p < len(doc) {
		c := doc[p]
		p++
		switch c {
		case '-':
			dashes++
			continue
		case '>':
			if dashes >= 2 || beginning {
				z.pos = p
				return p
			}
		case '!':
			if dashes >= 2 {
				if p >= len(doc) {
					break
				}
				c = doc[p]
				p++
				if c == '>' {
					z.pos = p
					return p
				}
				if c == '-' {
					dashes, beginning = 1, false
					continue
				}
			}
		}
		dashes, beginning = 0, false
	}
	z.pos, z.eof = len(doc), true
	return len(doc)
}

// rawText returns where the raw text of element z.raw that starts at p
// ends: before its end tag, or at the end of the input.
func (z *tokenizer) rawText(p int) int {
	switch z.raw {
	case "plaintext":
		return len(z.doc)
	case "script":
		return z.script(p)
	}
	doc := z.doc
	for {
		i := bytes.IndexByte(doc[p:], '<')
		if i < 0 {
			return len(doc)
		}
		lt := p + i
		if z.endTagAt(lt) {
			return lt
		}
		p = lt + 1
	}
}

// endTagAt says whether doc[lt:] starts the end tag of z.raw: "</", its
// name in any case, and white space, "/" or ">".
func (z *tokenizer) endTagAt(lt int) bool {
	doc, name := z.doc, z.raw
	after := lt + 2 + len(name)
	if after >= len(doc) || doc[lt+1] != '/' || !equalFold(doc[lt+2:after], []byte(name)) {
		return false
	}
	c := doc[after]
	return isSpace(c) || c == '/' || c == '>'
}

// script finds the end of a script's text starting at p: the tokenizer's
// script data states, where "<!--" and a nested "<script" hide a
// "</script>" from ending the element.
func (z *tokenizer) script(p int) int {
	doc := z.doc
	n := len(doc)
	var c byte
	// Every state reads one byte; at the end of the input the text ends.
scriptData:
	if i := bytes.IndexByte(doc[p:], '<'); i >= 0 {
		p += i + 1
	} else {
		return n
	}
	// scriptDataLessThanSign
	if p >= n {
		return n
	}
	c = doc[p]
	p++
	switch c {
	case '/':
		if z.endTagAt(p - 2) {
			return p - 2
		}
		p = z.afterEndTagPrefix(p)
		if p >= n {
			return n
		}
		goto scriptData
	case '!':
		// scriptDataEscapeStart, scriptDataEscapeStartDash
		if p >= n {
			return n
		}
		if doc[p] != '-' {
			goto scriptData
		}
		p++
		if p >= n {
			return n
		}
		if doc[p] != '-' {
			goto scriptData
		}
		p++
		goto scriptDataEscapedDashDash
	}
	p--
	goto scriptData

scriptDataEscaped:
	for p < n && doc[p] != '-' && doc[p] != '<' {
		p++
	}
	if p >= n {
		return n
	}
	c = doc[p]
	p++
	if c == '<' {
		goto scriptDataEscapedLessThanSign
	}
	// scriptDataEscapedDash
	if p >= n {
		return n
	}
	c = doc[p]
	p++
	switch c {
	case '-':
		goto scriptDataEscapedDashDash
	case '<':
		goto scriptDataEscapedLessThanSign
	}
	goto scriptDataEscaped

scriptDataEscapedDashDash:
	if p >= n {
		return n
	}
	c = doc[p]
	p++
	switch c {
	case '-':
		goto scriptDataEscapedDashDash
	case '<':
		goto scriptDataEscapedLessThanSign
	case '>':
		goto scriptData
	}
	goto scriptDataEscaped

scriptDataEscapedLessThanSign:
	if p >= n {
		return n
	}
	c = doc[p]
	p++
	if c == '/' {
		if z.endTagAt(p - 2) {
			return p - 2
		}
		p = z.afterEndTagPrefix(p)
		if p >= n {
			return n
		}
		goto scriptDataEscaped
	}
	if isLetter(c) {
		// scriptDataDoubleEscapeStart
		p--
		for i := 0; i < len("script"); i++ {
			if p >= n {
				return n
			}
			c = doc[p]
			p++
			if c != "script"[i] && c != "SCRIPT"[i] {
				p--
				goto scriptDataEscaped
			}
		}
		if p >= n {
			return n
		}
		c = doc[p]
		p++
		if isSpace(c) || c == '/' || c == '>' {
			goto scriptDataDoubleEscaped
		}
		p--
		goto scriptDataEscaped
	}
	p--
	goto scriptData

scriptDataDoubleEscaped:
	for p < n && doc[p] != '-' && doc[p] != '<' {
		p++
	}
	if p >= n {
		return n
	}
	c = doc[p]
	p++
	if c == '<' {
		goto scriptDataDoubleEscapedLessThanSign
	}
	// scriptDataDoubleEscapedDash
	if p >= n {
		return n
	}
	c = doc[p]
	p++
	switch c {
	case '-':
		goto scriptDataDoubleEscapedDashDash
	case '<':
		goto scriptDataDoubleEscapedLessThanSign
	}
	goto scriptDataDoubleEscaped

scriptDataDoubleEscapedDashDash:
	if p >= n {
		return n
	}
	c = doc[p]
	p++
	switch c {
	case '-':
		goto scriptDataDoubleEscapedDashDash
	case '<':
		goto scriptDataDoubleEscapedLessThanSign
	case '>':
		goto scriptData
	}
	goto scriptDataDoubleEscaped

scriptDataDoubleEscapedLessThanSign:
	if p >= n {
		return n
	}
	c = doc[p]
	p++
	if c != '/' {
		p--
		goto scriptDataDoubleEscaped
	}
	// scriptDataDoubleEscapeEnd
	if z.endTagAt(p - 2) {
		p += len("script>") // past the character after the name, as there
		goto scriptDataEscaped
	}
	p = z.afterEndTagPrefix(p)
	if p >= n {
		return n
	}
	goto scriptDataDoubleEscaped
}

// afterEndTagPrefix is where the tokenizer's readRawEndTag goes on after a
// "</" at p-2 that does not end the element: past the longest prefix of
// the name (in any case) that follows, at the first byte that differs.
// It is len(doc) when the input ends first.
func (z *tokenizer) afterEndTagPrefix(p int) int {
	doc, name := z.doc, z.raw
	for i := 0; i < len(name); i++ {
		if p >= len(doc) {
			return len(doc)
		}
		if lower(doc[p]) != name[i] {
			return p
		}
		p++
	}
	if p >= len(doc) {
		return len(doc)
	}
	return p // the byte after the name, not a terminator
}

// rawTextElement returns the lower-case name of an element whose content
// the tokenizer reads as raw text or RCDATA, "" for any other. <noscript>
// is not one here: Extract reads its content as markup (see the package
// doc).
func rawTextElement(name []byte) string {
	if len(name) < 3 || len(name) > len("plaintext") {
		return ""
	}
	switch lower(name[0]) {
	case 'i':
		if is(name, "iframe") {
			return "iframe"
		}
	case 'n':
		switch {
		case is(name, "noembed"):
			return "noembed"
		case is(name, "noframes"):
			return "noframes"
		}
	case 'p':
		if is(name, "plaintext") {
			return "plaintext"
		}
	case 's':
		switch {
		case is(name, "script"):
			return "script"
		case is(name, "style"):
			return "style"
		}
	case 't':
		switch {
		case is(name, "textarea"):
			return "textarea"
		case is(name, "title"):
			return "title"
		}
	case 'x':
		if is(name, "xmp") {
			return "xmp"
		}
	}
	return ""
}

func isLetter(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
