package crawltest

import (
	"fmt"
	"hash/fnv"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// TrapsPath is where a TrapSite serves its traps; TrapsPath itself is a page
// that links to the entry of each.
const TrapsPath = "/traps/"

// The traps of a TrapSite, by the name Requests uses.
const (
	// TrapCalendar is an endless calendar: /traps/cal/2026/11 links the
	// month before and the month after, for ever.
	TrapCalendar = "calendar"
	// TrapSession is a small shop whose every link carries a fresh
	// ?sid=<32 hex digits>, so each visit of a page finds new URLs.
	TrapSession = "session"
	// TrapGrow is a relative link that grows the path: /traps/grow/a/
	// links "a/", which is /traps/grow/a/a/, and so on.
	TrapGrow = "grow"
	// TrapFacets is a faceted listing: every combination of colour, size,
	// sort order and page is a URL, and each links to its neighbours.
	TrapFacets = "facets"
)

// ShopItems is the number of item pages of the session trap; with the shop
// page they are its ordinary pages, each to be checked once.
const ShopItems = 10

// TrapSite serves a Site with spider traps beside it, under TrapsPath, and
// counts the requests that went into each trap. Everything else goes to the
// Site, whose own counters (Stats) then show what of the ordinary site was
// checked.
type TrapSite struct {
	site     *Site
	sessions atomic.Uint64 // numbers the session ids handed out
	counts   map[string]*trapHits
}

type trapHits struct {
	requests atomic.Int64
	uris     sync.Map // request URI -> struct{}
}

// NewTrapSite puts the traps beside site.
func NewTrapSite(site *Site) *TrapSite {
	t := &TrapSite{site: site, counts: make(map[string]*trapHits)}
	for _, name := range []string{TrapCalendar, TrapSession, TrapGrow, TrapFacets} {
		t.counts[name] = new(trapHits)
	}
	return t
}

// TrapStats is what one trap was asked for.
type TrapStats struct {
	Requests     int64 `json:"requests"`
	DistinctURLs int   `json:"distinct_urls"`
}

// Requests returns what each trap was asked for, by trap name.
func (t *TrapSite) Requests() map[string]TrapStats {
	out := make(map[string]TrapStats, len(t.counts))
	for name, h := range t.counts {
		st := TrapStats{Requests: h.requests.Load()}
		h.uris.Range(func(any, any) bool { st.DistinctURLs++; return true })
		out[name] = st
	}
	return out
}

// Site is the ordinary site beside the traps.
func (t *TrapSite) Site() *Site { return t.site }

func (t *TrapSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, TrapsPath)
	if !ok {
		t.site.ServeHTTP(w, r)
		return
	}
	trap, _, _ := strings.Cut(rest, "/")
	var body string
	switch trap {
	case "":
		body = t.index()
	case "cal":
		body = t.calendar(rest)
	case "shop":
		body = t.shop(rest)
	case "grow":
		body = t.grow(rest)
	case "facets":
		body = t.facets(rest, r.URL.Query())
	}
	if h := t.counts[trapName(trap)]; h != nil {
		h.requests.Add(1)
		h.uris.Store(r.URL.RequestURI(), struct{}{})
	}
	if body == "" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if r.Method == http.MethodHead {
		return
	}
	fmt.Fprint(w, body)
}

func trapName(dir string) string {
	switch dir {
	case "cal":
		return TrapCalendar
	case "shop":
		return TrapSession
	case "grow":
		return TrapGrow
	case "facets":
		return TrapFacets
	}
	return ""
}

func trapPage(title string, links ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><head><title>%s</title></head>\n<body>\n<h1>%s</h1>\n<ul>\n", html.EscapeString(title), html.EscapeString(title))
	for _, l := range links {
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>\n", html.EscapeString(l), html.EscapeString(l))
	}
	b.WriteString("</ul>\n<p><a href=\"/\">Home</a></p>\n</body></html>\n")
	return b.String()
}

