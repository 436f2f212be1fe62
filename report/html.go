package report

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"html/template"
	"io"
	"net/url"
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
	CSP         string
	CSS         template.CSS
	JS          template.JS
	PassID      uint64
	PreviousID  uint64
	HasPrevious bool
	Summary     Summary
	Incomplete  string
	Headline    string
	Counts      string
	ChangeLine  string
	ReuseLine   string
	Empty       string
	Verdicts    []store.Verdict
	Rows        []htmlRow
	Fixed       []htmlGone
	Gone        []htmlGone
	Fragments   []htmlFragment
	FragHelp    string
}

type htmlFragment struct {
	Target string
	Refs   []htmlRef
}

type htmlRow struct {
	Rank      int
	Verdict   store.Verdict
	Target    string
	Link      string // only for http(s): a file path is not a link from a saved page
	Final     string
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
	Refs      []htmlRef
	NoRefs    string
}

type htmlRef struct {
	Where    string
	Line     int
	Fragment string
	Tag      string
	Attr     string
}

type htmlGone struct {
	Target string
	Was    string
}

func writeHTML(w io.Writer, r *Report) error {
	d := htmlData{
		CSP: htmlCSP, CSS: template.CSS(htmlCSS), JS: template.JS(htmlJS),
		PassID: r.Pass.ID, Summary: r.Summary,
		Incomplete: r.Incomplete(), Headline: r.Headline(), Counts: r.Counts(), ChangeLine: r.ChangeLine(), ReuseLine: r.ReuseLine(),
	}
	if r.Previous != nil {
		d.PreviousID, d.HasPrevious = r.Previous.ID, true
	}
	d.Empty = r.Nothing()
	for _, m := range r.Fragments {
		f := htmlFragment{Target: r.Location(m.URL) + "#" + m.Fragment}
		for _, ref := range m.Referrers {
			f.Refs = append(f.Refs, htmlRef{Where: r.Location(ref.Page), Line: ref.Line, Tag: ref.Tag, Attr: ref.Attr})
		}
		d.Fragments = append(d.Fragments, f)
	}
	d.FragHelp = capitalize(r.FragmentHelp()) + "."
	for _, sec := range r.Sections() {
		d.Verdicts = append(d.Verdicts, sec.Verdict)
	}
	for i, e := range r.Entries {
		rec := e.Record
		row := htmlRow{
			Rank: i + 1, Verdict: rec.Verdict, Target: r.Location(rec.URL), Final: Redirected(rec), Note: rec.Note,
			Problem: Problem(rec), Since: r.Since(rec), StatusKey: rec.Status, Pages: e.Pages(), Links: len(e.Referrers),
			Change: e.Change, New: r.changeNote(e) != "", NoRefs: r.noReferrers(e),
			Reused: r.ReusedNote(rec),
		}
		if rec.Verdict == store.VerdictSkipped || rec.Verdict == store.VerdictOK {
			row.Problem = ""
		}
		if !rec.LastGood.IsZero() && !rec.FirstBroken.IsZero() {
			row.SinceKey = rec.FirstBroken.Unix()
		}
		if row.Final != "" {
			row.Final = r.Location(row.Final)
		}
		if u, err := url.Parse(rec.URL); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
			row.Link = rec.URL
		}
		for _, ref := range e.Referrers {
			row.Refs = append(row.Refs, htmlRef{Where: r.Location(ref.Page), Line: ref.Line, Fragment: ref.Fragment, Tag: ref.Tag, Attr: ref.Attr})
		}
		d.Rows = append(d.Rows, row)
	}
	for _, rec := range r.Fixed {
		d.Fixed = append(d.Fixed, htmlGone{Target: r.Location(rec.URL), Was: string(rec.PrevVerdict)})
	}
	for _, rec := range r.Gone {
		d.Gone = append(d.Gone, htmlGone{Target: r.Location(rec.URL), Was: string(rec.Verdict) + ": " + Problem(rec)})
	}
	var b strings.Builder
	if err := htmlPage.Execute(&b, d); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}
