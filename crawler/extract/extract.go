package extract

import (
	"bytes"

	"golang.org/x/net/html"
)

// Kind says whether a link points at something a browser navigates to (a
// page that may be parsed) or a resource a page embeds (checked, never
// parsed).
type Kind uint8

const (
	// KindPage: a, area, iframe, frame, meta refresh (and the Refresh
	// response header, RefreshHeader), the cite of
	// blockquote, q, del and ins, the longdesc of img, iframe and frame
	// (a page describing the image or frame), and a <link> whose rel is
	// navigation (next, prev, index, contents, up, canonical...). Forms are
	// not links.
	KindPage Kind = iota + 1
	// KindResource: img, srcset, source, script, any other link
	// (stylesheet, icon, preload...), video, audio, track, object, embed,
	// input type=image, SVG image and use, the background attribute of
	// body and the table elements, and CSS url() / @import.
	// <link rel="preconnect"> and rel="dns-prefetch" name origins and are
	// not links at all.
	KindResource
	// KindStylesheet: a <link> whose rel names a stylesheet, and the
	// @import of a <style> element or of a stylesheet. A resource, but on
	// the site's own hosts the crawler reads it for its url() and @import,
	// so it is fetched for its body from the first request.
	KindStylesheet
)

// KindOf is the kind of a link found on element tag in attribute attr, as
// Extract reports them in Link.Tag and Link.Attr. It lets a caller that
// stored only those two (such as the crawler re-reading a page's links)
// classify them the same way, but for a <link>'s rel, which it cannot see:
// it calls every <link> a resource. An @import has its own attribute.
func KindOf(tag, attr string) Kind {
	switch tag {
	case "style", "css":
		if attr == importAttr {
			return KindStylesheet
		}
	case "a", "area":
		if attr == "href" || attr == "xlink:href" {
			return KindPage
		}
	case "iframe", "frame":
		if attr == "src" || attr == "longdesc" {
			return KindPage
		}
	case "img":
		if attr == "longdesc" {
			return KindPage
		}
	case "meta":
		if attr == "content" {
			return KindPage
		}
	case RefreshHeaderTag:
		if attr == RefreshHeaderAttr {
			return KindPage
		}
	case "blockquote", "q", "del", "ins":
		if attr == "cite" {
			return KindPage
		}
	}
	return KindResource
}

// Link is one URL reference in a document.
type Link struct {
	URL  string // the URL text as written, entity-decoded, surrounding white space trimmed
	Line int    // line the attribute, srcset candidate or CSS url( starts on
	Tag  string // lower-case element name; "style" for CSS inside <style>
	// Attr is "href", "src", "srcset", "poster", "data", "cite", "content"
	// (meta refresh), "style" (CSS in a style attribute), "imagesrcset",
	// "xlink:href", "background", "longdesc", or "" for CSS inside <style>.
	// A link of the document an <iframe srcdoc> holds has the Tag and Attr
	// it has there (an <a href> in it is "a", "href"), on the page's line.
	Attr string
	Kind Kind
}

// Page is what Extract finds in one document.
type Page struct {
	Links []Link
	// Base is the href of the first <base href>, "" if none; the crawler
	// resolves the links against it.
	Base string
	// IDs holds every id="" and <a name=""> value, in document order, for
	// fragment checking; filled only with Options.IDs.
	IDs []string
	// More says the document holds more than Options.MaxLinks links:
	// reading stopped there, so Links and IDs hold what came before.
	More bool
}

// Options tunes Extract.
type Options struct {
	IDs bool // collect id and <a name> anchors into Page.IDs
	// MaxLinks, when above 0, stops reading after that many links (see
	// Page.More), so a page's cost is bounded by its links, not only by
	// its bytes.
	MaxLinks int
	// Links, when not nil, is where Page.Links is appended (from its
	// start): a caller that reads page after page can pass back the slice
	// of a page it is done with and save growing a new one each time.
	Links []Link
}

