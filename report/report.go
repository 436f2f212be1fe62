package report

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
)

// Source is the read side of the store that a report needs.
type Source interface {
	Pass(id uint64) (store.Pass, error)
	PreviousComplete(before uint64) (store.Pass, bool, error)
	// Records calls fn for every URL record last resolved in the pass.
	Records(passID uint64, fn func(*store.URLRecord) error) error
	// PageLinks calls fn for every page of the pass that has stored links.
	PageLinks(passID uint64, fn func(page *store.URLRecord, links []store.Link) error) error
	// Get reads one URL's latest record, of whatever pass, and Links one
	// page's stored links: what lies behind a page not read is known only
	// from them (see behindUnread), so every Source must have them; a
	// report that skipped that walk would call those problems "no longer
	// linked" and exit 5 instead of 1.
	Get(url string) (store.URLRecord, bool, error)
	Links(page string) ([]store.Link, error)
}

// Options says what to show and how.
type Options struct {
	All         bool      // every URL, not only problems
	OnlyNew     bool      // only problems that are new since the previous complete pass
	ReportAfter Threshold // problems younger than this are hidden (and counted as suppressed)
	Now         time.Time // for "broken for 3 days"; zero means time.Now()
	Width       int       // text width; 0 means 80
	// MaxReferrers caps the referring pages listed per URL in text and
	// Markdown (the rest is counted, never dropped silently); 0 means 20,
	// negative means no cap. JSON, CSV and HTML always list them all.
	MaxReferrers int
	// BaseDir is the directory file paths are shown relative to in a check of
	// a directory; empty means the working directory.
	BaseDir string
	// CheckFragments lists the links to page#fragment whose page has no
	// such anchor (see MissingFragment); they count as broken for
	// HasBroken. The pass must have been crawled with the crawler's
	// CheckFragments, which stores each page's anchors.
	CheckFragments bool
	// FailOn says which listed problems make HasBroken true; "" means
	// FailBroken.
	FailOn FailOn
}

const (
	defaultWidth        = 80
	defaultMaxReferrers = 20
)

// Report is one pass, decided and ordered, ready to be written in any format.
type Report struct {
	Pass     store.Pass
	Previous *store.Pass // newest complete pass before Pass; nil when there is none
	Options  Options     // as given to Build, with defaults filled in
	Summary  Summary
	// Entries are worst-first within sections: broken, transient,
	// unverifiable, then with All skipped and ok.
	Entries []Entry
	// Fixed are URLs that are ok now and were a problem in Previous, by URL.
	Fixed []store.URLRecord
	// Gone are problems of Previous that this pass no longer links to, by
	// URL. Empty unless the pass is complete: an incomplete pass may simply
	// not have reached them yet.
	Gone []store.URLRecord
	// Fragments are the missing fragments, by URL then fragment; only with
	// Options.CheckFragments, and with OnlyNew only the new ones.
	Fragments []MissingFragment
	// FixedFragments and GoneFragments are the fragments missing in
	// Previous that are found now, or that no page links to any more (see
	// fragmentChanges).
	FixedFragments, GoneFragments []MissingFragment
	// fragmentKeys are every missing fragment's link, sorted, whatever
	// OnlyNew: what the pass's tally keeps.
	fragmentKeys []string
	// heldBehind are the URLs of the entries with Behind set, sorted,
	// whatever OnlyNew: what the pass's tally keeps (store.Tally.Unchecked).
	heldBehind []string
	// startsWithLinks are the start URLs read this pass as pages with
	// links, sorted: what the next pass's EmptyStart compares with
	// (store.Tally.StartsWithLinks).
	startsWithLinks []string
	// Orphans are the pages the pass started from (Record.Seed: every page
	// of a checked directory) that no other page links to, by URL. A start
	// URL (a directory's own index page) is never one.
	Orphans []string
	// LinkedOut are the files of a checked directory that are symlinks to
	// files outside it (store.LinkedOutNote), by URL: ok, never read.
	LinkedOut []string
	// StartFailure says which start URLs could not be fetched and parsed,
	// and why, or is empty when each was (or one has not been tried yet):
	// a site not checked is a bad night, never a clean one, even when the
	// pass's other sites were.
	StartFailure string
	// nothingBehindStarts: no start URL was fetched and parsed and none
	// had its links followed from a ghost, so the pass checked nothing.
	nothingBehindStarts bool
	// Moved are good links whose first hop is a permanent redirect (301,
	// 308): a warning to update the link to Record.FinalURL, never a
	// failure. By URL; empty with OnlyNew.
	Moved []Entry
	// Cut are the pages of the pass read only in part (store.URLRecord.Cut),
	// by URL: links past the cut were never checked. Listed whatever the
	// Options, like the quota skips they resemble.
	Cut []store.URLRecord
	// Down are the site's hosts that stopped answering part way through
	// the pass (records of class store.ErrorHostDown), by host: their URLs
	// not checked are no dead links, and the pass is unfinished (exit 3).
	Down []HostDown
	// NotTaken are the sitemaps of the pass with entries it did not take
	// because the sitemap limit was reached (store.URLRecord.NotTaken), by
	// URL: held back by a limit like traps, listed whatever the Options.
	NotTaken []store.URLRecord
	// Unread are the pages of the site the pass was to read and could
	// not (see unreadPage), by URL: nothing behind them was checked.
	// Listed whatever the Options, like the pages cut short.
	Unread []store.URLRecord
	// unreadListed are the URLs of Unread that have an entry of their
	// own (with their problem): the formats a person reads list each
	// there once, marked not read (unreadNote), and keep the section of
	// pages not read for the rest (UnreadAlone), those reached by a
	// redirect, so that no page is listed twice.
	unreadListed map[string]struct{}
	// EmptyStart is a start page read this pass (200, parsed) with no
	// links, while pages of the compared pass went unreached: an empty or
	// broken deploy of the home page looks like this, and makes a clean
	// report of one page (qa7 Q3). Failing that, it is a page of the site
	// that came back empty (200, 0 bytes; see emptiedPage), which hides
	// its section the same way (qa8 E1). "" otherwise.
	EmptyStart string
	// Trend is the problems of each complete pass kept, up to this one,
	// oldest first; empty when the Source cannot list passes.
	Trend []TrendPoint

	startHosts map[string]bool // see ownSite
	// siteVia are the start URLs whose redirects led to another host that
	// the pass checked as the site (see Headline).
	siteVia []store.URLRecord
	// accounted are the URLs whose failure a line of its own says (start
	// pages, pages not read); see isUnverified.
	accounted map[string]struct{}
	// unsupported are the schemes of the links counted in
	// Summary.Unsupported, in the order met.
	unsupported []string
	baseDir     string
	linkBase    string // directory of the file the report is written to; see WrittenTo
}

