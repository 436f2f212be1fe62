package throttle_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkpatrol/linkpatrol/throttle"
)

const host = "example.test:443"

// fixed gives every host the same settings.
func fixed(s throttle.Settings) throttle.Config {
	return throttle.Config{Settings: func(string) throttle.Settings { return s }, UserAgent: ourUA}
}

// acquire asks until host admits a request, sleeping on the bubble's fake
// clock for each wait Reserve names.
func acquire(t *testing.T, th *throttle.Throttle, host string) *throttle.Permit {
	t.Helper()
	for range 10_000 {
		p, wait, err := th.Reserve(host)
		if err != nil {
			t.Fatalf("Reserve(%s): %v", host, err)
		}
		if p != nil {
			return p
		}
		if wait <= 0 {
			t.Fatalf("Reserve(%s) refused with wait %v", host, wait)
		}
		time.Sleep(wait)
	}
	t.Fatalf("Reserve(%s): no permit after 10000 waits", host)
	return nil
}

// mustWait asserts that Reserve refuses with exactly the given wait.
func mustWait(t *testing.T, th *throttle.Throttle, host string, want time.Duration) {
	t.Helper()
	p, wait, err := th.Reserve(host)
	if err != nil || p != nil || wait != want {
		t.Fatalf("Reserve(%s) = permit %v, wait %v, err %v; want a wait of %v", host, p != nil, wait, err, want)
	}
}

// crawl plays a dispatcher: it starts n requests to host as fast as the
// throttle admits them, each holding its permit for hold(i), and returns
// the start times and the most requests ever in flight.
func crawl(t *testing.T, th *throttle.Throttle, host string, n int, hold func(i int) time.Duration) ([]time.Time, int) {
	t.Helper()
	var (
		wg       sync.WaitGroup
		inFlight atomic.Int64
		peak     int64
		starts   []time.Time
	)
	for len(starts) < n {
		p, wait, err := th.Reserve(host)
		if err != nil {
			t.Fatalf("Reserve: %v", err)
		}
		if p == nil {
			timer := time.NewTimer(wait)
			select {
			case <-timer.C:
			case <-th.Ready():
			}
			timer.Stop()
			continue
		}
		starts = append(starts, time.Now())
		peak = max(peak, inFlight.Add(1))
		d := hold(len(starts) - 1)
		wg.Go(func() {
			time.Sleep(d)
			inFlight.Add(-1)
			p.Done(throttle.Outcome{Status: 200, Latency: d})
		})
	}
	wg.Wait()
	return starts, int(peak)
}

// maxInAnyWindow is the most starts in any half-open interval of length span.
func maxInAnyWindow(starts []time.Time, span time.Duration) int {
	most := 0
	for i := range starts {
		n := 0
		for _, s := range starts[i:] {
			if s.Sub(starts[i]) < span {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

func instant(int) time.Duration { return 0 }

func TestRateAndBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const rate, burst, n = 5.0, 3, 100
		th := throttle.New(fixed(throttle.Settings{Rate: rate, Burst: burst}))
		start := time.Now()
		starts, _ := crawl(t, th, host, n, instant)
		for _, span := range []time.Duration{time.Millisecond, 200 * time.Millisecond, time.Second, 2500 * time.Millisecond, 10 * time.Second} {
			limit := int(rate*span.Seconds()) + burst
			if got := maxInAnyWindow(starts, span); got > limit {
				t.Errorf("%d starts within %v, limit rate*T+burst = %d", got, span, limit)
			}
		}
		// The bucket binds exactly: the burst at once, then one per 1/rate.
		want := time.Duration(float64(n-burst) / rate * float64(time.Second))
		if got := starts[n-1].Sub(start); got < want || got > want+time.Microsecond {
			t.Errorf("%d requests took %v, want %v", n, got, want)
		}
	})
}

func TestRateWaitIsExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{Rate: 0.5, Burst: 1}))
		acquire(t, th, host).Done(throttle.Outcome{Status: 200})
		mustWait(t, th, host, 2*time.Second)
		time.Sleep(1500 * time.Millisecond)
		mustWait(t, th, host, 500*time.Millisecond)
		time.Sleep(500 * time.Millisecond)
		if p, _, _ := th.Reserve(host); p == nil {
			t.Fatal("no permit after the exact wait")
		}
	})
}

func TestSlidingWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{WindowMax: 3, Window: 10 * time.Second}))
		for range 3 {
			acquire(t, th, host).Done(throttle.Outcome{Status: 200})
			time.Sleep(time.Second)
		}
		// Starts at 0, 1 and 2 s; now is 3 s. The next may start at 10 s.
		mustWait(t, th, host, 7*time.Second)
		time.Sleep(4 * time.Second)
		mustWait(t, th, host, 3*time.Second)
		time.Sleep(3 * time.Second)
		acquire(t, th, host).Done(throttle.Outcome{Status: 200})
		// Now at 10 s with starts at 1, 2, 10: the next may start at 11 s.
		mustWait(t, th, host, time.Second)
	})
}

func TestSlidingWindowNeverExceeded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const limit, span = 7, time.Minute
		th := throttle.New(fixed(throttle.Settings{WindowMax: limit, Window: span, Rate: 1, Burst: 5}))
		starts, _ := crawl(t, th, host, 60, instant)
		if got := maxInAnyWindow(starts, span); got != limit {
			t.Errorf("most starts in any %v = %d, want exactly %d", span, got, limit)
		}
	})
}

func TestInFlightCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{MaxInFlight: 2}))
		a, b := acquire(t, th, host), acquire(t, th, host)
		p, wait, err := th.Reserve(host)
		if p != nil || err != nil || wait <= 0 {
			t.Fatalf("third Reserve = permit %v, wait %v, err %v; want refused with a hint", p != nil, wait, err)
		}
		select {
		case <-th.Ready():
			t.Fatal("Ready signalled before any permit was done")
		default:
		}
		a.Done(throttle.Outcome{Status: 200})
		select {
		case <-th.Ready():
		default:
			t.Fatal("Ready not signalled by Done")
		}
		c := acquire(t, th, host)
		if a.Done(throttle.Outcome{Status: 503}).Retry {
			t.Error("a second Done must be ignored")
		}
		if p, _, _ := th.Reserve(host); p != nil {
			t.Fatal("a second Done freed a slot twice")
		}
		b.Done(throttle.Outcome{Status: 200})
		c.Done(throttle.Outcome{Status: 200})
	})
}

// Freed names the hosts whose waits a permit done may have cut short:
// those sharing the permit's limiter, each once however many permits of
// theirs were done, and none twice.
func TestFreedNamesTheHostsOfPermitsDone(t *testing.T) {
	t.Parallel()
	cfg := fixed(throttle.Settings{MaxInFlight: 1})
	cfg.Key = throttle.DomainKey
	th := throttle.New(cfg)
	a, err := reserve(th, "a.one.test")
	if err != nil {
		t.Fatal(err)
	}
	if p, wait, _ := th.Reserve("b.one.test"); p != nil || wait <= 0 {
		t.Fatalf("b.one.test shares a.one.test's cap of 1: permit %v, wait %v", p != nil, wait)
	}
	c, err := reserve(th, "c.two.test")
	if err != nil {
		t.Fatal(err)
	}
	if got := th.Freed(); len(got) != 0 {
		t.Errorf("Freed before any permit was done = %q", got)
	}
	a.Done(throttle.Outcome{Status: 200})
	a.Done(throttle.Outcome{Status: 200}) // ignored
	got := th.Freed()
	slices.Sort(got)
	if want := []string{"a.one.test", "b.one.test"}; !slices.Equal(got, want) {
		t.Errorf("Freed after a.one.test's permit = %q, want %q", got, want)
	}
	if got := th.Freed(); len(got) != 0 {
		t.Errorf("Freed asked again = %q, want none", got)
	}
	c.Done(throttle.Outcome{Status: 200})
	if got := th.Freed(); !slices.Equal(got, []string{"c.two.test"}) {
		t.Errorf("Freed after c.two.test's permit = %q", got)
	}
}

// reserve is Reserve of a request host admits at once.
func reserve(th *throttle.Throttle, host string) (*throttle.Permit, error) {
	p, wait, err := th.Reserve(host)
	if err == nil && p == nil {
		err = fmt.Errorf("Reserve(%s): wait %v", host, wait)
	}
	return p, err
}

