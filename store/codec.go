package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Every stored record, link list and task starts with a format byte, so that a
// later schema can tell old values from new ones without guessing.
const (
	recordFormat1 = 1 // in the urls bucket until schema 3; still read, and in outbox entries
	recordFormat2 = 2 // since schema 4: format 1 with where the page's link list is (linksAt)
	linksFormat1  = 1 // until schema 2; still read
	linksFormat2  = 2 // since schema 3: tag and attribute as one code, lines as deltas
	taskFormat1   = 1
	outboxFormat1 = 1
	// Optional fields follow a record's fixed part, each after its tag, so
	// records written before a field existed decode unchanged.
	recordIDsTag       = 1  // URLRecord.IDs
	recordReusedTag    = 2  // URLRecord.ReusedFrom
	recordSeedTag      = 3  // URLRecord.Seed, a flag
	recordUnchangedTag = 4  // URLRecord.Unchanged, a flag
	recordAwaitsTag    = 5  // URLRecord.Awaits
	recordCutTag       = 6  // URLRecord.Cut, one byte
	recordCarriedTag   = 7  // URLRecord.Carried and CarriedFrom
	recordNotTakenTag  = 8  // URLRecord.NotTaken
	recordPrevRunTag   = 9  // URLRecord.PrevFailures and PrevFirstBroken
	recordDownTag      = 10 // URLRecord.DownAfter and DownSince
	// Optional fields follow a task's fixed part the same way.
	taskRunTag    = 1 // Task.Run
	taskPublicTag = 2 // Task.Public, a flag
	// A tag from skippableTag on (for records and tasks alike) is followed
	// by the length of its field, so that a build that does not know the
	// field skips it and reads the rest. Every optional field added from
	// now on takes such a tag (appendSkippable): before, a build met a tag
	// newer than itself as a damaged file (tags 9 and 10 in the builds
	// before them), where the file was only written by a newer linkpatrol.
	skippableTag = 16
	// taskTriesTag: Task.Tries, Comebacks and ComebacksWaited, in a
	// field of its own length.
	taskTriesTag = skippableTag
	// taskFromTag: Task.From, eight bytes big-endian.
	taskFromTag = skippableTag + 1
	// recordDigestTag: URLRecord.Digest, eight bytes big-endian.
	recordDigestTag = skippableTag
	// The flags of a result in an outbox entry.
	resultSetLinks = 1 << 0
	resultRequeue  = 1 << 1
)

// errShort and friends are joined to ErrCorrupt by the callers, which add the
// key; they never reach a user alone.
var (
	errShort    = errors.New("value ends early")
	errOverflow = errors.New("number out of range")
	errFormat   = errors.New("unknown value format")
	// errUnknownTag is an optional field this build does not know, below
	// skippableTag: one a newer build wrote in the old way, or damage.
	errUnknownTag = fmt.Errorf("%w: a field of a tag this build does not know (written by a newer linkpatrol, or damaged)", errFormat)
	errTrailing   = errors.New("unexpected bytes after value")
)

// encoder appends a compact binary encoding to buf: unsigned varints,
// zig-zag varints for signed numbers, and strings as a length and the bytes.
type encoder struct{ buf []byte }

func (e *encoder) byte(b byte)       { e.buf = append(e.buf, b) }
func (e *encoder) uvarint(v uint64)  { e.buf = binary.AppendUvarint(e.buf, v) }
func (e *encoder) varint(v int64)    { e.buf = binary.AppendVarint(e.buf, v) }
func (e *encoder) int(v int)         { e.varint(int64(v)) }
func (e *encoder) bool(v bool)       { e.byte(boolByte(v)) }
func (e *encoder) str(s string)      { e.uvarint(uint64(len(s))); e.buf = append(e.buf, s...) }
func (e *encoder) strBytes(s []byte) { e.uvarint(uint64(len(s))); e.buf = append(e.buf, s...) }
func (e *encoder) bytes() []byte     { return e.buf }
func (e *encoder) verdict(v Verdict) { e.str(string(v)) }

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// time stores the instant and its zone offset with time's own binary form, so
// a decoded time prints the same as the one stored (as JSON would); the zero
// time costs one byte.
func (e *encoder) time(t time.Time) error {
	if t.IsZero() {
		e.uvarint(0)
		return nil
	}
	b, err := t.MarshalBinary()
	if err != nil {
		return fmt.Errorf("encode time %s: %w", t, err)
	}
	e.strBytes(b)
	return nil
}

