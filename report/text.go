package report

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/linkpatrol/linkpatrol/store"
)

// writeText renders the report for a cron mail: plain ASCII structure, every
// line within Options.Width, problems numbered worst-first in sections.
func writeText(w io.Writer, r *Report) error {
	t := &textWriter{w: bufio.NewWriter(w), width: r.Options.Width}
	if msg := r.Incomplete(); msg != "" {
		t.para("", msg)
		t.blank()
	}
	t.para("", r.Headline())
	t.para("", r.Counts())
	if line := r.SeedLine(); line != "" {
		t.para("", line)
	}
	if line := r.ReuseLine(); line != "" {
		t.para("", line)
	}
	if line := r.SchemeLine(); line != "" {
		t.para("", line)
	}
	if line := r.SamePageLine(); line != "" {
		t.para("", line)
	}
	if line := r.SameContentLine(); line != "" {
		t.para("", line)
	}
	if line := r.ChangeLine(); line != "" {
		t.para("", line)
	}
	if msg := r.Nothing(); msg != "" {
		t.blank()
		t.para("", msg)
	}
	for _, sec := range r.Sections() {
		t.blank()
		title := fmt.Sprintf("%s (%d)", SectionTitle(sec.Verdict), len(sec.Entries))
		if help := r.SectionHelp(sec.Verdict); help != "" {
			title += ": " + help
		}
		t.title(title)
		for i, e := range sec.Entries {
			t.entry(r, i+1, len(sec.Entries), e)
		}
	}
	if len(r.Fragments) > 0 {
		t.blank()
		t.title(fmt.Sprintf("Missing fragments (%d): %s", len(r.Fragments), r.FragmentHelp()))
		for i, m := range r.Fragments {
			indent := t.item(i+1, len(r.Fragments), r.fragmentLocation(m))
			if note := r.fragmentNote(m); note != "" {
				t.para(indent, note)
			}
			t.line(indent + "linked from:")
			t.referrers(r, indent, m.Referrers)
		}
	}
	if alone := r.UnreadAlone(); len(alone) > 0 {
		t.blank()
		t.title(fmt.Sprintf("Not read (%d): %s", len(alone), UnreadHelp))
		t.list(r, alone, r.unreadWhat)
	}
	if len(r.Cut) > 0 {
		t.blank()
		t.title(fmt.Sprintf("Cut short (%d): %s", len(r.Cut), CutHelp))
		t.list(r, r.Cut, func(rec store.URLRecord) string { return rec.Note + "; " + CutAdvice(rec) })
	}
	if len(r.NotTaken) > 0 {
		t.blank()
		t.title(fmt.Sprintf("Sitemap entries not taken (%d): %s", r.Summary.NotTaken, NotTakenHelp))
		t.list(r, r.NotTaken, func(rec store.URLRecord) string { return rec.Note + "; " + NotTakenAdvice })
	}
	if len(r.Moved) > 0 {
		t.blank()
		t.title(fmt.Sprintf("Permanent redirects (%d): %s", len(r.Moved), MovedHelp))
		for i, e := range r.Moved {
			indent := t.item(i+1, len(r.Moved), r.Location(e.Record.URL))
			t.line(indent + MovedTo(e.Record) + " " + r.Location(e.Record.FinalURL))
			if len(e.Referrers) == 0 {
				t.para(indent, "linked from: "+r.noReferrers(e))
				continue
			}
			t.line(indent + "linked from:")
			t.referrers(r, indent, e.Referrers)
		}
	}
	if len(r.Fixed) > 0 {
		t.blank()
		t.records(r, fmt.Sprintf("Fixed since pass %d (%d)", r.Previous.ID, len(r.Fixed)), r.Fixed, func(rec store.URLRecord) string {
			return "was " + string(rec.PrevVerdict) + ", ok now"
		})
	}
	if len(r.Gone) > 0 {
		t.blank()
		t.records(r, fmt.Sprintf("No longer linked since pass %d (%d)", r.Previous.ID, len(r.Gone)), r.Gone, func(rec store.URLRecord) string {
			return "was " + string(rec.Verdict) + ": " + Problem(rec)
		})
	}
	for _, fs := range r.fragmentChangeLists() {
		t.blank()
		t.title(fs.title)
		for i, m := range fs.list {
			t.para(t.item(i+1, len(fs.list), r.fragmentLocation(m)), fs.was)
		}
	}
	return t.err()
}