func TestInFlightNeverExceeded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const limit = 3
		th := throttle.New(fixed(throttle.Settings{MaxInFlight: limit}))
		_, peak := crawl(t, th, host, 200, func(i int) time.Duration {
			return time.Duration(1+(i*7919)%13) * 10 * time.Millisecond
		})
		if peak != limit {
			t.Errorf("peak in flight = %d, want exactly %d", peak, limit)
		}
	})
}

func TestCrawlDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{CrawlDelay: 2 * time.Second}))
		acquire(t, th, host).Done(throttle.Outcome{Status: 200})
		mustWait(t, th, host, 2*time.Second)
		time.Sleep(1500 * time.Millisecond)
		mustWait(t, th, host, 500*time.Millisecond)
		time.Sleep(500 * time.Millisecond)
		acquire(t, th, host).Done(throttle.Outcome{Status: 200})

		// A longer robots.txt Crawl-delay raises the gap; a shorter one does not lower it.
		th.SetRobots(host, throttle.ParseRobots(200, []byte("User-agent: *\nCrawl-delay: 5\n")), time.Now())
		mustWait(t, th, host, 5*time.Second)
		th.SetRobots(host, throttle.ParseRobots(200, []byte("User-agent: *\nCrawl-delay: 1\n")), time.Now())
		mustWait(t, th, host, 2*time.Second)
	})
}

func TestCrawlDelayIgnoredWithRobots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{IgnoreRobots: true}))
		th.SetRobots(host, throttle.ParseRobots(200, []byte("User-agent: *\nCrawl-delay: 5\n")), time.Now())
		acquire(t, th, host).Done(throttle.Outcome{Status: 200})
		if p, wait, _ := th.Reserve(host); p == nil {
			t.Fatalf("Crawl-delay applied to a host whose robots.txt is ignored (wait %v)", wait)
		}
	})
}

func TestQuotas(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{QuotaRequests: 3, QuotaBytes: 100}))
		th.StartPass(1)
		for range 3 {
			acquire(t, th, host).Done(throttle.Outcome{Status: 200, Bytes: 10})
		}
		if _, _, err := th.Reserve(host); !errors.Is(err, throttle.ErrQuota) {
			t.Fatalf("fourth request: err %v, want ErrQuota", err)
		}
		th.StartPass(1)
		if _, _, err := th.Reserve(host); !errors.Is(err, throttle.ErrQuota) {
			t.Fatalf("StartPass with the running pass reset the quota: err %v", err)
		}
		th.StartPass(2)
		acquire(t, th, host).Done(throttle.Outcome{Status: 200, Bytes: 60})
		acquire(t, th, host).Done(throttle.Outcome{Status: 200, Bytes: 60})
		if _, _, err := th.Reserve(host); !errors.Is(err, throttle.ErrQuota) {
			t.Fatalf("after 120 of 100 bytes: err %v, want ErrQuota", err)
		}
		st := th.Stats()[0]
		if st.UsedRequests != 2 || st.UsedBytes != 120 || st.Requests != 5 || st.Bytes != 150 {
			t.Errorf("stats: used %d req %d B this pass, %d req %d B in all; want 2, 120, 5, 150",
				st.UsedRequests, st.UsedBytes, st.Requests, st.Bytes)
		}
	})
}

func TestHostsAreIndependent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(throttle.Config{Settings: func(h string) throttle.Settings {
			if h == "slow.test:80" {
				return throttle.Settings{CrawlDelay: time.Hour, MaxPause: time.Hour}
			}
			return throttle.Settings{}
		}})
		acquire(t, th, "slow.test:80").Done(throttle.Outcome{Status: 429, RetryAfter: "600"})
		for range 10 {
			acquire(t, th, "fast.test:80").Done(throttle.Outcome{Status: 200})
		}
		if p, wait, _ := th.Reserve("slow.test:80"); p != nil || wait != time.Hour {
			t.Errorf("slow host: permit %v wait %v, want a wait of 1h", p != nil, wait)
		}
	})
}

func TestDomainKey(t *testing.T) {
	tests := map[string]string{
		"www.example.com:443":    "example.com",
		"static.example.com:80":  "example.com",
		"example.com":            "example.com",
		"a.b.example.co.uk:8080": "example.co.uk",
		"WWW.Example.COM.:443":   "example.com",
		"127.0.0.1:8080":         "127.0.0.1",
		"[::1]:8080":             "::1",
		"::1":                    "::1",
		"localhost:8080":         "localhost",
	}
	for in, want := range tests {
		got := throttle.DomainKey(in)
		if got != want {
			t.Errorf("DomainKey(%q) = %q, want %q", in, got, want)
		}
		if again := throttle.DomainKey(got); again != got {
			t.Errorf("DomainKey is not idempotent on %q: %q", got, again)
		}
	}
}

