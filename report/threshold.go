package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Threshold is how old a problem must be before it is reported: a number of
// consecutive failed passes, or a time since it first failed, or both (then
// both must be reached). The zero Threshold reports everything at once.
//
// The command reads it from --report-after and report_after, with one
// parser of its own.
type Threshold struct {
	Failures int
	Age      time.Duration
}

// IsZero reports whether the threshold lets every problem through.
func (t Threshold) IsZero() bool { return t.Failures <= 0 && t.Age <= 0 }

// String gives the threshold back in the form --report-after takes.
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
