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
	if line := r.ReuseLine(); line != "" {
		t.para("", line)
	}
	if line := r.ChangeLine(); line != "" {
		t.para("", line)
	}
	if r.nothingListed() {
		t.blank()
		switch {
		case r.Options.OnlyNew:
			t.para("", "No new problems.")
		case r.Summary.Suppressed > 0:
			t.para("", fmt.Sprintf("No problems to report (%d suppressed).", r.Summary.Suppressed))
		default:
			t.para("", "No problems found.")
		}
	}
	for _, sec := range r.Sections() {
		t.blank()
		title := fmt.Sprintf("%s (%d)", SectionTitle(sec.Verdict), len(sec.Entries))
		if help := SectionHelp(sec.Verdict); help != "" {
			title += ": " + help
		}
		lines := wrapText(title, t.width)
		for _, l := range lines {
			t.line(l)
		}
		t.line(strings.Repeat("-", min(len(lines[0]), t.width)))
		num := len(strconv.Itoa(len(sec.Entries))) + 2
		for i, e := range sec.Entries {
			t.entry(r, i+1, num, e)
		}
	}
	if len(r.Fragments) > 0 {
		t.blank()
		title := fmt.Sprintf("Missing fragments (%d): %s", len(r.Fragments), MissingFragmentHelp)
		lines := wrapText(title, t.width)
		for _, l := range lines {
			t.line(l)
		}
		t.line(strings.Repeat("-", min(len(lines[0]), t.width)))
		num := len(strconv.Itoa(len(r.Fragments))) + 2
		for i, m := range r.Fragments {
			t.long(fmt.Sprintf("%*d. ", num-2, i+1), r.Location(m.URL)+"#"+m.Fragment, 0)
			indent := strings.Repeat(" ", num)
			t.line(indent + "linked from:")
			t.referrers(r, indent, m.Referrers)
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

// para writes s filled to the width, every line after indent.
func (t *textWriter) para(indent, s string) {
	for _, l := range wrapText(s, t.width-len(indent)) {
		t.line(indent + l)
	}
}

// long writes one URL (or page:line, keeping its last keep runes together)
// after prefix, continuing on lines indented like the URL.
func (t *textWriter) long(prefix, s string, keep int) {
	pad := strings.Repeat(" ", len(prefix))
	for i, l := range wrapLong(s, t.width-len(prefix), keep) {
		if i == 0 {
			t.line(prefix + l)
		} else {
			t.line(pad + l)
		}
	}
}

func (t *textWriter) entry(r *Report, n, num int, e Entry) {
	rec := e.Record
	t.long(fmt.Sprintf("%*d. ", num-2, n), r.Location(rec.URL), 0)
	indent := strings.Repeat(" ", num)
	if rec.Verdict == store.VerdictOK {
		return
	}
	parts := []string{Problem(rec)}
	if rec.Verdict == store.VerdictSkipped {
		parts = parts[:0]
	}
	for _, p := range []string{r.Since(rec), r.changeNote(e), rec.Note, r.ReusedNote(rec)} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) > 0 {
		t.para(indent, strings.Join(parts, "; "))
	}
	if final := Redirected(rec); final != "" {
		t.long(indent+"redirects to ", r.Location(final), 0)
	}
	if len(e.Referrers) == 0 {
		t.para(indent, "linked from: "+r.noReferrers(e))
		return
	}
	t.line(indent + "linked from:")
	t.referrers(r, indent, e.Referrers)
}

// referrers lists page:line under "linked from:", at most MaxReferrers.
func (t *textWriter) referrers(r *Report, indent string, refs []Referrer) {
	shown := refs
	if limit := r.Options.MaxReferrers; limit > 0 && len(shown) > limit {
		shown = shown[:limit]
	}
	for _, ref := range shown {
		line := ":" + strconv.Itoa(ref.Line)
		t.long(indent+"  ", r.Location(ref.Page)+line, len(line))
	}
	if more := len(refs) - len(shown); more > 0 {
		t.para(indent+"  ", fmt.Sprintf("and %d more, see --format json", more))
	}
}

// records lists URLs that are not entries (fixed, no longer linked), each
// with what it was.
func (t *textWriter) records(r *Report, title string, recs []store.URLRecord, was func(store.URLRecord) string) {
	t.line(title)
	t.line(strings.Repeat("-", min(len(title), t.width)))
	num := len(strconv.Itoa(len(recs))) + 2
	for i, rec := range recs {
		t.long(fmt.Sprintf("%*d. ", num-2, i+1), r.Location(rec.URL), 0)
		t.para(strings.Repeat(" ", num), was(rec))
	}
}

func (t *textWriter) err() error { return t.w.Flush() }
