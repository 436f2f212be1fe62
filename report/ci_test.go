package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/store"
)

// TestMachineFormatsCarryFailedPass: a pass that exits 3 (unfinished) or 4
// (a start URL could not be fetched) must not look green in the formats CI
// reads (qa5 N14): JUnit has a failing test case with the first line,
// SARIF's invocation is not successful and carries the line as an error,
// GitHub annotations have it as an ::error. A complete pass held back by a
// limit (exit 5) stays a warning, not a failure.
func TestMachineFormatsCarryFailedPass(t *testing.T) {
	t.Parallel()
	// The interrupted pass of N14: nothing listed so far, which was a
	// green linkpatrol.ok suite.
	stoppedClean := robotsHistory()
	stoppedClean[0].pass.State, stoppedClean[0].pass.Finished = store.PassStopped, time.Time{}
	cases := []struct {
		name   string
		r      *Report
		failed bool
		jType  string
	}{
		{name: "stopped", r: build(t, fillStore(t, dirHistory()), 1, Options{BaseDir: "/work"}), failed: true, jType: "incomplete"},
		{name: "stopped, nothing listed", r: build(t, fillStore(t, stoppedClean), 1, Options{}), failed: true, jType: "incomplete"},
		{name: "site down", r: build(t, fillStore(t, downHistory()), 1, Options{}), failed: true, jType: "start-failure"},
		{name: "cut", r: build(t, fillStore(t, cutHistory()), 1, Options{BaseDir: "/work"})},
		{name: "clean", r: build(t, fillStore(t, robotsHistory()), 1, Options{})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			first := c.r.Incomplete()
			if c.failed && first == "" {
				t.Fatal("fixture has no first line")
			}
			var junit, sarif, github bytes.Buffer
			for f, buf := range map[string]*bytes.Buffer{"junit": &junit, "sarif": &sarif, "github": &github} {
				if err := Write(buf, c.r, f); err != nil {
					t.Fatal(err)
				}
			}

			var suites struct {
				Failures int `xml:"failures,attr"`
				Suites   []struct {
					Name  string `xml:"name,attr"`
					Cases []struct {
						Failure *struct {
							Message string `xml:"message,attr"`
							Type    string `xml:"type,attr"`
						} `xml:"failure"`
					} `xml:"testcase"`
				} `xml:"testsuite"`
			}
			if err := xml.Unmarshal(junit.Bytes(), &suites); err != nil {
				t.Fatal(err)
			}
			var passFailure string
			for _, s := range suites.Suites {
				if c.failed && s.Name == "linkpatrol.ok" {
					t.Errorf("JUnit has a green linkpatrol.ok suite for a failed pass")
				}
				for _, tc := range s.Cases {
					if tc.Failure != nil && tc.Failure.Type == c.jType {
						passFailure = tc.Failure.Message
					}
				}
			}
			switch {
			case c.failed && (suites.Failures == 0 || passFailure != first):
				t.Errorf("JUnit: %d failures, pass failure %q; want a failing case with %q\n%s", suites.Failures, passFailure, first, junit.String())
			case !c.failed && passFailure != "":
				t.Errorf("JUnit: pass failure %q for a pass that finished", passFailure)
			}

			var log sarifLog
			if err := json.Unmarshal(sarif.Bytes(), &log); err != nil {
				t.Fatal(err)
			}
			inv := log.Runs[0].Invocations[0]
			if inv.ExecutionSuccessful == c.failed {
				t.Errorf("SARIF executionSuccessful %v, want %v", inv.ExecutionSuccessful, !c.failed)
			}
			var errNote bool
			for _, n := range inv.ToolExecutionNotifications {
				if n.Level == "error" && strings.HasPrefix(n.Message.Text, first+" ") {
					errNote = true
				}
			}
			if errNote != c.failed {
				t.Errorf("SARIF error notification with the first line: %v, want %v: %+v", errNote, c.failed, inv.ToolExecutionNotifications)
			}

			errLine := "::error title=linkpatrol::" + escapeData(first) + "\n"
			warnLine := "::warning title=linkpatrol::" + escapeData(first) + "\n"
			gh := github.String()
			switch {
			case c.failed && !strings.Contains(gh, errLine):
				t.Errorf("GitHub: no %q in\n%s", errLine, gh)
			case c.failed && strings.Contains(gh, "::warning title=linkpatrol::"):
				t.Errorf("GitHub: the first line of a failed pass is a warning too:\n%s", gh)
			case !c.failed && first != "" && !strings.Contains(gh, warnLine):
				t.Errorf("GitHub: no %q for a pass held back by a limit in\n%s", warnLine, gh)
			case !c.failed && strings.Contains(gh, "::error title=linkpatrol::"):
				t.Errorf("GitHub: an ::error for a pass that finished:\n%s", gh)
			}
		})
	}
}
