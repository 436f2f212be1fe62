package crawltest

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// SiteOptions shapes a generated site. The zero value of a field means its
// default.
type SiteOptions struct {
	// Pages is the number of HTML pages: "/" and /p/1.html ... /p/{Pages-1}.html.
	// Default 1.
	Pages int
	// LinksPerPage is the number of links from each page to other pages of the
	// site (navigation included), chosen pseudo-randomly from Seed on top of a
	// tree that makes every page reachable from "/". Default 20.
	LinksPerPage int
	// Images is the number of images per page, each an <img src> (every second
	// one with a two-candidate srcset), drawn from a pool shared by all pages.
	Images int
	// BrokenEvery gives every k-th page (pages k-1, 2k-1, ...) one link to a
	// missing page that answers 404; a few pages share each missing target.
	// 0 means no broken links.
	BrokenEvery int
	// External, when set, is the base URL (for example "http://127.0.0.2:8081")
	// of a second server every page links to once: such a target is checked,
	// not parsed. The targets are External+"/" and External+"/p/{k}.html" for
	// k < min(Pages, 100), so another Site with the same Pages answers them all.
	External string
	// Latency is added to every response, waited on a timer.
	Latency time.Duration
	// Seed chooses the links and the text; the same options give the same site.
	Seed int64
	// PageBytes pads each page with text to roughly this size. Default 6000.
	PageBytes int
	// ETags makes every 200 answer carry an ETag (a hash of its body) and
	// answers a matching If-None-Match with 304 and no body, as a static
	// web server does.
	ETags bool
	// RedirectEvery gives every k-th page a link to /r/{n}, which answers
	// 301 with the Location of page n, a page other links reach directly
	// too: a checker must request each of the two URLs once. 0: none.
	RedirectEvery int
	// RelNav puts <link rel="prev"> and <link rel="next"> to the
	// neighbouring pages in every page's head, as Sphinx and DocBook do:
	// pages reached first that way must still be parsed.
	RelNav bool
	// Peers are the base URLs of other sites with the same Pages (a Web
	// sets them): every page links to one page of one peer, so a crawl
	// that starts from every peer walks across hosts.
	Peers []string
	// PeerRedirectEvery gives every k-th page a link to /x/{n}, which
	// answers 301 with the Location of page n of a peer: a redirect that
	// leaves the host (and, in a cluster, the shard). Needs Peers. 0: none.
	PeerRedirectEvery int
}

const (
	defaultLinksPerPage = 20
	defaultPageBytes    = 6000
	// maxExternalTargets bounds the distinct external URLs, as on a real site
	// where a few partner pages are linked from everywhere.
	maxExternalTargets = 100
)

// Site is a generated website; it is an http.Handler. Pages are rendered on
// request from their index. A small site keeps each page it rendered (see
// keepRendered); a large one holds only its counters.
type Site struct {
	opt       SiteOptions
	imagePool int // images are /img/0.png ... /img/{imagePool-1}.png
	missing   int // broken links point at /missing/0.html ... /missing/{missing-1}.html
	buffers   sync.Pool
	counts    counters
	// rendered[i] is page i once served, when the site is small enough to
	// keep (nil otherwise): tests ask a site for its pages again and again
	// (a pass compared with another, passes resumed, 304s that hash the
	// body), and under the race detector rendering a page again cost more
	// than a test's crawler spent parsing it. A page is a pure function of
	// the options and its index, so a kept one is the page rendered again.
	rendered []atomic.Pointer[[]byte]
}

// keepRendered bounds the pages a Site keeps (Pages × PageBytes): every test
// site fits, while a benchmark's or the load harness's 10,000- and
// 100,000-page sites render each request, as the pages of a real server
// cost something to serve, and use no memory for pages.
const keepRendered = 16 << 20

// NewSite returns a site shaped by opt.
func NewSite(opt SiteOptions) *Site {
	if opt.Pages < 1 {
		opt.Pages = 1
	}
	if opt.LinksPerPage <= 0 {
		opt.LinksPerPage = defaultLinksPerPage
	}
	if opt.Images < 0 {
		opt.Images = 0
	}
	if opt.BrokenEvery < 0 {
		opt.BrokenEvery = 0
	}
	if opt.PageBytes <= 0 {
		opt.PageBytes = defaultPageBytes
	}
	opt.External = strings.TrimRight(opt.External, "/")
	opt.Peers = slices.Clone(opt.Peers)
	for i, p := range opt.Peers {
		opt.Peers[i] = strings.TrimRight(p, "/")
	}
	if len(opt.Peers) == 0 {
		opt.PeerRedirectEvery = 0
	}
	s := &Site{
		opt: opt,
		// One image for every ten pages: real sites reuse icons and photos.
		imagePool: max(opt.Images, opt.Pages/10),
	}
	s.counts.epoch = time.Now()
	s.counts.known = make([]uriHits, opt.Pages+s.imagePool)
	s.counts.slot = s.knownSlot
	s.counts.knownURI = s.knownURI
	if opt.BrokenEvery > 0 {
		// About four referring pages per missing target, so a report's
		// "most referrers" ordering has something to order.
		s.missing = max(1, opt.Pages/opt.BrokenEvery/4)
	}
	s.buffers.New = func() any { return new(bytes.Buffer) }
	if opt.Pages*opt.PageBytes <= keepRendered {
		s.rendered = make([]atomic.Pointer[[]byte], opt.Pages)
	}
	return s
}

