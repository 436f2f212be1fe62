package crawler

import (
	"bytes"
	"encoding/binary"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/minio/highwayhash"

	"github.com/linkpatrol/linkpatrol/crawler/extract"
	"github.com/linkpatrol/linkpatrol/store"
)

// A server with a catch-all (nginx's try_files $uri $uri/ /index.html; of
// a single-page app, or a 404 answered 200 with the index page) answers
// every path, made up or not, with 200 and the same page. The page's
// relative links resolve against each new path to more new paths, so a
// crawl that reads every page never ends (QA saw 250,000 pages in three
// minutes), and every broken link is OK. So a page whose content is that
// of the page whose link led to it (its referrer: store.Task.From) is
// checked (its status recorded) but not read for links, and its record
// says which page of the pass was read first with that content
// (store.SameContentNote). A page that links to copies of itself is the
// trap; two real pages that share their content without one leading to
// the other (versioned docs: /v1/guide.html and /v2/guide.html, each
// linked from its own index) are both read, whatever the fetch order.
//
// Nothing is lost when the two are in one directory (/docs/ and
// /docs/index.html): the same body resolves to the same links there; nor
// when the page has no link relative to its path (see movesLinks). A copy
// in another directory (a catch-all's made-up path) has its relative links
// resolve elsewhere: those are not checked, its note says so
// (store.SameContentMoved), and the report makes the pass PARTLY CHECKED.
//
// Not for a checked directory (files on disk end, and a copy there is a
// file of its own) nor for stylesheets, which a catch-all does not serve,
// nor for an empty page: it has no links to save reading, and a section
// that came back empty must be seen as such (report's emptiedPage).

// digestKey keys highwayhash, which wants 32 bytes. The digest is stored
// (store.URLRecord.Digest) and compared across runs of a pass, so it must
// not change from one process to the next: hash/maphash's seeds do.
// highwayhash is as fast (SIMD), and already a dependency (of nats-server).
var digestKey = []byte("linkpatrol same-content digest..")

// digest hashes what decides a page's links besides its URL: its host
// (a page is compared with its host's only), its Refresh header and its
// body as read. Never 0, which means no digest.
func digest(host string, header http.Header, body []byte) uint64 {
	refresh := header.Get("Refresh")
	b := make([]byte, 0, len(host)+len(refresh)+10)
	b = append(append(b, host...), 0)
	b = append(append(b, refresh...), 0)
	b = binary.BigEndian.AppendUint64(b, highwayhash.Sum64(body, digestKey))
	return max(highwayhash.Sum64(b, digestKey), 1)
}

// sameContent is the pass's pages read for links, by digest: the first
// page read with each, which a copy's note names.
type sameContent struct {
	mu    sync.Mutex
	first map[uint64]string
}

// claim says which page was read first with digest d, or that u is the
// first.
func (s *sameContent) claim(d uint64, u string) (first string, same bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.first[d]; ok && f != u {
		return f, true
	}
	if s.first == nil {
		s.first = make(map[uint64]string)
	}
	s.first[d] = u
	return "", false
}

// read notes a page whose links the pass follows without reading it (a
// 304, a result reused), as the first with its digest if none was.
func (s *sameContent) read(rec *store.URLRecord) {
	if s == nil || rec.Digest == 0 || !rec.Parsed {
		return
	}
	s.known(rec.Digest, rec.URL)
}

// known notes u as the first page read with digest d, unless one was.
func (s *sameContent) known(d uint64, u string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first == nil {
		s.first = make(map[uint64]string)
	}
	if _, ok := s.first[d]; !ok {
		s.first[d] = u
	}
}

// loadSameContent starts the run's pages read afresh, and a resumed pass
// (resumed) with those its earlier runs read, so that a copy met after
// the resume is not read as a first page of its content.
func (c *Crawler) loadSameContent(passID uint64, resumed bool) error {
	c.same = &sameContent{}
	if !resumed {
		return nil
	}
	return c.store.Digests(passID, func(u string, d uint64) error {
		c.same.known(d, u)
		return nil
	})
}

// sameAs says whether the page f fetched for task t, to be parsed into
// rec, has the content of the page that linked to it, and marks rec
// either way: its digest, and for a copy the note that names the first
// page read with that content, and whether links were lost by not reading
// it. A start URL (depth 0) is always read: a start page not read is a
// failed night.
func (c *Crawler) sameAs(rec *store.URLRecord, f fetched, page *url.URL, t store.Task) bool {
	if f.local || isCSS(f.contentType) || c.same == nil {
		return false
	}
	rec.Digest = digest(page.Host, f.header, f.body)
	first, same := c.same.claim(rec.Digest, rec.URL)
	if !same || t.Depth == 0 || t.From != rec.Digest || len(bytes.TrimSpace(f.body)) == 0 {
		return false
	}
	note := store.SameContentNote + first
	elsewhere := directory(rec.URL) != directory(first)
	if elsewhere || c.cfg.CheckFragments {
		// Read, but only for what decides what was lost and for its
		// anchors, which a link to it with a fragment is checked against.
		doc, _, err := extract.DecodeUTF8(f.body, f.contentType)
		if err != nil {
			doc = f.body
		}
		p := extract.Extract(doc, extract.Options{IDs: c.cfg.CheckFragments, MaxLinks: c.cfg.maxLinks})
		if elsewhere && movesLinks(p, f.header) {
			note += store.SameContentMoved
		}
		if c.cfg.CheckFragments && !f.truncated && !p.More {
			rec.IDs = anchors(p.IDs)
		}
	}
	// First, so that the report finds it (a page cut at --max-size has a
	// note already); a URL has no "; " in it.
	if rec.Note != "" {
		note += "; " + rec.Note
	}
	rec.Note = note
	return true
}

// fromPage marks the targets found on a page read with digest d as its
// links (store.Task.From).
func fromPage(found []target, d uint64) {
	for i := range found {
		found[i].from = d
	}
}

// directory is u up to the last slash of its path: where its relative
// links resolve.
func directory(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	return u[:strings.LastIndexByte(u, '/')+1]
}

// movesLinks says whether the links of a page p would resolve elsewhere
// at another URL: one is written relative to the page's path ("docs/intro",
// "../x", "?page=2"), and no <base> fixes where they resolve. A page of
// root-relative and absolute links (or with <base href="/">, as single-page
// apps have) links the same from anywhere: a copy of it loses nothing.
func movesLinks(p extract.Page, header http.Header) bool {
	if p.Base != "" && !pathRelative(p.Base) {
		return false
	}
	if ref, ok := extract.RefreshHeader(header.Get("Refresh")); ok && pathRelative(ref) {
		return true
	}
	for _, l := range p.Links {
		if pathRelative(l.URL) {
			return true
		}
	}
	return false
}

// pathRelative says whether a reference resolves against the path of the
// page it is on: not empty or a fragment (the page itself), not from the
// host's root or another host's ("/x", "//cdn/x"), and with no scheme.
func pathRelative(ref string) bool {
	if ref == "" || ref[0] == '#' || ref[0] == '/' {
		return false
	}
	i := strings.IndexAny(ref, ":/?#")
	return i < 0 || ref[i] != ':'
}