func TestGroupedHostsShareLimits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var asked []string
		th := throttle.New(throttle.Config{
			Key: throttle.DomainKey,
			Settings: func(h string) throttle.Settings {
				asked = append(asked, h)
				return throttle.Settings{MaxInFlight: 1}
			},
		})
		p := acquire(t, th, "www.example.com:443")
		if q, _, _ := th.Reserve("img.example.com:443"); q != nil {
			t.Fatal("a second host of the same domain got past the shared in-flight cap")
		}
		p.Done(throttle.Outcome{Status: 200})
		acquire(t, th, "img.example.com:443").Done(throttle.Outcome{Status: 200})
		if len(asked) != 1 || asked[0] != "www.example.com:443" {
			t.Errorf("settings asked for %q, want once for the first host", asked)
		}
		stats := th.Stats()
		if len(stats) != 1 || stats[0].Key != "example.com" || len(stats[0].Hosts) != 2 || stats[0].Requests != 2 {
			t.Errorf("stats = %+v, want one key example.com with both hosts and 2 requests", stats)
		}
		if hosts := th.Hosts(); len(hosts) != 2 || hosts[0] != "img.example.com:443" {
			t.Errorf("Hosts() = %q", hosts)
		}
	})
}

func TestStatsWaitingAndRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{CrawlDelay: 3 * time.Second}))
		acquire(t, th, host).Done(throttle.Outcome{Status: 200, Latency: 40 * time.Millisecond})
		acquire(t, th, host).Done(throttle.Outcome{Status: 200, Latency: 40 * time.Millisecond})
		st := th.Stats()[0]
		if st.Waited != 3*time.Second {
			t.Errorf("Waited = %v, want 3s", st.Waited)
		}
		if st.Gap != 3*time.Second || st.Latency != 40*time.Millisecond || st.Rate <= 0 {
			t.Errorf("Gap %v Latency %v Rate %v", st.Gap, st.Latency, st.Rate)
		}
		time.Sleep(time.Minute)
		if r := th.Stats()[0].Rate; r > st.Rate/100 {
			t.Errorf("rate %v a minute after the last request, want it decayed from %v", r, st.Rate)
		}
	})
}

func TestZeroConfig(t *testing.T) {
	th := throttle.New(throttle.Config{})
	for range 100 {
		p, wait, err := th.Reserve(host)
		if p == nil || wait != 0 || err != nil {
			t.Fatalf("zero config refused: wait %v err %v", wait, err)
		}
		p.Done(throttle.Outcome{Status: 200, Bytes: 1 << 20, Latency: time.Second})
	}
}

func TestClockBefore1970(t *testing.T) {
	th := throttle.New(throttle.Config{Now: func() time.Time { return time.Time{} }})
	p, _, _ := th.Reserve(host)
	p.Done(throttle.Outcome{Status: 503})
	if st := th.Stats()[0]; st.Rate != 0.1 || st.BackoffLevel != 1 {
		t.Errorf("rate %v, backoff level %d; want 0.1 and 1", st.Rate, st.BackoffLevel)
	}
}

// QA4 F1b: a request counts in the window from its permit until the
// window's length after it is over, since it reaches the server somewhere
// in between; an open one counts all the while.
func TestWindowCountsUntilTheRequestIsOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{WindowMax: 2, Window: 10 * time.Second}))
		a, b := acquire(t, th, host), acquire(t, th, host)
		// Both open: none can leave the window before 10 s from now.
		mustWait(t, th, host, 10*time.Second)
		time.Sleep(4 * time.Second)
		a.Done(throttle.Outcome{Status: 200})
		// a is over at 4 s, so it counts until 14 s.
		mustWait(t, th, host, 10*time.Second)
		time.Sleep(10 * time.Second)
		acquire(t, th, host).Done(throttle.Outcome{Status: 200})
		mustWait(t, th, host, 10*time.Second) // b still open
		b.Done(throttle.Outcome{Status: 200})
		// Over at 14 s both: the next may start at 24 s.
		mustWait(t, th, host, 10*time.Second)
	})
}
