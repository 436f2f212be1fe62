package report

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/linkpatrol/linkpatrol/store"
)

// formats maps each format name to its writer, in the order Formats lists them.
var formats = []struct {
	name  string
	exts  []string // output file extensions that pick it, longest first
	write func(io.Writer, *Report) error
	// human: people read it as it is, so control and bidi characters from
	// URLs and servers are neutralised (see printableWriter). JSON and
	// SARIF escape controls themselves and are read by programs.
	human bool
}{
	{"text", []string{".txt", ".text"}, writeText, true},
	{"json", []string{".json"}, writeJSON, false},
	{"csv", []string{".csv"}, writeCSV, true},
	{"junit", []string{".junit.xml", ".xml"}, writeJUnit, true},
	{"sarif", []string{".sarif.json", ".sarif"}, writeSARIF, false},
	{"github", nil, writeGitHub, true},
	{"markdown", []string{".md", ".markdown"}, writeMarkdown, true},
	{"html", []string{".html", ".htm"}, writeHTML, true},
}

// notFinished is the first line of a pass that exits 3 (unfinished) or 4
// (a start URL could not be fetched), or "". The formats read by programs
// (JUnit, SARIF, GitHub annotations) show it as a failure, never as a green
// run: a dashboard is what people look at, not the exit code (qa5 N14).
// Incomplete writes it, so every format says the same words; a pass that is
// only held back by a limit (exit 5) is not failed here, each format shows
// that as skipped or a warning.
func (r *Report) notFinished() string {
	if r.Pass.State == store.PassComplete && r.StartFailure == "" {
		return ""
	}
	return r.Incomplete()
}

// Formats lists the names Write accepts.
func Formats() []string {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = f.name
	}
	return names
}

// FormatForPath picks a format from an output file's extension
// (report.sarif.json is SARIF, report.json is JSON). GitHub annotations have
// no extension: they are meant for a job's standard output.
func FormatForPath(path string) (string, bool) {
	base := strings.ToLower(filepath.Base(path))
	best, bestLen := "", 0
	for _, f := range formats {
		for _, ext := range f.exts {
			if strings.HasSuffix(base, ext) && len(ext) > bestLen && len(base) > len(ext) {
				best, bestLen = f.name, len(ext)
			}
		}
	}
	return best, best != ""
}

// Write renders r in format, one of Formats().
func Write(w io.Writer, r *Report, format string) error {
	for _, f := range formats {
		if f.name != format {
			continue
		}
		out, pw := w, (*printableWriter)(nil)
		if f.human {
			pw = &printableWriter{w: w}
			out = pw
		}
		err := f.write(out, r)
		if err == nil && pw != nil {
			err = pw.flush()
		}
		if err != nil {
			return fmt.Errorf("write %s report: %w", format, err)
		}
		return nil
	}
	return fmt.Errorf("unknown report format %q (want one of %s)", format, strings.Join(Formats(), ", "))
}