// Extract finds every link in an HTML document that is already UTF-8 (see
// DecodeUTF8). It never fails: malformed markup yields the links a browser's
// tokenizer would see.
func Extract(doc []byte, opt Options) Page {
	e := extractor{doc: doc, opt: opt, lines: newLineCounter(doc)}
	e.page.Links = opt.Links[:0]
	return e.run(newTokenizer(doc))
}

// run walks the tokens of z, which must be tokenizing e.doc.
func (e *extractor) run(z tokenizer) Page {
	textOf := "" // element whose raw text the next text token is
	for {
		if max := e.opt.MaxLinks; max > 0 && len(e.page.Links) > max {
			clear(e.page.Links[max:])
			e.page.Links, e.page.More = e.page.Links[:max], true
			break
		}
		tt, start, end := z.next()
		if tt == tokEOF {
			break
		}
		owner := textOf
		textOf = ""
		switch tt {
		case tokStartTag:
			textOf = e.startTag(z.name, z.attrs, start, end)
		case tokText:
			if owner == "style" {
				e.styleBody(start, end)
			}
		}
	}
	return e.page
}

// extractor is the state of one Extract call. The slices are scratch space
// reused from tag to tag.
type extractor struct {
	doc      []byte
	opt      Options
	lines    lineCounter
	page     Page
	baseSeen bool
	pending  []pendingAttr
	spans    []span
	refs     []cssRef
	nameBuf  [16]byte
	kind     Kind // of the links of the current tag; 0: by tag and attribute
	depth    int  // how many srcdoc documents this one is inside
}

// role is what an attribute means to Extract on a given element.
type role uint8

const (
	roleNone     role = iota
	roleURL           // the value is one URL
	roleSrcset        // the value is a srcset candidate list
	roleStyle         // the value is CSS declarations
	roleRefresh       // meta content, a URL only with http-equiv=refresh
	roleEquiv         // meta http-equiv
	roleImageSrc      // input src, a URL only with type=image
	roleType          // input type
	roleBase          // base href
	roleID            // a fragment target
	roleRel           // link rel: what the link's href is
	roleProperty      // meta property or name: whose URL a meta content is
	roleSrcdoc        // iframe srcdoc: a whole document
)

// pendingAttr is an attribute of the current tag that Extract needs, kept
// until all attributes are read because one may depend on another (meta
// content on http-equiv, input src on type).
type pendingAttr struct {
	role role
	attr string // interned lower-case name, as reported in Link.Attr
	val  []byte // the tokenizer's decoded value, valid until the next Next
	pos  rawAttr
}

// startTag handles the start tag doc[start:end] with the given name and
// attributes, and returns the name of the element when its raw text content
// is wanted next ("style").
func (e *extractor) startTag(name span, attrs []rawAttr, start, end int) string {
	rawName := e.doc[name.start:name.end]
	tag := e.knownTag(rawName)
	last := e.lastWanted(tag, attrs)
	if last < 0 {
		return e.rawTextOwner(tag)
	}
	positioned := true
	if !e.rawValues(tag, attrs[:last+1]) {
		positioned = e.decodedValues(tag, attrs[:last+1], start, end)
	}
	if len(e.pending) > 0 {
		linkTag := tag
		if linkTag == "" {
			linkTag = tagName(rawName)
		}
		e.emit(linkTag, e.lines.at(start), positioned)
	}
	return e.rawTextOwner(tag)
}

