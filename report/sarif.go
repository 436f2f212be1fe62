package report

import (
	"encoding/json"
	"io"
	"net/url"
	"path/filepath"

	"github.com/linkpatrol/linkpatrol/store"
)

// SARIF 2.1.0, as code-scanning services read it: one rule per problem
// verdict, one result per referring page and line (the place to fix), so a
// broken link in a checked directory is annotated on its line. A problem no
// page links to (a start URL) is one result located at the URL itself.

const sarifSchema = "https://json.schemastore.org/sarif-2.1.0.json"

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool         `json:"tool"`
	Invocations []sarifInvocation `json:"invocations,omitempty"`
	Results     []sarifResult     `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name  string      `json:"name"`
	Rules []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string        `json:"id"`
	Name                 string        `json:"name"`
	ShortDescription     sarifMessage  `json:"shortDescription"`
	DefaultConfiguration sarifRuleConf `json:"defaultConfiguration"`
}

type sarifRuleConf struct {
	Level string `json:"level"`
}

type sarifInvocation struct {
	ExecutionSuccessful bool   `json:"executionSuccessful"`
	StartTimeUTC        string `json:"startTimeUtc,omitempty"`
	EndTimeUTC          string `json:"endTimeUtc,omitempty"`
	// ToolExecutionNotifications carry the summary when the pass left
	// something unchecked on purpose: results are only findings, so
	// without it an empty list read as a fully checked site.
	ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications,omitempty"`
}

type sarifNotification struct {
	Level   string       `json:"level"`
	Message sarifMessage `json:"message"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID     string          `json:"ruleId"`
	RuleIndex  int             `json:"ruleIndex"`
	Level      string          `json:"level"`
	Message    sarifMessage    `json:"message"`
	Locations  []sarifLocation `json:"locations"`
	Properties sarifProperties `json:"properties"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

type sarifProperties struct {
	URL     string        `json:"url"`
	Verdict store.Verdict `json:"verdict"`
	Status  int           `json:"status,omitempty"`
	Error   string        `json:"error,omitempty"`
	Change  Change        `json:"change,omitempty"`
	// Fragment is set on missing fragment results only.
	Fragment string `json:"fragment,omitempty"`
}

var sarifRules = []struct {
	verdict store.Verdict
	rule    sarifRule
}{
	{store.VerdictBroken, sarifRule{ID: "LP001", Name: "BrokenLink",
		ShortDescription: sarifMessage{"A link whose target does not exist or cannot be reached."}, DefaultConfiguration: sarifRuleConf{"error"}}},
	{store.VerdictTransient, sarifRule{ID: "LP002", Name: "TransientLink",
		ShortDescription: sarifMessage{"A link whose target failed with a server error or a timeout; it may work next time."}, DefaultConfiguration: sarifRuleConf{"warning"}}},
	{store.VerdictUnverifiable, sarifRule{ID: "LP003", Name: "UnverifiableLink",
		ShortDescription: sarifMessage{"A link whose server would not let a robot look (401, 403, 429, bot challenge)."}, DefaultConfiguration: sarifRuleConf{"note"}}},
}

// sarifFragmentRule follows sarifRules in the driver's rules, and only when
// fragments were checked.
var sarifFragmentRule = sarifRule{ID: "LP004", Name: "MissingFragment",
	ShortDescription: sarifMessage{"A link to a part of a page (#fragment) that the page does not have."}, DefaultConfiguration: sarifRuleConf{"error"}}

// sarifMovedRule is in the driver's rules only when a permanent redirect is
// listed: a link that works but should point where it ends.
var sarifMovedRule = sarifRule{ID: "LP005", Name: "PermanentRedirect",
	ShortDescription: sarifMessage{"A link that works through a permanent redirect (301, 308); update it to the target."}, DefaultConfiguration: sarifRuleConf{"warning"}}

// sarifCutRule is in the driver's rules only when a page was cut short:
// its links past the cut were never checked.
var sarifCutRule = sarifRule{ID: "LP006", Name: "PageCutShort",
	ShortDescription: sarifMessage{"A page read only in part (--max-size, or the bound on links per page): its links past the cut were not checked."}, DefaultConfiguration: sarifRuleConf{"warning"}}

func writeSARIF(w io.Writer, r *Report) error {
	run := sarifRun{
		Tool:    sarifTool{Driver: sarifDriver{Name: "linkpatrol"}},
		Results: []sarifResult{},
	}
	failed := r.notFinished()
	inv := sarifInvocation{ExecutionSuccessful: failed == ""}
	if !r.Pass.Started.IsZero() {
		inv.StartTimeUTC = r.Pass.Started.UTC().Format("2006-01-02T15:04:05Z")
	}
	if !r.Pass.Finished.IsZero() {
		inv.EndTimeUTC = r.Pass.Finished.UTC().Format("2006-01-02T15:04:05Z")
	}
	switch held := r.HeldBack(); {
	case failed != "":
		// Incomplete's line holds any PARTLY CHECKED part too.
		inv.ToolExecutionNotifications = []sarifNotification{{Level: "error", Message: sarifMessage{failed + " " + r.Counts()}}}
	case held != "":
		inv.ToolExecutionNotifications = []sarifNotification{{Level: "warning", Message: sarifMessage{held + " " + r.Counts()}}}
	}
	run.Invocations = []sarifInvocation{inv}
	for _, sr := range sarifRules {
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sr.rule)
	}
	if r.checksFragments() {
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifFragmentRule)
	}
	for _, e := range r.Entries {
		idx := -1
		for i, sr := range sarifRules {
			if sr.verdict == e.Record.Verdict {
				idx = i
			}
		}
		if idx < 0 {
			continue // skipped and ok URLs are not findings
		}
		rule := sarifRules[idx].rule
		res := sarifResult{
			RuleID: rule.ID, RuleIndex: idx, Level: rule.DefaultConfiguration.Level,
			Properties: sarifProperties{URL: e.Record.URL, Verdict: e.Record.Verdict, Status: e.Record.Status, Error: e.Record.Error, Change: e.Change},
		}
		if len(e.Referrers) == 0 {
			res.Message.Text = r.findingText(e, "")
			res.Locations = []sarifLocation{{PhysicalLocation: sarifPhysical{ArtifactLocation: r.sarifArtifact(e.Record.URL)}}}
			run.Results = append(run.Results, res)
			continue
		}
		for _, ref := range e.Referrers {
			res.Message.Text = r.findingText(e, ref.Fragment) + ref.Carried()
			res.Locations = []sarifLocation{{PhysicalLocation: sarifPhysical{
				ArtifactLocation: r.sarifArtifact(ref.Page),
				Region:           sarifRegionOf(ref),
			}}}
			run.Results = append(run.Results, res)
		}
	}
	for _, m := range r.Fragments {
		for _, ref := range m.Referrers {
			run.Results = append(run.Results, sarifResult{
				RuleID: sarifFragmentRule.ID, RuleIndex: len(sarifRules), Level: sarifFragmentRule.DefaultConfiguration.Level,
				Message: sarifMessage{r.fragmentText(m)},
				Locations: []sarifLocation{{PhysicalLocation: sarifPhysical{
					ArtifactLocation: r.sarifArtifact(ref.Page),
					Region:           sarifRegionOf(ref),
				}}},
				Properties: sarifProperties{URL: m.URL, Verdict: store.VerdictBroken, Error: "missing fragment", Fragment: m.Fragment},
			})
		}
	}
	if len(r.Moved) > 0 {
		idx := len(run.Tool.Driver.Rules)
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifMovedRule)
		for _, e := range r.Moved {
			for _, ref := range e.Referrers {
				run.Results = append(run.Results, sarifResult{
					RuleID: sarifMovedRule.ID, RuleIndex: idx, Level: sarifMovedRule.DefaultConfiguration.Level,
					Message: sarifMessage{r.movedText(e)},
					Locations: []sarifLocation{{PhysicalLocation: sarifPhysical{
						ArtifactLocation: r.sarifArtifact(ref.Page),
						Region:           sarifRegionOf(ref),
					}}},
					Properties: sarifProperties{URL: e.Record.URL, Verdict: e.Record.Verdict, Status: e.Record.Redirects[0].Status},
				})
			}
		}
	}
	if len(r.Cut) > 0 {
		idx := len(run.Tool.Driver.Rules)
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifCutRule)
		for _, rec := range r.Cut {
			run.Results = append(run.Results, sarifResult{
				RuleID: sarifCutRule.ID, RuleIndex: idx, Level: sarifCutRule.DefaultConfiguration.Level,
				Message:    sarifMessage{r.cutText(rec)},
				Locations:  []sarifLocation{{PhysicalLocation: sarifPhysical{ArtifactLocation: r.sarifArtifact(rec.URL)}}},
				Properties: sarifProperties{URL: rec.URL, Verdict: rec.Verdict, Status: rec.Status},
			})
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(sarifLog{Schema: sarifSchema, Version: "2.1.0", Runs: []sarifRun{run}})
}

