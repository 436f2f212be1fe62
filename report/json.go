package report

import (
	"encoding/json"
	"io"
	"math"
	"time"

	"github.com/linkpatrol/linkpatrol/store"
)

// The JSON report is DESIGN.md's schema; fields may be added, never renamed.
// Times are RFC 3339 in UTC, null when unknown.

type jsonReport struct {
	Pass    jsonPass     `json:"pass"`
	Summary jsonSummary  `json:"summary"`
	URLs    []jsonURL    `json:"urls"`
	Changes *jsonChanges `json:"changes,omitempty"`
	// MissingFragments is present (perhaps empty) only when fragments were
	// checked, so its absence means "not checked", not "none missing".
	MissingFragments *[]jsonFragment `json:"missing_fragments,omitempty"`
	// PermanentRedirects are good links whose first hop is a 301 or 308:
	// update them to final_url. Never a failure.
	PermanentRedirects []jsonURL `json:"permanent_redirects"`
	// CutPages are the pages read only in part (summary.cut of them): their
	// links past the cut were not checked. Listed whatever --all says.
	CutPages []jsonCut `json:"cut_pages"`
	// SitemapsNotTaken are the sitemaps with entries the pass did not take
	// because the sitemap limit was reached (summary.sitemap_not_taken of
	// them in all); the entries themselves were never stored.
	SitemapsNotTaken []jsonNotTaken `json:"sitemaps_not_taken"`
	// UnreadPages are the pages of the site that could not be read
	// (summary.unread of them): the links behind them were not checked,
	// so the pass exits 5 unless something worse applies. Each is in urls
	// too, with its verdict and referrers (or, reached only by a failing
	// redirect chain, in the entry of the link that leads there); present
	// only when there are any.
	UnreadPages []jsonUnread `json:"unread_pages,omitempty"`
}

// jsonUnread is a page of the site that could not be read.
type jsonUnread struct {
	URL     string        `json:"url"`
	File    string        `json:"file,omitempty"`
	Verdict store.Verdict `json:"verdict"`
	Status  int           `json:"status,omitempty"`
	Error   string        `json:"error,omitempty"`
	Note    string        `json:"note,omitempty"`
	// Advice is what lets a page that refused to be read (401, 403)
	// through; absent for one that failed.
	Advice string `json:"advice,omitempty"`
}

// jsonNotTaken is a sitemap with NotTaken entries the pass did not take.
type jsonNotTaken struct {
	URL      string `json:"url"`
	NotTaken int    `json:"not_taken"`
	Note     string `json:"note"`
	Advice   string `json:"advice"`
}

// jsonCut is a page cut short: Reasons are "max-size" and/or "links",
// Advice what would let all of it be read.
type jsonCut struct {
	URL     string   `json:"url"`
	File    string   `json:"file,omitempty"`
	Note    string   `json:"note"`
	Reasons []string `json:"reasons"`
	Advice  string   `json:"advice"`
}

// jsonFragment is a link to url#fragment whose page lacks the anchor. Its
// error is always "missing fragment", so the entries read alike when a
// tool merges them with the broken URLs.
type jsonFragment struct {
	URL       string    `json:"url"`
	File      string    `json:"file,omitempty"`
	Fragment  string    `json:"fragment"`
	Error     string    `json:"error"`
	Referrers []jsonRef `json:"referrers"`
	// Change is "new" or "still" against the previous complete pass
	// (empty without one), "fixed" in changes.fixed_fragments.
	Change string `json:"change,omitempty"`
}

type jsonPass struct {
	ID        uint64     `json:"id"`
	Started   *time.Time `json:"started"`
	Finished  *time.Time `json:"finished"`
	Complete  bool       `json:"complete"`
	StartURLs []string   `json:"start_urls"`
	// SiteOrigins are the origins a start URL redirected to, which the
	// pass checked as the site's own (store.Pass.SiteOrigins).
	SiteOrigins    []string `json:"site_origins,omitempty"`
	State          string   `json:"state"`
	Root           string   `json:"root,omitempty"`
	Roots          []string `json:"roots,omitempty"`
	ElapsedSeconds float64  `json:"elapsed_seconds"`
	// Deferred counts the URLs of the site held back to a later run by a
	// server's pause (the pass is then not complete).
	Deferred int `json:"deferred,omitempty"`
	// StoppedAnswering are the hosts of the site that answered part of
	// the pass and then answered nothing more: their URLs not checked
	// (counted in Deferred, listed as transient "host down") are no dead
	// links, and the pass is not complete.
	StoppedAnswering []jsonDown `json:"stopped_answering,omitempty"`
	// Unfinished says why a pass that ran to its end is not complete
	// (store.Pass.Unfinished).
	Unfinished string `json:"unfinished,omitempty"`
	// StartFailure is the report's first line when a start URL could not
	// be fetched and parsed.
	StartFailure string `json:"start_failure,omitempty"`
	// HeldBack is the report's first line when limits held part of the
	// pass back (spider traps, quotas, pages cut short): exit code 5.
	HeldBack string `json:"held_back,omitempty"`
	// Insecure: TLS certificates were not verified (--insecure).
	Insecure bool `json:"insecure,omitempty"`
}

