package rules

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Traps are the limits beyond which a page that would be parsed is held
// back as a suspected spider trap: an infinite calendar, a relative link
// that grows the path, a faceted listing, an endless chain of generated
// pages. A held-back URL is not fetched; it is listed as skipped with the
// reason and the setting that lets it through. Links that are only checked
// never lead further, so the limits apply to pages to parse only. Zero turns
// a limit off.
//
// The first three are Heritrix's rules of the same purpose, with its
// defaults where a link checker can afford them; the last two need counts
// kept over the pass, which the crawler keeps.
type Traps struct {
	// MaxHops is how many links a page may be from a start URL (or a
	// sitemap entry): Heritrix's TooManyHopsDecideRule.
	MaxHops int
	// MaxPathSegments is how many segments a path may have: Heritrix's
	// TooManyPathSegmentsDecideRule.
	MaxPathSegments int
	// MaxPathRepeats is how many times in a row one segment, or one run of
	// segments, may appear in a path (/a/a/ is 2, /a/a/a/ is 3): Heritrix's
	// PathologicalPathDecideRule. It stops relative links that grow the path.
	MaxPathRepeats int
	// MaxQueryVariants is how many distinct query strings one path of a
	// host may be parsed with: faceted listings and search pages, where
	// every combination of parameters is a URL.
	MaxQueryVariants int
	// MaxTemplateRun is how many pages of one template (the path with its
	// numbers as "#" and the query's parameter names: /cal/#/#) may follow
	// each other, each found on the one before: the distinct values an
	// infinite calendar or an endless "next" chain walks through in one
	// position. Counting the run rather than all values of a template keeps
	// a site of 10,000 /p/#.html pages, which link to each other from a few
	// hops away, whole.
	MaxTemplateRun int
}

// DefaultTraps are the limits of a run that sets none. A crawl of one
// site must cover all of it, so the hop limit is more generous than
// Heritrix's 20; an infinite calendar linked both ways costs at most
// 1+2·MaxTemplateRun pages, a faceted listing MaxQueryVariants.
func DefaultTraps() Traps {
	return Traps{MaxHops: 50, MaxPathSegments: 20, MaxPathRepeats: 2, MaxQueryVariants: 100, MaxTemplateRun: 40}
}

// String lists the limits with their config keys, "off" for those that
// are 0: what explain prints.
func (t Traps) String() string {
	var parts []string
	for _, r := range TrapRules() {
		v := "off"
		if n := t.limit(r); n > 0 {
			v = strconv.Itoa(n)
		}
		parts = append(parts, r.Key+" "+v)
	}
	return strings.Join(parts, ", ")
}

func (t Traps) limit(r TrapRule) int {
	switch r {
	case TrapHops:
		return t.MaxHops
	case TrapPathSegments:
		return t.MaxPathSegments
	case TrapPathRepeats:
		return t.MaxPathRepeats
	case TrapQueryVariants:
		return t.MaxQueryVariants
	case TrapTemplateRun:
		return t.MaxTemplateRun
	}
	return 0
}

// TrapRule names one of the limits for people: the name the report uses,
// the flag and the config key (top level, and in a [[rule]]) that set it.
type TrapRule struct {
	Name, Flag, Key string
}

// The trap rules, in the order they are tried.
var (
	TrapPathRepeats   = TrapRule{"path-repeats", "--max-path-repeats", "max_path_repeats"}
	TrapPathSegments  = TrapRule{"path-segments", "--max-path-segments", "max_path_segments"}
	TrapQueryVariants = TrapRule{"query-variants", "--max-query-variants", "max_query_variants"}
	TrapTemplateRun   = TrapRule{"template-run", "--max-template-run", "max_template_run"}
	TrapHops          = TrapRule{"hops", "--max-hops", "max_hops"}
)

// TrapRules lists every trap rule.
func TrapRules() []TrapRule {
	return []TrapRule{TrapPathRepeats, TrapPathSegments, TrapQueryVariants, TrapTemplateRun, TrapHops}
}

// Trap says why a URL was held back.
type Trap struct {
	Rule   TrapRule
	Reason string // what was seen, for people
}

// Note is the explanation a held-back URL carries into the report: what
// was seen, and the setting that would let it through.
func (t Trap) Note() string {
	return fmt.Sprintf("skipped: suspected trap (%s: %s; raise %s, or %s in the config file or in a [[rule]] for these URLs; 0 turns it off)",
		t.Rule.Name, t.Reason, t.Rule.Flag, t.Rule.Key)
}

