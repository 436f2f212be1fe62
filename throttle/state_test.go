package throttle_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkpatrol/linkpatrol/throttle"
)

// restart exports every host of before and imports it into a new throttle
// with the same config, as the crawler does through the store.
func restart(t *testing.T, before *throttle.Throttle, cfg throttle.Config, pass uint64) *throttle.Throttle {
	t.Helper()
	saved := map[string][]byte{}
	for _, h := range before.Hosts() {
		b, err := before.ExportState(h)
		if err != nil {
			t.Fatal(err)
		}
		saved[h] = b
	}
	after := throttle.New(cfg)
	after.StartPass(pass)
	for h, b := range saved {
		if err := after.ImportState(h, b); err != nil {
			t.Fatal(err)
		}
	}
	return after
}

func TestStateKeepsPauseAcrossRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := fixed(throttle.Settings{MaxRetries: 1, MaxPause: time.Hour})
		th := throttle.New(cfg)
		th.StartPass(1)
		acquire(t, th, host).Done(throttle.Outcome{Status: 429, RetryAfter: "600"})
		time.Sleep(4 * time.Minute)

		th = restart(t, th, cfg, 1)
		mustWait(t, th, host, 6*time.Minute)
		time.Sleep(6 * time.Minute)
		if p, _, _ := th.Reserve(host); p == nil {
			t.Fatal("still paused after the pause ended")
		}
	})
}

func TestStateKeepsBackoffAndDeferral(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := fixed(throttle.Settings{MaxRetries: 5, MaxPause: time.Minute})
		th := throttle.New(cfg)
		th.StartPass(1)
		acquire(t, th, host).Done(throttle.Outcome{Status: 503})
		acquire(t, th, host).Done(throttle.Outcome{Status: 503})
		acquire(t, th, "other.test:80").Done(throttle.Outcome{Status: 503, RetryAfter: "7200"})
		before := th.Stats()

		th = restart(t, th, cfg, 1)
		after := th.Stats()
		if after[0].BackoffLevel != 2 || !after[0].BackoffUntil.Equal(before[0].BackoffUntil) {
			t.Errorf("backoff level %d until %v, want 2 until %v", after[0].BackoffLevel, after[0].BackoffUntil, before[0].BackoffUntil)
		}
		if _, _, err := th.Reserve("other.test:80"); !errors.Is(err, throttle.ErrDeferred) {
			t.Errorf("deferred host after a restart in the same pass: err %v", err)
		}
	})
}

func TestStateQuotaBelongsToItsPass(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := fixed(throttle.Settings{QuotaRequests: 2})
		th := throttle.New(cfg)
		th.StartPass(7)
		acquire(t, th, host).Done(throttle.Outcome{Status: 200})
		acquire(t, th, host).Done(throttle.Outcome{Status: 200})

		resumed := restart(t, th, cfg, 7)
		if _, _, err := resumed.Reserve(host); !errors.Is(err, throttle.ErrQuota) {
			t.Errorf("resumed pass forgot the quota used: err %v", err)
		}
		next := restart(t, th, cfg, 8)
		if p, _, err := next.Reserve(host); p == nil || err != nil {
			t.Errorf("a new pass kept the old pass's quota: err %v", err)
		}
	})
}

func TestStateKeepsRobots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := fixed(throttle.Settings{})
		th := throttle.New(cfg)
		th.SetRobots(host, throttle.ParseRobots(200, []byte("User-agent: *\nDisallow: /private\nCrawl-delay: 4\n")), time.Now())
		th.SetRobots("down.test:80", throttle.ParseRobots(503, nil), time.Now())
		time.Sleep(30 * time.Minute)
		// Within the run a server error keeps the crawler off the host.
		if r, ok := th.Robots("down.test:80"); !ok || r.Allowed(ourUA, "/") {
			t.Fatal("the 503 answer should still be cached as disallow all within the run")
		}

		before := th
		th = restart(t, th, cfg, 1)
		r, ok := th.Robots(host)
		if !ok || r.Allowed(ourUA, "/private/x") || !r.Allowed(ourUA, "/public") {
			t.Fatalf("robots.txt after a restart: fresh %v, rules lost", ok)
		}
		acquire(t, th, host).Done(throttle.Outcome{Status: 200})
		mustWait(t, th, host, 4*time.Second)
		// A new run asks a failing robots.txt again (qa9 T12).
		if _, ok := th.Robots("down.test:80"); ok {
			t.Error("the 503 answer was carried into a new run")
		}

		// A "disallow all" from a server error is fetched again after an hour,
		// real rules after a day.
		time.Sleep(31 * time.Minute)
		if _, ok := before.Robots("down.test:80"); ok {
			t.Error("a 503 robots.txt answer still fresh after an hour")
		}
		if _, ok := th.Robots(host); !ok {
			t.Error("robots.txt rules stale after an hour")
		}
		time.Sleep(23 * time.Hour)
		if _, ok := th.Robots(host); ok {
			t.Error("robots.txt rules still fresh after a day")
		}
		st := th.Stats()
		if len(st) != 2 || len(st[1].Robots) != 1 || st[1].Robots[0].Fresh || st[1].Robots[0].CrawlDelay != 4*time.Second {
			t.Errorf("robots stats = %+v", st)
		}
	})
}