// jsonDown is a report.HostDown.
type jsonDown struct {
	Host       string     `json:"host"`
	Since      *time.Time `json:"since"`
	After      int        `json:"after_requests"`
	NotChecked int        `json:"not_checked"`
}

type jsonSummary struct {
	Pages     int `json:"pages"`
	Unchanged int `json:"unchanged,omitempty"` // of pages: answered 304, stored links followed
	Links     int `json:"links"`
	URLs      int `json:"urls"`
	Broken    int `json:"broken"`
	Skipped   int `json:"skipped"`
	Traps     int `json:"traps,omitempty"`  // of skipped: held back as suspected spider traps
	Robots    int `json:"robots,omitempty"` // of skipped: the site's own URLs its robots.txt disallows
	Quota     int `json:"quota,omitempty"`  // of skipped: not checked, a host's quota for the pass was used up
	Cut       int `json:"cut"`              // of pages: read only in part, links past the cut not checked
	// Unread counts the pages of the site that could not be read (of the
	// transient and unverifiable): the links behind them were not checked.
	Unread int `json:"unread,omitempty"`
	// Unreached: pages of the previous complete pass not reached because
	// a start page came back with no links (held_back says which).
	Unreached int `json:"unreached,omitempty"`
	// Unverified: links (of the transient and unverifiable) that could
	// not be verified and make the pass PARTLY CHECKED, those --fail-on
	// leaves out excepted.
	Unverified int `json:"unverified,omitempty"`
	// Unsupported: of unverifiable, the links in a scheme linkpatrol cannot
	// check (ftp:, news:, irc:, ...), never requested; each is in "urls"
	// with the error "unsupported scheme".
	Unsupported int `json:"unsupported,omitempty"`
	// SitemapNotTaken counts the sitemap entries not taken because the
	// sitemap limit (--sitemap-limit) was reached: not among urls.
	SitemapNotTaken int `json:"sitemap_not_taken"`
	Transient       int `json:"transient"`
	Unverifiable    int `json:"unverifiable"`
	OK              int `json:"ok"`
	Suppressed      int `json:"suppressed"`
	// RedirectHops counts the problems that are hops of a failing
	// redirect chain no page links to: part of the chain's entry in
	// "urls" (its redirects), not counted in broken, transient or
	// unverifiable.
	RedirectHops int `json:"redirect_hops,omitempty"`
	// SkippedHops counts the URLs no page links to on a redirect chain
	// not followed to its end: part of the skipped entry of the link
	// that leads there, not counted in skipped.
	SkippedHops int `json:"skipped_hops,omitempty"`
	// Ghosts counts the pages that failed this pass whose last good
	// copy's links were followed: not among pages.
	Ghosts int `json:"ghosts,omitempty"`
	// OtherSchemePages counts, of pages, those read under the other
	// scheme of a start host (http:// on an https:// site):
	// alias_start_hosts reads each page once.
	OtherSchemePages int `json:"other_scheme_pages,omitempty"`
	// SamePage is the largest set of the site's URLs that answered 200
	// with one HTML page (one ETag): a soft 404 that hides broken links?
	SamePage *jsonSamePage `json:"same_page,omitempty"`
	// SameContent counts the pages not read for links because they had
	// the content of a page read before them (a catch-all's made-up
	// paths), with the first page and examples.
	SameContent *jsonSameContent `json:"same_content,omitempty"`
	ReportAfter string           `json:"report_after,omitempty"`
	// ElapsedSeconds is the pass's working time, summed over all its
	// runs: one killed loses at most its last few seconds.
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	// Reused counts results carried over from earlier passes without a
	// request; ReusedFrom are those passes.
	Reused int `json:"reused"`
	// PermanentRedirects is len of the report's permanent_redirects.
	PermanentRedirects int      `json:"permanent_redirects"`
	ReusedFrom         []uint64 `json:"reused_from,omitempty"`
	// Listed says which URLs "urls" holds: "problems", "all" or "new".
	Listed string `json:"listed"`
	// MissingFragments is present only when fragments were checked.
	// MissingFragmentsNotChecked are those of them whose page this pass
	// could not read, missing when last checked.
	MissingFragments           *int `json:"missing_fragments,omitempty"`
	MissingFragmentsNotChecked int  `json:"missing_fragments_not_checked,omitempty"`
	// Seeds are the URLs the pass started from, the rest were reached by
	// links; Orphans are started-from pages no other page links to, the
	// start URLs themselves aside.
	Seeds   int      `json:"seeds"`
	Orphans []string `json:"orphans,omitempty"`
	// LinkedOut are the files that are symlinks out of the checked
	// directory: ok, not read (each URL's note names its target).
	LinkedOut []string `json:"linked_out,omitempty"`
}

