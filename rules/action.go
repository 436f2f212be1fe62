package rules

import (
	"fmt"
	"strings"
)

// Action is what the crawler does with a URL.
type Action uint8

const (
	// Parse fetches with GET, parses the page and follows its links.
	Parse Action = iota + 1
	// Check verifies only (HEAD, falling back to GET).
	Check
	// Skip does not fetch; the URL is listed as skipped with its referrers.
	Skip
	// Ignore does not record the URL at all (mailto:, tel:, javascript:, ...).
	Ignore
)

var actionNames = [...]string{Parse: "parse", Check: "check", Skip: "skip", Ignore: "ignore"}

func (a Action) String() string {
	if a >= Parse && int(a) < len(actionNames) {
		return actionNames[a]
	}
	return fmt.Sprintf("Action(%d)", uint8(a))
}

// ParseAction reads an action name as written in a config file.
func ParseAction(s string) (Action, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	for a := Parse; int(a) < len(actionNames); a++ {
		if actionNames[a] == name {
			return a, nil
		}
	}
	return 0, fmt.Errorf("unknown action %q (want parse, check, skip or ignore)", s)
}
