package crawltest

import (
	"bytes"
	"cmp"
	"net/http"
	"slices"
	"strings"
)

// Expected is what a correct checker finds on a Site. Paths are root-relative
// ("/p/7.html"): prefix them with the server's URL. Targets on the external
// host are absolute URLs and answer 200.
type Expected struct {
	// Pages is the number of HTML pages reachable from "/", which is all of
	// them.
	Pages int `json:"pages"`
	// URLs is the number of distinct URLs a checker has to request, "/"
	// included: pages, images, the stylesheet and script, missing targets
	// and external targets. robots.txt, the mailto: link and the link inside
	// an HTML comment are not among them.
	URLs int `json:"urls"`
	// Links is the number of links on all pages together, counting every
	// srcset candidate, each occurrence separately.
	Links int `json:"links"`
	// Broken lists every target that answers an error, sorted by URL.
	Broken []BrokenURL `json:"broken"`
}

// BrokenURL is a link target that answers an error, with every place that
// links to it.
type BrokenURL struct {
	URL       string     `json:"url"`
	Status    int        `json:"status"`
	Referrers []Referrer `json:"referrers"` // sorted by page index, then line
}

// Referrer is one link: the page it is on and the line its attribute starts
// on.
type Referrer struct {
	Page string `json:"page"`
	Line int    `json:"line"`
}

// Expected renders every page once to collect its links. It takes time and
// memory in proportion to Pages (about 0.3 s per 10,000 pages on one core),
// so call it once per site.
func (s *Site) Expected() Expected {
	var f found
	s.collect("", &f)
	return f.expected()
}

// found gathers what the pages of one or more sites link to.
type found struct {
	pages, links int
	targets      map[string]struct{}
	broken       map[string]*BrokenURL
}

// collect renders every page of s and adds its links to f. base prefixes
// the site's own root-relative paths (pages and targets): "" keeps them
// root-relative, as Expected promises; a Web gives each site's URL.
func (s *Site) collect(base string, f *found) {
	if f.targets == nil {
		f.targets, f.broken = map[string]struct{}{}, map[string]*BrokenURL{}
	}
	abs := func(target string) string {
		if strings.HasPrefix(target, "/") {
			return base + target
		}
		return target
	}
	f.pages += s.opt.Pages
	f.targets[abs(pagePath(0))] = struct{}{}
	page := ""
	rd := renderer{buf: new(bytes.Buffer)}
	rd.onLink = func(target string, line int) {
		f.links++
		key := abs(target)
		f.targets[key] = struct{}{}
		if status := s.status(target); status != http.StatusOK {
			b := f.broken[key]
			if b == nil {
				b = &BrokenURL{URL: key, Status: status}
				f.broken[key] = b
			}
			b.Referrers = append(b.Referrers, Referrer{Page: page, Line: line})
		}
	}
	for i := range s.opt.Pages {
		page = abs(pagePath(i))
		rd.buf.Reset()
		rd.line, rd.col = 1, 0
		s.render(&rd, i)
	}
}

func (f *found) expected() Expected {
	exp := Expected{Pages: f.pages, URLs: len(f.targets), Links: f.links}
	for _, b := range f.broken {
		exp.Broken = append(exp.Broken, *b)
	}
	slices.SortFunc(exp.Broken, func(a, b BrokenURL) int { return cmp.Compare(a.URL, b.URL) })
	return exp
}

// status is what the site answers for a link target: pages, pooled images,
// the stylesheet and the script are there; the external host is assumed to
// be another Site that has every page linked to.
func (s *Site) status(target string) int {
	if s.opt.External != "" && strings.HasPrefix(target, s.opt.External+"/") {
		return http.StatusOK
	}
	for _, p := range s.opt.Peers {
		if rest, ok := strings.CutPrefix(target, p); ok {
			if _, page := s.pageIndex(rest); page {
				return http.StatusOK
			}
		}
	}
	if _, ok := s.pageIndex(target); ok || s.imageIndex(target) >= 0 || s.redirectIndex(target) >= 0 || s.peerRedirectIndex(target) >= 0 || target == cssPath || target == jsPath {
		return http.StatusOK
	}
	return http.StatusNotFound
}