type jsonURL struct {
	URL         string        `json:"url"`
	FinalURL    string        `json:"final_url"`
	Status      int           `json:"status"`
	Error       string        `json:"error"`
	Verdict     store.Verdict `json:"verdict"`
	Broken      bool          `json:"broken"`
	Action      string        `json:"action"`
	FirstBroken *time.Time    `json:"first_broken"`
	LastGood    *time.Time    `json:"last_good"`
	Referrers   []jsonRef     `json:"referrers"`

	File        string        `json:"file,omitempty"`
	Note        string        `json:"note,omitempty"`
	Failures    int           `json:"failures"`
	Change      Change        `json:"change,omitempty"`
	PrevVerdict store.Verdict `json:"prev_verdict,omitempty"`
	Redirects   []store.Hop   `json:"redirects,omitempty"`
	// Seed: the pass started from this URL rather than reaching it by a link.
	Seed bool `json:"seed,omitempty"`
	// Behind: a problem when last checked (change "unchecked") that the
	// pass did not reach because this page, not read, was the only way to
	// it; the entry is its record then.
	Behind string `json:"behind,omitempty"`
	// ReusedFrom is the pass whose result this entry carries over without
	// a request, and CheckedAt when that pass fetched it.
	ReusedFrom uint64     `json:"reused_from,omitempty"`
	CheckedAt  *time.Time `json:"checked_at"`
}

type jsonRef struct {
	Page     string `json:"page"`
	Line     int    `json:"line"`
	File     string `json:"file,omitempty"`
	Fragment string `json:"fragment,omitempty"`
	Tag      string `json:"tag,omitempty"`
	Attr     string `json:"attr,omitempty"`
	// CarriedFrom: the link was past the cut of a page read in part, kept
	// from the page's last full copy of then (Line is a line of it).
	CarriedFrom *time.Time `json:"carried_from,omitempty"`
	// GhostFrom: the page failed this pass (PageNow says how) and the
	// link is from its last good copy of then (Line is a line of it).
	GhostFrom *time.Time `json:"ghost_from,omitempty"`
	PageNow   string     `json:"page_now,omitempty"`
}

type jsonChanges struct {
	PreviousPass   uint64    `json:"previous_pass"`
	New            int       `json:"new"`
	StillBroken    int       `json:"still_broken"`
	Fixed          []jsonURL `json:"fixed"`
	NoLongerLinked []jsonURL `json:"no_longer_linked"`
	// NotChecked counts the URLs of "urls" with change "unchecked": a
	// problem when last checked, held back unchecked by a limit this pass.
	NotChecked int `json:"not_checked,omitempty"`
	// FixedFragments and NoLongerLinkedFragments are the missing fragments
	// of the previous pass found now, or no longer linked to.
	FixedFragments          []jsonFragment `json:"fixed_fragments,omitempty"`
	NoLongerLinkedFragments []jsonFragment `json:"no_longer_linked_fragments,omitempty"`
}

