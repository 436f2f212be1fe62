package report

import (
	"testing"
	"time"
)

func TestRoundDuration(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		0: "0s", 1234 * time.Microsecond: "1ms", 1234 * time.Millisecond: "1.2s", 93*time.Second + 400*time.Millisecond: "1m33s",
		2 * time.Hour: "2h0m0s",
	} {
		if got := RoundDuration(d).String(); got != want {
			t.Errorf("RoundDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