// decoder reads what encoder wrote. The first problem sticks in err and every
// later read returns a zero value, so decode functions check err once at the end.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.fail(errShort)
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		if n == 0 {
			d.fail(errShort)
		} else {
			d.fail(errOverflow)
		}
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		if n == 0 {
			d.fail(errShort)
		} else {
			d.fail(errOverflow)
		}
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) int() int {
	v := d.varint()
	if v < math.MinInt || v > math.MaxInt {
		d.fail(errOverflow)
		return 0
	}
	return int(v)
}

// count reads a non-negative number that an int holds on any platform.
func (d *decoder) count() int {
	n := d.uvarint()
	if n > math.MaxInt32 {
		d.fail(errOverflow)
		return 0
	}
	return int(n)
}

func (d *decoder) bool() bool {
	switch d.byte() {
	case 0:
		return false
	case 1:
		return true
	}
	d.fail(errFormat)
	return false
}

// span returns the next length-prefixed bytes without copying; they alias the
// value being decoded.
func (d *decoder) span() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail(errShort)
		return nil
	}
	s := d.b[:n]
	d.b = d.b[n:]
	return s
}

func (d *decoder) str() string { return string(d.span()) }

func (d *decoder) verdict() Verdict { return Verdict(intern(d.span())) }

func (d *decoder) time() time.Time {
	b := d.span()
	if len(b) == 0 {
		return time.Time{}
	}
	var t time.Time
	if err := t.UnmarshalBinary(b); err != nil {
		d.fail(err)
		return time.Time{}
	}
	return t
}

// skipField skips the field of a tag this build does not know: a tag from
// skippableTag on is followed by its field's length; any other is unknown.
func (d *decoder) skipField(tag byte) {
	if tag < skippableTag {
		d.fail(fmt.Errorf("tag %d: %w", tag, errUnknownTag))
		return
	}
	d.span()
}

func (d *decoder) end() error {
	if d.err == nil && len(d.b) != 0 {
		d.err = errTrailing
	}
	return d.err
}

// common holds the strings that recur on almost every record and link (verdicts,
// actions, element and attribute names). Decoding returns these instead of a
// fresh copy, which saves an allocation per field. It is never written to.
var common = func() map[string]string {
	m := make(map[string]string)
	for _, s := range []string{
		string(VerdictOK), string(VerdictBroken), string(VerdictTransient),
		string(VerdictUnverifiable), string(VerdictSkipped),
		"parse", "check", "skip", "sitemap", "url", "loc",
		"a", "area", "audio", "base", "blockquote", "body", "del", "embed", "form",
		"frame", "iframe", "img", "image", "input", "ins", "link", "meta", "object",
		"q", "script", "source", "style", "track", "use", "video",
		"href", "src", "srcset", "content", "action", "data", "poster", "cite",
		"background", "formaction", "xlink:href", "manifest", "longdesc", "icon",
		"text/html", "text/html; charset=utf-8", "text/css", "image/png", "image/jpeg",
	} {
		m[s] = s
	}
	return m
}()

func intern(b []byte) string {
	if s, ok := common[string(b)]; ok {
		return s
	}
	return string(b)
}

// The links field of a stored record (format 2) says where the page's link
// list is: nowhere, under the page's URL (a list written before schema 4,
// whose record is format 1 or carried its mark on), or under a number of
// the links bucket's sequence, from 2 up, as an 8-byte big-endian key.
const (
	linksNone     = 0
	linksUnderURL = 1
	linksFirstSeq = 2
)

// appendRecord encodes everything in r except its URL, which is the key, in
// format 1: the form an outbox entry carries a record in.
// Pass comes first so that a scan for one pass can skip the rest (see recordPass).
func appendRecord(buf []byte, r *URLRecord) ([]byte, error) {
	e := encoder{buf: buf}
	e.byte(recordFormat1)
	e.uvarint(r.Pass)
	return appendRecordBody(buf, e, r)
}

// appendStoredRecord encodes r as the urls bucket holds it (format 2):
// format 1 with linksAt, where its page's link list is, after the pass.
func appendStoredRecord(buf []byte, r *URLRecord, linksAt uint64) ([]byte, error) {
	e := encoder{buf: buf}
	e.byte(recordFormat2)
	e.uvarint(r.Pass)
	e.uvarint(linksAt)
	return appendRecordBody(buf, e, r)
}