func TestImportKeepsTheStricterState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := fixed(throttle.Settings{MaxPause: time.Hour})
		old := throttle.New(cfg)
		acquire(t, old, host).Done(throttle.Outcome{Status: 429, RetryAfter: "60"})
		state, err := old.ExportState(host)
		if err != nil {
			t.Fatal(err)
		}
		th := throttle.New(cfg)
		acquire(t, th, host).Done(throttle.Outcome{Status: 429, RetryAfter: "300"})
		if err := th.ImportState(host, state); err != nil {
			t.Fatal(err)
		}
		mustWait(t, th, host, 300*time.Second)
	})
}

func TestStateErrors(t *testing.T) {
	th := throttle.New(throttle.Config{})
	if _, err := th.ExportState("never.test:80"); err == nil {
		t.Error("exporting a host never seen should fail")
	}
	for _, bad := range []string{"", "{", `{"v": 99}`, `{"paused_until": "yesterday"}`} {
		if err := th.ImportState(host, []byte(bad)); err == nil {
			t.Errorf("ImportState(%q) accepted", bad)
		}
	}
}

// A robots.txt that could not be read (no answer, a 503) is no verdict
// for a later run: it is asked again there, before the host's URLs are
// held back (qa9 T12). One saved by an older version is ignored too, and
// is no reason to keep a host's state.
func TestStateForgetsFailedRobots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := fixed(throttle.Settings{})
		th := throttle.New(cfg)
		th.StartPass(1)
		th.SetRobots(host, throttle.UnreachableRobots("timeout"), time.Now())
		th.SetRobots("other.test:80", throttle.ParseRobots(503, nil), time.Now())
		th.SetRobots("slow.test:80", throttle.ParseRobots(429, nil), time.Now())
		th = restart(t, th, cfg, 1)
		for _, h := range []string{host, "other.test:80", "slow.test:80"} {
			if r, ok := th.Robots(h); ok {
				t.Errorf("%s: a failed robots.txt (status %d) carried into a new run", h, r.Status())
			}
		}

		old := []byte(`{"v":1,"robots":{"status":503,"fetched":"` + time.Now().Format(time.RFC3339Nano) + `","cause":"x"}}`)
		if !th.Expired(old) {
			t.Error("an old state holding only a failed robots.txt is kept")
		}
		if err := th.ImportState("old.test:80", old); err != nil {
			t.Fatal(err)
		}
		if _, ok := th.Robots("old.test:80"); ok {
			t.Error("a failed robots.txt saved by an older version was imported")
		}
	})
}

// Only hosts whose state changed are reported for saving, once; state
// just imported is not.
func TestChangedHosts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := fixed(throttle.Settings{})
		th := throttle.New(cfg)
		th.StartPass(1)
		acquire(t, th, "a.test:80").Done(throttle.Outcome{Status: 200})
		th.SetRobots("b.test:80", nil, time.Now())
		if got := th.Changed(); len(got) != 2 || got[0] != "a.test:80" || got[1] != "b.test:80" {
			t.Errorf("Changed() = %q, want a and b", got)
		}
		if got := th.Changed(); len(got) != 0 {
			t.Errorf("Changed() again = %q, want none", got)
		}
		p := acquire(t, th, "a.test:80")
		if got := th.Changed(); len(got) != 1 {
			t.Errorf("after a request started: Changed() = %q, want a", got)
		}
		p.Done(throttle.Outcome{Status: 429, RetryAfter: "60"})
		if got := th.Changed(); len(got) != 1 {
			t.Errorf("after its answer: Changed() = %q, want a", got)
		}
		restarted := restart(t, th, cfg, 1)
		if got := restarted.Changed(); len(got) != 0 {
			t.Errorf("after an import: Changed() = %q, want none", got)
		}
	})
}