// decodedValues fills e.pending for a tag with a character reference in a
// value Extract needs, from golang.org/x/net/html's Tokenizer run over the
// tag alone: a start tag is read the same wherever it stands, and decoding
// references in attribute values has rules of its own (a named one without
// ";" before "=" stays as written) that are not worth copying for the rare
// tag that needs them. It reports whether the tokenizer's attributes are the
// scan's, so that their positions can be trusted (FuzzTokenizerMatchesXNetHTML
// says they always are).
func (e *extractor) decodedValues(tag string, attrs []rawAttr, start, end int) bool {
	e.pending = e.pending[:0]
	z := html.NewTokenizer(bytes.NewReader(e.doc[start:end]))
	if tt := z.Next(); tt != html.StartTagToken && tt != html.SelfClosingTagToken {
		return false
	}
	matched, read := true, 0
	for {
		key, val, more := z.TagAttr()
		if key == nil {
			break
		}
		i := read
		read++
		if i >= len(attrs) || !sameKey(e.doc[attrs[i].key.start:attrs[i].key.end], key) {
			matched = false
		}
		if r, attr := roleOf(tag, key, e.opt.IDs); r != roleNone {
			p := pendingAttr{role: r, attr: attr, val: val}
			if matched {
				p.pos = attrs[i]
			}
			e.pending = append(e.pending, p)
		}
		if !more || matched && i == len(attrs)-1 {
			break
		}
	}
	return matched && read == len(attrs)
}

// rawValues fills e.pending from the scan of a tag alone. The scan finds
// exactly the tokenizer's attributes, and a value without a character
// reference is the tokenizer's once NUL and CR are replaced as it replaces
// them; "&amp;", the one reference common in URLs, is decoded here too. It
// declines (false) when a value needed holds any other "&".
func (e *extractor) rawValues(tag string, attrs []rawAttr) bool {
	e.pending = e.pending[:0]
	for _, a := range attrs {
		r, attr := roleOf(tag, e.doc[a.key.start:a.key.end], e.opt.IDs)
		if r == roleNone {
			continue
		}
		val := plainValue(e.doc[a.val.start:a.val.end])
		if bytes.IndexByte(val, '&') >= 0 {
			var ok bool
			if val, ok = decodeAmp(val); !ok {
				return false
			}
		}
		e.pending = append(e.pending, pendingAttr{role: r, attr: attr, val: val, pos: a})
	}
	return true
}

// decodeAmp decodes a value whose every "&" starts "&amp;", and declines
// any other.
func decodeAmp(v []byte) ([]byte, bool) {
	out := make([]byte, 0, len(v))
	for {
		i := bytes.IndexByte(v, '&')
		if i < 0 {
			return append(out, v...), true
		}
		if !bytes.HasPrefix(v[i:], []byte("&amp;")) {
			return nil, false
		}
		out = append(out, v[:i+1]...)
		v = v[i+len("&amp;"):]
	}
}

// tagName is the name the tokenizer gives an element: lower-case, NUL
// replaced by U+FFFD.
func tagName(raw []byte) string {
	out := make([]byte, 0, len(raw))
	for _, c := range raw {
		if c == 0 {
			out = append(out, "\uFFFD"...)
			continue
		}
		out = append(out, lower(c))
	}
	return string(out)
}

// plainValue is what the tokenizer makes of an attribute value without
// character references: NUL becomes U+FFFD, and CR LF and a lone CR
// become LF. raw itself is returned in the common case of neither.
func plainValue(raw []byte) []byte {
	if bytes.IndexByte(raw, 0) < 0 && bytes.IndexByte(raw, '\r') < 0 {
		return raw
	}
	out := make([]byte, 0, len(raw)+8)
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; c {
		case 0:
			out = append(out, "\uFFFD"...)
		case '\r':
			if i+1 < len(raw) && raw[i+1] == '\n' {
				i++
			}
			out = append(out, '\n')
		default:
			out = append(out, c)
		}
	}
	return out
}

func (e *extractor) rawTextOwner(tag string) string {
	if tag == "style" {
		return tag
	}
	return ""
}

