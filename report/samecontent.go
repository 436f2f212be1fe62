package report

import (
	"fmt"
	"strings"

	"github.com/linkpatrol/linkpatrol/store"
)

// SameContent counts the pages the pass checked but did not read for
// links because their body was that of a page of their host read before
// them (store.SameContentNote): a catch-all server, a single-page app's,
// answers every made-up path with its one page, and its relative links
// lead to new made-up paths for ever. Zero Count when there were none.
type SameContent struct {
	Count int
	// Elsewhere counts, of Count, the pages in another directory than the
	// page read, with links written relative to their path: those lead
	// elsewhere there, and were not checked (store.SameContentMoved). In
	// the same directory (/docs/ and /docs/index.html), or with only
	// root-relative and absolute links, they are the same links, so
	// nothing was missed.
	Elsewhere int
	// First is the page read whose content most of them had, and Group
	// how many had it; Examples are a few of those, the ones that lost
	// links first.
	First    string
	Group    int
	Examples []string
}

// sameContents gathers SameContent from the pass's records: a count per
// page read first, and a few examples of each.
type sameContents struct {
	total, elsewhere int
	groups           map[string]*sameContentGroup
}

type sameContentGroup struct {
	n               int
	elsewhere, same []string // examples, with links lost and without
}

func (s *sameContents) add(rec *store.URLRecord) {
	rest, ok := strings.CutPrefix(rec.Note, store.SameContentNote)
	if !ok || rec.Parsed {
		return
	}
	first, _, _ := strings.Cut(rest, "; ") // a URL has no "; " in it
	first, moved := strings.CutSuffix(first, store.SameContentMoved)
	s.total++
	if s.groups == nil {
		s.groups = make(map[string]*sameContentGroup)
	}
	g := s.groups[first]
	if g == nil {
		g = &sameContentGroup{}
		s.groups[first] = g
	}
	g.n++
	if moved {
		s.elsewhere++
		if len(g.elsewhere) < samePageExamples {
			g.elsewhere = append(g.elsewhere, rec.URL)
		}
	} else if len(g.same) < samePageExamples {
		g.same = append(g.same, rec.URL)
	}
}

// summary is the count, with the largest group's first page and examples.
func (s *sameContents) summary() SameContent {
	if s.total == 0 {
		return SameContent{}
	}
	sc := SameContent{Count: s.total, Elsewhere: s.elsewhere}
	var best *sameContentGroup
	for first, g := range s.groups {
		if best == nil || g.n > best.n || g.n == best.n && first < sc.First {
			best, sc.First = g, first
		}
	}
	sc.Group = best.n
	sc.Examples = append(append(sc.Examples, best.elsewhere...), best.same...)
	sc.Examples = sc.Examples[:min(len(sc.Examples), samePageExamples)]
	return sc
}

// SameContentLine says how many pages were not read for links because
// they had the content of the page that linked to them, and what that cost, or
// "" when there were none.
func (r *Report) SameContentLine() string {
	sc := r.Summary.SameContent
	if sc.Count == 0 {
		return ""
	}
	ex := make([]string, len(sc.Examples))
	for i, u := range sc.Examples {
		ex[i] = r.Location(u)
	}
	var what string
	if sc.Group == sc.Count {
		what = fmt.Sprintf("%s the same content as %s and %s not read for links",
			plural(sc.Count, "page had", "pages had"), r.Location(sc.First), wasWere(sc.Count))
	} else {
		what = fmt.Sprintf("%s the same content as the page that linked to them and were not read for links (%d as %s)",
			plural(sc.Count, "page had", "pages had"), sc.Group, r.Location(sc.First))
	}
	var cost string
	switch {
	case sc.Elsewhere == 0:
		cost = "their links are its links (in its directory, or not relative to it), so nothing was missed"
	default:
		where := fmt.Sprintf("%d of them are", sc.Elsewhere)
		switch {
		case sc.Elsewhere == 1 && sc.Count > 1:
			where = "1 of them is"
		case sc.Elsewhere == 1 && sc.Count == 1:
			where = "it is"
		case sc.Elsewhere == sc.Count:
			where = "they are"
		}
		cost = where + " in another directory, where the page's relative links lead elsewhere, and those were not checked: " +
			"a server that answers every path with one page (a single-page app's catch-all), or a copy of a section?"
	}
	return fmt.Sprintf("%s, for example %s; %s", what, strings.Join(ex, ", "), cost)
}
