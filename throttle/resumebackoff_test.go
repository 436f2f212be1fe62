package throttle_test

import (
	"os"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkpatrol/linkpatrol/throttle"
)

// A backoff saved with the pass is honoured on resume as the absolute
// time it ends: a resume before its end waits what is left of it, one
// after waits for nothing, and the rest the host has had since counts:
// each step's length of it past the end takes a level off, longest first.
// The level a failing host had reached (8: a step of one to two minutes)
// was kept however long ago that was, so the resumed run's first failure
// held the host one to two minutes, then two to four, every run: a nightly
// job with a short --max-time sent one round of requests a night (qa11
// Q10).
func TestBackoffAcrossAResumeEndsWhenItEnded(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// later is how long after the last failure the pass resumes;
		// wait what the first request must wait then, and first the
		// longest step the resumed run's first failure may take.
		later time.Duration
		wait  time.Duration
		first time.Duration
	}{
		{"resumed during the backoff: what is left of it", 30 * time.Second, -1, 5 * time.Minute},
		{"resumed just after it: no wait, the host still failing", 3 * time.Minute, 0, 5 * time.Minute},
		{"resumed the next night: no wait, and the backoff starts again", 24 * time.Hour, 0, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				cfg := fixed(throttle.Settings{MaxRetries: 100, MaxPause: 10 * time.Minute})
				th := throttle.New(cfg)
				th.StartPass(1)
				acquire(t, th, host).Done(throttle.Outcome{Status: 200, Key: "/"})
				var d throttle.Decision
				for range 8 {
					d = acquire(t, th, host).Done(throttle.Outcome{Err: os.ErrDeadlineExceeded, Key: "/a"})
				}
				if lvl := th.Stats()[0].BackoffLevel; lvl != 8 || d.After < time.Minute {
					t.Fatalf("backoff level %d, %v; want 8 and a step of a minute or more", lvl, d.After)
				}
				end := time.Now().Add(d.After)
				time.Sleep(tt.later)

				th = restart(t, th, cfg, 1)
				want := tt.wait
				if want < 0 {
					want = end.Sub(time.Now())
				}
				if want > 0 {
					mustWait(t, th, host, want)
				}
				p := acquire(t, th, host)
				if waited := time.Since(end.Add(-d.After)) - tt.later; waited != max(want, 0) {
					t.Errorf("the first request waited %v after the resume; want %v", waited, max(want, 0))
				}
				if step := p.Done(throttle.Outcome{Err: os.ErrDeadlineExceeded, Key: "/a"}).After; step > tt.first {
					t.Errorf("the resumed run's first failure backs off %v; want at most %v", step, tt.first)
				}
			})
		})
	}
}