// State is expired when no pass needs it any more.
func TestStateExpired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := fixed(throttle.Settings{MaxRetries: 1})
		th := throttle.New(cfg)
		th.StartPass(1)
		acquire(t, th, "paused.test:80").Done(throttle.Outcome{Status: 429, RetryAfter: "3600"})
		acquire(t, th, "used.test:80").Done(throttle.Outcome{Status: 200})
		th.SetRobots("robots.test:80", nil, time.Now())
		export := func(h string) []byte {
			b, err := th.ExportState(h)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		saved := map[string][]byte{}
		for _, h := range th.Hosts() {
			saved[h] = export(h)
		}
		check := func(when string, th *throttle.Throttle, want map[string]bool) {
			t.Helper()
			for h, exp := range want {
				if got := th.Expired(saved[h]); got != exp {
					t.Errorf("%s: %s expired %v, want %v", when, h, got, exp)
				}
			}
		}
		check("same pass", th, map[string]bool{"paused.test:80": false, "used.test:80": false, "robots.test:80": false})
		next := throttle.New(cfg)
		next.StartPass(2)
		check("next pass", next, map[string]bool{"paused.test:80": false, "used.test:80": true, "robots.test:80": false})
		time.Sleep(48 * time.Hour)
		check("two days on", next, map[string]bool{"paused.test:80": true, "used.test:80": true, "robots.test:80": true})
		if th.Expired([]byte("not json")) {
			t.Error("unreadable state counts as expired")
		}
	})
}

// The flood window survives a restart: the starts it held are exported,
// so the restarted throttle waits for them to leave the window.
func TestStateKeepsWindowAcrossRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := fixed(throttle.Settings{WindowMax: 3, Window: 10 * time.Second, MaxRetries: 1})
		th := throttle.New(cfg)
		th.StartPass(1)
		for range 3 {
			acquire(t, th, host).Done(throttle.Outcome{Status: 200})
			time.Sleep(time.Second)
		}
		th = restart(t, th, cfg, 1)
		// The first start was 3 s ago: the window frees a slot in 7 s.
		mustWait(t, th, host, 7*time.Second)
	})
}

// Resume counts the requests a dead process may have started after it
// last saved its state: each host's window holds that many more starts at
// the resume (up to its limit), its rate bucket is empty, and a host first
// met after the resume is treated alike.
func TestResumeAssumesUnrecordedStarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := fixed(throttle.Settings{WindowMax: 5, Window: 10 * time.Second, MaxRetries: 1})
		th := throttle.New(cfg)
		th.StartPass(1)
		acquire(t, th, host).Done(throttle.Outcome{Status: 200})
		time.Sleep(2 * time.Second)
		th = restart(t, th, cfg, 1)
		th.Resume(3)
		// 1 saved start and 3 assumed: one more now, then the saved one
		// leaves the window 8 s later.
		acquire(t, th, host).Done(throttle.Outcome{Status: 200})
		mustWait(t, th, host, 8*time.Second)
		// A host met after the resume: 3 assumed starts, 2 more now.
		time.Sleep(time.Second)
		for range 2 {
			acquire(t, th, "other.test:80").Done(throttle.Outcome{Status: 200})
		}
		mustWait(t, th, "other.test:80", 9*time.Second)

		rated := fixed(throttle.Settings{Rate: 1, Burst: 4, MaxRetries: 1})
		th = throttle.New(rated)
		th.StartPass(1)
		th.Resume(1)
		// A full bucket would admit 4 at once; after a crash it starts empty.
		mustWait(t, th, host, time.Second)
	})
}

// The requests a process started and had not finished when it died are
// still in flight at the server, for all anyone knows, until they would
// have timed out: the next process counts them against the host's
// in-flight cap until RequestLife after each start, and no longer (qa8 P1).
// A restart after they were over counts none.
// The cap is the host's MaxInFlight or the caller's own (PerHost).
func TestRestartCountsUnfinishedRequestsInFlight(t *testing.T) {
	for _, capped := range []string{"MaxInFlight", "PerHost"} {
		t.Run(capped, func(t *testing.T) { restartCountsUnfinished(t, capped) })
	}
}

