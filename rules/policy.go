package rules

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
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
		parts = append(parts, "timeout "+formatDuration(p.Timeout))
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
			parts = append(parts, f.name+"="+formatDuration(f.d))
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

// ParseDuration reads a Go duration ("90s", "1h30m") that may also use days
// and weeks ("7d", "2w", "1d12h"), which recheck intervals need. Negative
// durations are refused.
func ParseDuration(s string) (time.Duration, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return 0, errors.New("empty duration")
	}
	var total time.Duration
	rest := in
	for rest != "" {
		i := 0
		for i < len(rest) && ('0' <= rest[i] && rest[i] <= '9' || rest[i] == '.') {
			i++
		}
		if i == 0 || i == len(rest) || (rest[i] != 'd' && rest[i] != 'w') {
			break
		}
		n, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil {
			return 0, fmt.Errorf("duration %q: %q is not a number", s, rest[:i])
		}
		unit := 24 * time.Hour
		if rest[i] == 'w' {
			unit *= 7
		}
		if n*float64(unit) > float64(1<<62) {
			return 0, fmt.Errorf("duration %q is too long", s)
		}
		total += time.Duration(n * float64(unit))
		rest = rest[i+1:]
	}
	if rest != "" {
		d, err := time.ParseDuration(rest)
		if err != nil {
			return 0, fmt.Errorf("duration %q: want a number and a unit (ms, s, m, h, d, w), e.g. \"30s\" or \"7d\"", s)
		}
		if d < 0 {
			return 0, fmt.Errorf("duration %q is negative", s)
		}
		total += d
	}
	return total, nil
}

// FormatDuration prints durations the way people write them: "7d",
// "1d12h", "10m" rather than "168h0m0s".
func FormatDuration(d time.Duration) string { return formatDuration(d) }

func formatDuration(d time.Duration) string {
	const day = 24 * time.Hour
	days := ""
	if d >= day {
		days = strconv.FormatInt(int64(d/day), 10) + "d"
		d %= day
		if d == 0 {
			return days
		}
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return days + s
}