// ServeHTTP answers GET and HEAD for the site's pages, images, stylesheet,
// script and robots.txt, 404 for anything else, and 405 for other methods.
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer s.counts.end(s.counts.begin(r))

	if s.opt.Latency > 0 {
		t := time.NewTimer(s.opt.Latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}

	path := r.URL.Path
	if page, ok := s.pageIndex(path); ok {
		if s.rendered != nil {
			s.write(w, r, http.StatusOK, "text/html; charset=utf-8", s.keptPage(page))
			return
		}
		buf := s.buffers.Get().(*bytes.Buffer)
		defer s.buffers.Put(buf)
		buf.Reset()
		rd := renderer{buf: buf, line: 1}
		s.render(&rd, page)
		s.write(w, r, http.StatusOK, "text/html; charset=utf-8", buf.Bytes())
		return
	}
	switch {
	case s.imageIndex(path) >= 0:
		s.write(w, r, http.StatusOK, "image/png", []byte(tilePNG))
	case path == cssPath:
		s.write(w, r, http.StatusOK, "text/css; charset=utf-8", []byte(siteCSS))
	case path == jsPath:
		s.write(w, r, http.StatusOK, "text/javascript; charset=utf-8", []byte(siteJS))
	case s.redirectIndex(path) >= 0:
		w.Header().Set("Location", pagePath(s.redirectIndex(path)))
		w.WriteHeader(http.StatusMovedPermanently)
	case s.peerRedirectIndex(path) >= 0:
		w.Header().Set("Location", s.peerRedirectTarget(s.peerRedirectIndex(path)))
		w.WriteHeader(http.StatusMovedPermanently)
	case path == "/robots.txt":
		s.write(w, r, http.StatusOK, "text/plain; charset=utf-8", []byte("User-agent: *\nAllow: /\n"))
	default:
		s.write(w, r, http.StatusNotFound, "text/html; charset=utf-8", []byte(notFoundHTML))
	}
}

// keptPage is page i, rendered the first time it is asked for. Two first
// requests at once may both render it: the same bytes.
func (s *Site) keptPage(i int) []byte {
	if b := s.rendered[i].Load(); b != nil {
		return *b
	}
	var buf bytes.Buffer
	buf.Grow(s.opt.PageBytes + s.opt.PageBytes/4)
	s.render(&renderer{buf: &buf, line: 1}, i)
	b := buf.Bytes()
	s.rendered[i].Store(&b)
	return b
}

func (s *Site) write(w http.ResponseWriter, r *http.Request, status int, contentType string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	if s.opt.ETags && status == http.StatusOK {
		f := fnv.New64a()
		f.Write(body)
		etag := `"` + strconv.FormatUint(f.Sum64(), 36) + `"`
		h.Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			s.counts.notModified.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return
	}
	n, _ := w.Write(body) // a client that went away is not the site's problem
	s.counts.bytes.Add(int64(n))
}

// knownSlot numbers the URIs the site serves by design, for its counters:
// page i is i, image k is Pages+k; any other URI (one with a query, or
// spelled another way) is -1.
func (s *Site) knownSlot(uri string) int {
	if i, ok := s.pageIndex(uri); ok {
		return i
	}
	if k := s.imageIndex(uri); k >= 0 {
		return s.opt.Pages + k
	}
	return -1
}

// knownURI inverts knownSlot.
func (s *Site) knownURI(slot int) string {
	if slot < s.opt.Pages {
		return pagePath(slot)
	}
	return imagePath(slot - s.opt.Pages)
}

// pagePath is the URL path of page i.
func pagePath(i int) string {
	if i == 0 {
		return "/"
	}
	return "/p/" + strconv.Itoa(i) + ".html"
}

// pageIndex inverts pagePath, accepting only the canonical spelling so that
// every page has exactly one URL.
func (s *Site) pageIndex(path string) (int, bool) {
	if path == "/" {
		return 0, true
	}
	num, ok := strings.CutPrefix(path, "/p/")
	if !ok {
		return 0, false
	}
	if num, ok = strings.CutSuffix(num, ".html"); !ok {
		return 0, false
	}
	i, ok := canonicalIndex(num)
	if !ok || i < 1 || i >= s.opt.Pages {
		return 0, false
	}
	return i, true
}

func imagePath(k int) string { return "/img/" + strconv.Itoa(k) + ".png" }

