package rules

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/linkpatrol/linkpatrol/throttle"
)

// Verdict names a rule may give a status code in accept; they match the
// store's verdicts.
var verdictNames = []string{"ok", "broken", "transient", "unverifiable"}

// String describes the policy for people with every secret redacted:
// passwords, cookies, Authorization headers and any value that came from
// an environment variable. It is what explain prints.
func (p *Policy) String() string {
	if p == nil {
		return "defaults"
	}
	var parts []string
	if p.Timeout > 0 {
		parts = append(parts, "timeout "+throttle.FormatDuration(p.Timeout))
	}
	if r := p.Recheck.String(); r != "" {
		parts = append(parts, "recheck "+r)
	}
	if len(p.Accept) > 0 {
		codes := slices.Sorted(maps.Keys(p.Accept))
		acc := make([]string, len(codes))
		for i, c := range codes {
			acc[i] = fmt.Sprintf("%d=%s", c, p.Accept[c])
		}
		parts = append(parts, "accept "+strings.Join(acc, " "))
	}
	for _, name := range slices.Sorted(maps.Keys(p.Header)) {
		for _, v := range p.Header[name] {
			parts = append(parts, "header "+name+": "+p.redactHeader(name, v))
		}
	}
	if p.User != "" || p.Password != "" {
		parts = append(parts, "basic auth "+p.redactValue(p.User, "user")+":<redacted>")
	}
	if len(parts) == 0 {
		return "defaults"
	}
	return strings.Join(parts, "; ")
}

// redactHeader hides header values that carry credentials whatever their
// origin, and any value that came from the environment.
func (p *Policy) redactHeader(name, v string) string {
	switch http.CanonicalHeaderKey(name) {
	case "Authorization", "Proxy-Authorization", "Cookie":
		return "<redacted>"
	}
	return p.redactValue(v, "header "+http.CanonicalHeaderKey(name))
}

func (p *Policy) redactValue(v, field string) string {
	if env, ok := p.fromEnv[field]; ok {
		return "<from $" + env + ">"
	}
	return v
}

// String lists the intervals that are set, e.g. "ok=7d broken=1h".
func (r Recheck) String() string {
	var parts []string
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"ok", r.OK}, {"pages", r.Pages}, {"broken", r.Broken}, {"transient", r.Transient}, {"unverifiable", r.Unverifiable}} {
		if f.d > 0 {
			parts = append(parts, f.name+"="+throttle.FormatDuration(f.d))
		}
	}
	return strings.Join(parts, " ")
}

// expandEnv replaces every ${NAME} in s with the variable's value. It
// returns the names used so the value can be redacted wherever it is shown.
// A missing or empty variable is an error: a credential silently empty
// would only show up as a wrong verdict.
func expandEnv(s string, lookup func(string) (string, bool)) (string, []string, error) {
	if !strings.Contains(s, "${") {
		return s, nil, nil
	}
	var b strings.Builder
	var names []string
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), names, nil
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", nil, errors.New(`"${" without a closing "}"`)
		}
		name := s[i+2 : i+end]
		if !validEnvName(name) {
			return "", nil, fmt.Errorf("%q is not an environment variable name", name)
		}
		v, ok := lookup(name)
		if !ok {
			return "", nil, fmt.Errorf("environment variable %s is not set", name)
		}
		if v == "" {
			return "", nil, fmt.Errorf("environment variable %s is empty", name)
		}
		b.WriteString(v)
		names = append(names, name)
		s = s[i+end+1:]
	}
}

func validEnvName(s string) bool {
	if s == "" || '0' <= s[0] && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
