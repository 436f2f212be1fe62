package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/linkpatrol/linkpatrol/store"
)

// Markdown for a pull request or an issue (GitHub Flavored Markdown): the
// summary, what changed, one table per section. URLs and paths are code
// spans, so nothing in them is read as markup or HTML.

func writeMarkdown(w io.Writer, r *Report) error {
	b := bufio.NewWriter(w)
	s := r.Summary
	fmt.Fprintf(b, "## linkpatrol: %d broken, %d transient, %d unverifiable", s.Broken, s.Transient, s.Unverifiable)
	if r.checksFragments() {
		fmt.Fprintf(b, ", %d missing fragments", s.MissingFragments)
		if s.FragmentsUnchecked > 0 {
			fmt.Fprintf(b, " (%d not checked this pass)", s.FragmentsUnchecked)
		}
	}
	b.WriteString("\n\n")
	if msg := r.Incomplete(); msg != "" {
		fmt.Fprintf(b, "> **%s**\n\n", mdText(msg))
	}
	if r.Pass.Insecure {
		b.WriteString("> **INSECURE: TLS certificates were not verified (--insecure).**\n\n")
	}
	fmt.Fprintf(b, "Pass %d of %s, started %s. %s\n", r.Pass.ID, mdCode(r.Target()), r.started(), mdText(r.Counts()))
	for _, line := range []string{r.SeedLine(), r.ReuseLine(), r.SchemeLine(), r.SamePageLine(), r.SameContentLine(), r.ChangeLine()} {
		if line != "" {
			fmt.Fprintf(b, "\n%s\n", mdText(line))
		}
	}
	if msg := r.Nothing(); msg != "" {
		fmt.Fprintf(b, "\n%s\n", msg)
	}
	for _, sec := range r.Sections() {
		fmt.Fprintf(b, "\n### %s (%d)\n\n", SectionTitle(sec.Verdict), len(sec.Entries))
		if help := r.SectionHelp(sec.Verdict); help != "" {
			fmt.Fprintf(b, "%s.\n\n", mdText(capitalize(help)))
		}
		if sec.Verdict == store.VerdictOK {
			for _, e := range sec.Entries {
				fmt.Fprintf(b, "- %s\n", mdCode(r.Location(e.Record.URL)))
			}
			continue
		}
		b.WriteString("| # | URL | Problem | Since | Linked from |\n| ---: | --- | --- | --- | --- |\n")
		for i, e := range sec.Entries {
			r.markdownRow(b, i+1, e)
		}
	}
	if len(r.Fragments) > 0 {
		fmt.Fprintf(b, "\n### Missing fragments (%d)\n\n%s.\n\n", len(r.Fragments), mdText(capitalize(r.FragmentHelp())))
		b.WriteString("| # | Link | Linked from |\n| ---: | --- | --- |\n")
		for i, m := range r.Fragments {
			fmt.Fprintf(b, "| %d | %s | %s |\n", i+1, mdCode(r.fragmentLocation(m)), r.markdownRefs(m.Referrers, "no referring page stored"))
		}
	}
	if alone := r.UnreadAlone(); len(alone) > 0 {
		fmt.Fprintf(b, "\n### Not read (%d)\n\n%s.\n\n", len(alone), mdText(capitalize(UnreadHelp)))
		b.WriteString("| # | Page | Problem |\n| ---: | --- | --- |\n")
		for i, rec := range alone {
			fmt.Fprintf(b, "| %d | %s | %s |\n", i+1, mdCode(r.Location(rec.URL)), mdText(r.unreadWhat(rec)))
		}
	}
	if len(r.Cut) > 0 {
		fmt.Fprintf(b, "\n### Cut short (%d)\n\n%s.\n\n", len(r.Cut), mdText(capitalize(CutHelp)))
		b.WriteString("| # | Page | Why | To read all of it |\n| ---: | --- | --- | --- |\n")
		for i, rec := range r.Cut {
			fmt.Fprintf(b, "| %d | %s | %s | %s |\n", i+1, mdCode(r.Location(rec.URL)), mdText(rec.Note), mdText(CutAdvice(rec)))
		}
	}
	if len(r.NotTaken) > 0 {
		fmt.Fprintf(b, "\n### Sitemap entries not taken (%d)\n\n%s.\n\n", r.Summary.NotTaken, mdText(capitalize(NotTakenHelp)))
		b.WriteString("| # | Sitemap | Entries not taken | Why | To take them |\n| ---: | --- | ---: | --- | --- |\n")
		for i, rec := range r.NotTaken {
			fmt.Fprintf(b, "| %d | %s | %d | %s | %s |\n", i+1, mdCode(r.Location(rec.URL)), rec.NotTaken, mdText(rec.Note), mdText(NotTakenAdvice))
		}
	}
	if len(r.Moved) > 0 {
		fmt.Fprintf(b, "\n### Permanent redirects (%d)\n\n%s.\n\n", len(r.Moved), mdText(capitalize(MovedHelp)))
		b.WriteString("| # | Link | Moved to | Linked from |\n| ---: | --- | --- | --- |\n")
		for i, e := range r.Moved {
			fmt.Fprintf(b, "| %d | %s | %s %s | %s |\n", i+1, mdCode(r.Location(e.Record.URL)), mdText(MovedTo(e.Record)),
				mdCode(r.Location(e.Record.FinalURL)), r.markdownRefs(e.Referrers, r.noReferrers(e)))
		}
	}
	if len(r.Fixed) > 0 {
		fmt.Fprintf(b, "\n### Fixed since pass %d (%d)\n\n", r.Previous.ID, len(r.Fixed))
		for _, rec := range r.Fixed {
			fmt.Fprintf(b, "- %s was %s\n", mdCode(r.Location(rec.URL)), rec.PrevVerdict)
		}
	}
	if len(r.Gone) > 0 {
		fmt.Fprintf(b, "\n### No longer linked since pass %d (%d)\n\n", r.Previous.ID, len(r.Gone))
		for _, rec := range r.Gone {
			fmt.Fprintf(b, "- %s was %s: %s\n", mdCode(r.Location(rec.URL)), rec.Verdict, mdText(Problem(rec)))
		}
	}
	for _, fs := range r.fragmentChangeLists() {
		fmt.Fprintf(b, "\n### %s\n\n", fs.title)
		for _, m := range fs.list {
			fmt.Fprintf(b, "- %s %s\n", mdCode(r.fragmentLocation(m)), fs.was)
		}
	}
	return b.Flush()
}