func restartCountsUnfinished(t *testing.T, capped string) {
	synctest.Test(t, func(t *testing.T) {
		cfg := fixed(throttle.Settings{MaxRetries: 1})
		if capped == "PerHost" {
			cfg.PerHost = 2
		} else {
			cfg = fixed(throttle.Settings{MaxInFlight: 2, MaxRetries: 1})
		}
		cfg.RequestLife = 20 * time.Second
		th := throttle.New(cfg)
		th.StartPass(1)
		acquire(t, th, host) // never over: the process is killed
		time.Sleep(3 * time.Second)
		acquire(t, th, host).Done(throttle.Outcome{Status: 200})
		acquire(t, th, host) // never over either
		time.Sleep(time.Second)

		// Both unfinished requests may still be at the server: the
		// first runs out 16 s from now.
		th = restart(t, th, cfg, 1)
		mustWait(t, th, host, 16*time.Second)
		time.Sleep(16 * time.Second)
		acquire(t, th, host)
		mustWait(t, th, host, time.Second) // our own request and the newer orphan
		// Killed again: the orphan still running is carried on, with
		// the new request, and runs out first.
		th = restart(t, th, cfg, 1)
		mustWait(t, th, host, 3*time.Second)

		// Requests that were over when the state was saved count for nothing.
		th = throttle.New(cfg)
		th.StartPass(1)
		acquire(t, th, host).Done(throttle.Outcome{Status: 200})
		th = restart(t, th, cfg, 1)
		acquire(t, th, host)
		acquire(t, th, host)
	})
}

// A killed process may have sent requests after it last saved its state:
// the saved state shows one request out, an answer and a new request that
// took its place came after the save (f23: the server served 3 at once at
// --per-host 2 when the resumed run went by the saved request alone).
// After Killed every host, one met later too, counts its whole cap in
// flight until RequestLife from then, and not a moment longer.
func TestKilledCountsUnsavedRequestsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := fixed(throttle.Settings{MaxRetries: 1})
		cfg.PerHost = 2
		cfg.RequestLife = 20 * time.Second
		th := throttle.New(cfg)
		th.StartPass(1)
		acquire(t, th, host) // saved, never over
		time.Sleep(10 * time.Second)

		// By the saved request alone a place is free.
		resumed := restart(t, th, cfg, 1)
		if p, wait, err := resumed.Reserve(host); p == nil {
			t.Fatalf("resumed by the saved state alone: wait %v, err %v; want a permit at once", wait, err)
		}
		time.Sleep(time.Second)
		resumed = restart(t, th, cfg, 1)
		resumed.Killed(time.Time{})
		mustWait(t, resumed, host, 20*time.Second)
		time.Sleep(5 * time.Second)
		mustWait(t, resumed, "other.test:80", 15*time.Second)
		time.Sleep(15 * time.Second)
		acquire(t, resumed, host)
		acquire(t, resumed, host)
		acquire(t, resumed, "other.test:80")

		// They count against the pass's request quota too: 1 saved and
		// 2 assumed of 4 leave one.
		quota := fixed(throttle.Settings{MaxRetries: 1, QuotaRequests: 4})
		quota.PerHost, quota.RequestLife = 2, 20*time.Second
		th = throttle.New(quota)
		th.StartPass(1)
		acquire(t, th, host).Done(throttle.Outcome{Status: 200})
		resumed = restart(t, th, quota, 1)
		resumed.Killed(time.Time{})
		time.Sleep(20 * time.Second)
		acquire(t, resumed, host).Done(throttle.Outcome{Status: 200})
		if p, _, err := resumed.Reserve(host); p != nil || !errors.Is(err, throttle.ErrQuota) {
			t.Fatalf("after the quota: permit %v, err %v; want ErrQuota", p != nil, err)
		}
	})
}

// The dead process started nothing after startedBy (its last sign of
// life): after a kill older than RequestLife nothing waits, after a fresh
// one each host waits until RequestLife after startedBy, not after the
// resume (f27: a resume hours after a kill waited the whole --timeout).
func TestKilledWaitsFromTheLastSignOfLife(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := fixed(throttle.Settings{MaxRetries: 1})
		cfg.PerHost, cfg.RequestLife = 2, 20*time.Second
		th := throttle.New(cfg)
		th.StartPass(1)
		th.Killed(time.Now().Add(-time.Hour))
		acquire(t, th, host) // at once
		acquire(t, th, host)

		th = throttle.New(cfg)
		th.StartPass(1)
		th.Killed(time.Now().Add(-5 * time.Second))
		mustWait(t, th, host, 15*time.Second)
		mustWait(t, th, "other.test:80", 15*time.Second)

		th = throttle.New(cfg)
		th.StartPass(1)
		th.Killed(time.Now().Add(time.Hour)) // a clock gone back: from now
		mustWait(t, th, host, 20*time.Second)
	})
}

