package report

import (
	"cmp"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/linkpatrol/linkpatrol/store"
)

// Missing fragments are checked here, not in the crawler: a link to
// page#frag can only be judged once page is parsed, which may be long after
// the link was found, while the report has both at hand. The crawler (with
// its CheckFragments) stores every parsed page's anchors in URLRecord.IDs;
// Build matches the fragments of the pass's links against them.
//
// A missing fragment is a problem like a broken link (HasBroken counts it,
// so the exit code is 1), listed in a section of its own because the URL
// itself works. Its page is checked only when it was parsed in the pass,
// is ok, and had its anchors collected (a page fetched before the checks
// were on, or cut off at the size cap, is not judged). Fragments have no
// record of their own: a complete pass keeps the list of its missing ones
// with its tally (store.Tally.Fragments), and the next pass's report tells
// from it which are new, still there, fixed or no longer linked, as for
// URLs, so OnlyNew shows the new ones and the exit code follows them
// (qa6 Q1). ReportAfter does not delay them (a missing anchor does not
// come and go like a flaky server).

// MissingFragment is a link to URL#Fragment whose page has no element with
// that id or name.
type MissingFragment struct {
	URL       string // the page, canonical, without the fragment
	Fragment  string // as linked (see rules.LinkedFragment)
	Referrers []Referrer
	// Change compares with the previous complete pass: ChangeNew or
	// ChangeStill for a missing one, ChangeUnchecked for one missing then
	// whose page this pass could not read (Page is then its record),
	// ChangeFixed or ChangeNone (no longer linked) in
	// Report.FixedFragments and GoneFragments.
	Change Change
	Page   *store.URLRecord
}

// fragmentChanges is one of the lists of missing fragments that changed
// since the previous complete pass, with its title and what each was.
type fragmentChangeList struct {
	title, was string
	list       []MissingFragment
}

// fragmentChangeLists are the fixed and the no longer linked missing
// fragments, those that are not empty: every format that lists fixed
// broken links lists these beside them (text, Markdown, HTML; JSON has
// its own fields), so the "fixed" of the change line adds up in each.
func (r *Report) fragmentChangeLists() []fragmentChangeList {
	var out []fragmentChangeList
	for _, fs := range []fragmentChangeList{
		{"Fragments fixed since pass %d (%d)", "was a missing fragment, found now", r.FixedFragments},
		{"Fragments no longer linked since pass %d (%d)", "was a missing fragment", r.GoneFragments},
	} {
		if len(fs.list) > 0 {
			fs.title = fmt.Sprintf(fs.title, r.Previous.ID, len(fs.list))
			out = append(out, fs)
		}
	}
	return out
}

// Link is the URL as a person would follow it, fragment included.
func (m MissingFragment) Link() string { return m.URL + "#" + m.Fragment }

// fragmentLocation is where a person finds m: Location of its page, then
// the fragment.
func (r *Report) fragmentLocation(m MissingFragment) string {
	return r.Location(m.URL) + "#" + m.Fragment
}

type fragmentKey struct{ url, fragment string }

// alwaysThere are the fragments HTML resolves without looking for an
// element: the empty one and "top" (in any case, percent-decoded) are the
// top of the page.
func alwaysThere(fragment string) bool {
	return fragment == "" || strings.EqualFold(decodeFragment(fragment), "top") || textFragment(fragment)
}

// textFragment says whether a fragment carries a fragment directive
// ("#:~:text=...", "#id:~:text=..."): the browser scrolls to the quoted
// text, and the id, if any, is only where it goes when the text is not
// found, so a missing id is no missing anchor.
func textFragment(fragment string) bool { return strings.Contains(fragment, ":~:") }

// anchorSet answers whether a page has a fragment, given its IDs (sorted,
// as the crawler stores them).
type anchorSet struct{ ids []string }

func newAnchorSet(ids []string) anchorSet {
	if !slices.IsSorted(ids) {
		ids = slices.Sorted(slices.Values(ids))
	}
	return anchorSet{ids}
}

// has follows HTML's "find a potential indicated element": an id (or <a
// name>) equal to the fragment as the URL holds it (a link's fragment is
// stored so, see rules.LinkedFragment), or else equal to its
// percent-decoding. An id is never decoded: #%25%3D does not reach
// name="%25=", nor #%5eup id="%5Eup", in any browser (qa10 Q2).
func (a anchorSet) has(fragment string) bool {
	if alwaysThere(fragment) {
		return true
	}
	if _, ok := slices.BinarySearch(a.ids, fragment); ok {
		return true
	}
	if d := decodeFragment(fragment); d != fragment {
		_, ok := slices.BinarySearch(a.ids, d)
		return ok
	}
	return false
}

// decodeFragment percent-decodes s as WHATWG URL does, bytes that are not
// UTF-8 becoming U+FFFD. A fragment with a % not followed by two hex digits
// is left whole (a browser decodes its other escapes; too rare to matter).
func decodeFragment(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	d, err := url.PathUnescape(s)
	if err != nil {
		return s
	}
	return strings.ToValidUTF8(d, "\uFFFD")
}

