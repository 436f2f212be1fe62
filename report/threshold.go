package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Threshold is how old a problem must be before it is reported: a number of
// consecutive failed passes, or a time since it first failed, or both (then
// both must be reached). The zero Threshold reports everything at once.
//
// It implements flag.Value (and pflag.Value), so --report-after can be bound
// to it directly.
type Threshold struct {
	Failures int
	Age      time.Duration
}

// ParseThreshold reads "3" (failed passes in a row) or a duration: Go's
// syntax ("36h", "90m") or whole days ("3d"); "3+2d" asks for both. "" and
// "0" mean no threshold.
func ParseThreshold(s string) (Threshold, error) {
	var t Threshold
	s = strings.TrimSpace(s)
	if s == "" {
		return t, nil
	}
	for part := range strings.SplitSeq(s, "+") {
		part = strings.TrimSpace(part)
		if n, err := strconv.Atoi(part); err == nil && n >= 0 {
			t.Failures = n
			continue
		}
		d, ok := parseAge(part)
		if !ok {
			return Threshold{}, fmt.Errorf("report threshold %q: want a count of failed passes (3), a duration (36h, 3d) or both (3+2d)", s)
		}
		t.Age = d
	}
	return t, nil
}

func parseAge(s string) (time.Duration, bool) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || int64(n) > math.MaxInt64/int64(24*time.Hour) {
			return 0, false
		}
		return time.Duration(n) * 24 * time.Hour, true
	}
	d, err := time.ParseDuration(s)
	return d, err == nil && d >= 0
}

// IsZero reports whether the threshold lets every problem through.
func (t Threshold) IsZero() bool { return t.Failures <= 0 && t.Age <= 0 }

// String gives the threshold back in the form ParseThreshold reads.
func (t Threshold) String() string {
	var parts []string
	if t.Failures > 0 {
		parts = append(parts, strconv.Itoa(t.Failures))
	}
	if t.Age > 0 {
		if t.Age%(24*time.Hour) == 0 {
			parts = append(parts, fmt.Sprintf("%dd", t.Age/(24*time.Hour)))
		} else {
			parts = append(parts, shortDuration(t.Age))
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, "+")
}

// Set parses s into t, for flag.Value.
func (t *Threshold) Set(s string) error {
	v, err := ParseThreshold(s)
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// Type names the flag's value for pflag's help text.
func (t *Threshold) Type() string { return "count|duration" }

// shortDuration drops the zero units time.Duration.String keeps: 5h, not 5h0m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
