package report

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/linkpatrol/linkpatrol/store"
)

var csvHeader = []string{
	"verdict", "url", "final_url", "status", "error", "note", "change",
	"first_broken", "last_good", "failures", "page", "line", "file", "fragment",
}

// writeCSV writes one row per referrer (a URL nobody links to gets one row
// with an empty page), in report order, for a spreadsheet or a script.
// It is data only: a comment line or a row that is no URL would break the
// readers it is for, so whether the pass finished is the exit code's to say
// (README: exit codes), and the JSON's.
func writeCSV(w io.Writer, r *Report) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	for _, e := range r.Entries {
		rec := e.Record
		row := []string{
			string(rec.Verdict), cell(rec.URL), cell(Redirected(rec)), status(rec.Status), cell(rec.Error), cell(rec.Note),
			string(e.Change), csvTime(rec.FirstBroken), csvTime(rec.LastGood), strconv.Itoa(rec.Failures),
			"", "", "", "",
		}
		if len(e.Referrers) == 0 {
			if err := cw.Write(row); err != nil {
				return err
			}
			continue
		}
		for _, ref := range e.Referrers {
			file, _ := r.File(ref.Page)
			copy(row[10:], []string{cell(ref.Page), strconv.Itoa(ref.Line), cell(file), cell(ref.Fragment)})
			row[5] = cell(rec.Note)
			if note := ref.carriedNote(); note != "" {
				row[5] = cell(strings.TrimPrefix(rec.Note+"; this link "+note, "; "))
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	// A missing fragment reads like a broken link whose error says why; its
	// fragment is in the fragment column.
	for _, m := range r.Fragments {
		for _, ref := range m.Referrers {
			file, _ := r.File(ref.Page)
			row := []string{
				string(store.VerdictBroken), cell(m.URL), "", "", "missing fragment", "", "", "", "", "",
				cell(ref.Page), strconv.Itoa(ref.Line), cell(file), cell(m.Fragment),
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// cell defuses text that a spreadsheet would run as a formula. Only hostile
// or invalid URLs start that way: a canonical URL starts with its scheme.
func cell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func status(code int) string {
	if code == 0 {
		return ""
	}
	return strconv.Itoa(code)
}

func csvTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