func (r *Report) markdownRow(b *bufio.Writer, n int, e Entry) {
	rec := e.Record
	target := mdCode(r.Location(rec.URL))
	if r.changeNote(e) != "" {
		target += " **new**"
	}
	problem := mdText(Problem(rec))
	if rec.Verdict == store.VerdictSkipped {
		problem = ""
	}
	if urls, why := r.chain(rec); len(urls) > 0 {
		for i, u := range urls {
			if !strings.HasPrefix(u, "... (") {
				urls[i] = mdCode(u)
			}
		}
		problem += "<br>redirects to " + strings.Join(urls, " -&gt; ") + mdText(why)
	}
	if note := r.note(e); note != "" {
		problem += "<br>" + mdText(note)
	}
	problem = strings.TrimPrefix(problem, "<br>") // a skipped URL has no problem before its note
	fmt.Fprintf(b, "| %d | %s | %s | %s | %s |\n", n, target, problem, mdText(r.Since(rec)), r.markdownRefs(e.Referrers, r.noReferrers(e)))
}

// markdownRefs is a table cell listing each referring page once with its
// lines, at most MaxReferrers pages, or none when there are no referrers.
func (r *Report) markdownRefs(all []Referrer, none string) string {
	var refs []string
	pages := byPage(all)
	shown := pages
	if limit := r.Options.MaxReferrers; limit > 0 && len(shown) > limit {
		shown = shown[:limit]
	}
	for _, p := range shown {
		refs = append(refs, mdCode(r.Location(p.Page)+p.lineList())+mdText(p.From.Carried()))
	}
	if more := len(pages) - len(shown); more > 0 {
		refs = append(refs, fmt.Sprintf("and %d more %s, see `--format json`", more, pageWord(more)))
	}
	if len(refs) == 0 {
		refs = append(refs, mdText(none))
	}
	return strings.Join(refs, "<br>")
}

// mdCode puts s in a code span that survives a table cell: a fence longer
// than any run of backticks inside, pipes escaped (GFM splits cells before
// it reads code spans), line breaks turned into spaces.
func mdCode(s string) string {
	s = mdCodeEscaper.Replace(s)
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

var mdCodeEscaper = strings.NewReplacer("\r", " ", "\n", " ", "|", `\|`)

// mdText escapes prose so that nothing in it is read as markup or HTML.
var mdEscaper = strings.NewReplacer(
	"\r", " ", "\n", " ",
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`,
	"<", "&lt;", ">", "&gt;", "&", "&amp;", "|", `\|`, "#", `\#`, "~", `\~`, "!", `\!`,
)

func mdText(s string) string { return mdEscaper.Replace(s) }

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
