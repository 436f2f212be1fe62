package crawltest

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"strings"
)

// renderer writes a page and keeps the line and column it is at, so the
// generator can wrap text like a hand-written page and Expected can learn the
// line of every link it emits.
type renderer struct {
	buf  *bytes.Buffer
	line int // 1-based line of the next byte
	col  int
	// glued is set after an opening tag: the next word follows it without
	// a space.
	glued bool
	// onLink, when set, is told the target of every link and the line its
	// attribute (or srcset candidate) starts on. target is a root-relative
	// path without fragment, or an absolute URL for the external host.
	onLink func(target string, line int)
}

// wrapColumn is where running text is broken onto a new line, as an editor
// or a templating engine would.
const wrapColumn = 88

func (r *renderer) raw(s string) {
	r.buf.WriteString(s)
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			r.col += len(s)
			return
		}
		r.line++
		r.col = 0
		s = s[i+1:]
	}
}

// open writes an opening tag that running text follows.
func (r *renderer) open(tag string) {
	r.raw(tag)
	r.glued = true
}

// mark reports a link to target starting on the current line.
func (r *renderer) mark(target string) {
	if r.onLink != nil {
		r.onLink(target, r.line)
	}
}

// attr writes name="value" and reports target at the line it starts on.
func (r *renderer) attr(name, value, target string) {
	r.mark(target)
	r.raw(name)
	r.raw(`="`)
	r.raw(value)
	r.raw(`"`)
}

// breakFor starts a new line if n more bytes would run past the wrap column,
// and otherwise separates them from what is already on the line.
func (r *renderer) breakFor(n int) {
	glued := r.glued
	r.glued = false
	switch {
	case r.col == 0:
	case r.col+1+n > wrapColumn:
		r.raw("\n")
	case glued:
	default:
		r.raw(" ")
	}
}

// itemKind is what goes into the body of a page besides text.
type itemKind uint8

const (
	itemPage         itemKind = iota // a link to page n
	itemImage                        // image n, with a 2x candidate m when it has a srcset
	itemMissing                      // a link to missing target n
	itemExternal                     // a link to page n of the external host
	itemRedirect                     // a link to /r/n, which redirects to page n
	itemPeer                         // a link to page m of peer n
	itemPeerRedirect                 // a link to /x/n, which redirects to a peer's page n
)

type item struct {
	kind itemKind
	n, m int
	// srcset is set for images drawn with a second srcset candidate.
	srcset bool
}

// pageRand is the random source of page i: a function of the seed and i
// only, so any page can be rendered alone, in any order, any number of times.
func (s *Site) pageRand(i int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(s.opt.Seed), uint64(i)))
}

// navPages are the pages every page links to from its navigation bar.
func (s *Site) navPages() int { return min(s.opt.Pages, s.opt.LinksPerPage/5) }

// fanout is how many tree children each page links to; the tree (children of
// i are i*fanout+1 ... i*fanout+fanout) makes every page reachable from "/" in
// about log(Pages) hops whatever the random links do.
func (s *Site) fanout() int { return max(1, s.opt.LinksPerPage/4) }

// items lists the links and images of page i's body in the order they appear.
func (s *Site) items(i int, rng *rand.Rand) []item {
	n := s.opt.Pages
	b := s.fanout()
	items := make([]item, 0, s.opt.LinksPerPage+s.opt.Images+2)
	for c := i*b + 1; c <= i*b+b && c < n; c++ {
		items = append(items, item{kind: itemPage, n: c})
	}
	for range s.opt.LinksPerPage - s.navPages() - len(items) {
		items = append(items, item{kind: itemPage, n: rng.IntN(n)})
	}
	for k := range s.opt.Images {
		it := item{kind: itemImage, n: rng.IntN(s.imagePool), srcset: k%2 == 1}
		if it.srcset {
			it.m = rng.IntN(s.imagePool)
		}
		items = append(items, it)
	}
	if k := s.opt.BrokenEvery; k > 0 && (i+1)%k == 0 {
		items = append(items, item{kind: itemMissing, n: (i / k) % s.missing})
	}
	if s.opt.External != "" {
		items = append(items, item{kind: itemExternal, n: rng.IntN(min(n, maxExternalTargets))})
	}
	if k := s.opt.RedirectEvery; k > 0 && (i+1)%k == 0 {
		items = append(items, item{kind: itemRedirect, n: rng.IntN(n)})
	}
	if len(s.opt.Peers) > 0 {
		items = append(items, item{kind: itemPeer, n: rng.IntN(len(s.opt.Peers)), m: rng.IntN(n)})
	}
	if k := s.opt.PeerRedirectEvery; k > 0 && (i+1)%k == 0 {
		items = append(items, item{kind: itemPeerRedirect, n: rng.IntN(n)})
	}
	rng.Shuffle(len(items), func(a, b int) { items[a], items[b] = items[b], items[a] })
	return items
}

