package crawler

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/net/html/charset"

	"github.com/linkpatrol/linkpatrol/store"
)

const (
	// maxSitemapSize is how much of a sitemap is read, after decompression:
	// the sitemaps.org protocol caps a file at 50 MB (52,428,800 bytes)
	// uncompressed.
	maxSitemapSize = 50 << 20
	// maxSitemapNesting bounds how deep elements may nest in a sitemap. A
	// valid one needs four levels (urlset, url, an extension element, its
	// child); the bound keeps a hostile file from growing the decoder's
	// stack without limit.
	maxSitemapNesting = 64
	// maxSitemapToken bounds one tag (its name and every attribute) and one
	// run of text: the decoder holds a whole token at a time, and one tag
	// of a million attributes took 450 MB to read from 49 MB. A real
	// sitemap's longest token is a <loc>, far shorter.
	maxSitemapToken = 256 << 10
	// gzipLayers is how many gzip layers are undone: a .xml.gz file sent
	// with Content-Encoding: gzip is compressed twice, and nothing real is
	// compressed three times.
	gzipLayers = 2
)

// errNotSitemap marks a document that parsed as XML but whose root is
// neither <urlset> nor <sitemapindex>.
var errNotSitemap = errors.New("not a sitemap: the document is neither <urlset> nor <sitemapindex>")

type sitemapKind uint8

const (
	sitemapNone   sitemapKind = iota
	sitemapURLSet             // <urlset><url><loc>: pages
	sitemapIndex              // <sitemapindex><sitemap><loc>: more sitemaps
)

// entryTag is the element that holds each <loc>; it is also the Tag of the
// stored link, so a sitemap's links say which kind they are.
func (k sitemapKind) entryTag() string {
	switch k {
	case sitemapURLSet:
		return "url"
	case sitemapIndex:
		return "sitemap"
	}
	return ""
}

type sitemapEntry struct {
	loc  string // trimmed, entity-decoded
	line int    // line the URL text starts on
}

type sitemapDoc struct {
	kind    sitemapKind
	entries []sitemapEntry
	// over counts the entries past the limit: not kept, only counted.
	// overCut says an error after the limit stopped the counting, so
	// there were at least over.
	over    int
	overCut bool
	// truncated says the file was larger than maxSitemapSize and only its
	// first part was read.
	truncated bool
}

// readSitemap undoes any gzip layers of a sitemap body and parses it,
// keeping at most limit entries and reading at most maxSize bytes
// (maxSitemapSize but in tests). What was parsed before an error is
// returned with it. A file cut off at maxSize is not an error: the entries
// of its first part are kept and doc.truncated says so.
func readSitemap(body io.Reader, limit int, maxSize int64) (sitemapDoc, error) {
	capped := &cappedReader{r: body, left: maxSize}
	r, err := gunzip(capped)
	if err != nil {
		return sitemapDoc{}, err
	}
	// The cap is on the uncompressed size, so the decompressed stream is
	// capped as well; the first cap only bounds what a lying gzip header
	// could make us download.
	inner := &cappedReader{r: r, left: maxSize}
	doc, err := parseSitemap(&tokenCap{r: inner, max: maxSitemapToken}, limit)
	doc.truncated = capped.hit || inner.hit
	if doc.over > 0 && err != nil {
		// Past the limit nothing more is taken anyway: an error there
		// only stops the count.
		doc.overCut, err = true, nil
	}
	if doc.truncated && err != nil && doc.kind != sitemapNone {
		// The document ends where the cap cut it, mid-element: that is
		// the cap, not the file's fault.
		err = nil
	}
	return doc, err
}

// gunzip undoes gzip layers, recognised by the gzip magic bytes whatever the
// headers said: Go's transport already decodes a Content-Encoding it asked
// for, so a body still starting with 1f 8b is a .gz file (served as
// application/gzip, application/x-gzip or octet-stream) or was compressed
// twice. Plain XML can never start with those bytes.
func gunzip(r io.Reader) (io.Reader, error) {
	br := bufio.NewReader(r)
	for range gzipLayers {
		magic, err := br.Peek(2)
		if err != nil || magic[0] != 0x1f || magic[1] != 0x8b {
			return br, nil
		}
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		br = bufio.NewReader(zr)
	}
	return br, nil
}

