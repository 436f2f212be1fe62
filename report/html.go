package report

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"html/template"
	"io"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/linkpatrol/linkpatrol/store"
)

// One self-contained page: the style and the script are inline, and the
// Content-Security-Policy allows exactly those two (by hash) and nothing
// from anywhere else, so the page loads no external asset and an injected
// script could not run even if escaping ever failed. html/template escapes
// every value by context.

//go:embed html/page.tmpl html/page.css html/page.js
var htmlFiles embed.FS

var (
	htmlPage = template.Must(template.ParseFS(htmlFiles, "html/page.tmpl"))
	htmlCSS  = mustRead("html/page.css")
	htmlJS   = mustRead("html/page.js")
	htmlCSP  = "default-src 'none'; img-src data:; style-src '" + cspHash(htmlCSS) + "'; script-src '" + cspHash(htmlJS) + "'; base-uri 'none'; form-action 'none'"
)

func mustRead(name string) string {
	b, err := htmlFiles.ReadFile(name)
	if err != nil {
		panic(err) // embedded at build time: cannot fail at run time
	}
	return string(b)
}

func cspHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

type htmlData struct {
	CSP             string
	CSS             template.CSS
	JS              template.JS
	PassID          uint64
	PreviousID      uint64
	HasPrevious     bool
	Summary         Summary
	Incomplete      string
	Headline        string
	Counts          string
	ChangeLine      string
	ReuseLine       string
	SchemeLine      string
	SameLine        string
	SameContentLine string
	Empty           string
	Trend           template.HTML // inline SVG of problems per pass, or ""
	Verdicts        []htmlOption
	Rows            []htmlRow
	Fixed           []htmlGone
	Gone            []htmlGone
	Fragments       []htmlFragmentChanges // fixed and no longer linked missing fragments
}

// htmlOption is one choice of the verdict filter.
type htmlOption struct{ Value, Label string }

type htmlRow struct {
	Rank      int
	Verdict   string // a verdict, or "fragment" (a missing fragment) or "moved" (a permanent redirect)
	Badge     string
	Target    string
	Link      template.URL // the target, when it can be followed from the page
	Final     string
	FinalWhy  string // why a redirect chain failed, after Final (see Report.chain)
	FinalWord string // "Redirects to" or "Moved to"
	Note      string
	Problem   string
	Since     string
	SinceKey  int64 // seconds since the epoch; 0 for never worked, so ascending is worst first
	StatusKey int
	Pages     int
	Links     int
	Change    Change
	New       bool
	Reused    string // "reused from pass 6, checked 40 minutes ago", or ""
	First     *htmlRef
	More      []htmlRef
	NoRefs    string
}

type htmlRef struct {
	Where    string
	Href     template.URL // the referring page (a file for a directory), "" when it cannot be linked
	At       string       // Referrer.At
	Fragment string
	Tag      string
	Attr     string
	Carried  string // Referrer.Carried
}

type htmlGone struct {
	Target string
	Was    string
}

type htmlFragmentChanges struct {
	Title string
	List  []htmlGone
}