func writeJSON(w io.Writer, r *Report) error {
	s := r.Summary
	out := jsonReport{
		Pass: jsonPass{
			ID:               r.Pass.ID,
			Started:          jsonTime(r.Pass.Started),
			Finished:         jsonTime(r.Pass.Finished),
			Complete:         r.Pass.State == store.PassComplete,
			StartURLs:        r.Pass.StartURLs,
			SiteOrigins:      r.Pass.SiteOrigins,
			Insecure:         r.Pass.Insecure,
			State:            string(r.Pass.State),
			Root:             r.Pass.Root,
			Roots:            r.Pass.Roots,
			ElapsedSeconds:   seconds(s.Elapsed),
			Deferred:         r.Pass.Deferred,
			StoppedAnswering: jsonDowns(r.Down),
			Unfinished:       r.Pass.Unfinished,
			StartFailure:     r.StartFailure,
			HeldBack:         r.HeldBack(),
		},
		Summary: jsonSummary{
			Pages: s.Pages, Unchanged: s.Unchanged, Links: s.Links, URLs: s.URLs,
			Broken: s.Broken, Skipped: s.Skipped, Traps: s.Traps, Robots: s.Robots, Quota: s.Quota, Cut: s.Cut, SitemapNotTaken: s.NotTaken, Unread: s.Unread, Unreached: s.Unreached, Unverified: s.Unverified, Unsupported: s.Unsupported, Transient: s.Transient, Unverifiable: s.Unverifiable,
			OK: s.OK, Suppressed: s.Suppressed, RedirectHops: s.Hops, SkippedHops: s.SkippedHops, Ghosts: s.Ghosts, OtherSchemePages: s.OtherScheme, SamePage: newJSONSamePage(s.SamePage), SameContent: newJSONSameContent(s.SameContent), ElapsedSeconds: seconds(s.Elapsed),
			Reused: s.Reused, ReusedFrom: s.ReusedFrom, PermanentRedirects: s.Moved, Seeds: s.Seeds,
			Listed: "problems",
		},
		URLs: make([]jsonURL, 0, len(r.Entries)),
	}
	for _, u := range r.Orphans {
		out.Summary.Orphans = append(out.Summary.Orphans, r.Location(u))
	}
	for _, u := range r.LinkedOut {
		out.Summary.LinkedOut = append(out.Summary.LinkedOut, r.Location(u))
	}
	if out.Pass.StartURLs == nil {
		out.Pass.StartURLs = []string{}
	}
	if !r.Options.ReportAfter.IsZero() {
		out.Summary.ReportAfter = r.Options.ReportAfter.String()
	}
	switch {
	case r.Options.OnlyNew:
		out.Summary.Listed = "new"
	case r.Options.All:
		out.Summary.Listed = "all"
	}
	for _, e := range r.Entries {
		u := r.jsonURL(e.Record, e.Referrers, e.Change)
		u.Behind = e.Behind
		out.URLs = append(out.URLs, u)
	}
	if r.Previous != nil {
		c := &jsonChanges{
			PreviousPass: r.Previous.ID, New: s.New, StillBroken: s.StillBroken, NotChecked: s.Unchecked,
			Fixed: make([]jsonURL, 0, len(r.Fixed)), NoLongerLinked: make([]jsonURL, 0, len(r.Gone)),
		}
		for _, rec := range r.Fixed {
			c.Fixed = append(c.Fixed, r.jsonURL(rec, nil, ChangeFixed))
		}
		for _, rec := range r.Gone {
			c.NoLongerLinked = append(c.NoLongerLinked, r.jsonURL(rec, nil, ChangeNone))
		}
		for _, m := range r.FixedFragments {
			c.FixedFragments = append(c.FixedFragments, r.jsonFragment(m))
		}
		for _, m := range r.GoneFragments {
			c.NoLongerLinkedFragments = append(c.NoLongerLinkedFragments, r.jsonFragment(m))
		}
		out.Changes = c
	}
	out.PermanentRedirects = make([]jsonURL, 0, len(r.Moved))
	for _, e := range r.Moved {
		out.PermanentRedirects = append(out.PermanentRedirects, r.jsonURL(e.Record, e.Referrers, ChangeNone))
	}
	out.CutPages = make([]jsonCut, 0, len(r.Cut))
	for _, rec := range r.Cut {
		c := jsonCut{URL: rec.URL, Note: rec.Note, Reasons: []string{}, Advice: CutAdvice(rec)}
		c.File, _ = r.File(rec.URL)
		if rec.Cut&store.CutSize != 0 {
			c.Reasons = append(c.Reasons, "max-size")
		}
		if rec.Cut&store.CutLinks != 0 {
			c.Reasons = append(c.Reasons, "links")
		}
		out.CutPages = append(out.CutPages, c)
	}
	for _, rec := range r.Unread {
		u := jsonUnread{URL: rec.URL, Verdict: rec.Verdict, Status: rec.Status, Error: rec.Error, Note: rec.Note, Advice: UnreadAdvice(rec)}
		u.File, _ = r.File(rec.URL)
		out.UnreadPages = append(out.UnreadPages, u)
	}
	out.SitemapsNotTaken = make([]jsonNotTaken, 0, len(r.NotTaken))
	for _, rec := range r.NotTaken {
		out.SitemapsNotTaken = append(out.SitemapsNotTaken, jsonNotTaken{URL: rec.URL, NotTaken: rec.NotTaken, Note: rec.Note, Advice: NotTakenAdvice})
	}
	if r.checksFragments() {
		n := s.MissingFragments
		out.Summary.MissingFragments = &n
		out.Summary.MissingFragmentsNotChecked = s.FragmentsUnchecked
		frags := make([]jsonFragment, 0, len(r.Fragments))
		for _, m := range r.Fragments {
			frags = append(frags, r.jsonFragment(m))
		}
		out.MissingFragments = &frags
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

func (r *Report) jsonURL(rec store.URLRecord, refs []Referrer, change Change) jsonURL {
	u := jsonURL{
		URL: rec.URL, FinalURL: rec.FinalURL, Status: rec.Status, Error: rec.Error,
		Verdict: rec.Verdict, Broken: rec.Verdict == store.VerdictBroken, Action: rec.Action,
		FirstBroken: jsonTime(rec.FirstBroken), LastGood: jsonTime(rec.LastGood),
		Referrers: r.jsonRefs(refs),
		Note:      rec.Note, Failures: rec.Failures, Change: change, Redirects: rec.Redirects,
		Seed:       rec.Seed,
		ReusedFrom: rec.ReusedFrom, CheckedAt: jsonTime(rec.FetchedAt),
	}
	if u.FinalURL == "" {
		u.FinalURL = rec.URL
	}
	if change == ChangeFixed {
		u.PrevVerdict = rec.PrevVerdict
	}
	u.File, _ = r.File(rec.URL)
	return u
}

func (r *Report) jsonRefs(refs []Referrer) []jsonRef {
	out := make([]jsonRef, len(refs))
	for i, ref := range refs {
		file, _ := r.File(ref.Page)
		out[i] = jsonRef{Page: ref.Page, Line: ref.Line, File: file, Fragment: ref.Fragment, Tag: ref.Tag, Attr: ref.Attr, CarriedFrom: jsonTime(ref.CarriedFrom),
			GhostFrom: jsonTime(ref.GhostFrom), PageNow: ref.PageNow}
	}
	return out
}

func jsonTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// seconds keeps three decimals: milliseconds are all anyone reads.
func seconds(d time.Duration) float64 {
	return math.Round(d.Seconds()*1000) / 1000
}

func jsonDowns(ds []HostDown) []jsonDown {
	var out []jsonDown
	for _, d := range ds {
		out = append(out, jsonDown{Host: d.Host, Since: jsonTime(d.Since), After: d.After, NotChecked: d.URLs})
	}
	return out
}

func (r *Report) jsonFragment(m MissingFragment) jsonFragment {
	f := jsonFragment{URL: m.URL, Fragment: m.Fragment, Error: "missing fragment", Referrers: r.jsonRefs(m.Referrers)}
	f.File, _ = r.File(m.URL)
	if r.Previous != nil {
		f.Change = string(m.Change)
	}
	return f
}

type jsonSamePage struct {
	Host      string   `json:"host"`
	ETag      string   `json:"etag"`
	Size      int64    `json:"size,omitempty"`
	URLs      int      `json:"urls"`
	Resources int      `json:"resources"`
	Examples  []string `json:"examples"`
}

func newJSONSamePage(sp SamePage) *jsonSamePage {
	if sp.Count == 0 {
		return nil
	}
	return &jsonSamePage{Host: sp.Host, ETag: sp.ETag, Size: sp.Size, URLs: sp.Count, Resources: sp.Resources, Examples: sp.Examples}
}

type jsonSameContent struct {
	Pages int `json:"pages"`
	// Elsewhere: of pages, those in another directory than the page
	// read, whose relative links were not checked.
	Elsewhere int      `json:"elsewhere"`
	First     string   `json:"first"`
	SameFirst int      `json:"same_as_first"`
	Examples  []string `json:"examples"`
}

func newJSONSameContent(sc SameContent) *jsonSameContent {
	if sc.Count == 0 {
		return nil
	}
	return &jsonSameContent{Pages: sc.Count, Elsewhere: sc.Elsewhere, First: sc.First, SameFirst: sc.Group, Examples: sc.Examples}
}
