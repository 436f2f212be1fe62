package store

import "testing"

// Which records are of URLs their host held back rather than let be
// checked, and which of those stay queued for a later run of the pass.
// The crawler (requeue, redirect chains), the report (unread pages, hosts
// down), the cluster and cmd all ask these two questions.
func TestHeld(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		rec           URLRecord
		held, heldOwn bool
	}{
		{"own host, a Retry-After past --max-pause", URLRecord{Verdict: VerdictTransient, Error: ErrorRateLimited}, true, true},
		{"own host, stopped answering", URLRecord{Verdict: VerdictTransient, Error: ErrorHostDown}, true, true},
		{"another site's pause past its max_pause: settled, unverifiable", URLRecord{Verdict: VerdictUnverifiable, Error: ErrorRateLimited}, true, false},
		{"another site's host down is a refusal, not held", URLRecord{Verdict: VerdictTransient, Error: "refused"}, false, false},
		{"a timeout", URLRecord{Verdict: VerdictTransient, Error: "timeout"}, false, false},
		{"a 503 after its retries", URLRecord{Verdict: VerdictTransient, Status: 503}, false, false},
		{"a 429 after its retries", URLRecord{Verdict: VerdictUnverifiable, Status: 429}, false, false},
		{"checked and ok", URLRecord{Verdict: VerdictOK, Status: 200}, false, false},
		{"a broken link", URLRecord{Verdict: VerdictBroken, Status: 404}, false, false},
	}
	for _, tt := range tests {
		if got := tt.rec.Held(); got != tt.held {
			t.Errorf("%s: Held = %v, want %v", tt.name, got, tt.held)
		}
		if got := tt.rec.HeldOwn(); got != tt.heldOwn {
			t.Errorf("%s: HeldOwn = %v, want %v", tt.name, got, tt.heldOwn)
		}
	}
}