func writeHTML(w io.Writer, r *Report) error {
	d := htmlData{
		CSP: htmlCSP, CSS: template.CSS(htmlCSS), JS: template.JS(htmlJS),
		PassID: r.Pass.ID, Summary: r.Summary,
		Incomplete: r.Incomplete(), Headline: r.Headline(), Counts: r.Counts(), ChangeLine: r.ChangeLine(), ReuseLine: r.ReuseLine(),
		SchemeLine: r.SchemeLine(), SameLine: r.SamePageLine(), SameContentLine: r.SameContentLine(),
		Empty: r.Nothing(), Trend: r.trendSVG(),
	}
	if r.Previous != nil {
		d.PreviousID, d.HasPrevious = r.Previous.ID, true
	}
	for _, sec := range r.Sections() {
		d.Verdicts = append(d.Verdicts, htmlOption{string(sec.Verdict), string(sec.Verdict)})
	}
	for _, e := range r.Entries {
		rec := e.Record
		row := htmlRow{
			Verdict: string(rec.Verdict), Badge: string(rec.Verdict), Target: r.Location(rec.URL), Link: r.href(rec.URL),
			FinalWord: "Redirects to", Note: r.note(e),
			Problem: Problem(rec), Since: r.Since(rec), StatusKey: rec.Status,
			Change: e.Change, New: r.changeNote(e) != "", NoRefs: r.noReferrers(e), Reused: r.ReusedNote(rec),
		}
		if rec.Verdict == store.VerdictSkipped || rec.Verdict == store.VerdictOK {
			row.Problem = ""
		}
		if !rec.LastGood.IsZero() && !rec.FirstBroken.IsZero() {
			row.SinceKey = rec.FirstBroken.Unix()
		}
		urls, why := r.chain(rec)
		row.Final, row.FinalWhy = strings.Join(urls, " -> "), why
		d.Rows = append(d.Rows, r.htmlRefs(row, e.Referrers))
	}
	if len(r.Fragments) > 0 {
		d.Verdicts = append(d.Verdicts, htmlOption{"fragment", "missing fragment"})
	}
	for _, m := range r.Fragments {
		row := htmlRow{
			Verdict: "fragment", Badge: "missing fragment", Target: r.fragmentLocation(m), Link: r.href(m.Link()),
			Problem: "missing fragment", Note: capitalize(r.FragmentHelp()) + ".", NoRefs: "no referring page stored",
		}
		if m.Change == ChangeUnchecked {
			row.Note = r.fragmentLastChecked(m) + "."
		}
		d.Rows = append(d.Rows, r.htmlRefs(row, m.Referrers))
	}
	if len(r.Moved) > 0 {
		d.Verdicts = append(d.Verdicts, htmlOption{"moved", "permanent redirect"})
	}
	for _, e := range r.Moved {
		rec := e.Record
		row := htmlRow{
			Verdict: "moved", Badge: "moved", Target: r.Location(rec.URL), Link: r.href(rec.URL),
			Final: r.Location(rec.FinalURL), FinalWord: "Moved to", Note: capitalize(MovedHelp) + ".",
			Problem: MovedTo(rec) + " " + r.Location(rec.FinalURL), StatusKey: rec.Redirects[0].Status, NoRefs: r.noReferrers(e),
		}
		d.Rows = append(d.Rows, r.htmlRefs(row, e.Referrers))
	}
	alone := r.UnreadAlone()
	if len(alone) > 0 {
		d.Verdicts = append(d.Verdicts, htmlOption{"unread", "page not read"})
	}
	for _, rec := range alone {
		row := htmlRow{
			Verdict: "unread", Badge: "not read", Target: r.Location(rec.URL), Link: r.href(rec.URL),
			Problem: r.unreadWhat(rec), Note: capitalize(UnreadHelp) + ".", NoRefs: "not a link: the page itself",
		}
		d.Rows = append(d.Rows, row)
	}
	if len(r.Cut) > 0 {
		d.Verdicts = append(d.Verdicts, htmlOption{"cut", "page cut short"})
	}
	for _, rec := range r.Cut {
		row := htmlRow{
			Verdict: "cut", Badge: "cut short", Target: r.Location(rec.URL), Link: r.href(rec.URL),
			Problem: rec.Note, Note: capitalize(CutHelp) + "; " + CutAdvice(rec) + ".", NoRefs: "not a link: the page itself",
		}
		d.Rows = append(d.Rows, row)
	}
	if len(r.NotTaken) > 0 {
		d.Verdicts = append(d.Verdicts, htmlOption{"not-taken", "sitemap entries not taken"})
	}
	for _, rec := range r.NotTaken {
		row := htmlRow{
			Verdict: "not-taken", Badge: "not taken", Target: r.Location(rec.URL), Link: r.href(rec.URL),
			Problem: rec.Note, Note: capitalize(NotTakenHelp) + "; " + NotTakenAdvice + ".",
			NoRefs: "not a link: a sitemap the pass read",
		}
		d.Rows = append(d.Rows, row)
	}
	for i := range d.Rows {
		d.Rows[i].Rank = i + 1
	}
	for _, rec := range r.Fixed {
		d.Fixed = append(d.Fixed, htmlGone{Target: r.Location(rec.URL), Was: string(rec.PrevVerdict)})
	}
	for _, rec := range r.Gone {
		d.Gone = append(d.Gone, htmlGone{Target: r.Location(rec.URL), Was: string(rec.Verdict) + ": " + Problem(rec)})
	}
	for _, fs := range r.fragmentChangeLists() {
		c := htmlFragmentChanges{Title: fs.title}
		for _, m := range fs.list {
			c.List = append(c.List, htmlGone{Target: r.fragmentLocation(m), Was: strings.TrimPrefix(fs.was, "was ")})
		}
		d.Fragments = append(d.Fragments, c)
	}
	var b strings.Builder
	if err := htmlPage.Execute(&b, d); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// htmlRefs fills a row's referrers: the first shows in the table, the rest
// behind a disclosure.
func (r *Report) htmlRefs(row htmlRow, refs []Referrer) htmlRow {
	row.Links = len(refs)
	for i, ref := range refs {
		if i == 0 || ref.Page != refs[i-1].Page {
			row.Pages++
		}
		h := htmlRef{Where: r.Location(ref.Page), Href: r.href(ref.Page), At: ref.At(), Fragment: ref.Fragment, Tag: ref.Tag, Attr: ref.Attr, Carried: ref.Carried()}
		if ref.Line == headerLine {
			h.Tag, h.Attr = "", "" // At names it; "<http-header refresh>" would read as an element
		}
		if i == 0 {
			row.First = &h
			continue
		}
		row.More = append(row.More, h)
	}
	return row
}

// href is u as a link from the report: an http(s) URL as it is; a file of
// a checked directory relative to where the report is written (or as a
// file:// URL when that is unknown), so a report saved beside the site, or
// opened where it was made, links to the file itself. Anything else is not
// linked.
func (r *Report) href(u string) template.URL {
	pu, err := url.Parse(u)
	if err != nil {
		return ""
	}
	switch pu.Scheme {
	case "http", "https":
		return template.URL(pu.String())
	case "file":
		abs, ok := r.diskPath(u)
		if !ok {
			return ""
		}
		frag := ""
		if pu.Fragment != "" {
			frag = "#" + url.PathEscape(pu.Fragment)
		}
		if r.linkBase != "" {
			if rel, err := filepath.Rel(r.linkBase, abs); err == nil {
				return template.URL((&url.URL{Path: filepath.ToSlash(rel)}).EscapedPath() + frag)
			}
		}
		return template.URL((&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String() + frag)
	}
	return ""
}

// WrittenTo returns the report as it is written to the file at path: its
// links to files of a checked directory are relative to that file.
func (r *Report) WrittenTo(path string) *Report {
	c := *r
	if abs, err := filepath.Abs(path); err == nil {
		c.linkBase = filepath.Dir(abs)
	}
	return &c
}