// appendRecordBody encodes what follows the pass (and linksAt) into e, which
// was buf; on an error it returns buf.
func appendRecordBody(buf []byte, e encoder, r *URLRecord) ([]byte, error) {
	e.str(r.Action)
	e.verdict(r.Verdict)
	e.int(r.Status)
	e.str(r.Error)
	e.str(r.Note)
	e.str(r.ContentType)
	e.varint(r.Size)
	e.str(r.FinalURL)
	e.uvarint(uint64(len(r.Redirects)))
	for _, h := range r.Redirects {
		e.str(h.URL)
		e.int(h.Status)
	}
	for _, t := range []time.Time{r.FetchedAt, r.FirstSeen, r.LastGood, r.FirstBroken} {
		if err := e.time(t); err != nil {
			return buf, err
		}
	}
	e.str(r.ETag)
	e.str(r.LastModified)
	e.int(r.Failures)
	e.bool(r.Parsed)
	e.verdict(r.PrevVerdict)
	e.uvarint(r.PrevPass)
	// IDs come last, tagged, and only when collected, so records written
	// before they existed decode unchanged, and nil stays nil.
	if r.IDs != nil {
		e.byte(recordIDsTag)
		e.uvarint(uint64(len(r.IDs)))
		for _, id := range r.IDs {
			e.str(id)
		}
	}
	if r.ReusedFrom != 0 {
		e.byte(recordReusedTag)
		e.uvarint(r.ReusedFrom)
	}
	if r.Seed {
		e.byte(recordSeedTag)
	}
	if r.Unchanged {
		e.byte(recordUnchangedTag)
	}
	if r.Awaits != "" {
		e.byte(recordAwaitsTag)
		e.str(r.Awaits)
	}
	if r.Cut != 0 {
		e.byte(recordCutTag)
		e.byte(byte(r.Cut))
	}
	if r.Carried != 0 || !r.CarriedFrom.IsZero() {
		e.byte(recordCarriedTag)
		e.uvarint(uint64(r.Carried))
		if err := e.time(r.CarriedFrom); err != nil {
			return buf, err
		}
	}
	if r.NotTaken != 0 {
		e.byte(recordNotTakenTag)
		e.uvarint(uint64(r.NotTaken))
	}
	if r.PrevFailures != 0 || !r.PrevFirstBroken.IsZero() {
		e.byte(recordPrevRunTag)
		e.uvarint(uint64(max(r.PrevFailures, 0)))
		if err := e.time(r.PrevFirstBroken); err != nil {
			return buf, err
		}
	}
	if r.DownAfter != 0 || !r.DownSince.IsZero() {
		e.byte(recordDownTag)
		e.uvarint(uint64(max(r.DownAfter, 0)))
		if err := e.time(r.DownSince); err != nil {
			return buf, err
		}
	}
	if r.Digest != 0 {
		e.byte(recordDigestTag)
		e.uvarint(8)
		e.buf = binary.BigEndian.AppendUint64(e.buf, r.Digest)
	}
	return e.bytes(), nil
}

// recordHead reads the pass of an encoded record and where its page's link
// list is (linksUnderURL for format 1, which did not say).
func recordHead(v []byte) (pass, linksAt uint64, err error) {
	d := decoder{b: v}
	f := d.byte()
	pass = d.uvarint()
	switch {
	case d.err != nil:
		return 0, 0, d.err
	case f == recordFormat1:
		return pass, linksUnderURL, nil
	case f != recordFormat2:
		return 0, 0, fmt.Errorf("record format %d: %w", f, errFormat)
	}
	linksAt = d.uvarint()
	return pass, linksAt, d.err
}

// recordPass reads only the pass of an encoded record.
func recordPass(v []byte) (uint64, error) {
	p, _, err := recordHead(v)
	return p, err
}

