package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/linkpatrol/linkpatrol/store"
)

// The JUnit XML follows the schema CI systems read (Jenkins' junit-10.xsd,
// also what GitLab and GitHub test reporters accept): one testsuite per
// section, one testcase per URL. Broken URLs are failures, transient and
// unverifiable ones are skipped with the reason, so the CI result agrees
// with the exit code. A pass that is unfinished or could not fetch a start
// URL is a failing test case of its own, with the report's first line. A
// complete pass without problems still gets one passing test case, because
// CI systems treat a report without any as an error.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string           `xml:"name,attr"`
	Tests      int              `xml:"tests,attr"`
	Failures   int              `xml:"failures,attr"`
	Errors     int              `xml:"errors,attr"`
	Skipped    int              `xml:"skipped,attr"`
	Time       string           `xml:"time,attr"`
	Timestamp  string           `xml:"timestamp,attr,omitempty"`
	Properties *junitProperties `xml:"properties,omitempty"`
	Cases      []junitCase      `xml:"testcase"`
}

type junitProperties struct {
	List []junitProperty `xml:"property"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	SystemOut *junitText    `xml:"system-out,omitempty"`
}

type junitText struct {
	Text string `xml:",cdata"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",cdata"`
}

func writeJUnit(w io.Writer, r *Report) error {
	elapsed := fmt.Sprintf("%.3f", seconds(r.Summary.Elapsed))
	out := junitSuites{Name: "linkpatrol", Time: elapsed}
	props := &junitProperties{List: []junitProperty{{Name: "pass", Value: fmt.Sprint(r.Pass.ID)}}}
	for _, u := range r.Pass.StartURLs {
		props.List = append(props.List, junitProperty{Name: "start_url", Value: u})
	}
	if r.Pass.Root != "" {
		props.List = append(props.List, junitProperty{Name: "root", Value: r.Pass.Root})
	}
	timestamp := ""
	if !r.Pass.Started.IsZero() {
		timestamp = r.Pass.Started.UTC().Format("2006-01-02T15:04:05")
	}
	failed := r.notFinished()
	if failed != "" {
		// First, and a failure: an unfinished pass (exit 3) or a start URL
		// that could not be fetched (exit 4) must not read as a green
		// suite in a CI dashboard, whatever the sections below hold.
		class := "linkpatrol.pass"
		kind := "incomplete"
		if r.Pass.State == store.PassComplete {
			kind = "start-failure"
		}
		out.Suites = append(out.Suites, junitSuite{
			Name: class, Tests: 1, Failures: 1, Time: elapsed, Timestamp: timestamp, Properties: props,
			Cases: []junitCase{{
				Name: fmt.Sprintf("pass %d of %s", r.Pass.ID, r.Target()), Classname: class, Time: elapsed,
				Failure: &junitMessage{Message: failed, Type: kind, Text: xmlSafe(r.Counts())},
			}},
		})
		out.Tests++
		out.Failures++
	}
	sections := r.Sections()
	if r.nothingListed() && failed == "" {
		sections = []Section{{Verdict: store.VerdictOK}}
	}
	for _, sec := range sections {
		suite := junitSuite{
			Name: "linkpatrol." + string(sec.Verdict), Time: elapsed, Timestamp: timestamp, Properties: props,
		}
		class := "linkpatrol." + string(sec.Verdict)
		for _, e := range sec.Entries {
			tc := junitCase{Name: r.Location(e.Record.URL), Classname: class, Time: "0"}
			msg := &junitMessage{Message: r.oneLine(e), Type: string(sec.Verdict), Text: xmlSafe(r.plainDetails(e))}
			switch sec.Verdict {
			case store.VerdictBroken:
				tc.Failure = msg
				suite.Failures++
			case store.VerdictTransient, store.VerdictUnverifiable, store.VerdictSkipped:
				tc.Skipped = &junitMessage{Message: string(sec.Verdict) + ": " + msg.Message}
				tc.SystemOut = &junitText{Text: msg.Text}
				suite.Skipped++
			}
			suite.Cases = append(suite.Cases, tc)
		}
		if len(sec.Entries) == 0 {
			suite.Cases = append(suite.Cases, junitCase{
				Name: fmt.Sprintf("pass %d: %s", r.Pass.ID, r.Counts()), Classname: class, Time: elapsed,
			})
		}
		suite.Tests = len(suite.Cases)
		out.Tests += suite.Tests
		out.Failures += suite.Failures
		out.Suites = append(out.Suites, suite)
	}
	if len(r.Cut) > 0 || len(r.NotTaken) > 0 || len(r.Unread) > 0 || r.EmptyStart != "" || r.Summary.SameContent.Elsewhere > 0 {
		// Not checked on purpose, so not failures; skipped cases, so a CI
		// page reads "skipped", never "all passed" (README: exit codes).
		// Traps, quota skips and the site's robots.txt skips are skipped
		// entries above.
		class := "linkpatrol.not-checked"
		suite := junitSuite{Name: class, Time: elapsed, Timestamp: timestamp, Properties: props}
		for _, rec := range r.Cut {
			suite.Cases = append(suite.Cases, junitCase{Name: r.Location(rec.URL), Classname: class, Time: "0",
				Skipped: &junitMessage{Message: "cut short: " + rec.Note + "; " + CutAdvice(rec)}})
		}
		for _, rec := range r.NotTaken {
			suite.Cases = append(suite.Cases, junitCase{Name: r.Location(rec.URL), Classname: class, Time: "0",
				Skipped: &junitMessage{Message: "sitemap entries not taken: " + r.notTakenText(rec)}})
		}
		for _, rec := range r.Unread {
			suite.Cases = append(suite.Cases, junitCase{Name: r.Location(rec.URL), Classname: class, Time: "0",
				Skipped: &junitMessage{Message: "not read: " + r.unreadText(rec)}})
		}
		if n := r.Summary.Unreached; r.EmptyStart != "" {
			suite.Cases = append(suite.Cases, junitCase{Name: r.Location(r.EmptyStart), Classname: class, Time: "0",
				Skipped: &junitMessage{Message: "not reached: " + r.emptyStartLine(n)}})
		}
		if sc := r.Summary.SameContent; sc.Elsewhere > 0 {
			// One case, as the line: the copies are not listed one by one.
			suite.Cases = append(suite.Cases, junitCase{Name: r.Location(sc.First), Classname: class, Time: "0",
				Skipped: &junitMessage{Message: "copies not read for links: " + r.SameContentLine()}})
		}
		suite.Tests, suite.Skipped = len(suite.Cases), len(suite.Cases)
		out.Tests += suite.Tests
		out.Suites = append(out.Suites, suite)
	}
	if len(r.Fragments) > 0 {
		// Failures, like broken links: they make the exit code 1 too.
		class := "linkpatrol.missing-fragment"
		suite := junitSuite{Name: class, Time: elapsed, Timestamp: timestamp, Properties: props}
		for _, m := range r.Fragments {
			var b strings.Builder
			b.WriteString(m.Link() + "\nlinked from:\n")
			for _, ref := range m.Referrers {
				fmt.Fprintf(&b, "  %s%s%s\n", r.Location(ref.Page), ref.At(), ref.Carried())
			}
			suite.Cases = append(suite.Cases, junitCase{
				Name: r.fragmentLocation(m), Classname: class, Time: "0",
				Failure: &junitMessage{Message: "missing fragment", Type: "missing-fragment", Text: xmlSafe(b.String())},
			})
		}
		suite.Tests, suite.Failures = len(suite.Cases), len(suite.Cases)
		out.Tests += suite.Tests
		out.Failures += suite.Failures
		out.Suites = append(out.Suites, suite)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// oneLine is an entry's problem in one line: what, how long, and whether new.
func (r *Report) oneLine(e Entry) string {
	parts := []string{Problem(e.Record)}
	for _, p := range []string{r.Since(e.Record), r.changeNote(e), r.note(e)} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "; ")
}

// plainDetails lists the URL, where it ends up and every referrer, one per
// line, for formats that carry a block of text (JUnit).
func (r *Report) plainDetails(e Entry) string {
	var b strings.Builder
	b.WriteString(e.Record.URL + "\n")
	if chain := r.Chain(e.Record); chain != "" {
		b.WriteString(chain + "\n")
	}
	if len(e.Referrers) == 0 {
		b.WriteString("linked from: " + r.noReferrers(e) + "\n")
		return b.String()
	}
	b.WriteString("linked from:\n")
	for _, ref := range e.Referrers {
		fmt.Fprintf(&b, "  %s%s%s\n", r.Location(ref.Page), ref.At(), ref.Carried())
	}
	return b.String()
}

// xmlSafe replaces what XML 1.0 cannot carry at all (most control
// characters, as found in the raw text of an invalid URL) with U+FFFD.
// Attributes get this from encoding/xml; CDATA sections do not.
func xmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' ||
			r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF {
			return r
		}
		return '\uFFFD'
	}, s)
}
