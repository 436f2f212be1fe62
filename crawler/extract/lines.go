package extract

import "bytes"

// lineCounter answers "which line is this byte offset on" for one document.
// Offsets are asked for in increasing order, so it keeps a cursor and counts
// only the bytes between the previous answer and the next: the whole
// document is counted at most once.
type lineCounter struct {
	doc  []byte
	pos  int // offset the cursor is at
	line int // line of doc[pos]
}

func newLineCounter(doc []byte) lineCounter {
	return lineCounter{doc: doc, line: 1}
}

// at returns the 1-based line of doc[off]. "\r\n", "\r" and "\n" each end one
// line; a "\r" that is followed by "\n" is counted at its "\n".
func (c *lineCounter) at(off int) int {
	off = min(max(off, 0), len(c.doc))
	if off < c.pos {
		// Never needed by Extract, which asks in document order; restarting
		// keeps the answer right should that ever change.
		c.pos, c.line = 0, 1
	}
	c.line += countBreaks(c.doc, c.pos, off)
	c.pos = off
	return c.line
}

// countBreaks counts the line breaks that end in doc[from:to], looking one
// byte past to so that a "\r" whose "\n" lies beyond to is not counted.
func countBreaks(doc []byte, from, to int) int {
	seg := doc[from:to]
	n := bytes.Count(seg, newline)
	for i := bytes.IndexByte(seg, '\r'); i >= 0; {
		if j := from + i + 1; j >= len(doc) || doc[j] != '\n' {
			n++
		}
		next := bytes.IndexByte(seg[i+1:], '\r')
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return n
}

var newline = []byte{'\n'}