// decodeRecord fills r from v, of either format; url is the key the value
// was stored under.
func decodeRecord(url string, v []byte, r *URLRecord) error {
	d := decoder{b: v}
	f := d.byte()
	if d.err == nil && f != recordFormat1 && f != recordFormat2 {
		return fmt.Errorf("record format %d: %w", f, errFormat)
	}
	*r = URLRecord{URL: url}
	r.Pass = d.uvarint()
	if f == recordFormat2 {
		d.uvarint() // linksAt, the store's business (recordHead)
	}
	r.Action = intern(d.span())
	r.Verdict = d.verdict()
	r.Status = d.int()
	r.Error = intern(d.span())
	r.Note = d.str()
	r.ContentType = intern(d.span())
	r.Size = d.varint()
	r.FinalURL = d.str()
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail(errShort)
	} else if n > 0 {
		r.Redirects = make([]Hop, n)
		for i := range r.Redirects {
			r.Redirects[i] = Hop{URL: d.str(), Status: d.int()}
		}
	}
	r.FetchedAt = d.time()
	r.FirstSeen = d.time()
	r.LastGood = d.time()
	r.FirstBroken = d.time()
	r.ETag = d.str()
	r.LastModified = d.str()
	r.Failures = d.int()
	r.Parsed = d.bool()
	r.PrevVerdict = d.verdict()
	r.PrevPass = d.uvarint()
	for d.err == nil && len(d.b) > 0 {
		switch tag := d.byte(); tag {
		case recordIDsTag:
			n := d.uvarint()
			switch {
			case d.err != nil:
			case n > uint64(len(d.b)):
				d.fail(errShort)
			default:
				r.IDs = make([]string, n)
				for i := range r.IDs {
					r.IDs[i] = d.str()
				}
			}
		case recordReusedTag:
			r.ReusedFrom = d.uvarint()
		case recordSeedTag:
			r.Seed = true
		case recordUnchangedTag:
			r.Unchanged = true
		case recordAwaitsTag:
			r.Awaits = d.str()
		case recordCutTag:
			r.Cut = Cut(d.byte())
		case recordCarriedTag:
			r.Carried = d.count()
			r.CarriedFrom = d.time()
		case recordNotTakenTag:
			r.NotTaken = d.count()
		case recordPrevRunTag:
			r.PrevFailures = d.count()
			r.PrevFirstBroken = d.time()
		case recordDownTag:
			r.DownAfter = d.count()
			r.DownSince = d.time()
		case recordDigestTag:
			if b := d.span(); len(b) == 8 {
				r.Digest = binary.BigEndian.Uint64(b)
			} else if d.err == nil {
				d.fail(fmt.Errorf("digest of %d bytes: %w", len(b), errFormat))
			}
		default:
			d.skipField(tag)
		}
	}
	return d.end()
}

// appendLinks encodes a page's links (format 2). Each URL is stored as the
// length of the prefix it shares with the previous link's URL and the rest:
// links on a page mostly share scheme, host and directory, which halves the
// list. Then one code says the link's tag and attribute, as an index into
// linkKinds (0: both follow as strings), and whether a fragment follows;
// the line is the difference from the previous link's. A link of the
// generated site takes about 15 bytes, against 22 in format 1, which
// stored the tag and attribute as strings and the line whole.
func appendLinks(buf []byte, links []Link) []byte {
	e := encoder{buf: buf}
	e.byte(linksFormat2)
	e.uvarint(uint64(len(links)))
	prev, line := "", 0
	last, kind := linkKind{}, linkKindIndex[linkKind{}]
	for i := range links {
		l := &links[i]
		n := sharedPrefix(prev, l.URL)
		e.uvarint(uint64(n))
		e.str(l.URL[n:])
		// Most links are of the kind of the one before: no map lookup.
		if l.Tag != last.tag || l.Attr != last.attr {
			last = linkKind{l.Tag, l.Attr}
			kind = linkKindIndex[last]
		}
		code := uint64(kind) << 1
		if l.Fragment != "" {
			code |= 1
		}
		e.uvarint(code)
		if l.Fragment != "" {
			e.str(l.Fragment)
		}
		// Wraps for lines far apart, and wraps back when decoded.
		e.int(l.Line - line)
		if kind == 0 {
			e.str(l.Tag)
			e.str(l.Attr)
		}
		prev, line = l.URL, l.Line
	}
	return e.bytes()
}

// linkKind is a link's tag and attribute.
type linkKind struct{ tag, attr string }

// linkKinds are the tags and attributes that format 2 stores as a code:
// index i is code i+1. Stored values refer to them by position, so the
// list may only grow at its end.
var linkKinds = []linkKind{
	{"a", "href"}, {"img", "src"}, {"img", "srcset"}, {"link", "href"}, {"script", "src"},
	{"source", "src"}, {"source", "srcset"}, {"iframe", "src"}, {"area", "href"}, {"form", "action"},
	{"video", "src"}, {"video", "poster"}, {"audio", "src"}, {"embed", "src"}, {"object", "data"},
	{"css", ""}, {"style", ""}, {"meta", "content"}, {"blockquote", "cite"}, {"q", "cite"},
	{"url", "loc"}, {"sitemap", "loc"}, {"input", "src"}, {"track", "src"}, {"frame", "src"},
	{"use", "href"}, {"image", "href"}, {"body", "background"}, {"del", "cite"}, {"ins", "cite"},
	{"", ""},
}

