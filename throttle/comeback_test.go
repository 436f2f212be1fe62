package throttle_test

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkpatrol/linkpatrol/throttle"
)

// A 429 or 503 whose Retry-After the crawl waits for is "come back at T":
// a retry that spends none of the URL's retries, within the bounds that
// keep a server refusing everything from holding the crawl (qa5 N8).
func TestComebackDecision(t *testing.T) {
	tests := []struct {
		name string
		// before are answers of the host before the one decided, each to
		// a request started after the last: time passes by their
		// Retry-After (or a second).
		before   []throttle.Outcome
		o        throttle.Outcome
		retry    bool
		comeback bool
		deferred bool // the host is deferred: as good as a pause past MaxPause
	}{
		{"429 with Retry-After, no retries left", nil,
			throttle.Outcome{Status: 429, RetryAfter: "3", Key: "u", Attempt: 2}, true, true, false},
		{"503 with Retry-After, no retries left", nil,
			throttle.Outcome{Status: 503, RetryAfter: "30", Key: "u", Attempt: 2}, true, true, false},
		{"429 as an HTTP-date is the same", nil,
			throttle.Outcome{Status: 429, RetryAfter: "Sat, 01 Jan 2000 00:00:05 GMT", Key: "u", Attempt: 2}, true, true, false},
		{"429 without Retry-After is a failed try", nil,
			throttle.Outcome{Status: 429, Key: "u", Attempt: 2}, false, false, false},
		{"503 with an unusable Retry-After is a failed try", nil,
			throttle.Outcome{Status: 503, RetryAfter: "soon", Key: "u", Attempt: 2}, false, false, false},
		{"a timeout is a failed try", nil,
			throttle.Outcome{Err: os.ErrDeadlineExceeded, Key: "u", Attempt: 2}, false, false, false},
		{"robots.txt (no URL of its own) is the same", nil,
			throttle.Outcome{Status: 429, RetryAfter: "3", Attempt: 2}, true, true, false},
		{"one URL's eleventh comeback is a failed try", nil,
			throttle.Outcome{Status: 429, RetryAfter: "3", Key: "u", Attempt: 2, Comebacks: throttle.Comebacks{N: 10, Waited: 30 * time.Second}}, false, false, false},
		{"its tenth is not", nil,
			throttle.Outcome{Status: 429, RetryAfter: "3", Key: "u", Attempt: 2, Comebacks: throttle.Comebacks{N: 9, Waited: 27 * time.Second}}, true, true, false},
		{"a URL asked to wait more than MaxPause in all gets no more (a page in maintenance)", nil,
			throttle.Outcome{Status: 503, RetryAfter: "120", Key: "u", Attempt: 2, Comebacks: throttle.Comebacks{N: 4, Waited: 8*time.Minute + 1*time.Second}}, false, false, false},
		{"MaxPause in all exactly still does", nil,
			throttle.Outcome{Status: 503, RetryAfter: "120", Key: "u", Attempt: 2, Comebacks: throttle.Comebacks{N: 4, Waited: 8 * time.Minute}}, true, true, false},
		{"a failed try with retries left is still a retry", nil,
			throttle.Outcome{Status: 429, RetryAfter: "3", Key: "u", Attempt: 0, Comebacks: throttle.Comebacks{N: 10}}, true, false, false},
		{"a pause longer than MaxPause holds the URL back instead", nil,
			throttle.Outcome{Status: 429, RetryAfter: "7200", Key: "u", Attempt: 2}, true, false, false},
		{"a host refusing everything for longer than MaxPause is deferred",
			refusals(11, "60"),
			throttle.Outcome{Status: 429, RetryAfter: "60", Key: "u", Attempt: 2}, true, false, true},
		{"refusing for MaxPause exactly still does",
			refusals(9, "60"),
			throttle.Outcome{Status: 429, RetryAfter: "60", Key: "u", Attempt: 2}, true, true, false},
		{"a normal answer in between starts the count again",
			append(refusals(9, "60"), throttle.Outcome{Status: 200}, throttle.Outcome{Status: 429, RetryAfter: "60", Key: "v"}),
			throttle.Outcome{Status: 429, RetryAfter: "60", Key: "u", Attempt: 2}, true, true, false},
	}
	for _, tt := range tests {
		synctest.Test(t, func(t *testing.T) {
			if time.Now().Year() != 2000 {
				t.Fatalf("the bubble's clock starts at %v, the HTTP-date case assumes 2000-01-01", time.Now())
			}
			th := throttle.New(fixed(throttle.Settings{MaxPause: 10 * time.Minute, MaxRetries: 2}))
			for _, o := range tt.before {
				acquire(t, th, host).Done(o)
				time.Sleep(time.Second)
			}
			p := acquire(t, th, host)
			d := p.Done(tt.o)
			if d.Retry != tt.retry || (d.Comeback > 0) != tt.comeback {
				t.Errorf("%s: retry %v, comeback %v; want %v, %v", tt.name, d.Retry, d.Comeback, tt.retry, tt.comeback)
			}
			if _, _, err := th.Reserve(host); errors.Is(err, throttle.ErrDeferred) != tt.deferred {
				t.Errorf("%s: Reserve: %v; want deferred %v", tt.name, err, tt.deferred)
			}
			if refusing := !th.Refusing(host).IsZero(); tt.deferred && !refusing {
				t.Errorf("%s: deferred, but Refusing does not say since when", tt.name)
			}
			if secs, err := strconv.Atoi(tt.o.RetryAfter); err == nil && tt.comeback && d.Comeback != time.Duration(secs)*time.Second {
				t.Errorf("%s: comeback %v, want the Retry-After %ss", tt.name, d.Comeback, tt.o.RetryAfter)
			}
		})
	}
}

