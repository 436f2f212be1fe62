package report

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"github.com/linkpatrol/linkpatrol/store"
)

// GitHub Actions workflow commands: one annotation per referring page and
// line, so a broken link in a checked directory shows on its line in a pull
// request. Pages fetched over HTTP have no file in the repository: their
// annotation names the page and line in the message instead. The summary
// closes the output as a plain log line.

var githubLevel = map[store.Verdict]string{
	store.VerdictBroken:       "error",
	store.VerdictTransient:    "warning",
	store.VerdictUnverifiable: "notice",
}

func writeGitHub(w io.Writer, r *Report) error {
	bw := bufio.NewWriter(w)
	for _, e := range r.Entries {
		level, ok := githubLevel[e.Record.Verdict]
		if !ok {
			continue
		}
		title := SectionTitle(e.Record.Verdict) + " link"
		if len(e.Referrers) == 0 {
			writeCommand(bw, level, [][2]string{{"title", title}}, r.findingText(e, ""))
			continue
		}
		r.annotate(bw, level, title, e.Referrers, func(ref Referrer) string { return r.findingText(e, ref.Fragment) })
	}
	for _, m := range r.Fragments {
		r.annotate(bw, "error", "Missing fragment", m.Referrers, func(Referrer) string { return r.fragmentText(m) })
	}
	// A permanent redirect works: a warning to update the link, never an
	// error.
	for _, e := range r.Moved {
		msg := r.movedText(e)
		r.annotate(bw, "warning", "Permanent redirect", e.Referrers, func(Referrer) string { return msg })
	}
	// A page cut short hides links nobody checked: a warning on the page
	// itself, which has a file in a checked directory.
	for _, rec := range r.Cut {
		props := [][2]string{{"title", "Page cut short"}}
		if file, ok := r.File(rec.URL); ok {
			props = [][2]string{{"file", file}, {"title", "Page cut short"}}
		}
		writeCommand(bw, "warning", props, r.cutText(rec))
	}
	// So does a page of the site that could not be read.
	for _, rec := range r.UnreadAlone() {
		props := [][2]string{{"title", "Page not read"}}
		if file, ok := r.File(rec.URL); ok {
			props = [][2]string{{"file", file}, {"title", "Page not read"}}
		}
		writeCommand(bw, "warning", props, r.unreadText(rec))
	}
	// So does a sitemap whose entries were not all taken.
	for _, rec := range r.NotTaken {
		writeCommand(bw, "warning", [][2]string{{"title", "Sitemap entries not taken"}}, r.notTakenText(rec))
	}
	// An unfinished pass or a start URL that could not be fetched fails
	// the step (exit 3 or 4): an error, not a warning that reads as a
	// green run with remarks. A pass held back by a limit stays a warning.
	if msg := r.notFinished(); msg != "" {
		writeCommand(bw, "error", [][2]string{{"title", "linkpatrol"}}, msg)
	} else if msg := r.Incomplete(); msg != "" {
		writeCommand(bw, "warning", [][2]string{{"title", "linkpatrol"}}, msg)
	}
	// Plain log lines: the runner shows them as they are. Neither can start
	// with "::", so neither is read as a command.
	bw.WriteString(printable(r.Headline()+" "+r.Counts()) + "\n")
	if line := r.ChangeLine(); line != "" {
		bw.WriteString(line + "\n")
	}
	return bw.Flush()
}

// annotate writes one command per referrer: on its file and line in a
// checked directory, or naming the page and line in the message.
func (r *Report) annotate(bw *bufio.Writer, level, title string, refs []Referrer, text func(Referrer) string) {
	for _, ref := range refs {
		msg := text(ref)
		props := [][2]string{{"title", title}}
		if file, ok := r.File(ref.Page); ok {
			props = [][2]string{{"file", file}, {"line", strconv.Itoa(max(ref.Line, 1))}, {"title", title}}
		} else {
			msg += " (linked from " + ref.Page + ref.At() + ")"
		}
		msg += ref.Carried()
		writeCommand(bw, level, props, msg)
	}
}

func writeCommand(w *bufio.Writer, level string, props [][2]string, msg string) {
	w.WriteString("::" + level)
	for i, p := range props {
		if i == 0 {
			w.WriteByte(' ')
		} else {
			w.WriteByte(',')
		}
		w.WriteString(p[0] + "=" + escapeProperty(p[1]))
	}
	w.WriteString("::" + escapeData(msg) + "\n")
}

// The escaping GitHub's runner undoes in workflow commands.
var (
	dataEscaper     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	propertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

func escapeData(s string) string { return dataEscaper.Replace(s) }

func escapeProperty(s string) string { return propertyEscaper.Replace(s) }