// linkKindIndex is the code of each of linkKinds.
var linkKindIndex = func() map[linkKind]int {
	m := make(map[linkKind]int, len(linkKinds))
	for i, k := range linkKinds {
		m[k] = i + 1
	}
	return m
}()

func sharedPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// linkCount reads only the number of links in an encoded list.
func linkCount(v []byte) (int, error) {
	d := decoder{b: v}
	if f := d.byte(); d.err == nil && f != linksFormat1 && f != linksFormat2 {
		return 0, fmt.Errorf("link list format %d: %w", f, errFormat)
	}
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.b)) {
		return 0, errShort
	}
	return int(n), d.err
}

// decodeLinks decodes a list written by appendLinks, in either format. All
// the URLs of the page are rebuilt in one strings.Builder and are
// substrings of its one string: one allocation for the text of the page
// rather than one per link.
func decodeLinks(v []byte) ([]Link, error) {
	n, err := linkCount(v)
	if err != nil || n == 0 {
		return nil, err
	}
	d := decoder{b: v}
	format := d.byte()
	d.uvarint()
	links := make([]Link, n)
	type bounds struct{ start, end int }
	spans := make([]bounds, n)
	var text strings.Builder
	// Shared prefixes make the text longer than its encoding; twice the
	// encoding covers a typical page without growing.
	text.Grow(2 * len(v))
	prev := bounds{}
	line := 0
	for i := range links {
		shared := d.uvarint()
		suffix := d.span()
		if shared > uint64(prev.end-prev.start) {
			d.fail(errFormat)
			break
		}
		start := text.Len()
		// String does not copy; an earlier part of the text is appended.
		text.WriteString(text.String()[prev.start : prev.start+int(shared)])
		text.Write(suffix)
		spans[i] = bounds{start, text.Len()}
		prev = spans[i]
		l := &links[i]
		if format == linksFormat1 {
			l.Fragment = d.str()
			l.Line = d.int()
			l.Tag = intern(d.span())
			l.Attr = intern(d.span())
			continue
		}
		code := d.uvarint()
		if code&1 != 0 {
			l.Fragment = d.str()
		}
		line += d.int()
		l.Line = line
		switch kind := code >> 1; {
		case kind == 0:
			l.Tag = intern(d.span())
			l.Attr = intern(d.span())
		case kind <= uint64(len(linkKinds)):
			l.Tag, l.Attr = linkKinds[kind-1].tag, linkKinds[kind-1].attr
		default:
			d.fail(errFormat)
		}
	}
	if err := d.end(); err != nil {
		return nil, err
	}
	all := text.String()
	for i := range links {
		links[i].URL = all[spans[i].start:spans[i].end]
	}
	return links, nil
}

// appendTask encodes a frontier task except its URL, which is the key.
func appendTask(buf []byte, t *Task) []byte {
	e := encoder{buf: buf}
	e.byte(taskFormat1)
	e.str(t.Action)
	e.int(t.Depth)
	// Run and Public come last, tagged, and only when set, so tasks
	// written before they existed decode unchanged.
	if t.Run != 0 {
		e.byte(taskRunTag)
		e.int(t.Run)
	}
	if t.Public {
		e.byte(taskPublicTag)
	}
	if t.Tries != 0 || t.Comebacks != 0 || t.ComebacksWaited != 0 {
		f := encoder{}
		f.int(t.Tries)
		f.int(t.Comebacks)
		f.varint(int64(t.ComebacksWaited))
		e.byte(taskTriesTag)
		e.strBytes(f.bytes())
	}
	if t.From != 0 {
		e.byte(taskFromTag)
		e.uvarint(8)
		e.buf = binary.BigEndian.AppendUint64(e.buf, t.From)
	}
	return e.bytes()
}