// refusals are n answers of 429 with Retry-After ra, each to another URL.
func refusals(n int, ra string) []throttle.Outcome {
	out := make([]throttle.Outcome, n)
	for i := range out {
		out[i] = throttle.Outcome{Status: 429, RetryAfter: ra, Key: "other" + string(rune('a'+i))}
	}
	return out
}

// After a 429 the host's pace halves, so that the requests queued behind
// the pause do not all go out when it ends and meet another 429; the
// refusals of requests sent before that do not halve it again, and normal
// answers bring the pace back, slowly.
func TestPushbackSlowsThePace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{MaxPause: 10 * time.Minute, MaxRetries: 2}))
		// Eight requests in flight at once, as a crawl's first burst.
		var burst []*throttle.Permit
		for range 8 {
			burst = append(burst, acquire(t, th, host))
		}
		for i, p := range burst {
			p.Done(throttle.Outcome{Status: 429, RetryAfter: "2", Key: "u" + string(rune('a'+i))})
		}
		gap := th.Stats()[0].Gap
		// Eight starts in the first second: 8/s, halved to 4/s.
		if gap != 250*time.Millisecond {
			t.Fatalf("gap after the first burst's refusals %v, want 250ms (half the pace of 8/s, and once only)", gap)
		}

		// After the pause, starts are spaced by the gap.
		first := acquire(t, th, host)
		start := time.Now()
		second := acquire(t, th, host)
		if d := time.Since(start); d != gap {
			t.Fatalf("second start %v after the first, want the gap %v", d, gap)
		}
		// A refusal of a request sent after the slowdown halves it again.
		second.Done(throttle.Outcome{Status: 429, RetryAfter: "1", Key: "ux"})
		if got := th.Stats()[0].Gap; got != 2*gap {
			t.Fatalf("gap after a later refusal %v, want %v", got, 2*gap)
		}
		first.Done(throttle.Outcome{Status: 200})

		// Normal answers bring it back to no gap at all.
		for i := 0; th.Stats()[0].Gap > 0; i++ {
			if i > 200 {
				t.Fatalf("gap still %v after %d normal answers", th.Stats()[0].Gap, i)
			}
			acquire(t, th, host).Done(throttle.Outcome{Status: 200})
		}
	})
}

// A 503 without Retry-After is as often one page failing as the host
// overloaded: it backs off, but leaves the pace alone; a 429 held back on
// its own (one URL behind its own long limit) says nothing about the
// host's pace either.
func TestPaceKeptWhenNotAskedToSlow(t *testing.T) {
	for _, o := range []throttle.Outcome{
		{Status: 503, Key: "u"},
		{Status: 500, Key: "u"},
		{Status: 429, RetryAfter: "7200", Key: "u"},
	} {
		synctest.Test(t, func(t *testing.T) {
			th := throttle.New(fixed(throttle.Settings{MaxPause: 10 * time.Minute, MaxRetries: 2}))
			acquire(t, th, host).Done(o)
			if gap := th.Stats()[0].Gap; gap != 0 {
				t.Errorf("%d Retry-After %q: gap %v, want none", o.Status, o.RetryAfter, gap)
			}
		})
	}
}