// emit turns the pending attributes of one tag into links, ids and the
// base. positioned says whether pos of each pending attribute can be
// trusted; if not, everything goes on tagLine.
func (e *extractor) emit(tag string, tagLine int, positioned bool) {
	e.kind = 0
	if tag == "link" {
		switch e.linkRel() {
		case relOrigin:
			return // names an origin to connect to early, not a resource
		case relNavigation:
			e.kind = KindPage
		case relStylesheet:
			e.kind = KindStylesheet
		}
	}
	for i := range e.pending {
		p := &e.pending[i]
		if !e.applies(p) {
			if p.role == roleRefresh {
				e.addMetaURL(p, tag, tagLine, positioned)
			}
			continue
		}
		line := e.attrLine(p, tagLine, positioned)
		switch p.role {
		case roleURL, roleImageSrc:
			if a, b := trimSpan(p.val, 0, len(p.val)); a < b {
				e.add(string(p.val[a:b]), line, tag, p.attr)
			}
		case roleRefresh:
			if a, b, ok := refreshURL(p.val); ok {
				e.add(string(p.val[a:b]), line, tag, p.attr)
			}
		case roleSrcset:
			s := string(p.val)
			vl := e.valueLines(p, line, positioned)
			e.spans = srcsetURLs(s, e.spans[:0])
			for _, sp := range e.spans {
				e.add(s[sp.start:sp.end], vl.at(sp.start), tag, p.attr)
			}
		case roleStyle:
			e.refs = cssURLs(p.val, e.refs[:0])
			if len(e.refs) == 0 {
				continue
			}
			vl := e.valueLines(p, line, positioned)
			for _, r := range e.refs {
				e.add(string(p.val[r.url.start:r.url.end]), vl.at(r.tok), tag, p.attr)
			}
		case roleSrcdoc:
			e.srcdoc(p, line, positioned)
		case roleBase:
			if !e.baseSeen {
				e.baseSeen = true
				a, b := trimSpan(p.val, 0, len(p.val))
				e.page.Base = string(p.val[a:b])
			}
		case roleID:
			if len(p.val) > 0 {
				e.page.IDs = append(e.page.IDs, string(p.val))
			}
		}
	}
}

// metaURLs are the <meta property|name> whose content is one URL a
// browser or a site's share preview fetches: Open Graph's image, video and
// audio, Twitter's card image (muffet checks og:image too; qa9 T14), and
// the tile image and config Windows fetches for a pinned site (WordPress
// writes msapplication-TileImage on every page with a site icon). Their
// links are resources, stored under the property's lower-case name.
var metaURLs = []string{
	"og:image", "og:image:url", "og:image:secure_url",
	"og:video", "og:video:url", "og:video:secure_url",
	"og:audio", "og:audio:url", "og:audio:secure_url",
	"twitter:image", "twitter:image:src",
	"msapplication-tileimage", "msapplication-config",
}

// addMetaURL adds the content p of a <meta> whose property (or name) is
// one of metaURLs. A content of "none" is Microsoft's documented way to say
// a site has no browserconfig.xml (`msapplication-config` "none", in the
// head template of every page of many sites), not a relative link to /none.
func (e *extractor) addMetaURL(p *pendingAttr, tag string, tagLine int, positioned bool) {
	for _, q := range e.pending {
		if q.role != roleProperty {
			continue
		}
		property := bytes.TrimSpace(q.val)
		for _, name := range metaURLs {
			if !is(property, name) {
				continue
			}
			if a, b := trimSpan(p.val, 0, len(p.val)); a < b && !is(p.val[a:b], "none") {
				e.add(string(p.val[a:b]), e.attrLine(p, tagLine, positioned), tag, name)
			}
			return
		}
	}
}

// attrLine is the line attribute p starts on, or the tag's line when the
// attributes' positions were not kept.
func (e *extractor) attrLine(p *pendingAttr, tagLine int, positioned bool) int {
	if positioned {
		return e.lines.at(p.pos.key.start)
	}
	return tagLine
}

// maxSrcdocDepth bounds srcdoc documents inside srcdoc documents: each
// level is read again as a document of its own, so without a bound a page
// of nested escapes would cost its length times its depth.
const maxSrcdocDepth = 3

