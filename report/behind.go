package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/linkpatrol/linkpatrol/store"
)

// keptCopy is a page of the site not read this pass, with no good copy
// recent enough to follow (no ghost), and the links of the last copy that
// was read, which the crawler keeps so that what lies behind the page is
// known (qa7 Q5). They are not referrers: nothing says the page still
// links there.
type keptCopy struct {
	page  store.URLRecord
	links []store.Link
}

// behindUnread finds the problems of the compared pass that this complete
// pass did not reach because a page not read (hidden) was the only way to
// them: linked, in the copies the store keeps, from such a page or from a
// page not reached itself, and so on. Nothing says such a link is gone, so
// each is listed as not checked this pass (ChangeUnchecked, with its verdict
// when last checked, so a broken one keeps exit 1) instead of "no longer
// linked", and the pass's tally keeps its URL, so that the next pass that
// checks it calls it still there, not new. A problem the compared pass
// listed that way and this pass neither reached nor finds behind a page
// not read is no longer linked.
//
// The walk reads only the part of the site behind the unread pages, one
// record and one link list per page of it, so a night without a page not
// read costs nothing.
//
// unreached are pages of the compared pass this one did not reach because
// the start page via, read, has no links now (Report.EmptyStart): they are
// walked as if via still linked to them.
func (r *Report) behindUnread(src Source, hidden []keptCopy, unreached []string, via string, order *[]*Entry) error {
	var carried []string
	if r.Previous.Tally != nil {
		carried = r.Previous.Tally.Unchecked
	}
	if len(hidden) == 0 && len(unreached) == 0 && len(carried) == 0 {
		return nil
	}
	behind := make(map[string]string) // URL -> the unread page it lies behind
	refs := make(map[string][]Referrer)
	var queue []string
	visit := func(page *store.URLRecord, links []store.Link, via string) {
		// A page not read: its last good copy; one not reached: the
		// copy read when it was last fetched.
		from := Referrer{Page: page.URL, GhostFrom: page.LastGood, PageNow: Problem(*page)}
		if page.Pass != r.Pass.ID {
			from.GhostFrom, from.PageNow = cmp.Or(page.FetchedAt, page.LastGood), ""
		}
		for _, l := range links {
			if l.URL == page.URL {
				continue
			}
			ref := from
			ref.Line, ref.Fragment, ref.Tag, ref.Attr = l.Line, l.Fragment, l.Tag, l.Attr
			refs[l.URL] = append(refs[l.URL], ref)
			if _, seen := behind[l.URL]; !seen {
				behind[l.URL] = via
				queue = append(queue, l.URL)
			}
		}
	}
	for i := range hidden {
		behind[hidden[i].page.URL] = hidden[i].page.URL
		visit(&hidden[i].page, hidden[i].links, hidden[i].page.URL)
	}
	for _, u := range unreached {
		if _, seen := behind[u]; !seen {
			behind[u] = via
			queue = append(queue, u)
		}
	}
	var held []store.URLRecord
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		rec, ok, err := src.Get(u)
		if err != nil {
			return fmt.Errorf("read %s: %w", u, err)
		}
		if !ok || rec.Pass >= r.Pass.ID {
			continue // reached this pass: its verdict stands, and what it links to was reached through it
		}
		if rec.Verdict.Problem() && r.listedBefore(&rec) {
			held = append(held, rec)
		}
		if rec.Parsed {
			links, err := src.Links(u)
			if err != nil {
				return fmt.Errorf("read the links of %s: %w", u, err)
			}
			visit(&rec, links, behind[u])
		}
	}
	for _, u := range carried {
		if _, ok := behind[u]; ok {
			continue
		}
		rec, ok, err := src.Get(u)
		if err != nil {
			return fmt.Errorf("read %s: %w", u, err)
		}
		if ok && rec.Pass < r.Pass.ID && !r.Pass.Skips(rec.Pass) && rec.Verdict.Problem() {
			r.Gone = append(r.Gone, rec)
		}
	}
	if via != "" {
		// The start page's own links of the compared pass are not kept:
		// its empty read replaced them. A problem of that pass that no
		// page read this pass links to, and that lies behind no page
		// not reached, was linked from that start page or from a page
		// read now that dropped it; nothing tells which, so it is not
		// checked this pass, never "no longer linked" (FX2 left: a
		// broken link right on the start page).
		for _, rec := range r.Gone {
			if _, ok := behind[rec.URL]; !ok {
				behind[rec.URL] = via
				held = append(held, rec)
			}
		}
	}
	if len(held) == 0 {
		return nil
	}
	r.Gone = slices.DeleteFunc(r.Gone, func(rec store.URLRecord) bool {
		_, ok := behind[rec.URL]
		return ok
	})
	for _, rec := range held {
		e := &Entry{Record: rec, Change: ChangeUnchecked, Referrers: refs[rec.URL], Behind: behind[rec.URL]}
		// What it was when last checked is its verdict then (LastChecked).
		e.Record.PrevVerdict, e.Record.PrevPass = rec.Verdict, rec.Pass
		r.heldBehind = append(r.heldBehind, rec.URL)
		// It is one of the pass's URLs as much as of its verdicts:
		// the summary's counts add up (RV2 #6).
		r.Summary.URLs++
		if r.tally(&e.Record, e.Change) {
			*order = append(*order, e)
		}
	}
	slices.Sort(r.heldBehind)
	return nil
}

// listedBefore says whether rec, a problem this pass did not reach, was
// one the compared pass listed: resolved in it and old enough for
// ReportAfter then, or rechecked in an unfinished pass since and a
// reported problem then, or not checked in it because it lay behind a page
// not read (its tally's Unchecked).
func (r *Report) listedBefore(rec *store.URLRecord) bool {
	switch {
	case strings.HasPrefix(rec.Note, store.RedirectNote):
		return false // a hop of a chain: the link that leads there is the problem
	case rec.Pass == r.Previous.ID:
		return !r.young(rec, rec.Failures, passTime(*r.Previous))
	case r.Pass.Skips(rec.Pass):
		return rec.PrevPass == r.Previous.ID && rec.PrevVerdict.Problem() && r.reportedThen(rec)
	}
	return r.heldThen(rec.URL)
}

// heldThen says whether the compared pass listed u as not checked because
// it lay behind a page not read (store.Tally.Unchecked).
func (r *Report) heldThen(u string) bool {
	if r.Previous == nil || r.Previous.Tally == nil {
		return false
	}
	_, found := slices.BinarySearch(r.Previous.Tally.Unchecked, u)
	return found
}
