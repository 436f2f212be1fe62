package crawler

import (
	"net/url"
	"strings"
	"sync"

	"github.com/linkpatrol/linkpatrol/rules"
)

// A site's pages repeat most of their links (the navigation, the footer,
// the stylesheet, the pages of one directory linking each other), and each
// reference costs a parse, a resolution, canonicalisation, the rules and
// the trap checks. resolved keeps what came of a reference written in a
// given directory, so each is worked out once. The rules are fixed for a
// run, so an answer never goes stale; robots.txt, which becomes known
// during the run, is read for every link as before.

// maxResolved bounds the memory the cache holds (about 4 MiB); when it is
// full it starts over, which costs a miss per link, never a wrong answer.
const maxResolved = 2048

// refKey names a reference by the part of its base it depends on (see
// baseKeys) and the reference as written.
type refKey struct{ base, ref string }

// resolvedRef is what refs.add makes of a reference up to the dedupe. The
// URLs in it are shared between pages: nobody may modify them.
type resolvedRef struct {
	u       *url.URL // the reference resolved; nil when invalid is set
	invalid string   // why the reference is broken as written, or ""
	raw     string   // the URL reported as broken, with invalid
	d       rules.Decision
	traps   *trapInfo // for a page to parse; see Crawler.trapInfo
}

type resolvedCache struct {
	mu sync.Mutex
	m  map[refKey]*resolvedRef
}

func (c *resolvedCache) get(k refKey) *resolvedRef {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[k]
}

func (c *resolvedCache) put(k refKey, r *resolvedRef) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.m == nil:
		c.m = make(map[refKey]*resolvedRef, maxResolved)
	case len(c.m) >= maxResolved:
		// Emptied, not made again: on a site whose pages link at random
		// the cache fills every 2,000 misses or so, and a new map each
		// time was 3% of the bytes a check allocated.
		clear(c.m)
	}
	c.m[k] = r
}

// baseKeys returns what a reference's resolution depends on, for a
// reference that has no scheme of its own: dir, the base up to the last
// "/" of its path, for a relative path ("a.html", "../b/", "/c", "//h/");
// full, the whole base, for what also depends on its path and query ("",
// "?q", "#f"). Where the directory cannot be told, dir is full.
func baseKeys(base *url.URL) (dir, full string) {
	b := *base
	b.Fragment, b.RawFragment = "", ""
	full = b.String()
	if b.Opaque != "" {
		return full, full
	}
	b.RawQuery, b.ForceQuery = "", false
	s, path := b.String(), b.EscapedPath()
	i := strings.LastIndexByte(path, '/')
	if i < 0 || !strings.HasSuffix(s, path) {
		return full, full
	}
	return s[:len(s)-len(path)+i+1], full
}

// keyFor is the cache key of ref written on a page with baseKeys dir and
// full. dir serves only the common forms whose resolution needs no more of
// the base: a path ("a.html", "../b/", "/c") and an http(s) URL; anything
// else ("", "?q", "#f", "//", "http:?q", leading white space...) is keyed
// by the whole base. FuzzResolvedKey holds this to Resolve.
func keyFor(dir, full, ref string) refKey {
	switch {
	case strings.HasPrefix(ref, "https://") || strings.HasPrefix(ref, "http://"):
		return refKey{dir, ref}
	case ref == "" || strings.IndexByte(ref, ':') >= 0:
		return refKey{full, ref}
	case ref[0] == '/' || ref[0] == '\\':
		if len(ref) > 1 && ref[1] != '/' && ref[1] != '\\' && ref[1] > ' ' {
			return refKey{dir, ref}
		}
		return refKey{full, ref}
	case pathStart(ref[0]):
		return refKey{dir, ref}
	}
	return refKey{full, ref}
}

// pathStart says whether c can start a relative path reference.
func pathStart(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '.' || c == '_' || c == '~' || c == '-' || c == '%'
}

// queuedDecision is the decision a task queued whole keeps (most share
// one, see queued): a copy of d without Parsed. A target's decision points into the resolvedRef its link was
// resolved to, and a task queued with that pointer kept the whole of it
// alive (the reference as resolved, the parsed URLs, the trap details:
// about a kilobyte a URL) for as long as it waited: on a 100,000-page site
// the live heap went from 44 to 124 MB (77 MB with a copy that kept
// Parsed). Nothing reads Parsed from a task's decision, and a task from
// the stored frontier is decided from its URL string all the same; the
// copy shares the policies, which are read only.
func queuedDecision(d *rules.Decision) *rules.Decision {
	if d == nil {
		return nil
	}
	c := *d
	c.Parsed = nil
	return &c
}