type textWriter struct {
	w     *bufio.Writer
	width int
}

func (t *textWriter) line(s string) {
	t.w.WriteString(printable(strings.TrimRight(s, " ")))
	t.w.WriteByte('\n')
}

func (t *textWriter) blank() { t.w.WriteByte('\n') }

// title writes a section title, filled, and underlines its first line.
func (t *textWriter) title(s string) {
	lines := wrapText(s, t.width)
	for _, l := range lines {
		t.line(l)
	}
	t.line(strings.Repeat("-", min(len(lines[0]), t.width)))
}

// para writes s filled to the width, every line after indent.
func (t *textWriter) para(indent, s string) {
	for _, l := range wrapText(s, t.width-len(indent)) {
		t.line(indent + l)
	}
}

// item writes the first line of item i (from 1) of a numbered list of n:
// the number, aligned with the others, then s. It returns the indent of
// the item's further lines, past the number.
func (t *textWriter) item(i, n int, s string) (indent string) {
	num := len(strconv.Itoa(n)) + 2
	t.line(fmt.Sprintf("%*d. ", num-2, i) + s)
	return strings.Repeat(" ", num)
}

// entry writes e, item i of a list of n.
func (t *textWriter) entry(r *Report, i, n int, e Entry) {
	rec := e.Record
	indent := t.item(i, n, r.Location(rec.URL))
	if rec.Verdict == store.VerdictOK {
		return
	}
	parts := []string{Problem(rec)}
	if rec.Verdict == store.VerdictSkipped {
		parts = parts[:0]
	}
	for _, p := range []string{r.Since(rec), r.changeNote(e), r.note(e), r.ReusedNote(rec)} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) > 0 {
		t.para(indent, strings.Join(parts, "; "))
	}
	if chain := r.Chain(rec); chain != "" {
		t.para(indent, chain)
	}
	if len(e.Referrers) == 0 {
		t.para(indent, "linked from: "+r.noReferrers(e))
		return
	}
	t.line(indent + "linked from:")
	t.referrers(r, indent, e.Referrers)
}

// referrers lists the referring pages under "linked from:", each once with
// its lines ("page.html:12" or "page.html: lines 3, 7, 9, ... (746)"), at
// most MaxReferrers pages: a URL linked from eight pages shows all eight,
// however many times one of them links to it.
func (t *textWriter) referrers(r *Report, indent string, refs []Referrer) {
	pages := byPage(refs)
	shown := pages
	if limit := r.Options.MaxReferrers; limit > 0 && len(shown) > limit {
		shown = shown[:limit]
	}
	for _, p := range shown {
		t.line(indent + "  " + r.Location(p.Page) + p.lines())
	}
	if more := len(pages) - len(shown); more > 0 {
		t.para(indent+"  ", fmt.Sprintf("and %d more %s, see --format json", more, pageWord(more)))
	}
}

// records lists URLs that are not entries (fixed, no longer linked), each
// with what it was.
func (t *textWriter) records(r *Report, title string, recs []store.URLRecord, was func(store.URLRecord) string) {
	t.line(title)
	t.line(strings.Repeat("-", min(len(title), t.width)))
	t.list(r, recs, was)
}

// list numbers records under a section's title, each with what was says
// of it.
func (t *textWriter) list(r *Report, recs []store.URLRecord, was func(store.URLRecord) string) {
	for i, rec := range recs {
		t.para(t.item(i+1, len(recs), r.Location(rec.URL)), was(rec))
	}
}

func (t *textWriter) err() error { return t.w.Flush() }
