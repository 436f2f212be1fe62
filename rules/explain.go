package rules

import (
	"fmt"
	"io"
	"strings"

	"github.com/linkpatrol/linkpatrol/throttle"
)

// Explanation is everything the engine does with one URL, step by step,
// for `linkpatrol explain`. Secrets are redacted throughout.
type Explanation struct {
	Input string
	// Err says why Input is not an absolute URL; the fields below are
	// empty then.
	Err       string
	Canonical string // canonical form, before rewrites
	Steps     []Step // rewrites that changed the URL, in order
	URL       string // after rewrites: the dedupe key
	Fragment  string
	Action    Action
	Rule      string // what decided, with file:line for a config rule
	// Policy is what requests to URL carry (Decision.Request), redacted:
	// "defaults" when no rule sets anything.
	Policy string
	Traps  Traps // spider-trap limits, which apply when Action is Parse
	// Host and its politeness settings; empty for URLs that are never
	// fetched from a host (mailto:, file:, ...).
	Host           string
	Politeness     throttle.Settings
	PolitenessFrom string
	// Shared says what else bounds Host's requests (hosts it shares its
	// limits with, a cap on all hosts together): the command's settings,
	// which the rules do not know.
	Shared []string
}

// Explain runs raw (an absolute URL) through canonicalization, rewrites
// and rules, recording each step.
func (e *Engine) Explain(raw string) Explanation {
	x := Explanation{Input: raw}
	u, err := Resolve(nil, raw)
	if err != nil {
		x.Err = err.Error()
		return x
	}
	x.Canonical = Canonicalize(u).String()
	d := e.decide(u, &x.Steps)
	x.URL, x.Fragment, x.Action, x.Rule = d.URL, d.Fragment, d.Action, d.Rule
	x.Policy = d.Request.String()
	x.Traps = d.Traps
	if final, err := Resolve(nil, d.URL); err == nil && (final.Scheme == "http" || final.Scheme == "https") && d.Action != Ignore {
		x.Host = final.Host
		x.Politeness, x.PolitenessFrom = e.HostSettings(final.Host, nil)
	}
	return x
}

// Write prints the explanation for people, one "label: value" per line.
func (x Explanation) Write(w io.Writer) error {
	var b strings.Builder
	line := func(label, value string) {
		if label != "" {
			label += ":"
		}
		fmt.Fprintf(&b, "%-11s %s\n", label, value)
	}
	line("url", x.Input)
	if x.Err != "" {
		line("error", "not a URL: "+x.Err)
		_, err := io.WriteString(w, b.String())
		return err
	}
	line("canonical", x.Canonical)
	for _, s := range x.Steps {
		line("rewrite", s.Rewrite)
		line("", "-> "+s.After)
	}
	if len(x.Steps) > 0 {
		line("result", x.URL)
	}
	if x.Fragment != "" {
		line("fragment", x.Fragment+" (kept for the report, never fetched)")
	}
	line("action", x.Action.String())
	line("rule", x.Rule)
	if _, unsupported := UnsupportedSchemeOf(x.Rule); x.Action == Skip && unsupported {
		// Skip says nothing is requested; the report says what it is.
		line("", "never requested, and reported as not checked (unverifiable): the pass is")
		line("", "PARTLY CHECKED (exit 5) until --exclude or a rule leaves such links out")
	}
	if (x.Action == Skip || x.Action == Ignore) && (strings.HasPrefix(x.URL, "http://") || strings.HasPrefix(x.URL, "https://")) {
		// Not even a redirect from the site's pages reaches it (qa7
		// Q1): the one place a user would look to see that.
		line("", "never requested, not even when a redirect leads here:")
		line("", "the link that redirects is listed as skipped (a site's robots.txt excepted: RFC 9309)")
	}
	if x.Action == Parse || x.Action == Check {
		line("policy", x.Policy)
	}
	if x.Action == Parse {
		line("traps", x.Traps.String())
	}
	if x.Host != "" && (x.Action == Parse || x.Action == Check) {
		line("host", x.Host)
		for i, l := range wrap(x.Politeness.String(), ", ", 80-12) {
			if i == 0 {
				line("politeness", l)
			} else {
				line("", l)
			}
		}
		line("", "("+x.PolitenessFrom+")")
		for _, s := range x.Shared {
			line("", s)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// wrap splits a sep-separated list into lines of at most width bytes
// (longer items get a line of their own), each but the last ending in sep.
func wrap(list, sep string, width int) []string {
	var lines []string
	cur := ""
	for _, item := range strings.Split(list, sep) {
		switch {
		case cur == "":
			cur = item
		case len(cur)+len(sep)+len(item)+len(sep) <= width:
			cur += sep + item
		default:
			lines = append(lines, cur+strings.TrimRight(sep, " "))
			cur = item
		}
	}
	return append(lines, cur)
}