// A graceful stop (Ctrl-C, --max-time) cancels the requests still waiting
// for an answer, but the server may go on serving them as after a kill: the
// next run counts them in flight until RequestLife after their start, as it
// counts a killed run's (review8 F4). A permit given back unused (nothing
// sent) counts for nothing.
func TestStopKeepsAbandonedRequestsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := fixed(throttle.Settings{MaxRetries: 1})
		cfg.PerHost = 1
		cfg.RequestLife = 20 * time.Second
		th := throttle.New(cfg)
		th.StartPass(1)
		acquire(t, th, host).Done(throttle.Outcome{Err: context.Canceled}) // given back unused
		time.Sleep(5 * time.Second)
		th = restart(t, th, cfg, 1)
		p, wait, err := th.Reserve(host)
		if p == nil || err != nil {
			t.Fatalf("after a permit given back unused: wait %v, err %v; want a permit at once", wait, err)
		}
		time.Sleep(5 * time.Second)
		p.Done(throttle.Outcome{Err: context.Canceled, Abandoned: true})

		th = restart(t, th, cfg, 1)
		mustWait(t, th, host, 15*time.Second) // the abandoned one runs out 20 s after its start
	})
}

// The slower pace a 429 taught survives a restart: the resumed run waits
// the learnt gap after the last request and then goes one at a time at
// that gap. Before, the gap was 0 after the restart and the next run sent
// --per-host requests at once into a server that had just said 429 (qa8 P4).
func TestStateKeepsLearntPace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := fixed(throttle.Settings{MaxRetries: 3, MaxInFlight: 4})
		th := throttle.New(cfg)
		th.StartPass(1)
		for range 8 {
			acquire(t, th, host).Done(throttle.Outcome{Status: 200, Key: "/ok"})
			time.Sleep(100 * time.Millisecond)
		}
		if d := acquire(t, th, host).Done(throttle.Outcome{Status: 429, RetryAfter: "1", Key: "/x"}); d.Paced == "" {
			t.Fatal("the 429 did not slow the host down")
		}
		gap := th.Stats()[0].Gap
		if gap <= 0 {
			t.Fatalf("gap %v after a 429", gap)
		}
		time.Sleep(time.Second) // the Retry-After

		th = restart(t, th, cfg, 1)
		if got := th.Stats()[0].Gap; got != gap {
			t.Errorf("gap after a restart %v, want the learnt %v", got, gap)
		}
		first := acquire(t, th, host)
		if p, wait, _ := th.Reserve(host); p != nil || wait <= 0 {
			t.Errorf("a second request right after the first on a resumed run (permit %v, wait %v); want the learnt gap", p != nil, wait)
		}
		first.Done(throttle.Outcome{Status: 200, Key: "/y"})
	})
}

// The floor the host's refusals taught (see TestPaceSettlesBelowALimiter)
// survives a restart too: the resumed run comes back to the learnt pace
// as slowly as the run before would have, not a sixteenth per answer
// into the limit again (qa8 P5).
func TestStateKeepsLearntFloor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := fixed(throttle.Settings{MaxPause: 10 * time.Minute, MaxRetries: 2})
		run := func(th *throttle.Throttle, from, n int, status int) {
			for i := from; i < from+n; i++ {
				o := throttle.Outcome{Status: status, Key: "u" + strconv.Itoa(i)}
				if status == 429 {
					o.RetryAfter = "1"
				}
				acquire(t, th, host).Done(o)
			}
		}
		th := throttle.New(cfg)
		th.StartPass(1)
		// Two refusals ten answers apart: a cycle, and a floor.
		run(th, 0, 1, 200)
		run(th, 1, 1, 429)
		run(th, 2, 10, 200)
		run(th, 12, 1, 429)
		resumed := restart(t, th, cfg, 1)
		run(th, 13, 64, 200)
		run(resumed, 13, 64, 200)
		if got, want := resumed.Stats()[0].Gap, th.Stats()[0].Gap; got != want || want == 0 {
			t.Errorf("gap after 64 answers of a resumed run %v, want %v as without the restart", got, want)
		}
	})
}