// Summary counts the whole pass, whatever Options hides.
type Summary struct {
	Pages        int // pages parsed (or found unchanged) by this pass, not reused
	Unchanged    int // of Pages, those that answered 304: their stored links were followed, not read again
	Links        int // links found on them
	URLs         int // distinct URLs resolved
	OK           int
	Broken       int
	Transient    int
	Unverifiable int
	// Unsupported counts, of Unverifiable, the links in a scheme linkpatrol
	// cannot check (ftp:, news:, irc:, ...): never requested.
	Unsupported int
	Skipped     int
	Traps       int // of Skipped, pages held back as suspected spider traps
	Quota       int // of Skipped, URLs not checked because a host's quota for the pass was used up
	Robots      int // of Skipped, URLs of the start URLs' hosts that their robots.txt disallows
	Cut         int // of Pages, those read only in part; len(Report.Cut)
	// NotTaken counts the sitemap entries not taken because the sitemap
	// limit (--sitemap-limit) was reached: no record of theirs is stored.
	NotTaken int
	// Unread is len(Report.Unread): pages of the site that could not be
	// read, the links behind them not checked.
	Unread int
	// Unreached counts the pages of the compared pass (Report.Previous)
	// that this pass did not reach, when a start page was read with no
	// links at all (Report.EmptyStart); 0 otherwise.
	Unreached int
	// Unverified counts the listed links that could not be verified this
	// pass (transient or unverifiable) and that no other count accounts
	// for, those --fail-on leaves out excepted (Report.unverified).
	Unverified int
	Suppressed int // problems hidden by ReportAfter
	// Hops counts the problems that no page links to on the redirect
	// chain of a problem that is linked (or a start URL): each is part of
	// that one problem, listed with it, and counted in none of the verdicts.
	Hops int
	// SkippedHops counts the URLs no page links to on a redirect chain
	// the rules or robots.txt stopped short (see stoppedShort): each is
	// part of the skipped entry of the link that leads there, counted in
	// none of the verdicts (review7 RV2 #9).
	SkippedHops int
	// Ghosts counts the pages that failed this pass and had the links of
	// their last good copy followed: not among Pages, which were read.
	Ghosts int
	// OtherScheme counts, of Pages, those read under the other scheme of a
	// start host (http://example.com/... when the start URL is
	// https://example.com/): a site that serves both is walked under each
	// (review9 R2). OtherSchemeOrigin is the first such page's origin and
	// OtherSchemeStart its start URL's.
	OtherScheme                         int
	OtherSchemeOrigin, OtherSchemeStart string
	// SamePage is the largest set of own URLs that answered the same HTML
	// page: a soft 404 hiding broken links (see SamePage).
	SamePage SamePage
	// SameContent counts the pages not read for links because they had
	// the content of a page read before them (see SameContent).
	SameContent SameContent
	// Reused counts results carried over from an earlier pass without a
	// request (younger than their recheck interval); ReusedFrom are the
	// passes that fetched them, ascending, and ReusedOldest/ReusedNewest
	// when the oldest and the newest of them was fetched.
	Reused                     int
	ReusedFrom                 []uint64
	ReusedOldest, ReusedNewest time.Time
	// MissingFragments counts the missing fragments, listed in
	// Report.Fragments (all of them, whatever OnlyNew lists);
	// FragmentsUnchecked are those of them missing when last checked whose
	// page this pass could not read (ChangeUnchecked), also in Unchecked.
	MissingFragments, FragmentsUnchecked int
	// Moved is len(Report.Moved).
	Moved int
	// New and StillBroken count the reported problems; Fixed and Gone are
	// len(Report.Fixed) and len(Report.Gone). All four are zero without a
	// previous complete pass.
	New         int
	StillBroken int
	Fixed       int
	Gone        int
	// Unchecked counts the entries whose Change is ChangeUnchecked.
	Unchecked int
	// Seeds are the URLs the pass started from (start URLs, or every page
	// of a checked directory); the other URLs were reached by links.
	// Orphans is len(Report.Orphans).
	Seeds, Orphans int
	Elapsed        time.Duration
}

func (s *Summary) reused(rec *store.URLRecord) {
	s.Reused++
	if i, found := slices.BinarySearch(s.ReusedFrom, rec.ReusedFrom); !found {
		s.ReusedFrom = slices.Insert(s.ReusedFrom, i, rec.ReusedFrom)
	}
	if t := rec.FetchedAt; !t.IsZero() {
		if s.ReusedOldest.IsZero() || t.Before(s.ReusedOldest) {
			s.ReusedOldest = t
		}
		if t.After(s.ReusedNewest) {
			s.ReusedNewest = t
		}
	}
}

// Problems is the number of broken, transient and unverifiable URLs.
func (s Summary) Problems() int { return s.Broken + s.Transient + s.Unverifiable }

// Change says how an entry compares with the previous complete pass.
type Change string

const (
	ChangeNone  Change = ""      // not a problem, or no previous pass to compare with
	ChangeNew   Change = "new"   // a problem not reported in the previous pass
	ChangeStill Change = "still" // a problem that was already reported then
	ChangeFixed Change = "fixed" // ok now, a problem then
	// ChangeUnchecked: a problem when it was last checked, held back
	// unchecked by a limit (a host's quota, a spider-trap limit) this
	// pass, so nothing says it is fixed; it is listed with that verdict.
	ChangeUnchecked Change = "unchecked"
)

// Entry is one URL with every place that links to it.
type Entry struct {
	Record    store.URLRecord
	Referrers []Referrer // sorted by page, then line
	Change    Change
	// Behind is set for a problem of the compared pass that this pass did
	// not reach because the page not read named here was the only way to
	// it (see behindUnread): Record is its record when last checked.
	Behind string
}

// Referrer is one link to an entry's URL.
type Referrer struct {
	Page string // canonical URL of the linking page
	// Line is the line of the page the link is on; headerLine for the URL
	// of the page's Refresh response header, which has no line in the body.
	Line     int
	Fragment string
	Tag      string
	Attr     string
	// CarriedFrom is set for a link of a page cut short this pass that was
	// not in the part read but in the page's last full copy, read then
	// (store.URLRecord.Carried): Line is a line of that copy.
	CarriedFrom time.Time
	// GhostFrom is set for a link of a ghost page (one that failed this
	// pass and had the links of its last good copy followed): the date of
	// that copy, which Line is a line of; PageNow is what the page answers
	// now ("404 Not Found"). The page may be gone: a person opening it to
	// fix the line must be told the line is from an old copy (qa7 Q6).
	// The referrers of a problem not checked because it lies behind a page
	// not read (Entry.Behind) are old copies too: of that page, or, with
	// PageNow empty, of a page not reached this pass.
	GhostFrom time.Time
	PageNow   string
}

// headerLine is the Line of a link a page's Refresh response header
// names (Tag "http-header", Attr "refresh"): lines of the body count
// from 1.
const headerLine = 0

// headerWhere is how the report names the place of such a link where it
// names a line.
const headerWhere = "Refresh header"

// At is where on its page the link is, to follow the page's URL: ":12",
// or ": Refresh header".
func (ref Referrer) At() string {
	if ref.Line == headerLine {
		return ": " + headerWhere
	}
	return ":" + strconv.Itoa(ref.Line)
}

// carriedNote says where a link not read this pass comes from (a cut
// page's last full copy, or a ghost page's last good copy), or "" for a
// link read this pass.
func (ref Referrer) carriedNote() string {
	switch {
	case !ref.GhostFrom.IsZero() && ref.PageNow == "":
		return "from its copy of " + ref.GhostFrom.Format("2006-01-02") + "; the page was not reached this pass"
	case !ref.GhostFrom.IsZero():
		return "from its last good copy of " + ref.GhostFrom.Format("2006-01-02") + "; the page now answers " + ref.PageNow
	case !ref.CarriedFrom.IsZero():
		return "past the cut, carried from its last full copy of " + ref.CarriedFrom.Format("2006-01-02")
	}
	return ""
}

