package throttle

import (
	"strings"
	"testing"
	"time"
)

// What notThePace says of the share refused whatever the pace is a count
// only when there is one: a halving put on trial after a retry's refusal
// found no new URL refused at the faster pace (a share of 0), and "one
// new URL in -9223372036854775808" was printed (qa11 §2).
func TestNotThePaceSaysWhatItFound(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		share, trial float64
		want, not    string
	}{
		{"one in four at either pace", 0.25, 0.3, "to about one new URL in 4 whatever the pace", ""},
		{"one in ten at the slower pace, one in eight at the faster", 0.1, 0.125, "one new URL in 10", ""},
		{"none refused at the faster pace", 0.2, 0, "no less often at half the pace", "one new URL in"},
		{"none at either", 0, 0, "no less often at half the pace", "one new URL in"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := newLimiter("h", Settings{})
			l.trial = paceTrial{gap: 70 * time.Millisecond, share: tt.trial, served: 50 * time.Millisecond}
			said := l.notThePace(time.Unix(0, 0), 429, tt.share)
			if !strings.Contains(said, tt.want) || (tt.not != "" && strings.Contains(said, tt.not)) || strings.Contains(said, "in -") {
				t.Errorf("said %q; want %q in it", said, tt.want)
			}
		})
	}
}