func (t *TrapSite) index() string {
	return trapPage("Traps", TrapsPath+"cal/2026/11", TrapsPath+"shop/", TrapsPath+"grow/", TrapsPath+"facets/")
}

// calendar serves cal/{year}/{month} for any year and months 1 to 12.
func (t *TrapSite) calendar(rest string) string {
	parts := strings.Split(rest, "/")
	if len(parts) != 3 {
		return ""
	}
	y, ok1 := canonicalIndex(parts[1])
	m, ok2 := canonicalIndex(parts[2])
	if !ok1 || !ok2 || m < 1 || m > 12 {
		return ""
	}
	month := func(y, m int) string { return TrapsPath + "cal/" + strconv.Itoa(y) + "/" + strconv.Itoa(m) }
	prev, next := month(y, m-1), month(y, m+1)
	if m == 1 {
		prev = month(y-1, 12)
	}
	if m == 12 {
		next = month(y+1, 1)
	}
	if y == 0 && m == 1 {
		return trapPage(fmt.Sprintf("%d/%d", y, m), next)
	}
	return trapPage(fmt.Sprintf("%d/%d", y, m), prev, next)
}

// shop serves shop/ and shop/{k}.html, whose links all carry a fresh
// session id, as a site that keeps sessions in URLs does for a client
// without cookies.
func (t *TrapSite) shop(rest string) string {
	name := strings.TrimPrefix(rest, "shop/")
	title := "Shop"
	if name != "" {
		k, ok := canonicalIndex(strings.TrimSuffix(name, ".html"))
		if !ok || !strings.HasSuffix(name, ".html") || k >= ShopItems {
			return ""
		}
		title = "Item " + strconv.Itoa(k)
	}
	links := []string{TrapsPath + "shop/?sid=" + t.sessionID()}
	for k := range ShopItems {
		links = append(links, TrapsPath+"shop/"+strconv.Itoa(k)+".html?sid="+t.sessionID())
	}
	return trapPage(title, links...)
}

func (t *TrapSite) sessionID() string {
	h := fnv.New128a()
	fmt.Fprint(h, t.sessions.Add(1))
	return fmt.Sprintf("%x", h.Sum(nil))
}

// grow serves grow/ followed by any number of a/, each linking "a/".
func (t *TrapSite) grow(rest string) string {
	tail := strings.TrimPrefix(rest, "grow/")
	if strings.ReplaceAll(tail, "a/", "") != "" {
		return ""
	}
	// Each level says how deep it is: the same page at every level would
	// be read once (a catch-all's copy), and the limit on repeated path
	// segments would never be reached.
	return trapPage(fmt.Sprintf("Growing path, %d deep", strings.Count(tail, "a/")), "a/")
}

// facetValues are the facets of the listing, in the order they appear in
// its query strings; the first value of each is its default, left out.
var facetValues = []struct {
	name   string
	values []string
}{
	{"color", []string{"", "red", "green", "blue", "black", "white"}},
	{"size", []string{"", "s", "m", "l", "xl"}},
	{"sort", []string{"", "price", "name", "new"}},
	{"page", []string{"", "2", "3", "4", "5"}},
}

// facets serves facets/ with any combination of the facets, linking every
// listing that differs from it in one facet: 600 listings in all.
func (t *TrapSite) facets(rest string, q url.Values) string {
	if rest != "facets/" {
		return ""
	}
	cur := make([]string, len(facetValues))
	for i, f := range facetValues {
		cur[i] = q.Get(f.name)
	}
	var links []string
	for i, f := range facetValues {
		for _, v := range f.values {
			if v == cur[i] {
				continue
			}
			next := append([]string(nil), cur...)
			next[i] = v
			var qs []string
			for j, g := range facetValues {
				if next[j] != "" {
					qs = append(qs, g.name+"="+next[j])
				}
			}
			link := TrapsPath + "facets/"
			if len(qs) > 0 {
				link += "?" + strings.Join(qs, "&")
			}
			links = append(links, link)
		}
	}
	return trapPage("Listing", links...)
}