// srcdoc extracts the links of the document an <iframe srcdoc> holds: a
// browser renders it instead of the src, so its images and links load like
// the page's own (qa9 T14). It is read as a document of its own (no ids:
// they are not the page's fragment targets; its <base> is not the page's
// and is not applied), and each link is put on the page's line of the
// value's line it stands on. When the decoded value's line breaks are not
// the raw ones (a &#10; or &#13;), every link goes on the attribute's line.
func (e *extractor) srcdoc(p *pendingAttr, attrLine int, positioned bool) {
	if e.depth >= maxSrcdocDepth {
		return
	}
	vl := e.valueLines(p, attrLine, positioned)
	exact := vl.exact && bytes.IndexByte(p.val, '\r') < 0
	sub := extractor{doc: p.val, opt: Options{MaxLinks: e.opt.MaxLinks}, lines: newLineCounter(p.val), depth: e.depth + 1}
	sub.page.Links = e.page.Links
	from := len(sub.page.Links)
	sub.run(newTokenizer(p.val))
	for i := from; i < len(sub.page.Links); i++ {
		l := &sub.page.Links[i]
		if l.Tag == "meta" && l.Attr == "content" {
			// A refresh in the frame's document moves the frame, not the
			// page: stored as the frame's, it is never taken for the page's
			// own refresh (a start page that only refreshes away; review10 R3).
			l.Tag, l.Attr = "iframe", "srcdoc"
		}
		if exact {
			l.Line = vl.line + l.Line - 1
		} else {
			l.Line = attrLine
		}
	}
	e.page.Links = sub.page.Links
	e.page.More = e.page.More || sub.page.More
}

// applies checks the attributes whose meaning depends on another one.
func (e *extractor) applies(p *pendingAttr) bool {
	var need role
	var want string
	switch p.role {
	case roleRefresh:
		need, want = roleEquiv, "refresh"
	case roleImageSrc:
		need, want = roleType, "image"
	case roleURL, roleSrcset, roleStyle, roleBase, roleID, roleSrcdoc:
		return true
	default:
		return false
	}
	for _, q := range e.pending {
		if q.role == need {
			return is(q.val, want)
		}
	}
	return false
}

func (e *extractor) add(url string, line int, tag, attr string) {
	kind := e.kind
	if kind == 0 {
		kind = KindOf(tag, attr)
	}
	e.page.Links = append(e.page.Links, Link{URL: url, Line: line, Tag: tag, Attr: attr, Kind: kind})
}

// relKind is what a <link>'s rel makes of its href.
type relKind uint8

const (
	relResource   relKind = iota // a stylesheet, an icon, a preload...: checked
	relNavigation                // another page of the document set: a page
	relOrigin                    // preconnect, dns-prefetch: an origin, never fetched
	relStylesheet                // a stylesheet (alternate ones too)
)

// linkRel reads the rel of the current <link>. Navigation (the next,
// prev, index, contents... of every Sphinx and DocBook page) makes the href
// a page, unless a token also makes it a resource. preconnect and
// dns-prefetch name an origin whose root need not be a page at all.
func (e *extractor) linkRel() relKind {
	var rel []byte
	for _, p := range e.pending {
		if p.role == roleRel {
			rel = p.val
		}
	}
	nav, origin, resource, sheet := false, false, false, false
	for _, tok := range bytes.FieldsFunc(rel, func(r rune) bool { return r < 0x80 && isSpace(byte(r)) }) {
		switch {
		case is(tok, "preconnect"), is(tok, "dns-prefetch"):
			origin = true
		case navRel(tok):
			nav = true
		case is(tok, "stylesheet"):
			resource, sheet = true, true
		default:
			resource = true
		}
	}
	switch {
	case origin && !nav && !resource:
		return relOrigin
	case nav && !resource:
		return relNavigation
	case sheet:
		return relStylesheet
	}
	return relResource
}