// CheckPath applies the rules that need nothing but the URL: path
// segments and repeated segments.
func (t Traps) CheckPath(u *url.URL) (Trap, bool) {
	// Split into a buffer on the stack: this runs for every link to a page
	// to parse, and a path rarely has more segments than fit.
	var buf [32]string
	segs := appendSegments(buf[:0], u.EscapedPath())
	if t.MaxPathRepeats > 0 {
		if run, n := repeatedRun(segs, t.MaxPathRepeats); n > 0 {
			return Trap{TrapPathRepeats, fmt.Sprintf("%q %d times in a row in the path, more than %d", run, n, t.MaxPathRepeats)}, true
		}
	}
	if t.MaxPathSegments > 0 && len(segs) > t.MaxPathSegments {
		return Trap{TrapPathSegments, fmt.Sprintf("%d path segments, more than %d", len(segs), t.MaxPathSegments)}, true
	}
	return Trap{}, false
}

// CheckHops applies the hop limit to a page hops links from a start URL.
func (t Traps) CheckHops(hops int) (Trap, bool) {
	if t.MaxHops > 0 && hops > t.MaxHops {
		return Trap{TrapHops, fmt.Sprintf("%d links from the start URLs, more than %d", hops, t.MaxHops)}, true
	}
	return Trap{}, false
}

// CheckRun applies the template limit to the run-th page of template in a
// row (the first is 0).
func (t Traps) CheckRun(run int, template string) (Trap, bool) {
	if t.MaxTemplateRun > 0 && run > t.MaxTemplateRun {
		return Trap{TrapTemplateRun, fmt.Sprintf("%d pages of %s in a row, each found on the one before, more than %d", run, template, t.MaxTemplateRun)}, true
	}
	return Trap{}, false
}

// CheckQuery applies the query limit to a URL whose path already has seen
// distinct query strings.
func (t Traps) CheckQuery(seen int, path string) (Trap, bool) {
	if t.MaxQueryVariants > 0 && seen >= t.MaxQueryVariants {
		return Trap{TrapQueryVariants, fmt.Sprintf("more than %d distinct query strings on %s", t.MaxQueryVariants, path)}, true
	}
	return Trap{}, false
}

// QueryPath is the key under which query variants are counted: host and
// path of a URL with a query, "" for a URL without one.
func QueryPath(u *url.URL) string {
	if u.RawQuery == "" {
		return ""
	}
	return u.Host + u.EscapedPath()
}

// Template is the shape a run of generated pages shares: the host, the path
// with every run of digits as "#", and the names of the query parameters in
// order. /cal/2026/11 and /cal/2027/1 are both /cal/#/#.
func Template(u *url.URL) string {
	path := u.EscapedPath()
	var b strings.Builder
	b.Grow(len(u.Host) + len(path) + len(u.RawQuery) + 1)
	b.WriteString(u.Host)
	digits := func(s string) {
		prev := false
		for i := 0; i < len(s); i++ {
			c := s[i]
			d := '0' <= c && c <= '9'
			switch {
			case d && !prev:
				b.WriteByte('#')
			case !d:
				b.WriteByte(c)
			}
			prev = d
		}
	}
	digits(path)
	if u.RawQuery != "" {
		b.WriteByte('?')
		for i, p := range strings.Split(u.RawQuery, "&") {
			if i > 0 {
				b.WriteByte('&')
			}
			name, _, _ := strings.Cut(p, "=")
			digits(name)
		}
	}
	return b.String()
}

// appendSegments appends the segments of an escaped path to segs; a
// trailing slash adds none.
func appendSegments(segs []string, p string) []string {
	p = strings.TrimPrefix(p, "/")
	p = strings.TrimSuffix(p, "/")
	if p == "" {
		return segs
	}
	for seg := range strings.SplitSeq(p, "/") {
		segs = append(segs, seg)
	}
	return segs
}

// maxRunSize is the longest run of segments looked for: growing paths
// repeat one or a few segments, and a bound keeps the search linear in the
// length of the path.
const maxRunSize = 8

// repeatedRun finds a run of segments that appears more than limit times in
// a row, and how often: for a/b/a/b/a/b and limit 2 it is "a/b/", 3 times.
// It returns 0 when there is none.
func repeatedRun(segs []string, limit int) (string, int) {
	for size := 1; size <= min(maxRunSize, len(segs)/2); size++ {
		for i := 0; i+(limit+1)*size <= len(segs); i++ {
			n := 1
			for j := i + size; j+size <= len(segs) && slices.Equal(segs[i:i+size], segs[j:j+size]); j += size {
				n++
			}
			if n > limit {
				return strings.Join(segs[i:i+size], "/") + "/", n
			}
		}
	}
	return "", 0
}
