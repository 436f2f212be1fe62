package report

import (
	"fmt"
	"hash/maphash"
	"strings"

	"github.com/linkpatrol/linkpatrol/store"
)

// SamePage is the largest set of the site's own URLs that answered 200
// with one and the same HTML page (the same ETag): a custom "not found"
// page served with 200 (a soft 404) makes every missing page, script,
// image and font of a site "OK", and no status says so (qa10 Q3). The
// report cannot know it is an error page, so it counts nothing as broken;
// it says what it saw. Zero Count when no such set was seen. A URL
// answered without an ETag is grouped by the content the crawler read
// (store.URLRecord.Digest), and ETag is "" for such a set.
type SamePage struct {
	Host, ETag string
	Size       int64 // of the page, when a GET read it; 0 when only HEAD asked
	// Count is how many URLs answered it; Resources how many of them are
	// named as a script, image, stylesheet, font, document... (by their
	// extension: .js, .png, .woff2, .pdf...), which an HTML page is not.
	Count, Resources int
	Examples         []string // a few of them, resources first
}

// A group is told when it has at least samePageMin URLs and one of them is
// named as a file that is never HTML (a .js, .png, .woff2...) yet answered
// text/html. Pages alone never are: a server's ETag may be only the file's
// time and length (nginx), and the files of a packaged site share their
// time, so distinct pages of one length share an ETag (qa10 Q11: 16 pages
// of scipy's docs, 10 of Qt's).
const (
	samePageMin      = 3
	samePageExamples = 4
)

// samePages counts, by host and ETag, the own URLs that answered HTML. It
// holds a number per distinct ETag, so that a site of 100,000 pages with
// an ETag each costs a map of integers, not of strings; a group's
// details are kept from its second URL on.
type samePages struct {
	seed   maphash.Seed
	counts map[uint64]sameCount
	groups map[uint64]*sameGroup
}

// sameCount is a group's size and, of it, the URLs named as not HTML,
// counted from its first URL on (details only from its second).
type sameCount struct{ n, resources uint32 }

type sameGroup struct {
	SamePage
	pages []string // examples that are pages; SamePage.Examples holds resources
	// order is the host and the ETag, or the digest without one: ties
	// between groups go to the first by it, whatever the map's order.
	order string
}

func newSamePages() *samePages {
	return &samePages{seed: maphash.MakeSeed(), counts: make(map[uint64]sameCount)}
}

func (p *samePages) add(rec *store.URLRecord, host string) {
	if rec.Verdict != store.VerdictOK || rec.Status != 200 || rec.ETag == "" && rec.Digest == 0 || rec.FinalURL != "" ||
		!mediaTypeIs(rec.ContentType, "text/html") {
		return
	}
	var h maphash.Hash
	h.SetSeed(p.seed)
	h.WriteString(host)
	if rec.ETag != "" {
		h.WriteByte(0)
		h.WriteString(rec.ETag)
	} else {
		h.WriteByte(1)
		maphash.WriteComparable(&h, rec.Digest)
	}
	k := h.Sum64()
	c := p.counts[k]
	c.n++
	resource := notHTMLByName(rec.URL)
	if resource {
		c.resources++
	}
	p.counts[k] = c
	if c.n < 2 {
		return
	}
	if p.groups == nil {
		p.groups = make(map[uint64]*sameGroup)
	}
	g := p.groups[k]
	if g == nil {
		g = &sameGroup{SamePage: SamePage{Host: host, ETag: rec.ETag}, order: host + "\x00" + rec.ETag}
		if rec.ETag == "" {
			g.order = fmt.Sprintf("%s\x01%016x", host, rec.Digest)
		}
		p.groups[k] = g
	}
	g.Count, g.Resources = int(c.n), int(c.resources)
	g.Size = max(g.Size, rec.Size)
	switch {
	case resource:
		if len(g.Examples) < samePageExamples {
			g.Examples = append(g.Examples, rec.URL)
		}
	case len(g.pages) < samePageExamples:
		g.pages = append(g.pages, rec.URL)
	}
}

// largest is the biggest group over its threshold, or a zero SamePage.
func (p *samePages) largest() SamePage {
	var best *sameGroup
	for _, g := range p.groups {
		if g.Resources == 0 || g.Count < samePageMin {
			continue
		}
		if best == nil || g.Count > best.Count || g.Count == best.Count && g.order < best.order {
			best = g
		}
	}
	if best == nil {
		return SamePage{}
	}
	sp := best.SamePage
	sp.Examples = append(sp.Examples[:len(sp.Examples):len(sp.Examples)], best.pages...)
	sp.Examples = sp.Examples[:min(len(sp.Examples), samePageExamples)]
	return sp
}

// notHTMLExt are the extensions of files that are never an HTML page.
var notHTMLExt = map[string]bool{
	"js": true, "mjs": true, "css": true, "json": true, "xml": true, "txt": true, "csv": true,
	"png": true, "jpg": true, "jpeg": true, "gif": true, "svg": true, "webp": true, "avif": true, "ico": true, "bmp": true,
	"woff": true, "woff2": true, "ttf": true, "otf": true, "eot": true,
	"pdf": true, "zip": true, "gz": true, "tgz": true, "bz2": true, "xz": true, "tar": true,
	"mp4": true, "webm": true, "mp3": true, "ogg": true, "wav": true, "vtt": true,
}

// notHTMLByName says whether u's last path segment names a file that is
// never an HTML page.
func notHTMLByName(u string) bool {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	seg := u[strings.LastIndexByte(u, '/')+1:]
	dot := strings.LastIndexByte(seg, '.')
	return dot >= 0 && notHTMLExt[strings.ToLower(seg[dot+1:])]
}

// SamePageLine says which URLs answered the same HTML page, or "" when
// no set was large enough to tell (see SamePage).
func (r *Report) SamePageLine() string {
	sp := r.Summary.SamePage
	if sp.Count == 0 {
		return ""
	}
	size := ""
	if sp.Size > 0 {
		size = fmt.Sprintf("%d-byte ", sp.Size)
	}
	// A set is told only with a resource in it (see samePageMin).
	res := plural(sp.Resources, "of them named as a script, image, stylesheet, font or download", "of them named as scripts, images, stylesheets, fonts or downloads")
	ex := make([]string, len(sp.Examples))
	for i, u := range sp.Examples {
		ex[i] = r.Location(u)
	}
	same := "the same content"
	if sp.ETag != "" {
		same = "ETag " + sp.ETag
	}
	return fmt.Sprintf("%d URLs of %s answered 200 with the same %sHTML page (%s), %s: a \"not found\" page answering 200 "+
		"(a soft 404)? They are counted OK, so broken links among them are not reported; for example %s.",
		sp.Count, sp.Host, size, same, res, strings.Join(ex, ", "))
}