// Carried is " (" + carriedNote + ")" for a link not read this pass, ""
// for a link read this pass: what a format that names one referrer at a
// time adds.
func (ref Referrer) Carried() string {
	if note := ref.carriedNote(); note != "" {
		return " (" + note + ")"
	}
	return ""
}

// copyOf is ref with only what says where its line comes from: referrers
// of one page with equal copyOf are read from the same copy.
func (ref Referrer) copyOf() Referrer {
	return Referrer{CarriedFrom: ref.CarriedFrom, GhostFrom: ref.GhostFrom, PageNow: ref.PageNow}
}

func stylesheet(contentType string) bool { return mediaTypeIs(contentType, "text/css") }

// mediaTypeIs says whether a Content-Type's media type is want, in any
// case, whatever its parameters.
func mediaTypeIs(contentType, want string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(mt), want)
}

// Pages is the number of distinct pages among the referrers.
func (e Entry) Pages() int {
	n := 0
	for i, r := range e.Referrers {
		if i == 0 || r.Page != e.Referrers[i-1].Page {
			n++
		}
	}
	return n
}

// Build reads pass passID from src and decides what the report shows.
func Build(src Source, passID uint64, opt Options) (*Report, error) {
	if opt.Now.IsZero() {
		opt.Now = time.Now()
	}
	if opt.Width <= 0 {
		opt.Width = defaultWidth
	}
	if opt.MaxReferrers == 0 {
		opt.MaxReferrers = defaultMaxReferrers
	}
	pass, err := src.Pass(passID)
	if err != nil {
		return nil, fmt.Errorf("read pass %d: %w", passID, err)
	}
	// Missing fragments found by the check stay in every later report.
	opt.CheckFragments = opt.CheckFragments || pass.CheckFragments
	r := &Report{Pass: pass, Options: opt, baseDir: opt.BaseDir, startHosts: make(map[string]bool, len(pass.StartURLs))}
	for _, s := range pass.StartURLs {
		if h := hostOf(s); h != "" {
			r.startHosts[h] = true
		}
	}
	// The hosts a start URL redirected to are the site's as well (see
	// store.Pass.SiteOrigins).
	for _, o := range pass.SiteOrigins {
		if h := hostOf(o); h != "" {
			r.startHosts[h] = true
		}
	}
	if len(pass.Dirs()) > 0 && r.baseDir == "" {
		if r.baseDir, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("working directory for file paths: %w", err)
		}
	}
	// A database may hold passes of other sites (a cluster's merged one
	// does, and one process's after --new-pass): their problems are never
	// this site's "fixed" or "no longer linked" (qa5 N6).
	for before := passID; ; {
		prev, ok, err := src.PreviousComplete(before)
		if err != nil {
			return nil, fmt.Errorf("previous complete pass before %d: %w", before, err)
		}
		if !ok {
			break
		}
		if prev.SameSite(pass) {
			r.Previous = &prev
			break
		}
		before = prev.ID
	}

	s := &r.Summary
	s.Elapsed = pass.Elapsed
	if s.Elapsed == 0 && !pass.Finished.IsZero() {
		s.Elapsed = pass.Finished.Sub(pass.Started)
	}
	shown := make(map[string]*Entry)
	moved := make(map[string]*Entry)
	// hops are the URLs any redirect chain went through after its first
	// (see addChain): a permanent redirect among them that no page links
	// to is a step of a longer chain, with no link to edit (qa11 §8).
	hops := make(map[string]struct{})
	var order []*Entry
	unlinked := make(map[string]struct{})
	var starts []store.URLRecord
	// A problem no page links to may be a hop of a failing redirect chain
	// that starts at a link: pending keeps it until the links are read
	// (see hop). chains are the URLs the chains of the other problems
	// went through; fixed are the URLs fixed since Previous, each with
	// whether it was reached by a link (see fixedReported).
	pending := make(map[string]*Entry)
	var pendingOrder []*Entry
	chains := make(map[string]struct{})
	fixed := make(map[string]*fixedURL)
	var fixedOrder []*fixedURL
	var emptied []string // see emptiedPage
	startScheme := startSchemes(pass.StartURLs)
	same := newSamePages()
	var copies sameContents
	err = src.Records(passID, func(rec *store.URLRecord) error {
		copies.add(rec)
		if _, host := schemeHost(rec.URL); r.startHosts[host] {
			same.add(rec, host)
		}
		if r.isStart(rec.URL) {
			starts = append(starts, *rec)
		} else if emptiedPage(rec) {
			emptied = append(emptied, rec.URL)
		}
		s.URLs++
		if rec.Seed {
			s.Seeds++
			// A start URL is where the pass began: no other page need
			// link to it, so it is never an orphan.
			if rec.Parsed && !r.isStart(rec.URL) {
				unlinked[rec.URL] = struct{}{}
			}
		}
		if rec.Verdict == store.VerdictOK && strings.HasPrefix(rec.Note, store.LinkedOutNote) {
			r.LinkedOut = append(r.LinkedOut, rec.URL)
		}
		switch {
		case rec.ReusedFrom != 0:
			s.reused(rec)
		case rec.Parsed && ghostPage(rec):
			// Its links are those of its last good copy: it was not
			// read this pass (qa5 N9).
			s.Ghosts++
		case rec.Parsed && !stylesheet(rec.ContentType) && rec.Action != "sitemap":
			s.Pages++ // a stylesheet read for its url()s is no page
			if rec.Unchanged {
				s.Unchanged++
			}
			s.otherScheme(rec.URL, startScheme)
		}
		if rec.NotTaken > 0 {
			s.NotTaken += rec.NotTaken
			r.NotTaken = append(r.NotTaken, *rec)
		}
		if rec.HeldOwn() && rec.Error == store.ErrorHostDown {
			r.noteDown(rec)
		}
		if unreadPage(rec) {
			r.Unread = append(r.Unread, *rec)
		}
		if rec.Parsed && rec.Cut != 0 {
			// Reused or unchanged, its stored links are still the cut ones.
			r.Cut = append(r.Cut, *rec)
		}
		if !opt.OnlyNew && permanentlyMoved(rec) {
			moved[rec.URL] = &Entry{Record: *rec}
		}
		if !opt.OnlyNew && len(rec.Redirects) > 0 {
			addChain(hops, rec)
		}
		change := r.change(rec)
		if rec.Verdict.Problem() || stoppedShort(rec) {
			if r.reachedByLink(rec) {
				e := &Entry{Record: *rec, Change: change}
				pending[rec.URL] = e
				pendingOrder = append(pendingOrder, e)
				return nil
			}
			addChain(chains, rec)
		}
		var e *Entry
		if r.tally(rec, change) {
			e = &Entry{Record: *rec, Change: change}
			shown[rec.URL] = e
			order = append(order, e)
		}
		if change == ChangeFixed {
			f := &fixedURL{rec: *rec, entry: e, linked: !r.reachedByLink(rec)}
			fixed[rec.URL] = f
			fixedOrder = append(fixedOrder, f)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read records of pass %d: %w", passID, err)
	}
	s.SamePage = same.largest()
	s.SameContent = copies.summary()
	var fragRefs map[fragmentKey][]Referrer
	if r.checksFragments() {
		fragRefs = make(map[fragmentKey][]Referrer)
	}
	var hidden []keptCopy
	linkedStarts := make(map[string]bool, len(starts))
	err = src.PageLinks(passID, func(page *store.URLRecord, links []store.Link) error {
		if len(starts) > 0 && r.isStart(page.URL) {
			linkedStarts[page.URL] = true
			if page.Parsed && len(links) > 0 {
				r.startsWithLinks = append(r.startsWithLinks, page.URL)
			}
		}
		if !page.Parsed && unreadPage(page) {
			// The last copy of a page not read, kept for what lies
			// behind it: not links found this pass (qa7 Q5).
			hidden = append(hidden, keptCopy{page: *page, links: links})
			return nil
		}
		s.Links += len(links)
		carried := len(links) - min(page.Carried, len(links))
		var ghostFrom time.Time
		var pageNow string
		if ghostPage(page) {
			ghostFrom, pageNow = page.LastGood, Problem(*page)
		}
		for i, l := range links {
			if len(unlinked) > 0 && l.URL != page.URL {
				delete(unlinked, l.URL)
			}
			if f := fixed[l.URL]; f != nil {
				f.linked = true
			}
			e, m := shown[l.URL], moved[l.URL]
			if e == nil {
				e = pending[l.URL]
			}
			if e != nil && l.URL == page.URL && page.Verdict.Problem() {
				// A ghost page's last good copy linking to itself is
				// no page that links to the failing one (qa5 N9).
				e = nil
			}
			fragment := fragRefs != nil && !alwaysThere(l.Fragment)
			if e == nil && m == nil && !fragment {
				continue
			}
			ref := Referrer{Page: page.URL, Line: l.Line, Fragment: l.Fragment, Tag: l.Tag, Attr: l.Attr, GhostFrom: ghostFrom, PageNow: pageNow}
			if i >= carried {
				ref.CarriedFrom = page.CarriedFrom
			}
			if e != nil {
				e.Referrers = append(e.Referrers, ref)
			}
			if m != nil {
				m.Referrers = append(m.Referrers, ref)
			}
			if fragment {
				k := fragmentKey{l.URL, l.Fragment}
				fragRefs[k] = append(fragRefs[k], ref)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read links of pass %d: %w", passID, err)
	}
	// The chains of the problems reached by a link, and then the
	// problems themselves: one that no page links to, on such a chain, is
	// a hop of the chain, listed with the link that leads there, not a
	// problem of its own (qa5 N1).
	for _, e := range pendingOrder {
		if len(e.Referrers) > 0 {
			addChain(chains, &e.Record)
		}
	}
	for _, e := range pendingOrder {
		if _, hop := chains[e.Record.URL]; hop && len(e.Referrers) == 0 {
			if stoppedShort(&e.Record) {
				s.SkippedHops++
			} else {
				s.Hops++
			}
			continue
		}
		if r.tally(&e.Record, e.Change) {
			order = append(order, e)
		}
	}
	// A URL fixed since Previous that only a redirect reaches now was a
	// hop of a chain then, too: the link that leads there is what was
	// reported, and is what is fixed.
	for _, f := range fixedOrder {
		if f.linked {
			r.Fixed = append(r.Fixed, f.rec)
		} else if f.entry != nil {
			f.entry.Change = ChangeNone
		}
	}
	var judged map[fragmentKey]bool
	var unreadPages map[string]*store.URLRecord
	if len(fragRefs) > 0 {
		if judged, unreadPages, err = r.checkFragments(src, passID, fragRefs); err != nil {
			return nil, fmt.Errorf("check the fragments of pass %d: %w", passID, err)
		}
	}
	r.Orphans = slices.Sorted(maps.Keys(unlinked))
	s.Orphans = len(r.Orphans)
	if r.StartFailure, r.nothingBehindStarts, err = startFailure(src, pass, starts); err != nil {
		return nil, fmt.Errorf("read the start URLs of pass %d: %w", passID, err)
	}
	r.siteVia = siteVia(pass, starts)
	if r.Previous != nil && pass.State == store.PassComplete {
		// Only what that pass reported can be no longer linked now: not
		// a problem too young for ReportAfter then, nor a hop of a chain
		// (qa5 N9, N1).
		then := passTime(*r.Previous)
		empty := r.emptyStart(starts, linkedStarts)
		if empty == "" && len(emptied) > 0 {
			// An inner page that came back empty hides its section
			// the same way (qa8 E1).
			empty = slices.Min(emptied)
		}
		unreached := 0              // pages of that pass this one did not reach
		var unreachedPages []string // and which, when a start page lost its links
		err = src.Records(r.Previous.ID, func(rec *store.URLRecord) error {
			if rec.Parsed && !stylesheet(rec.ContentType) {
				unreached++
				if empty != "" {
					unreachedPages = append(unreachedPages, rec.URL)
				}
			}
			if rec.Verdict.Problem() && !r.young(rec, rec.Failures, then) && !strings.HasPrefix(rec.Note, store.RedirectNote) {
				r.Gone = append(r.Gone, *rec)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read records of previous pass %d: %w", r.Previous.ID, err)
		}
		// A problem of that pass that a pass stopped since rechecked
		// has that pass's record now (qa6 Q3): it is no longer linked
		// all the same when it is still a problem there. (One that pass
		// saw fine is not listed: "was broken" would be a guess.)
		for id := r.Previous.ID + 1; id < passID; id++ {
			err := src.Records(id, func(rec *store.URLRecord) error {
				if rec.PrevPass == r.Previous.ID && rec.PrevVerdict.Problem() && rec.Verdict.Problem() &&
					r.reportedThen(rec) && !strings.HasPrefix(rec.Note, store.RedirectNote) {
					r.Gone = append(r.Gone, *rec)
				}
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("read records of pass %d: %w", id, err)
			}
		}
		if unreached > 0 && empty != "" {
			r.EmptyStart, s.Unreached = empty, unreached
		}
		// The pages that start page no longer reaches are behind it
		// (qa7 Q3): what they linked to is not checked this pass, not
		// gone.
		if err := r.behindUnread(src, hidden, unreachedPages, r.EmptyStart, &order); err != nil {
			return nil, fmt.Errorf("what lies behind the pages pass %d did not read: %w", passID, err)
		}
	}
	s.Fixed, s.Gone = len(r.Fixed), len(r.Gone)
	if r.checksFragments() {
		r.fragmentChanges(fragRefs, judged, unreadPages)
	}
	if err := r.trend(src); err != nil {
		return nil, err
	}
	byURL := func(a, b store.URLRecord) int { return strings.Compare(a.URL, b.URL) }
	slices.SortFunc(r.Fixed, byURL)
	slices.SortFunc(r.Gone, byURL)
	slices.SortFunc(r.Cut, byURL)
	slices.SortFunc(r.NotTaken, byURL)
	// A start page that could not be read is StartFailure's (exit 4),
	// and so is the page a start URL redirects to: listing it as a page
	// not read too would say the one failure twice.
	startPages := make(map[string]struct{}, len(starts))
	for i := range starts {
		startPages[starts[i].URL] = struct{}{}
		addChain(startPages, &starts[i])
	}
	r.Unread = slices.DeleteFunc(r.Unread, func(rec store.URLRecord) bool {
		_, start := startPages[rec.URL]
		return start
	})
	slices.SortFunc(r.Unread, byURL)
	s.Cut, s.Unread = len(r.Cut), len(r.Unread)

	for _, m := range moved {
		if _, hop := hops[m.Record.URL]; hop && len(m.Referrers) == 0 && r.reachedByLink(&m.Record) {
			continue
		}
		slices.SortFunc(m.Referrers, compareReferrers)
		r.Moved = append(r.Moved, *m)
	}
	slices.SortFunc(r.Moved, func(a, b Entry) int { return strings.Compare(a.Record.URL, b.Record.URL) })
	s.Moved = len(r.Moved)

	r.Entries = make([]Entry, 0, len(order))
	for _, e := range order {
		slices.SortFunc(e.Referrers, compareReferrers)
		r.Entries = append(r.Entries, *e)
	}
	slices.SortStableFunc(r.Entries, compareEntries)
	r.unreadListed = make(map[string]struct{})
	for _, rec := range r.Unread {
		if slices.ContainsFunc(r.Entries, func(e Entry) bool { return e.Record.URL == rec.URL }) {
			r.unreadListed[rec.URL] = struct{}{}
		}
	}
	s.Unverified = r.unverified(startPages)
	return r, nil
}

// unverified counts the listed links that could not be verified this pass
// (transient or unverifiable) and that nothing else accounts for: a page
// of the site not read (or a link whose redirects end there) is Unread's,
// a problem behind one is not checked this pass, a start page's failure
// is StartFailure's, and a URL of the site held back (its host stopped
// answering, or asked for a longer pause than the run may wait) leaves the
// pass unfinished. Nothing is known to be wrong with them, but the night is not
// "all clear" either: a third-party host that rate-limits one URL, times
// out or answers 503 leaves that link unchecked. --fail-on says which of
// them count: any makes them problems (exit 1), internal leaves other
// sites' out.
func (r *Report) unverified(startPages map[string]struct{}) int {
	r.accounted = maps.Clone(startPages)
	for _, rec := range r.Unread {
		r.accounted[rec.URL] = struct{}{}
	}
	n := 0
	for i := range r.Entries {
		if r.isUnverified(&r.Entries[i]) {
			n++
		}
	}
	return n
}

// isUnverified says whether e is one of the links Summary.Unverified
// counts.
func (r *Report) isUnverified(e *Entry) bool {
	rec := &e.Record
	_, said := r.accounted[rec.URL]
	_, leadsThere := r.accounted[Redirected(*rec)]
	switch {
	case rec.Verdict != store.VerdictTransient && rec.Verdict != store.VerdictUnverifiable,
		said, leadsThere, e.Change == ChangeUnchecked, unreadPage(rec), rec.HeldOwn(),
		r.Options.FailOn == FailAny,
		r.Options.FailOn == FailInternal && !r.Internal(rec.URL):
		return false
	}
	return true
}

// emptiedPage says whether rec, a page of the site that is no start URL,
// was read this pass as an empty body: 200, parsed, 0 bytes of a declared
// type. No real page is empty, so when pages of the compared pass went
// unreached it is taken for the way to them, as an empty start page is
// (Report.EmptyStart, qa8 E1). Its links of the compared pass are not
// kept (its empty read replaced them), so which pages it led to is not
// known: every page not reached is counted. A page that is unchanged,
// reused or followed from a good copy was not read empty this pass.
func emptiedPage(rec *store.URLRecord) bool {
	return rec.Verdict == store.VerdictOK && rec.Status == http.StatusOK && rec.Parsed && rec.Size == 0 &&
		rec.ContentType != "" && !rec.Unchanged && rec.ReusedFrom == 0 && rec.Cut == 0 && !ghostPage(rec) &&
		!stylesheet(rec.ContentType)
}

// emptyStart is the first start page read this pass (200, parsed) with no
// links that had links in the compared pass, or "". With one start URL it
// had: every page of that pass was reached through it. With several, the
// compared pass's tally says which had links; a start URL that never had
// any (a plain article, a landing page) is not an empty deploy.
func (r *Report) emptyStart(starts []store.URLRecord, linked map[string]bool) string {
	for i := range starts {
		rec := &starts[i]
		if rec.Verdict != store.VerdictOK || !rec.Parsed || linked[rec.URL] {
			continue
		}
		if len(r.Pass.StartURLs) == 1 {
			return rec.URL
		}
		if t := r.Previous.Tally; t != nil {
			if _, had := slices.BinarySearch(t.StartsWithLinks, rec.URL); had {
				return rec.URL
			}
		}
	}
	return ""
}

// HostDown is a host of the site that answered part of the pass and then
// nothing more: refused connections, timeouts, resets (store.ErrorHostDown).
type HostDown struct {
	Host  string
	Since time.Time // when it stopped answering; zero when no record says
	After int       // requests of the pass it answered before
	URLs  int       // its URLs not checked
}

// noteDown counts rec, a URL not checked because its host stopped
// answering, under its host. A redirect that leads there carries the
// class, not the host's numbers: it counts under the host it names.
func (r *Report) noteDown(rec *store.URLRecord) {
	host := hostOf(cmp.Or(Redirected(*rec), rec.URL))
	i := slices.IndexFunc(r.Down, func(d HostDown) bool { return d.Host == host })
	if i < 0 {
		r.Down = append(r.Down, HostDown{Host: host})
		i = len(r.Down) - 1
	}
	d := &r.Down[i]
	d.URLs++
	if !rec.DownSince.IsZero() && (d.Since.IsZero() || rec.DownSince.Before(d.Since)) {
		d.Since = rec.DownSince
	}
	d.After = max(d.After, rec.DownAfter)
}

// fixedURL is a URL fixed since Previous, its entry when it is listed
// (Options.All), and whether a page links to it (or it is where the pass
// started).
type fixedURL struct {
	rec    store.URLRecord
	entry  *Entry
	linked bool
}

// ghostPage says whether a parsed record is a page that failed this pass
// and had the links of its last good copy followed (a ghost).
func ghostPage(rec *store.URLRecord) bool {
	return rec.Verdict != store.VerdictOK && strings.HasPrefix(rec.Note, store.GhostNote)
}

// reachedByLink says whether the pass reached rec's URL by a link or a
// redirect, not as a start URL, a page found on disk or a sitemap it was
// seeded from.
func (r *Report) reachedByLink(rec *store.URLRecord) bool {
	return !rec.Seed && rec.Action != "sitemap" && !r.isStart(rec.URL)
}

// stoppedShort says whether rec is a redirect chain not followed to its
// end, its target skipped by the rules or robots.txt: like a failing
// chain, one entry on the link that leads there, whose hops it names.
func stoppedShort(rec *store.URLRecord) bool {
	return rec.Verdict == store.VerdictSkipped && len(rec.Redirects) > 0
}

// addChain adds the URLs rec's redirect chain went through after rec's
// own: each one requested, and where it ended.
func addChain(chains map[string]struct{}, rec *store.URLRecord) {
	for i, h := range rec.Redirects {
		if i > 0 {
			chains[h.URL] = struct{}{}
		}
	}
	if final := Redirected(*rec); final != "" {
		chains[final] = struct{}{}
	}
}

// tally counts a record in the summary and says whether it is listed.
func (r *Report) tally(rec *store.URLRecord, change Change) bool {
	s := &r.Summary
	switch rec.Verdict {
	case store.VerdictOK:
		s.OK++
	case store.VerdictBroken:
		s.Broken++
	case store.VerdictTransient:
		s.Transient++
	case store.VerdictUnverifiable:
		s.Unverifiable++
		if rec.Error == store.ErrorUnsupportedScheme {
			s.Unsupported++
			if sc := notCheckedScheme(*rec); !slices.Contains(r.unsupported, sc) {
				r.unsupported = append(r.unsupported, sc)
			}
		}
	case store.VerdictSkipped:
		s.Skipped++
		switch rec.Error {
		case store.ErrorTrap:
			s.Traps++
		case store.ErrorQuota:
			s.Quota++
		case store.ErrorRobots:
			if r.ownSite(rec.URL) {
				s.Robots++
			}
		}
	}
	if rec.Verdict.Problem() && r.young(rec, rec.Failures, r.Options.Now) {
		s.Suppressed++
		return false
	}
	switch change {
	case ChangeNew:
		s.New++
	case ChangeStill:
		s.StillBroken++
	case ChangeUnchecked:
		s.Unchecked++
	}
	return r.wanted(rec, change)
}

// startSchemes maps the host of each http(s) start URL on its scheme's
// default port (a URL's canonical form has no port then) to that scheme:
// the rules take the host under the other scheme for the site's own
// (rules.Engine's onDefaultPort). A host started under both schemes is
// left out: both are the user's.
func startSchemes(starts []string) map[string]string {
	m := map[string]string{}
	for _, u := range starts {
		scheme, host := schemeHost(u)
		if scheme != "http" && scheme != "https" || strings.IndexByte(host, ':') >= 0 && !strings.HasSuffix(host, "]") {
			continue
		}
		host = strings.ToLower(host)
		if had, ok := m[host]; ok && had != scheme {
			m[host] = "" // both
			continue
		}
		m[host] = scheme
	}
	return m
}

// otherScheme counts page u when it is on a start host under the other
// scheme than the start URL's.
func (s *Summary) otherScheme(u string, startScheme map[string]string) {
	if len(startScheme) == 0 {
		return
	}
	scheme, host := schemeHost(u)
	start, ok := startScheme[host]
	if !ok || start == "" || start == scheme {
		return
	}
	s.OtherScheme++
	if s.OtherSchemeOrigin == "" {
		s.OtherSchemeOrigin, s.OtherSchemeStart = scheme+"://"+host, start+"://"+host
	}
}

// schemeHost splits an absolute URL's scheme and host[:port] without
// parsing the rest: it runs once per page of the pass.
func schemeHost(u string) (scheme, host string) {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return "", ""
	}
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		rest = rest[:end]
	}
	return scheme, rest
}

// startFailure says which of the pass's start URLs could not be fetched
// and parsed, and why, or "" when each was, or when one has not been tried
// yet. A start URL that redirects counts as parsed when the page it lands on
// was, and one the rules only check counts when it is ok. One site of several
// down is a failed night too: the sites that answered do not make up for the
// one that was not checked. nothingBehind is false when a failed start page
// still had its links followed from its last good copy (a ghost).
func startFailure(src Source, pass store.Pass, starts []store.URLRecord) (msg string, nothingBehind bool, err error) {
	if len(starts) == 0 || len(starts) < len(pass.StartURLs) {
		return "", false, nil
	}
	landed := map[string]*store.URLRecord{}
	for _, rec := range starts {
		if rec.Verdict == store.VerdictOK && !rec.Parsed && rec.Action == "parse" && Redirected(rec) != "" {
			landed[rec.FinalURL] = nil
		}
	}
	if len(landed) > 0 {
		err := src.Records(pass.ID, func(rec *store.URLRecord) error {
			if _, ok := landed[rec.URL]; ok {
				landed[rec.URL] = rec
			}
			return nil
		})
		if err != nil {
			return "", false, err
		}
	}
	var failed []store.URLRecord
	away := map[string]string{} // a start page that only refreshes to another host: that URL
	for _, rec := range starts {
		switch {
		case rec.Verdict != store.VerdictOK:
		case rec.Parsed:
			to, err := refreshesAway(src, rec.URL)
			if err != nil {
				return "", false, err
			}
			if to == "" {
				continue
			}
			away[rec.URL] = to
		case rec.Action != "parse":
			continue
		case Redirected(rec) != "":
			if end := landed[rec.FinalURL]; end != nil && end.Verdict == store.VerdictOK && end.Parsed && landing(rec) != rules.LoginPage {
				continue
			}
		}
		failed = append(failed, rec)
	}
	if len(failed) == 0 {
		return "", false, nil
	}
	first := failed[0]
	why := Problem(first)
	switch {
	case first.Verdict != store.VerdictOK && Redirected(first) != "" && otherHost(first.URL, first.FinalURL):
		// Where it went says which site is down: the one the user
		// typed only redirects.
		why = "redirects to " + first.FinalURL + ": " + why
	case first.Verdict != store.VerdictOK:
	case away[first.URL] != "":
		why = "only refreshes to another host, " + away[first.URL] + " (a <meta http-equiv=refresh> or a Refresh header); " + giveInstead(away[first.URL], "a refresh")
	case Redirected(first) != "" && landed[first.FinalURL] != nil && landed[first.FinalURL].Verdict != store.VerdictOK:
		why = "redirects to " + first.FinalURL + ": " + Problem(*landed[first.FinalURL])
	case Redirected(first) != "" && otherHost(first.URL, first.FinalURL) && landing(first) == rules.LoginPage:
		why = "redirects to a login page, " + first.FinalURL + " (the redirect carries the start URL back in a query), so the site behind it was not checked; " +
			"give " + first.FinalURL + " as the start URL if that is the site to check"
	case Redirected(first) != "" && otherHost(first.URL, first.FinalURL) && landing(first) == rules.OtherSite:
		why = "redirects to another site, " + first.FinalURL + ", whose page was only checked, not parsed (a redirect adds a host to the site only " +
			"within the start URL's registrable domain, as www.example.com for example.com); give it as the start URL if that is the site to check"
	case Redirected(first) != "" && otherHost(first.URL, first.FinalURL):
		// A start URL's redirect makes its target's host the site's
		// (see siteVia) unless the rules keep that host out or only
		// check it, or, in a distributed pass, another worker owns it.
		why = "redirects to another host, " + first.FinalURL + ", whose page was only checked, not parsed (`linkpatrol explain " + first.FinalURL +
			"` names the rule that decides it; give it as the start URL to check that site)"
	case Redirected(first) != "":
		why = "redirects to " + first.FinalURL + ", which was not parsed"
	default:
		why = "not an HTML page"
		if first.ContentType != "" {
			why += " (" + first.ContentType + ")"
		}
	}
	ghost := ghostPage(&first)
	behind := ", so nothing behind " + them(len(failed)) + " was checked"
	if ghost {
		behind = ""
	}
	if len(failed) == len(starts) {
		msg = "FAILED: no start URL could be fetched and parsed" + behind + "."
	} else {
		msg = fmt.Sprintf("FAILED: %d of %d start URLs could not be fetched and parsed%s.", len(failed), len(starts), behind)
	}
	msg += fmt.Sprintf(" %s: %s", first.URL, why)
	if ghost {
		msg += fmt.Sprintf("; its links were followed from its last good copy (%s), so the pages behind it were checked", strings.TrimPrefix(first.Note, store.GhostNote))
	} else if note := withAdvice(first, true); note != "" && first.Verdict != store.VerdictOK {
		msg += "; " + note
	}
	if n := len(failed) - 1; n > 0 {
		msg += fmt.Sprintf(" (and %d more start URLs failed)", n)
	}
	return msg + ".", !ghost && len(failed) == len(starts), nil
}

// landing judges where start URL rec's redirects went, as the crawler did
// hop by hop when it added a host to the site or not: a chain that passed
// a login page or another site on its way is judged by that hop, as the
// crawler added nothing after it.
func landing(rec store.URLRecord) rules.Landing {
	from, err := url.Parse(rec.URL)
	if err != nil {
		return rules.OtherSite
	}
	worst := rules.SameSite
	hops := make([]string, 0, len(rec.Redirects)+1)
	for i, h := range rec.Redirects {
		if i > 0 {
			hops = append(hops, h.URL)
		}
	}
	for _, h := range append(hops, rec.FinalURL) {
		to, err := url.Parse(h)
		if err != nil {
			return rules.OtherSite
		}
		worst = max(worst, rules.StartRedirect(from, to))
	}
	return worst
}

// giveInstead tells what to type when a start URL sends the browser (by
// how) to another host, and why that host was not crawled: the action
// first, where a reader of a long FAILED line finds it.
func giveInstead(target, how string) string {
	return "give " + target + " as the start URL instead (only the start URLs' hosts are crawled and " + how +
		" does not add one, as the server chose that host, not you: its page was only checked, not parsed)"
}

// refreshesAway is the URL a start page sends a browser to when it is
// only that: a refresh (meta or header) to another host, and no link at all
// to its own host, so that nothing of the site lies behind it (qa9 T7: "1
// page parsed … No problems found", exit 0, the site never checked). ""
// for any other page.
func refreshesAway(src Source, page string) (string, error) {
	links, err := src.Links(page)
	if err != nil {
		return "", fmt.Errorf("links of start page %s: %w", page, err)
	}
	to := ""
	for _, l := range links {
		if !otherHost(page, l.URL) {
			return "", nil
		}
		if to == "" && (l.Tag == "meta" && l.Attr == "content" || l.Line == headerLine) {
			to = l.URL
		}
	}
	return to, nil
}

// siteVia are the start records whose redirects end on a host the pass
// added to the site for them (store.Pass.SiteOrigins).
func siteVia(pass store.Pass, starts []store.URLRecord) []store.URLRecord {
	if len(pass.SiteOrigins) == 0 {
		return nil
	}
	added := map[string]bool{}
	for _, o := range pass.SiteOrigins {
		added[hostOf(o)] = true
	}
	var out []store.URLRecord
	for _, rec := range starts {
		if to := Redirected(rec); to != "" && rec.Verdict == store.VerdictOK && otherHost(rec.URL, to) && added[hostOf(to)] {
			out = append(out, rec)
		}
	}
	return out
}

// otherHost says whether URL b is on another host (host and port) than a:
// what makes a start URL's redirect leave the site (the scheme alone does
// not; see rules.Engine's start hosts).
func otherHost(a, b string) bool {
	ua, err := url.Parse(a)
	if err != nil {
		return false
	}
	ub, err := url.Parse(b)
	return err == nil && !strings.EqualFold(ua.Host, ub.Host)
}

// unreadPage says whether rec is a page of the site (or a sitemap) the
// pass was to read and could not: one the rules parse, within
// --max-depth, that ended transient (5xx, a timeout, a reset, its host's
// robots.txt unreadable) or unverifiable (401, 403, 429) after its
// retries. Nothing behind it was checked, so the pass cannot say "all
// clear" (exit 5; README: exit codes). A page followed from its last good
// copy (a ghost) counts too: tonight's copy was not read, so links added
// since are unseen, as past the cut of a page cut short. So does a sitemap
// read only in part (cut, reset): its entries read are stored and named as
// their referrer, but those past the cut are unseen. Not counted: a URL
// that redirects (its target has a record of its own), one held back by
// a Retry-After or because its host stopped answering (store.URLRecord.Held:
// on the site's own hosts the pass is unfinished, exit 3) and one whose end
// another crawler resolves. A broken page (404) is a problem that fails
// the pass already, and has nothing behind it to hide.
func unreadPage(rec *store.URLRecord) bool {
	switch {
	case rec.Action != "parse" && rec.Action != "sitemap",
		rec.Parsed && !ghostPage(rec) && rec.Action != "sitemap", Redirected(*rec) != "", rec.Held(), rec.Awaits != "",
		namesNoPage(rec.ContentType):
		return false
	}
	return rec.Verdict == store.VerdictTransient || rec.Verdict == store.VerdictUnverifiable
}

// namesNoPage says whether the Content-Type of a failing answer says the
// URL is no page of links at all (a 403 sent as application/pdf, an
// image): nothing is hidden behind it, and it stays reported with its
// verdict (qa6 Q6). An error body sent as text, HTML, XML or JSON, or
// with a type the server did not name, says nothing of what the URL is:
// a page that answers 503 text/plain today is a page not read.
func namesNoPage(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	switch {
	case mt == "", mt == "application/octet-stream", strings.HasPrefix(mt, "text/"),
		strings.Contains(mt, "html"), strings.Contains(mt, "xml"), strings.Contains(mt, "json"):
		return false
	}
	return true
}

// permanentlyMoved says whether a good URL's first hop is a permanent
// redirect: the link works, but should point at where it ends.
func permanentlyMoved(rec *store.URLRecord) bool {
	if rec.Verdict != store.VerdictOK || len(rec.Redirects) == 0 || Redirected(*rec) == "" {
		return false
	}
	s := rec.Redirects[0].Status
	return s == http.StatusMovedPermanently || s == http.StatusPermanentRedirect
}

// wanted says whether a record that survived ReportAfter gets an entry.
func (r *Report) wanted(rec *store.URLRecord, change Change) bool {
	if r.Options.OnlyNew {
		return change == ChangeNew
	}
	// A page held back as a suspected spider trap is listed even so: it is
	// part of the site that was not checked, and the entry says which
	// setting would let it through.
	// So is a URL of the site's own hosts that its robots.txt disallows,
	// and one a host's quota left unchecked (qa5 N18: "listed below" must
	// list them, and a link broken last pass must not vanish with them).
	return r.Options.All || rec.Verdict.Problem() || heldByLimit(rec) || r.ownRobots(rec)
}

// heldByLimit says whether a limit of the crawler's (a spider-trap limit,
// a host's quota) held rec back unchecked: exit 5's URLs.
func heldByLimit(rec *store.URLRecord) bool {
	return rec.Verdict == store.VerdictSkipped && (rec.Error == store.ErrorTrap || rec.Error == store.ErrorQuota)
}

// ownRobots says whether rec is a URL of the start URLs' hosts that their
// robots.txt kept the pass from checking: part of the site not checked,
// which --ignore-robots lets through (it never does for other hosts).
func (r *Report) ownRobots(rec *store.URLRecord) bool {
	return rec.Verdict == store.VerdictSkipped && rec.Error == store.ErrorRobots && r.ownSite(rec.URL)
}

// ownSite says whether u is on the host of a start URL.
func (r *Report) ownSite(u string) bool {
	return r.startHosts[hostOf(u)]
}

// hostOf is the host (and port) of an http(s) URL, or "".
func hostOf(u string) string {
	pu, err := url.Parse(u)
	if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") {
		return ""
	}
	return pu.Host
}

// change compares rec with the previous complete pass. Without one, every
// problem is new: nothing was reported before.
func (r *Report) change(rec *store.URLRecord) Change {
	problem := rec.Verdict.Problem()
	if rec.Error == store.ErrorHostDown {
		// Not checked: its host stopped answering. No new problem, and
		// never fixed the night after; one that was a problem says so.
		if r.Previous != nil && rec.PrevPass == r.Previous.ID && rec.PrevVerdict.Problem() {
			return ChangeUnchecked
		}
		return ChangeNone
	}
	if r.Previous == nil {
		if problem {
			return ChangeNew
		}
		return ChangeNone
	}
	// One the compared pass did not check, behind a page it could not
	// read, was a problem then as far as anyone knows (qa7 Q5).
	wasProblem := rec.PrevVerdict.Problem() && (rec.PrevPass == r.Previous.ID || r.heldThen(rec.URL))
	switch {
	case heldByLimit(rec) && (wasProblem || rec.Failures > 0):
		// A skip leaves the run of failures as it was, so Failures also
		// covers a URL held back two passes in a row.
		return ChangeUnchecked
	case problem && wasProblem && r.reportedThen(rec):
		return ChangeStill
	case problem:
		return ChangeNew
	case rec.Verdict == store.VerdictOK && wasProblem && r.reportedThen(rec):
		return ChangeFixed
	}
	return ChangeNone
}

// reportedThen says whether a URL that was a problem in the previous pass
// was old enough a problem then to be reported: one that --report-after
// kept out of that report was never shown, so it is not shown fixed (qa5
// N9), nor still there. The run of failures then is the record's
// PrevFailures, not its Failures less one: passes stopped part way between
// that pass and this one (qa6 Q3) and results reused count differently. A
// record that does not say (written before PrevFailures was kept) counts
// as reported when it is fine now, as it always did, and by its run less
// this pass's failure when it is a problem.
func (r *Report) reportedThen(rec *store.URLRecord) bool {
	if rec.PrevFailures == 0 && rec.PrevFirstBroken.IsZero() {
		return !rec.Verdict.Problem() || !r.young(rec, rec.Failures-1, passTime(*r.Previous))
	}
	then := store.URLRecord{FirstBroken: rec.PrevFirstBroken, FirstSeen: rec.FirstSeen}
	return !r.young(&then, rec.PrevFailures, passTime(*r.Previous))
}

// young reports whether a problem that has failed failures passes in a row
// is still below ReportAfter at time at.
func (r *Report) young(rec *store.URLRecord, failures int, at time.Time) bool {
	t := r.Options.ReportAfter
	if t.Failures > 0 && failures < t.Failures {
		return true
	}
	if t.Age > 0 {
		since := rec.FirstBroken
		if since.IsZero() {
			since = rec.FirstSeen
		}
		if !since.IsZero() && at.Sub(since) < t.Age {
			return true
		}
	}
	return false
}

func passTime(p store.Pass) time.Time {
	if !p.Finished.IsZero() {
		return p.Finished
	}
	return p.Started
}

// sectionOrder is the order of the sections, worst first.
var sectionOrder = []store.Verdict{
	store.VerdictBroken, store.VerdictTransient, store.VerdictUnverifiable,
	store.VerdictSkipped, store.VerdictOK,
}

func sectionRank(v store.Verdict) int {
	if i := slices.Index(sectionOrder, v); i >= 0 {
		return i
	}
	return len(sectionOrder)
}

// compareEntries is the worst-first order.
func compareEntries(a, b Entry) int {
	if c := cmp.Compare(sectionRank(a.Record.Verdict), sectionRank(b.Record.Verdict)); c != 0 {
		return c
	}
	if an, bn := a.Record.LastGood.IsZero(), b.Record.LastGood.IsZero(); an != bn {
		if an {
			return -1
		}
		return 1
	}
	// Longest since last good is worst. Days, not instants: the URLs of one
	// pass were last good milliseconds apart, and that order means nothing
	// to a person, while the number of pages linking to a URL does.
	if c := compareSince(dayOf(a.Record.LastGood), dayOf(b.Record.LastGood)); c != 0 {
		return c
	}
	if c := cmp.Compare(b.Pages(), a.Pages()); c != 0 {
		return c
	}
	return strings.Compare(a.Record.URL, b.Record.URL)
}

func dayOf(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC().Truncate(24 * time.Hour)
}

// compareSince puts the earliest start of breakage first; an unknown start
// counts as the youngest.
func compareSince(a, b time.Time) int {
	switch {
	case a.IsZero() && b.IsZero():
		return 0
	case a.IsZero():
		return 1
	case b.IsZero():
		return -1
	}
	return a.Compare(b)
}

// Section is the entries of one verdict.
type Section struct {
	Verdict store.Verdict
	Entries []Entry
}

// Sections splits Entries by verdict, in section order, leaving out empty ones.
func (r *Report) Sections() []Section {
	var out []Section
	for i := 0; i < len(r.Entries); {
		j := i
		for j < len(r.Entries) && r.Entries[j].Record.Verdict == r.Entries[i].Record.Verdict {
			j++
		}
		out = append(out, Section{Verdict: r.Entries[i].Record.Verdict, Entries: r.Entries[i:j]})
		i = j
	}
	return out
}

// checksFragments says whether the report looks for missing fragments.
func (r *Report) checksFragments() bool {
	return r.Options.CheckFragments
}

// nothingListed says the report lists nothing at all: no entry, no
// missing fragment.
func (r *Report) nothingListed() bool {
	return len(r.Entries) == 0 && len(r.Fragments) == 0
}

// onlyHeldListed says the report lists, besides nothing else, only URLs a
// limit held back (listed without --all): no problem was found among what
// was checked, which Nothing still says, beside what was not.
func (r *Report) onlyHeldListed() bool {
	if r.Options.All || len(r.Fragments) > 0 || len(r.Entries) == 0 {
		return false
	}
	for i := range r.Entries {
		if !heldByLimit(&r.Entries[i].Record) {
			return false
		}
	}
	return true
}

// Location is where a person finds u: for a check of a directory, a file://
// URL becomes the file's path relative to BaseDir (a path ending in / means
// its index.html); anything else is u itself.
func (r *Report) Location(u string) string {
	if p, ok := r.File(u); ok {
		return p
	}
	return u
}

// File is the path on disk of a file:// URL in a check of a directory,
// resolved inside the directory as the check read it (see store.LocalFile):
// however the link was written, no path outside it is ever named.
func (r *Report) File(u string) (string, bool) {
	p, ok := r.diskPath(u)
	if !ok {
		return "", false
	}
	return r.relative(p), true
}

// diskPath is the absolute path on disk of a file:// URL in a check of a
// directory (see File).
func (r *Report) diskPath(u string) (string, bool) {
	if !strings.HasPrefix(u, "file:") {
		return "", false
	}
	root, rel, ok := store.LocalFile(r.Pass.Dirs(), u)
	if !ok {
		return "", false
	}
	if rel == "" || strings.HasSuffix(rel, "/") {
		rel += "index.html"
	}
	return filepath.Join(root, filepath.FromSlash(rel)), true
}

// Path shows a path of a checked directory the way the report shows its
// files (see relative).
func (r *Report) Path(p string) string { return r.relative(p) }

// relative shows an absolute path as the directory was given: relative
// to the working directory when it was given as a relative path, absolute
// when it was given as one.
func (r *Report) relative(path string) string {
	if r.baseDir == "" || !filepath.IsAbs(path) || !r.Pass.RelativePaths {
		return path
	}
	if rel, err := filepath.Rel(r.baseDir, path); err == nil {
		return rel
	}
	return path
}