// parseSitemap reads a sitemap or a sitemap index with a streaming decoder,
// so a 50 MB file never sits in memory; only the entries kept do.
// Namespaces are honoured: <loc> counts only in the root element's
// namespace, so the <image:loc> of an image extension is not a page.
func parseSitemap(r io.Reader, limit int) (sitemapDoc, error) {
	var doc sitemapDoc
	dec := xml.NewDecoder(r)
	dec.CharsetReader = charset.NewReaderLabel
	var (
		ns      string // the root element's namespace
		depth   int
		inEntry bool // inside <url> or <sitemap>
		inLoc   bool
		text    bool // the current <loc> has had text other than white space
		loc     []byte
		line    int
	)
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			if doc.kind == sitemapNone {
				return doc, errNotSitemap
			}
			return doc, nil
		}
		if err != nil {
			return doc, sitemapError(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if depth > maxSitemapNesting {
				return doc, fmt.Errorf("elements nested more than %d deep", maxSitemapNesting)
			}
			switch {
			case depth == 1:
				ns = t.Name.Space
				switch t.Name.Local {
				case "urlset":
					doc.kind = sitemapURLSet
				case "sitemapindex":
					doc.kind = sitemapIndex
				default:
					return doc, errNotSitemap
				}
			case depth == 2:
				inEntry = t.Name.Space == ns && t.Name.Local == doc.kind.entryTag()
			case depth == 3 && inEntry && t.Name.Space == ns && t.Name.Local == "loc":
				inLoc, text, loc = true, false, loc[:0]
				line, _ = dec.InputPos()
			}
		case xml.CharData:
			if !inLoc || depth != 3 {
				continue
			}
			if !text {
				// The URL starts on the line of its first character, which
				// may be below the <loc> tag.
				lead := len(t) - len(bytes.TrimLeft(t, " \t\r\n"))
				line += bytes.Count(t[:lead], []byte("\n"))
				text = lead < len(t)
			}
			// One byte past the longest URL the store keeps is enough to
			// report it as too long.
			if room := store.MaxURLLength + 1 - len(loc); len(t) > room {
				t = t[:max(room, 0)]
			}
			loc = append(loc, t...)
		case xml.EndElement:
			if inLoc && depth == 3 {
				inLoc = false
				u := strings.TrimSpace(string(loc))
				if u != "" {
					if len(doc.entries) >= limit {
						doc.over++ // counted, so the report can say how many
					} else {
						doc.entries = append(doc.entries, sitemapEntry{loc: u, line: line})
					}
				}
			}
			if depth == 2 {
				inEntry = false
			}
			depth--
			if depth == 0 {
				// Whatever follows the root element is not part of the
				// sitemap; nothing is gained by reading it.
				return doc, nil
			}
		}
	}
}

// sitemapError keeps what a person needs from a decoder error: the line,
// and the message without the package prefix.
func sitemapError(err error) error {
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("XML syntax error on line %d: %s", se.Line, se.Msg)
	}
	return err
}

// cappedReader reads at most left bytes of r and records whether r had
// more, so a file cut off at the cap can be told from one that ended.
type cappedReader struct {
	r    io.Reader
	left int64
	hit  bool
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		if !c.hit {
			var one [1]byte
			n, _ := io.ReadFull(c.r, one[:])
			c.hit = n > 0
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// tokenCap fails a document with a tag or a run of text longer than max
// bytes before the XML decoder has to hold it. It follows the markup just
// enough to find where each token ends: a tag ends at a ">" outside quoted
// attribute values; a comment, CDATA section or declaration ("<!...") at
// its first ">" (a ">" inside one only starts a new count early).
type tokenCap struct {
	r     io.Reader
	max   int
	n     int // bytes of the current token
	state uint8
	quote byte // the quote an attribute value in a tag is open with
}

const (
	inText uint8 = iota
	afterLT
	inTag
	inDecl
)

func (t *tokenCap) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	for i, b := range p[:n] {
		switch t.state {
		case inText:
			if b == '<' {
				t.state, t.n = afterLT, 0
			}
		case afterLT:
			t.state = inTag
			if b == '!' {
				t.state = inDecl
			}
		case inTag:
			switch {
			case t.quote != 0:
				if b == t.quote {
					t.quote = 0
				}
			case b == '"' || b == '\'':
				t.quote = b
			case b == '>':
				t.state, t.n = inText, -1
			}
		case inDecl:
			if b == '>' {
				t.state, t.n = inText, -1
			}
		}
		if t.n++; t.n > t.max {
			return i, fmt.Errorf("a tag or text longer than %d KB: not a sitemap", t.max>>10)
		}
	}
	return n, err
}