// burst refuses n requests in flight at once, each a URL's first, with
// Retry-After ra, as a crawl's first burst meets a server refusing it.
func burst(t *testing.T, th *throttle.Throttle, n int, ra string) {
	t.Helper()
	var ps []*throttle.Permit
	for range n {
		ps = append(ps, acquire(t, th, host))
	}
	for i, p := range ps {
		p.Done(throttle.Outcome{Status: 429, RetryAfter: ra, Key: "first" + strconv.Itoa(i)})
	}
}

// A server that refuses each URL's first request and serves it when it
// comes back does so whatever the pace: once a slowed pace shows it (the
// URLs that came back served, a new one refused and none served, and
// again at half that pace: see TestPaceDoubtIsSettledAtTheSlowerPace),
// the slowdown is undone and a new URL's refusal does not halve the pace
// again, until a URL that waited as told is refused. Before, each new
// URL's refusal doubled the gap, up to a minute, and a crawl of 41 pages
// checked one in four minutes (qa6 Q4).
func TestPaceKeptWhenRefusalsAreNotAboutThePace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{MaxPause: 10 * time.Minute, MaxRetries: 2}))
		gap := func() time.Duration { return th.Stats()[0].Gap }
		burst(t, th, 8, "3")
		if gap() == 0 {
			t.Fatal("no gap after the first burst's refusals: nothing is known of the server yet")
		}
		for i := range 8 {
			acquire(t, th, host).Done(throttle.Outcome{Status: 200, Key: "first" + strconv.Itoa(i), Comebacks: throttle.Comebacks{N: 1, Waited: 3 * time.Second}})
		}
		before := gap()
		acquire(t, th, host).Done(throttle.Outcome{Status: 429, RetryAfter: "3", Key: "new0"})
		if gap() < 2*before {
			t.Fatalf("gap %v after a new URL refused while only URLs that came back were served, was %v; want it doubled, to tell a limiter from a server refusing first requests", gap(), before)
		}
		acquire(t, th, host).Done(throttle.Outcome{Status: 200, Key: "new0", Comebacks: throttle.Comebacks{N: 1, Waited: 3 * time.Second}})
		d := acquire(t, th, host).Done(throttle.Outcome{Status: 429, RetryAfter: "3", Key: "new"})
		if gap() != 0 || !strings.Contains(d.Paced, "back to full pace") {
			t.Fatalf("gap %v, %q after a new URL refused while every URL that came back was served; want the slowdown undone, and said", gap(), d.Paced)
		}
		acquire(t, th, host).Done(throttle.Outcome{Status: 200, Key: "new", Comebacks: throttle.Comebacks{N: 1, Waited: 3 * time.Second}})
		d = acquire(t, th, host).Done(throttle.Outcome{Status: 429, RetryAfter: "3", Key: "newer"})
		if gap() != 0 || d.Paced != "" {
			t.Fatalf("gap %v, %q after another new URL's refusal; want the pace kept, silently", gap(), d.Paced)
		}
		acquire(t, th, host).Done(throttle.Outcome{Status: 429, RetryAfter: "3", Key: "newer", Comebacks: throttle.Comebacks{N: 1, Waited: 3 * time.Second}})
		if gap() == 0 {
			t.Fatal("no gap after a URL that came back was refused; want the pace halved")
		}
	})
}

// A server behind a rate limit serves some new URLs at a pace and refuses
// others: each such refusal (one per round) still halves the pace.
func TestPaceHalvesWhileNewURLsAreServedAndRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{MaxPause: 10 * time.Minute, MaxRetries: 2}))
		burst(t, th, 8, "2")
		before := th.Stats()[0].Gap
		acquire(t, th, host).Done(throttle.Outcome{Status: 200, Key: "a"})
		p := acquire(t, th, host)
		p.Done(throttle.Outcome{Status: 429, RetryAfter: "2", Key: "b"})
		if got := th.Stats()[0].Gap; got <= before {
			t.Fatalf("gap %v (was %v); want it halved", got, before)
		}
	})
}