// render writes page i.
func (s *Site) render(r *renderer, i int) {
	rng := s.pageRand(i)
	title := sentence(rng, 3+rng.IntN(3))

	r.raw("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	r.raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	r.raw("<title>" + title + " | Crawltest</title>\n")
	r.raw(`<link rel="stylesheet" `)
	r.attr("href", cssPath, cssPath)
	r.raw(">\n<script ")
	r.attr("src", jsPath, jsPath)
	r.raw(" defer></script>\n")
	if s.opt.RelNav {
		if i > 0 {
			r.raw(`<link rel="prev" `)
			r.attr("href", pagePath(i-1), pagePath(i-1))
			r.raw(">\n")
		}
		if i+1 < s.opt.Pages {
			r.raw(`<link rel="next" `)
			r.attr("href", pagePath(i+1), pagePath(i+1))
			r.raw(">\n")
		}
	}
	r.raw("<!-- retired in 2019:\n<a href=\"" + commentedPath + "\">the old archive</a> -->\n")
	r.raw("</head>\n<body>\n<header class=\"site-header\">\n<nav aria-label=\"Main\">\n<ul>\n")
	for j := range s.navPages() {
		r.raw("<li><a ")
		r.attr("href", pagePath(j), pagePath(j))
		r.raw(">" + navLabel(j) + "</a></li>\n")
	}
	r.raw("</ul>\n</nav>\n</header>\n<main>\n<article>\n<h1>" + title + "</h1>\n")
	r.raw("<p class=\"byline\">Page " + strconv.Itoa(i) + " of " + strconv.Itoa(s.opt.Pages) + "</p>\n")

	section := 0
	inPara, want, have := false, 0, 0
	closePara := func() {
		if inPara {
			writeWords(r, rng, 5+rng.IntN(15))
			r.raw(".</p>\n")
			inPara = false
		}
	}
	for _, it := range s.items(i, rng) {
		if it.kind == itemImage {
			closePara()
			figure(r, rng, it)
			continue
		}
		if !inPara {
			if section%3 == 0 {
				heading(r, rng, section/3+1)
			}
			section++
			r.open("<p>")
			writeWords(r, rng, 8+rng.IntN(20))
			inPara, want, have = true, 2+rng.IntN(3), 0
		}
		writeWords(r, rng, 3+rng.IntN(10))
		s.anchor(r, rng, i, it)
		if have++; have == want {
			closePara()
		}
	}
	closePara()

	footer := "</article>\n</main>\n<footer class=\"site-footer\">\n" +
		"<p>Questions? Write to <a href=\"" + mailto + "\">the webmaster</a>.</p>\n" +
		"<p>Generated page " + strconv.Itoa(i) + ", seed " + strconv.FormatInt(s.opt.Seed, 10) + ".</p>\n" +
		"</footer>\n</body>\n</html>\n"
	for r.buf.Len()+len(footer) < s.opt.PageBytes {
		if section%3 == 0 {
			heading(r, rng, section/3+1)
		}
		section++
		r.open("<p>")
		writeWords(r, rng, 40+rng.IntN(40))
		r.raw(".</p>\n")
	}
	r.raw(footer)
}

func heading(r *renderer, rng *rand.Rand, n int) {
	r.raw("<h2 id=\"sec-" + strconv.Itoa(n) + "\">" + sentence(rng, 2+rng.IntN(4)) + "</h2>\n")
}

// anchor writes an inline link from page from to the target of it, in one of
// the spellings real pages use; now and then the href sits on a later line
// than the tag.
func (s *Site) anchor(r *renderer, rng *rand.Rand, from int, it item) {
	var href, target, class string
	multiLine := rng.IntN(8) == 0
	switch it.kind {
	case itemPage:
		target = pagePath(it.n)
		href = pageHref(from, it.n, rng.IntN(4), rng)
	case itemMissing:
		target = missingPath(it.n)
		href = target
		class = "see-also"
		multiLine = (from/s.opt.BrokenEvery)%2 == 1
	case itemExternal:
		target = s.opt.External + pagePath(it.n)
		href = target
		class = "external"
	case itemRedirect:
		target = redirectPath(it.n)
		href = target
		class = "moved"
	case itemPeer:
		target = s.opt.Peers[it.n] + pagePath(it.m)
		href = target
		class = "partner"
	case itemPeerRedirect:
		target = peerRedirectPath(it.n)
		href = target
		class = "moved-away"
	}
	text := sentence(rng, 1+rng.IntN(3))
	if multiLine {
		if class == "" {
			class = "more"
		}
		r.breakFor(len(class) + 11)
		r.raw(`<a class="` + class + "\"\n   ")
		r.attr("href", href, target)
		r.raw(">" + text + "</a>")
		return
	}
	open := "<a "
	if class != "" {
		open += `class="` + class + `" `
	}
	r.breakFor(len(open) + len(href) + len(text) + 11)
	r.raw(open)
	r.attr("href", href, target)
	r.raw(">" + text + "</a>")
}

// pageHref spells a link from page from to page to: root-relative, relative,
// root-relative with a fragment, or relative with a dot segment. All resolve
// to pagePath(to).
func pageHref(from, to, form int, rng *rand.Rand) string {
	abs := pagePath(to)
	switch form {
	case 1:
		switch {
		case from == 0 && to == 0:
			return "./"
		case from == 0:
			return abs[1:] // p/7.html
		case to == 0:
			return "../"
		default:
			return abs[3:] // 7.html
		}
	case 2:
		return abs + "#sec-" + strconv.Itoa(1+rng.IntN(3))
	case 3:
		if from == 0 {
			return "." + abs // ./p/7.html
		}
		return ".." + abs // ../p/7.html
	default:
		return abs
	}
}

// figure writes an image; one with a srcset puts each candidate on its own
// line, as hand-written responsive markup does.
func figure(r *renderer, rng *rand.Rand, it item) {
	src := imagePath(it.n)
	alt := sentence(rng, 2+rng.IntN(4))
	r.raw("<figure>\n<img ")
	r.attr("src", src, src)
	if it.srcset {
		hi := imagePath(it.m)
		r.raw("\n     ")
		r.mark(src)
		r.raw(`srcset="` + src + " 1x,\n             ")
		r.mark(hi)
		r.raw(hi + " 2x\"\n    ")
	}
	r.raw(` alt="` + alt + `" width="640" height="360">` + "\n")
	r.open("<figcaption>")
	writeWords(r, rng, 4+rng.IntN(8))
	r.raw("</figcaption>\n</figure>\n")
}

// writeWords writes n words of running text, wrapped.
func writeWords(r *renderer, rng *rand.Rand, n int) {
	for range n {
		w := vocabulary[rng.IntN(len(vocabulary))]
		r.breakFor(len(w))
		r.raw(w)
	}
}

// sentence returns n words, the first capitalised.
func sentence(rng *rand.Rand, n int) string {
	var b strings.Builder
	for k := range n {
		w := vocabulary[rng.IntN(len(vocabulary))]
		if k == 0 {
			b.WriteString(strings.ToUpper(w[:1]))
			b.WriteString(w[1:])
			continue
		}
		b.WriteByte(' ')
		b.WriteString(w)
	}
	return b.String()
}

func navLabel(j int) string {
	if j == 0 {
		return "Home"
	}
	return "Section " + strconv.Itoa(j)
}

// vocabulary is the text pages are written in: common English words, so
// pages compress and tokenize like prose.
var vocabulary = [...]string{
	"the", "of", "and", "to", "in", "a", "is", "that", "for", "it", "as", "was", "with",
	"be", "by", "on", "not", "he", "this", "are", "or", "his", "from", "at", "which",
	"but", "have", "an", "had", "they", "you", "were", "their", "one", "all", "we",
	"can", "her", "has", "there", "been", "if", "more", "when", "will", "would", "who",
	"so", "no", "garden", "river", "station", "library", "winter", "harbour", "letter",
	"window", "market", "village", "morning", "evening", "journey", "mountain", "bridge",
	"archive", "history", "season", "weather", "kitchen", "recipe", "bicycle", "train",
	"museum", "painting", "concert", "festival", "chapter", "story", "island", "forest",
	"meadow", "lantern", "compass", "harvest", "orchard", "cottage", "valley", "coast",
	"lighthouse", "ferry", "timetable", "bakery", "workshop", "notebook", "postcard",
	"photograph", "newspaper", "council", "committee", "volunteer", "neighbour",
	"quietly", "slowly", "carefully", "often", "rarely", "always", "nearly", "almost",
	"old", "new", "small", "large", "early", "late", "bright", "narrow", "wide", "long",
	"short", "green", "grey", "warm", "cold", "local", "public", "annual", "weekly",
	"open", "closed", "walk", "read", "write", "build", "repair", "visit", "remember",
	"explain", "describe", "arrive", "leave", "follow", "gather", "collect", "measure",
	"discover", "restore", "publish", "announce", "prepare", "celebrate", "welcome",
}