// sarifArtifact names a file relative to the source root (what code scanning
// matches against the repository), or the page's own URL.
func (r *Report) sarifArtifact(page string) sarifArtifact {
	if file, ok := r.File(page); ok && !filepath.IsAbs(file) {
		return sarifArtifact{URI: (&url.URL{Path: filepath.ToSlash(file)}).String(), URIBaseID: "%SRCROOT%"}
	}
	return sarifArtifact{URI: r.Location(page)}
}

// fragmentText is one line for an annotation of a missing fragment.
func (r *Report) fragmentText(m MissingFragment) string {
	return "Missing fragment " + r.fragmentLocation(m) + ": the page has no element with this id or name"
}

// findingText is one line for an annotation: the link and what is wrong,
// and, for an entry no page links to (annotated on the URL itself), why.
func (r *Report) findingText(e Entry, fragment string) string {
	target := r.Location(e.Record.URL)
	if fragment != "" {
		target += "#" + fragment
	}
	text := SectionTitle(e.Record.Verdict) + " link " + target + ": " + r.oneLine(e)
	if chain := r.Chain(e.Record); chain != "" {
		text += "; " + chain
	}
	if len(e.Referrers) == 0 {
		text += " (" + r.noReferrers(e) + ")"
	}
	return text
}

// sarifRegionOf is where on its page a referrer's link is: none for the
// URL of the page's Refresh header (headerLine), which is on no line.
func sarifRegionOf(ref Referrer) *sarifRegion {
	if ref.Line == headerLine {
		return nil
	}
	return &sarifRegion{StartLine: ref.Line}
}