// navRel says whether a rel token links to another page of the site
// (HTML's link types and the older ones documentation generators still
// write).
func navRel(tok []byte) bool {
	for _, name := range [...]string{"next", "prev", "previous", "index", "contents", "toc",
		"search", "start", "first", "last", "up", "top", "home", "help", "glossary",
		"copyright", "chapter", "section", "subsection", "appendix", "author", "license",
		"bookmark", "canonical"} {
		if is(tok, name) {
			return true
		}
	}
	return false
}

// styleBody extracts the CSS references of a <style> element whose raw
// text is doc[start:end]. Raw text is not entity-decoded, so offsets into
// it are offsets into the document.
func (e *extractor) styleBody(start, end int) {
	css := e.doc[start:end]
	e.refs = cssURLs(css, e.refs[:0])
	e.kind = 0 // not the kind of the last tag with links (a <link rel=next>)
	for _, r := range e.refs {
		u := css[r.url.start:r.url.end]
		if bytes.IndexByte(u, 0) >= 0 {
			u = bytes.ReplaceAll(u, []byte{0}, []byte("\uFFFD"))
		}
		attr := ""
		if r.imported {
			attr = importAttr
		}
		e.add(string(u), e.lines.at(start+r.tok), "style", attr)
	}
}

// valueLines maps offsets in a decoded attribute value to lines. The value
// the tokenizer returns has every raw line break turned into "\n", and
// entities decoded; when its "\n" count equals the raw line breaks (no
// &#10; or the like made new ones), the k-th "\n" is the k-th break and the
// mapping is exact. Otherwise every offset is put on attrLine.
func (e *extractor) valueLines(p *pendingAttr, attrLine int, positioned bool) valueLines {
	if !positioned {
		return valueLines{line: attrLine}
	}
	v := p.pos.val
	if countBreaks(e.doc, v.start, v.end) != bytes.Count(p.val, newline) {
		return valueLines{line: attrLine}
	}
	return valueLines{val: p.val, line: e.lines.at(v.start), exact: true}
}

type valueLines struct {
	val   []byte
	exact bool
	pos   int // offset in val the cursor is at
	line  int // line of val[pos]
}

func (v *valueLines) at(off int) int {
	if !v.exact {
		return v.line
	}
	off = min(max(off, 0), len(v.val))
	if off < v.pos {
		v.line -= bytes.Count(v.val[off:v.pos], newline)
	} else {
		v.line += bytes.Count(v.val[v.pos:off], newline)
	}
	v.pos = off
	return v.line
}

// knownTag returns the interned lower-case name of an element Extract has
// rules for, "" for any other.
func (e *extractor) knownTag(name []byte) string {
	if len(name) == 0 || len(name) > len(e.nameBuf) {
		return ""
	}
	b := e.nameBuf[:len(name)]
	for i, c := range name {
		b[i] = lower(c)
	}
	switch string(b) {
	case "a":
		return "a"
	case "area":
		return "area"
	case "audio":
		return "audio"
	case "base":
		return "base"
	case "blockquote":
		return "blockquote"
	case "body":
		return "body"
	case "del":
		return "del"
	case "embed":
		return "embed"
	case "frame":
		return "frame"
	case "iframe":
		return "iframe"
	case "image":
		return "image"
	case "img":
		return "img"
	case "input":
		return "input"
	case "ins":
		return "ins"
	case "link":
		return "link"
	case "meta":
		return "meta"
	case "noscript":
		return "noscript"
	case "object":
		return "object"
	case "q":
		return "q"
	case "script":
		return "script"
	case "source":
		return "source"
	case "style":
		return "style"
	case "table":
		return "table"
	case "tbody":
		return "tbody"
	case "td":
		return "td"
	case "tfoot":
		return "tfoot"
	case "th":
		return "th"
	case "thead":
		return "thead"
	case "tr":
		return "tr"
	case "track":
		return "track"
	case "use":
		return "use"
	case "video":
		return "video"
	}
	return ""
}