// checkFragments reads the pages that fragment links point to and keeps the
// links whose fragment their page lacks. refs holds every link with a
// fragment, by page and fragment. A linked URL that redirects is judged by
// the page the redirects end at, as a browser scrolls there.
//
// unread are the linked pages this pass could not read (transient or
// unverifiable: a ghost's anchors are not kept), whose fragments are not
// judged.
func (r *Report) checkFragments(src Source, passID uint64, refs map[fragmentKey][]Referrer) (judged map[fragmentKey]bool, unread map[string]*store.URLRecord, err error) {
	judged = make(map[fragmentKey]bool)
	unread = make(map[string]*store.URLRecord)
	wanted := make(map[string][]string)
	for k := range refs {
		wanted[k.url] = append(wanted[k.url], k.fragment)
	}
	judge := func(linked string, page *store.URLRecord) {
		if page.Verdict == store.VerdictTransient || page.Verdict == store.VerdictUnverifiable {
			c := *page
			unread[linked] = &c
			return
		}
		if !page.Parsed || page.Verdict != store.VerdictOK || page.IDs == nil {
			return
		}
		anchors := newAnchorSet(page.IDs)
		for _, f := range wanted[linked] {
			judged[fragmentKey{linked, f}] = true
			if anchors.has(f) {
				continue
			}
			rs := refs[fragmentKey{linked, f}]
			slices.SortFunc(rs, compareReferrers)
			r.Fragments = append(r.Fragments, MissingFragment{URL: linked, Fragment: f, Referrers: rs})
		}
	}
	redirected := make(map[string][]string) // final URL → the linked URLs that end there
	err = src.Records(passID, func(rec *store.URLRecord) error {
		if len(wanted[rec.URL]) == 0 {
			return nil
		}
		if rec.FinalURL != "" && rec.FinalURL != rec.URL && rec.Verdict == store.VerdictOK {
			redirected[rec.FinalURL] = append(redirected[rec.FinalURL], rec.URL)
			return nil
		}
		judge(rec.URL, rec)
		return nil
	})
	if err == nil && len(redirected) > 0 {
		err = src.Records(passID, func(rec *store.URLRecord) error {
			for _, linked := range redirected[rec.URL] {
				judge(linked, rec)
			}
			return nil
		})
	}
	if err != nil {
		return nil, nil, err
	}
	slices.SortFunc(r.Fragments, func(a, b MissingFragment) int {
		return cmp.Or(strings.Compare(a.URL, b.URL), strings.Compare(a.Fragment, b.Fragment))
	})
	return judged, unread, nil
}

// fragmentChanges compares the missing fragments with those the previous
// complete pass kept (store.Tally.Fragments): each missing one is new or
// still there; one missing then that a page still links to, on a page
// judged now, is fixed; one no page links to any more is no longer linked
// (only when this pass is complete: an unfinished one may not have reached
// it yet). They count in the summary's changes like URLs. refs are this
// pass's links with a fragment, judged those whose page was judged. With
// OnlyNew only the new ones stay listed (and decide the exit code).
//
// One missing then that a page still links to, on a page this pass could
// not read (unread), is neither fixed nor dropped: nothing says the anchor
// is back (qa7 Q9). It is listed as not checked this pass
// (ChangeUnchecked), fails the run as a missing one does, and stays in the
// pass's tally, so that the night its page is read again it is still
// there, not new.
func (r *Report) fragmentChanges(refs map[fragmentKey][]Referrer, judged map[fragmentKey]bool, unread map[string]*store.URLRecord) {
	s := &r.Summary
	for _, m := range r.Fragments {
		r.fragmentKeys = append(r.fragmentKeys, m.Link())
	}
	var before map[string]bool
	if p := r.Previous; p != nil && p.Tally != nil && p.Tally.FragmentsChecked {
		before = make(map[string]bool, len(p.Tally.Fragments))
		for _, k := range p.Tally.Fragments {
			before[k] = true
		}
	}
	for i := range r.Fragments {
		m := &r.Fragments[i]
		m.Change = ChangeNew
		if before[m.Link()] {
			m.Change = ChangeStill
			s.StillBroken++
			delete(before, m.Link())
		} else {
			s.New++
		}
	}
	for _, k := range slices.Sorted(maps.Keys(before)) {
		u, f, _ := strings.Cut(k, "#")
		key := fragmentKey{u, f}
		switch rs, linked := refs[key]; {
		case linked && judged[key]:
			slices.SortFunc(rs, compareReferrers)
			r.FixedFragments = append(r.FixedFragments, MissingFragment{URL: u, Fragment: f, Referrers: rs, Change: ChangeFixed})
		case linked && unread[u] != nil:
			slices.SortFunc(rs, compareReferrers)
			r.Fragments = append(r.Fragments, MissingFragment{URL: u, Fragment: f, Referrers: rs, Change: ChangeUnchecked, Page: unread[u]})
			r.fragmentKeys = append(r.fragmentKeys, k)
			s.Unchecked++
			s.FragmentsUnchecked++
		case !linked && r.Pass.State == store.PassComplete:
			r.GoneFragments = append(r.GoneFragments, MissingFragment{URL: u, Fragment: f})
		}
	}
	slices.Sort(r.fragmentKeys)
	slices.SortFunc(r.Fragments, func(a, b MissingFragment) int {
		return cmp.Or(strings.Compare(a.URL, b.URL), strings.Compare(a.Fragment, b.Fragment))
	})
	s.MissingFragments = len(r.Fragments)
	s.Fixed += len(r.FixedFragments)
	s.Gone += len(r.GoneFragments)
	if r.Options.OnlyNew {
		r.Fragments = slices.DeleteFunc(r.Fragments, func(m MissingFragment) bool { return m.Change != ChangeNew })
	}
}

func compareReferrers(a, b Referrer) int {
	// A page's links carried from its last full copy come after the ones
	// read now: their lines are of another copy.
	return cmp.Or(strings.Compare(a.Page, b.Page), a.CarriedFrom.Compare(b.CarriedFrom), cmp.Compare(a.Line, b.Line), strings.Compare(a.Fragment, b.Fragment))
}