func decodeTask(url string, v []byte) (Task, error) {
	d := decoder{b: v}
	if f := d.byte(); d.err == nil && f != taskFormat1 {
		return Task{}, fmt.Errorf("task format %d: %w", f, errFormat)
	}
	t := Task{URL: url, Action: intern(d.span()), Depth: d.int()}
	for d.err == nil && len(d.b) > 0 {
		switch tag := d.byte(); tag {
		case taskRunTag:
			t.Run = d.int()
		case taskPublicTag:
			t.Public = true
		case taskTriesTag:
			f := decoder{b: d.span()}
			t.Tries, t.Comebacks, t.ComebacksWaited = f.int(), f.int(), time.Duration(f.varint())
			if err := f.end(); err != nil && d.err == nil {
				d.fail(err)
			}
		case taskFromTag:
			if b := d.span(); len(b) == 8 {
				t.From = binary.BigEndian.Uint64(b)
			} else if d.err == nil {
				d.fail(fmt.Errorf("referrer digest of %d bytes: %w", len(b), errFormat))
			}
		default:
			d.skipField(tag)
		}
	}
	return t, d.end()
}

// MarshalBinary encodes the entry as the outbox stores it; a cluster sends
// the same bytes between processes. Each task, record, link list and
// requeued task is the value the frontier, urls and links buckets store,
// after its URL.
func (e OutboxEntry) MarshalBinary() ([]byte, error) {
	return appendOutbox(nil, &e)
}

// UnmarshalBinary decodes what MarshalBinary wrote. Bytes that do not decode
// give an error wrapping ErrCorrupt.
func (e *OutboxEntry) UnmarshalBinary(v []byte) error {
	if err := decodeOutbox(v, e); err != nil {
		return fmt.Errorf("outbox entry: %w: %v", ErrCorrupt, err)
	}
	return nil
}

func appendOutbox(buf []byte, o *OutboxEntry) ([]byte, error) {
	e := encoder{buf: buf}
	e.byte(outboxFormat1)
	e.uvarint(o.Pass)
	e.uvarint(uint64(len(o.Tasks)))
	for i := range o.Tasks {
		e.str(o.Tasks[i].URL)
		e.strBytes(appendTask(nil, &o.Tasks[i]))
	}
	e.uvarint(uint64(len(o.Results)))
	for i := range o.Results {
		r := &o.Results[i]
		e.str(r.Record.URL)
		rec, err := appendRecord(nil, &r.Record)
		if err != nil {
			return buf, err
		}
		e.strBytes(rec)
		var flags byte
		if r.SetLinks {
			flags |= resultSetLinks
		}
		if r.Requeue != nil {
			flags |= resultRequeue
		}
		e.byte(flags)
		if r.SetLinks {
			e.strBytes(appendLinks(nil, r.Links))
		}
		if r.Requeue != nil {
			e.strBytes(appendTask(nil, r.Requeue))
		}
	}
	return e.bytes(), nil
}

func decodeOutbox(v []byte, o *OutboxEntry) error {
	d := decoder{b: v}
	if f := d.byte(); d.err == nil && f != outboxFormat1 {
		return fmt.Errorf("outbox format %d: %w", f, errFormat)
	}
	*o = OutboxEntry{Pass: d.uvarint()}
	// Every task and result takes at least two bytes, so a count beyond
	// what is left is a lie, not a reason to allocate.
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail(errShort)
	} else if n > 0 {
		o.Tasks = make([]Task, n)
		for i := range o.Tasks {
			url := d.str()
			span := d.span()
			if d.err != nil {
				break
			}
			t, err := decodeTask(url, span)
			if err != nil {
				d.fail(err)
				break
			}
			o.Tasks[i] = t
		}
	}
	n = d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail(errShort)
	} else if n > 0 {
		o.Results = make([]Result, n)
		for i := range o.Results {
			if err := decodeOutboxResult(&d, &o.Results[i]); err != nil {
				d.fail(err)
				break
			}
		}
	}
	return d.end()
}

func decodeOutboxResult(d *decoder, r *Result) error {
	url := d.str()
	rec := d.span()
	flags := d.byte()
	if d.err != nil {
		return d.err
	}
	if flags&^(resultSetLinks|resultRequeue) != 0 {
		return errFormat
	}
	if err := decodeRecord(url, rec, &r.Record); err != nil {
		return err
	}
	if flags&resultSetLinks != 0 {
		r.SetLinks = true
		links, err := decodeLinks(d.span())
		if d.err != nil {
			return d.err
		}
		if err != nil {
			return err
		}
		r.Links = links
	}
	if flags&resultRequeue != 0 {
		span := d.span()
		if d.err != nil {
			return d.err
		}
		t, err := decodeTask(url, span)
		if err != nil {
			return err
		}
		r.Requeue = &t
	}
	return nil
}