// imageIndex is k for /img/{k}.png inside the pool, -1 otherwise.
func (s *Site) imageIndex(path string) int {
	num, ok := strings.CutPrefix(path, "/img/")
	if !ok {
		return -1
	}
	if num, ok = strings.CutSuffix(num, ".png"); !ok {
		return -1
	}
	k, ok := canonicalIndex(num)
	if !ok || k >= s.imagePool {
		return -1
	}
	return k
}

func redirectPath(k int) string { return "/r/" + strconv.Itoa(k) }

// redirectIndex is n for /r/{n} of a page, -1 otherwise.
func (s *Site) redirectIndex(path string) int {
	return s.pageIndexUnder(path, "/r/", s.opt.RedirectEvery > 0)
}

func peerRedirectPath(k int) string { return "/x/" + strconv.Itoa(k) }

// peerRedirectIndex is n for /x/{n} of a page, -1 otherwise.
func (s *Site) peerRedirectIndex(path string) int {
	return s.pageIndexUnder(path, "/x/", s.opt.PeerRedirectEvery > 0)
}

// pageIndexUnder is n for prefix{n} where n is a page of the site and the
// site has such paths (on), -1 otherwise.
func (s *Site) pageIndexUnder(path, prefix string, on bool) int {
	if !on {
		return -1
	}
	num, ok := strings.CutPrefix(path, prefix)
	if !ok {
		return -1
	}
	n, ok := canonicalIndex(num)
	if !ok || n >= s.opt.Pages {
		return -1
	}
	return n
}

// peerRedirectTarget is where /x/{n} leads: page n of a peer.
func (s *Site) peerRedirectTarget(n int) string {
	return s.opt.Peers[n%len(s.opt.Peers)] + pagePath(n)
}

func missingPath(k int) string { return "/missing/" + strconv.Itoa(k) + ".html" }

// canonicalIndex parses a decimal number written without sign or leading
// zeros.
func canonicalIndex(s string) (int, bool) {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// tilePNG is a 16×16 two-colour checkerboard, encoded by image/png: a real
// image, small enough that serving it costs nothing.
const tilePNG = "\x89\x50\x4e\x47\x0d\x0a\x1a\x0a\x00\x00\x00\x0d\x49\x48\x44\x52" +
	"\x00\x00\x00\x10\x00\x00\x00\x10\x01\x03\x00\x00\x00\x25\x3d\x6d" +
	"\x22\x00\x00\x00\x06\x50\x4c\x54\x45\x2b\x6c\xb0\xf4\xf1\xea\x76" +
	"\x09\x98\x7a\x00\x00\x00\x16\x49\x44\x41\x54\x78\x9c\x62\xf8\xf0" +
	"\x01\x81\xf8\xf9\x11\x08\x87\x38\x20\x00\x00\xff\xff\xd3\x1f\x0f" +
	"\xf1\xf2\xa1\x36\x85\x00\x00\x00\x00\x49\x45\x4e\x44\xae\x42\x60" +
	"\x82"

const (
	cssPath = "/static/site.css"
	jsPath  = "/static/site.js"
	// commentedPath is linked only from inside an HTML comment: a crawler
	// that requests it is reading comments.
	commentedPath = "/old/retired.html"
	mailto        = "mailto:webmaster@example.invalid"
)

const siteCSS = `body { font: 16px/1.5 Georgia, serif; margin: 0 auto; max-width: 46rem; color: #222; }
.site-header nav ul { list-style: none; display: flex; gap: 1rem; padding: 0; }
article h1 { font-size: 2rem; margin-top: 2rem; }
figure { margin: 1.5rem 0; }
figure img { max-width: 100%; height: auto; }
.site-footer { border-top: 1px solid #ccc; margin-top: 3rem; font-size: .9rem; }
`

const siteJS = `document.addEventListener("DOMContentLoaded", function () {
  document.documentElement.classList.add("js");
});
`

const notFoundHTML = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Not found</title></head>
<body><h1>Not found</h1><p>There is no page at this address.</p></body></html>
`

// WriteFiles writes the site into dir as a static site generator would:
// every page (/ as index.html), image, the stylesheet and the script, and
// nothing for the missing pages, so that checking dir from disk and
// checking the site over HTTP must find the same problems.
func (s *Site) WriteFiles(dir string) error {
	files := []string{cssPath, jsPath}
	for i := range s.opt.Pages {
		files = append(files, pagePath(i))
	}
	for k := range s.imagePool {
		files = append(files, imagePath(k))
	}
	for _, p := range files {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, p, nil))
		if rec.Code != http.StatusOK {
			return fmt.Errorf("%s: status %d", p, rec.Code)
		}
		name := filepath.Join(dir, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			name = filepath.Join(name, "index.html")
		}
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(name, rec.Body.Bytes(), 0o644); err != nil {
			return err
		}
	}
	s.Reset()
	return nil
}