// lastWanted returns the index of the last attribute in the scan that
// matters on tag, or -1 if none does, so that the tokenizer's attribute
// values (which cost allocations) are read only as far as needed.
func (e *extractor) lastWanted(tag string, attrs []rawAttr) int {
	for i := len(attrs) - 1; i >= 0; i-- {
		if r, _ := roleOf(tag, e.doc[attrs[i].key.start:attrs[i].key.end], e.opt.IDs); r != roleNone {
			return i
		}
	}
	return -1
}

// roleOf says what attribute key (compared ASCII case-insensitively) means
// on element tag, and returns the attribute's interned name.
func roleOf(tag string, key []byte, ids bool) (role, string) {
	switch {
	case is(key, "style"):
		return roleStyle, "style"
	case ids && is(key, "id"):
		return roleID, "id"
	}
	switch tag {
	case "a":
		switch {
		case is(key, "href"):
			return roleURL, "href"
		case is(key, "xlink:href"):
			return roleURL, "xlink:href"
		case ids && is(key, "name"):
			return roleID, "name"
		}
	case "area":
		if is(key, "href") {
			return roleURL, "href"
		}
	case "link":
		switch {
		case is(key, "href"):
			return roleURL, "href"
		case is(key, "imagesrcset"):
			return roleSrcset, "imagesrcset"
		case is(key, "rel"):
			return roleRel, "rel"
		}
	case "img", "source":
		switch {
		case is(key, "src"):
			return roleURL, "src"
		case is(key, "srcset"):
			return roleSrcset, "srcset"
		case tag == "img" && is(key, "longdesc"):
			return roleURL, "longdesc"
		}
	case "image", "use":
		switch {
		case is(key, "href"):
			return roleURL, "href"
		case is(key, "xlink:href"):
			return roleURL, "xlink:href"
		case tag == "image" && is(key, "src"):
			return roleURL, "src"
		}
	case "script", "audio", "track", "embed":
		if is(key, "src") {
			return roleURL, "src"
		}
	case "iframe", "frame":
		switch {
		case is(key, "src"):
			return roleURL, "src"
		case is(key, "longdesc"):
			return roleURL, "longdesc"
		case tag == "iframe" && is(key, "srcdoc"):
			return roleSrcdoc, "srcdoc"
		}
	case "body", "table", "thead", "tbody", "tfoot", "tr", "td", "th":
		// Every browser still draws it (HTML's rendering section maps
		// it to background-image); old sites and mail templates use it.
		if is(key, "background") {
			return roleURL, "background"
		}
	case "video":
		switch {
		case is(key, "src"):
			return roleURL, "src"
		case is(key, "poster"):
			return roleURL, "poster"
		}
	case "object":
		if is(key, "data") {
			return roleURL, "data"
		}
	case "blockquote", "q", "del", "ins":
		if is(key, "cite") {
			return roleURL, "cite"
		}
	case "input":
		switch {
		case is(key, "src"):
			return roleImageSrc, "src"
		case is(key, "type"):
			return roleType, "type"
		}
	case "meta":
		switch {
		case is(key, "content"):
			return roleRefresh, "content"
		case is(key, "http-equiv"):
			return roleEquiv, "http-equiv"
		case is(key, "property"):
			return roleProperty, "property"
		case is(key, "name"):
			return roleProperty, "name"
		}
	case "base":
		if is(key, "href") {
			return roleBase, "href"
		}
	}
	return roleNone, ""
}

// is compares an attribute key with a lower-case name, ignoring ASCII case.
func is(key []byte, name string) bool {
	if len(key) != len(name) {
		return false
	}
	for i := range key {
		if lower(key[i]) != name[i] {
			return false
		}
	}
	return true
}