// However long a host refused everything, once it serves again the gap
// is at most one request per Retry-After, its own answer to "how often
// may I ask": a storm of "Retry-After: 1" for 20 s once left a gap of
// 13 s to recover from, 1/16 per page (qa6 Q4, storm.py storm).
func TestSlowdownEndsAtTheRetryAfterOnceServed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{MaxPause: 10 * time.Minute, MaxRetries: 2}))
		var said []string
		for i := 0; i == 0 || th.Stats()[0].Gap <= 4*time.Second; i++ {
			if i > 20 {
				t.Fatalf("gap %v after %d rounds of refusals, want it growing", th.Stats()[0].Gap, i)
			}
			d := acquire(t, th, host).Done(throttle.Outcome{Status: 429, RetryAfter: "1", Key: "u" + strconv.Itoa(i)})
			if m := d.Paced; m != "" {
				said = append(said, m)
			}
		}
		// Told the first time and at each new gap of a second or more,
		// with the reason.
		if len(said) < 2 || !strings.Contains(said[len(said)-1], "served nothing since the last slowdown") {
			t.Errorf("said %q; want the first slowdown and the long ones, with why", said)
		}
		acquire(t, th, host).Done(throttle.Outcome{Status: 200, Key: "v"})
		if got := th.Stats()[0].Gap; got > time.Second {
			t.Fatalf("gap %v once the host serves again, want at most its Retry-After of 1s", got)
		}
	})
}

// A burst of refusals without a usable Retry-After steps the backoff up
// once, not once per refusal: eight of them once held a host two minutes
// (qa6 Q4, "Retry-After: soon").
func TestBackoffStepsOncePerRound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{MaxPause: 10 * time.Minute, MaxRetries: 2}))
		burst(t, th, 8, "soon")
		if lvl := th.Stats()[0].BackoffLevel; lvl != 1 {
			t.Fatalf("backoff level %d after one burst's refusals, want 1", lvl)
		}
		burst(t, th, 1, "")
		if lvl := th.Stats()[0].BackoffLevel; lvl != 2 {
			t.Fatalf("backoff level %d after a refusal of a later request, want 2", lvl)
		}
	})
}

// A host whose very first request (its robots.txt) is refused with a
// Retry-After is paused as asked, but its pace is left alone: nothing had
// been sent at any pace, so the pace cannot be the cause. Before, that one
// refusal set a gap that came back a sixteenth per answer, and a site of
// 15 URLs took 19 s instead of 2.3 s (qa6 Q4). Refused again after
// waiting, it halves as before.
func TestFirstRequestRefusedLeavesThePace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{MaxPause: 10 * time.Minute, MaxRetries: 2}))
		acquire(t, th, host).Done(throttle.Outcome{Status: 429, RetryAfter: "2"})
		if gap := th.Stats()[0].Gap; gap != 0 {
			t.Fatalf("gap %v after a refusal of the host's first request, want none", gap)
		}
		start := time.Now()
		p := acquire(t, th, host)
		if d := time.Since(start); d != 2*time.Second {
			t.Fatalf("next request after %v, want the 2s pause asked for", d)
		}
		p.Done(throttle.Outcome{Status: 429, RetryAfter: "2", Comebacks: throttle.Comebacks{N: 1, Waited: 2 * time.Second}})
		if gap := th.Stats()[0].Gap; gap == 0 {
			t.Fatal("a request refused again after waiting as told left the pace alone")
		}
	})
}

// Failures of one round step the backoff up once, as refusals do, even
// when the host answers between them: a broken answer (a bad chunk, a
// doubled Content-Length) carries a status, which ends the host's silence,
// and each failure after it was taken for a new round. Eleven failing
// pages of one round once held their host's healthy pages 224 s (qa7 Q2).
func TestFailuresOfARoundStepTheBackoffOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{MaxPause: 10 * time.Minute, MaxRetries: 2}))
		acquire(t, th, host).Done(throttle.Outcome{Status: 200, Key: "home"})
		var ps []*throttle.Permit
		for range 11 {
			ps = append(ps, acquire(t, th, host))
		}
		bad := errors.New("malformed chunked encoding")
		for i, p := range ps {
			o := throttle.Outcome{Err: bad, Key: "bad" + strconv.Itoa(i)}
			if i%2 == 1 {
				o.Status = 200 // the head came, the body broke
			}
			p.Done(o)
		}
		if lvl := th.Stats()[0].BackoffLevel; lvl != 1 {
			t.Fatalf("backoff level %d after one round's failures, want 1", lvl)
		}
		acquire(t, th, host).Done(throttle.Outcome{Err: bad, Key: "later"})
		if lvl := th.Stats()[0].BackoffLevel; lvl != 2 {
			t.Fatalf("backoff level %d after a failure of a later request, want 2", lvl)
		}
	})
}
