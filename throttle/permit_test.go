package throttle_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkpatrol/linkpatrol/throttle"
)

func TestRetryAfterSeconds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{MaxRetries: 3}))
		d := acquire(t, th, host).Done(throttle.Outcome{Status: 429, RetryAfter: "120"})
		if !d.Retry || d.After != 120*time.Second {
			t.Fatalf("Done = %+v; want a retry after 120s", d)
		}
		mustWait(t, th, host, 120*time.Second)
		time.Sleep(119 * time.Second)
		mustWait(t, th, host, time.Second)
		time.Sleep(time.Second)
		if p, _, _ := th.Reserve(host); p == nil {
			t.Fatal("still paused when the Retry-After ran out")
		}
	})
}

func TestRetryAfterHTTPDate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{MaxRetries: 3}))
		date := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
		d := acquire(t, th, host).Done(throttle.Outcome{Status: 503, RetryAfter: date})
		if !d.Retry || d.After != 90*time.Second {
			t.Fatalf("Done = %+v; want a retry after 90s", d)
		}
		mustWait(t, th, host, 90*time.Second)
		if st := th.Stats()[0]; !st.PausedUntil.Equal(time.Now().Add(90*time.Second)) || st.BackoffLevel != 0 {
			t.Errorf("PausedUntil %v, BackoffLevel %d", st.PausedUntil, st.BackoffLevel)
		}
	})
}

// A Retry-After that cannot be used (malformed) is a refusal without one:
// back off. RFC 9110 §10.2.3 allows only an HTTP-date or delay-seconds
// (1*DIGIT): no sign, no fraction (qa11's hostile site).
func TestRetryAfterUnusable(t *testing.T) {
	for _, v := range []string{"soon", "soon, maybe", "-5", "+5", "1.5", "1.5s", "0x10"} {
		synctest.Test(t, func(t *testing.T) {
			th := throttle.New(fixed(throttle.Settings{MaxRetries: 3}))
			after := acquire(t, th, host).Done(throttle.Outcome{Status: 503, RetryAfter: v}).After
			if after < 500*time.Millisecond || after > time.Second {
				t.Errorf("Retry-After %q: after %v, want a first backoff step in [0.5s, 1s]", v, after)
			}
			if st := th.Stats()[0]; st.BackoffLevel != 1 || !st.PausedUntil.IsZero() {
				t.Errorf("Retry-After %q: backoff level %d, paused until %v", v, st.BackoffLevel, st.PausedUntil)
			}
		})
	}
}

// A Retry-After of 0 or a date in the past says "come back now" (RFC 9110
// §10.2.3): a comeback with no wait, which spends no retry, not a refusal
// without a Retry-After; the host's pace is halved as for any 429. Taken
// as unusable, they spent a URL's retries on another host's link, which
// ended unverifiable after 2 requests where "1" ended OK (qa8 R3).
func TestRetryAfterNow(t *testing.T) {
	for _, v := range []string{"0", "Sat, 01 Jan 1990 00:00:00 GMT", "  0 "} {
		synctest.Test(t, func(t *testing.T) {
			th := throttle.New(fixed(throttle.Settings{MaxRetries: 1}))
			// Some pace first, so that a 429 has one to halve.
			for range 3 {
				acquire(t, th, host).Done(throttle.Outcome{Status: 200, Key: "/ok"})
				time.Sleep(100 * time.Millisecond)
			}
			d := acquire(t, th, host).Done(throttle.Outcome{Status: 429, RetryAfter: v, Key: "/x", Attempt: 1})
			if !d.Retry || d.Comeback <= 0 || d.After != 0 {
				t.Errorf("Retry-After %q: Done = %+v; want a comeback with no wait, though the URL's retries are spent", v, d)
			}
			if d.Paced == "" {
				t.Errorf("Retry-After %q: the pace was not halved", v)
			}
			if st := th.Stats()[0]; st.BackoffLevel != 0 || st.PausedUntil.After(time.Now()) {
				t.Errorf("Retry-After %q: backoff level %d, paused until %v; want neither", v, st.BackoffLevel, st.PausedUntil)
			}
		})
	}
}

func TestRetryAfterIgnoredOnOtherStatus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{MaxRetries: 3}))
		if acquire(t, th, host).Done(throttle.Outcome{Status: 200, RetryAfter: "600"}).Retry {
			t.Error("retry after a 200")
		}
		if p, _, _ := th.Reserve(host); p == nil {
			t.Error("a 200 with Retry-After paused the host")
		}
	})
}

func TestMaxPauseDefers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{MaxPause: time.Minute, MaxRetries: 1}))
		th.StartPass(1)
		d := acquire(t, th, host).Done(throttle.Outcome{Status: 503, RetryAfter: "3600", Attempt: 5})
		if !d.Retry || d.After != 0 {
			t.Fatalf("Done = %+v; want retry now so that Reserve defers the URL", d)
		}
		if _, _, err := th.Reserve(host); !errors.Is(err, throttle.ErrDeferred) {
			t.Fatalf("err %v, want ErrDeferred", err)
		}
		time.Sleep(59*time.Minute + 30*time.Second)
		if _, _, err := th.Reserve(host); !errors.Is(err, throttle.ErrDeferred) {
			t.Fatalf("deferral must last the pass; err %v", err)
		}
		if !th.Stats()[0].Deferred {
			t.Error("Stats does not show the deferral")
		}
		// The next pass waits out the rest of the pause, now within the cap.
		th.StartPass(2)
		mustWait(t, th, host, 30*time.Second)
	})
}

func TestMaxPauseDefersNextPassToo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{MaxPause: time.Hour}))
		acquire(t, th, host).Done(throttle.Outcome{Status: 429, RetryAfter: "10800"})
		time.Sleep(time.Hour)
		th.StartPass(2)
		if _, _, err := th.Reserve(host); !errors.Is(err, throttle.ErrDeferred) {
			t.Fatalf("2h of pause left with a 1h cap: err %v, want ErrDeferred", err)
		}
	})
}

func TestBackoffGrowsAndResets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{MaxRetries: 100}))
		step := time.Second
		for level := 1; level <= 12; level++ {
			d := acquire(t, th, host).Done(throttle.Outcome{Status: 503})
			if !d.Retry || d.After < step/2 || d.After > step {
				t.Fatalf("failure %d: retry %v after %v, want within [%v, %v]", level, d.Retry, d.After, step/2, step)
			}
			mustWait(t, th, host, d.After)
			if got := th.Stats()[0].BackoffLevel; got != level {
				t.Fatalf("backoff level %d, want %d", got, level)
			}
			step = min(2*step, 5*time.Minute)
		}
		acquire(t, th, host).Done(throttle.Outcome{Status: 404})
		if got := th.Stats()[0].BackoffLevel; got != 0 {
			t.Fatalf("backoff level %d after a normal answer, want 0", got)
		}
		if after := acquire(t, th, host).Done(throttle.Outcome{Err: os.ErrDeadlineExceeded}).After; after < 500*time.Millisecond || after > time.Second {
			t.Errorf("first step after a reset: %v, want within [0.5s, 1s]", after)
		}
	})
}

func TestBackoffCappedByMaxPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{MaxRetries: 100, MaxPause: 10 * time.Second}))
		for range 8 {
			if after := acquire(t, th, host).Done(throttle.Outcome{Status: 429}).After; after > 10*time.Second {
				t.Fatalf("backoff step %v beyond MaxPause 10s", after)
			}
		}
		if _, _, err := th.Reserve(host); err != nil {
			t.Errorf("backoff deferred the host: %v", err)
		}
	})
}

func TestRetryDecision(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	tests := []struct {
		name    string
		o       throttle.Outcome
		retry   bool
		backoff bool
	}{
		{"503", throttle.Outcome{Status: 503}, true, true},
		{"429", throttle.Outcome{Status: 429}, true, true},
		{"timeout", throttle.Outcome{Err: context.DeadlineExceeded}, true, true},
		{"reset", throttle.Outcome{Err: reset}, true, true},
		// Nobody to protect and nothing a retry can change: not a
		// politeness event (issue 12: three links to a closed port cost 51 s).
		{"refused", throttle.Outcome{Err: refused}, false, false},
		{"invalid address", throttle.Outcome{Err: &net.OpError{Op: "dial", Net: "tcp", Err: &net.AddrError{Err: "unexpected ']' in address", Addr: "localhost]:80"}}}, false, false},
		{"TLS handshake refused", throttle.Outcome{Err: &net.OpError{Op: "remote error", Err: errors.New("tls: handshake failure")}}, false, false},
		{"plain HTTP on a TLS port", throttle.Outcome{Err: tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}}, false, false},
		// A certificate is not less self-signed the second time (qa5 N7:
		// six handshakes and 24 s of backoff for one start URL).
		{"untrusted certificate", throttle.Outcome{Err: &url.Error{Op: "Get", URL: "https://h/", Err: &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}}}, false, false},
		{"expired certificate", throttle.Outcome{Err: &tls.CertificateVerificationError{Err: x509.CertificateInvalidError{Reason: x509.Expired}}}, false, false},
		{"certificate for another name", throttle.Outcome{Err: &tls.CertificateVerificationError{Err: x509.HostnameError{Host: "h"}}}, false, false},
		// A response that cannot be read as sent reads no better the
		// second time (qa9 T4: 20 MB of headers asked for three times).
		{"bad Content-Length", throttle.Outcome{Err: errors.New(`net/http: HTTP/1.x transport connection broken: bad Content-Length "12abc"`)}, false, false},
		{"headers too large", throttle.Outcome{Err: errors.New("net/http: server response headers exceeded 262144 bytes; aborted")}, false, false},
		{"header line without a colon", throttle.Outcome{Err: errors.New(`net/http: HTTP/1.x transport connection broken: malformed MIME header: missing colon: "BadHeaderLine"`)}, false, false},
		{"200", throttle.Outcome{Status: 200}, false, false},
		{"404", throttle.Outcome{Status: 404}, false, false},
		{"500", throttle.Outcome{Status: 500}, false, false},
		{"no such host", throttle.Outcome{Err: &net.DNSError{Err: "no such host", Name: "x.test", IsNotFound: true}}, false, false},
		{"canceled by us", throttle.Outcome{Err: context.Canceled}, false, false},
		{"503 on the last attempt", throttle.Outcome{Status: 503, Attempt: 2}, false, true},
		{"503 past the last attempt", throttle.Outcome{Status: 503, Attempt: 7}, false, true},
		{"503 on attempt 1 of 2", throttle.Outcome{Status: 503, Attempt: 1}, true, true},
	}
	for _, tt := range tests {
		synctest.Test(t, func(t *testing.T) {
			th := throttle.New(fixed(throttle.Settings{MaxRetries: 2}))
			d := acquire(t, th, host).Done(tt.o)
			if d.Retry != tt.retry {
				t.Errorf("%s: retry %v, want %v", tt.name, d.Retry, tt.retry)
			}
			if backedOff := th.Stats()[0].BackoffLevel > 0; backedOff != tt.backoff {
				t.Errorf("%s: backed off %v, want %v", tt.name, backedOff, tt.backoff)
			}
			if !d.Retry && d.After != 0 {
				t.Errorf("%s: after %v without a retry", tt.name, d.After)
			}
		})
	}
}

// respond makes one request to host that answers with status after latency.
func respond(t *testing.T, th *throttle.Throttle, status int, latency time.Duration) {
	t.Helper()
	p := acquire(t, th, host)
	time.Sleep(latency)
	p.Done(throttle.Outcome{Status: status, Latency: latency})
}

func TestAdaptiveSlowdownAndRecovery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const delay, inFlight = 100 * time.Millisecond, 4
		th := throttle.New(fixed(throttle.Settings{Adaptive: true, CrawlDelay: delay, MaxInFlight: inFlight}))
		check := func(phase string) throttle.HostStats {
			t.Helper()
			st := th.Stats()[0]
			if st.Gap < delay || st.MaxInFlight < 1 || st.MaxInFlight > inFlight {
				t.Fatalf("%s: gap %v, in-flight cap %d; beyond the configured %v and %d", phase, st.Gap, st.MaxInFlight, delay, inFlight)
			}
			return st
		}

		for range 30 {
			respond(t, th, 200, 20*time.Millisecond)
			check("healthy")
		}
		if st := check("healthy"); st.Gap != delay || st.MaxInFlight != inFlight {
			t.Fatalf("healthy host slowed down: gap %v, cap %d", st.Gap, st.MaxInFlight)
		}

		for range 30 {
			respond(t, th, 200, 2*time.Second)
			check("slow")
		}
		slow := check("slow")
		if slow.Gap < 400*time.Millisecond || slow.MaxInFlight != 1 {
			t.Fatalf("slow host not slowed: gap %v, cap %d", slow.Gap, slow.MaxInFlight)
		}
		p := acquire(t, th, host)
		if q, _, _ := th.Reserve(host); q != nil {
			t.Fatal("a second request in flight while the adaptive cap is 1")
		}
		p.Done(throttle.Outcome{Status: 503, Latency: time.Millisecond})
		if st := check("failure"); st.Gap < slow.Gap {
			t.Fatalf("a failure shortened the gap from %v to %v", slow.Gap, st.Gap)
		}

		for range 60 {
			respond(t, th, 200, 20*time.Millisecond)
			check("recovering")
		}
		if st := check("recovered"); st.Gap != delay || st.MaxInFlight != inFlight {
			t.Fatalf("recovered host still slowed: gap %v, cap %d", st.Gap, st.MaxInFlight)
		}
	})
}

func TestSlowHostWithoutAdaptive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{MaxInFlight: 4}))
		for range 10 {
			respond(t, th, 200, 20*time.Millisecond)
		}
		for range 10 {
			respond(t, th, 200, 5*time.Second)
		}
		if st := th.Stats()[0]; st.Gap != 0 || st.MaxInFlight != 4 {
			t.Errorf("not adaptive, yet gap %v and cap %d", st.Gap, st.MaxInFlight)
		}
	})
}

// One URL asking for a pause longer than MaxPause holds back that URL, not
// the host (issue 12: a 429 with Retry-After 3600 on one page once deferred
// a whole site); a second URL doing the same, or robots.txt (no key), shows
// the pause is the host's, and the host is deferred.
func TestLongPauseHoldsTheURLUnlessHostWide(t *testing.T) {
	const a, b = "http://h.test/search?q=1", "http://h.test/download/x"
	tests := []struct {
		name     string
		keys     []string // requests answered 429 Retry-After 3600, in order
		hostWide bool
	}{
		{"one URL", []string{a}, false},
		{"the same URL twice", []string{a, a}, false},
		{"two distinct URLs", []string{a, b}, true},
		{"robots.txt", []string{""}, true},
	}
	for _, tt := range tests {
		synctest.Test(t, func(t *testing.T) {
			th := throttle.New(fixed(throttle.Settings{MaxPause: 10 * time.Minute, MaxRetries: 2}))
			th.StartPass(1)
			start := time.Now()
			for _, k := range tt.keys {
				if d := acquire(t, th, host).Done(throttle.Outcome{Status: 429, RetryAfter: "3600", Key: k, Attempt: 5}); !d.Retry || d.After != 0 {
					t.Fatalf("%s: Done = %+v; want a retry now, so that the URL is settled as deferred", tt.name, d)
				}
			}
			_, _, err := th.Reserve(host)
			if got := errors.Is(err, throttle.ErrDeferred); got != tt.hostWide {
				t.Fatalf("%s: host deferred %v (err %v), want %v", tt.name, got, err, tt.hostWide)
			}
			if until, ok := th.Deferred(host, "http://h.test/other"); ok != tt.hostWide {
				t.Errorf("%s: another URL deferred %v (until %v), want %v", tt.name, ok, until, tt.hostWide)
			}
			if tt.keys[0] != "" {
				until, ok := th.Deferred(host, tt.keys[0])
				if !ok || !until.Equal(start.Add(time.Hour)) {
					t.Errorf("%s: the URL that asked: deferred %v until %v, want until %v", tt.name, ok, until, start.Add(time.Hour))
				}
			}
		})
	}
}

// Two endpoints behind their own long rate limit, on a host that serves
// its other pages meanwhile, hold back themselves, not the host (qa8 R1):
// a normal answer to a request sent after the first long pause, or still
// out when the second comes, says the pauses are the URLs'. While such a
// request is out, the host gets no new one; when none of them is served,
// the pause is the host's, and says which URLs asked.
func TestLongPausesOfTwoURLsOnAHostThatServes(t *testing.T) {
	const a, b, c = "http://h.test/search?q=1", "http://h.test/download/x", "http://h.test/page"
	long := func(k string) throttle.Outcome {
		return throttle.Outcome{Status: 429, RetryAfter: "86400", Key: k, Attempt: 5}
	}
	tests := []struct {
		name     string
		last     int // status of the request still out when b is refused; 0: none is out
		before   bool
		hostWide bool
	}{
		{"served in between", 0, true, false},
		{"served after, sent before", 200, false, false},
		{"refused after, sent before", 503, false, true},
		{"nothing served", 0, false, true},
	}
	for _, tt := range tests {
		synctest.Test(t, func(t *testing.T) {
			th := throttle.New(fixed(throttle.Settings{MaxPause: 10 * time.Minute, MaxRetries: 2}))
			th.StartPass(1)
			acquire(t, th, host).Done(long(a))
			if tt.before {
				acquire(t, th, host).Done(throttle.Outcome{Status: 200, Key: c})
			}
			pb := acquire(t, th, host)
			var out *throttle.Permit
			if tt.last != 0 {
				out = acquire(t, th, host)
			}
			pb.Done(long(b))
			if out != nil {
				if p, wait, err := th.Reserve(host); p != nil || err != nil || wait <= 0 {
					t.Fatalf("%s: while the answer that decides is out: permit %v, wait %v, err %v; want a wait", tt.name, p != nil, wait, err)
				}
				out.Done(throttle.Outcome{Status: tt.last, Key: c})
			}
			_, _, err := th.Reserve(host)
			if got := errors.Is(err, throttle.ErrDeferred); got != tt.hostWide {
				t.Fatalf("%s: host deferred %v (err %v), want %v", tt.name, got, err, tt.hostWide)
			}
			for _, k := range []string{a, b} {
				if _, ok := th.Deferred(host, k); !ok {
					t.Errorf("%s: %s not held back", tt.name, k)
				}
			}
			own, from := th.PausedBy(host, "http://h.test/other")
			if want := tt.hostWide; own || (len(from) == 2) != want {
				t.Errorf("%s: another URL: own %v, from %v", tt.name, own, from)
			}
			if own, _ := th.PausedBy(host, a); !own {
				t.Errorf("%s: %s's pause is not its own", tt.name, a)
			}
		})
	}
}

// An absurd Retry-After (a year 9999, more seconds than fit) holds for
// MaxRetryAfter, not for centuries in the state kept for the next runs.
func TestRetryAfterBeyondBound(t *testing.T) {
	for _, ra := range []string{"99999999999999999999", "Fri, 31 Dec 9999 23:59:59 GMT", "31536000"} {
		synctest.Test(t, func(t *testing.T) {
			th := throttle.New(fixed(throttle.Settings{MaxPause: 10 * time.Minute, MaxRetries: 2}))
			th.StartPass(1)
			const u = "http://h.test/x"
			acquire(t, th, host).Done(throttle.Outcome{Status: 429, RetryAfter: ra, Key: u})
			until, ok := th.Deferred(host, u)
			if !ok || !until.Equal(time.Now().Add(throttle.MaxRetryAfter)) {
				t.Errorf("Retry-After %s: held %v until %v, want %v", ra, ok, until, time.Now().Add(throttle.MaxRetryAfter))
			}
		})
	}
}

// A held URL's pause outlives a restart and the pass; once no more than
// MaxPause of it is left, the crawl waits for it like any pause.
func TestHeldURLSurvivesRestartAndEnds(t *testing.T) {
	const u = "http://h.test/slow"
	synctest.Test(t, func(t *testing.T) {
		cfg := fixed(throttle.Settings{MaxPause: 10 * time.Minute, MaxRetries: 2})
		th := throttle.New(cfg)
		th.StartPass(1)
		acquire(t, th, host).Done(throttle.Outcome{Status: 429, RetryAfter: "3600", Key: u})
		saved, err := th.ExportState(host)
		if err != nil {
			t.Fatal(err)
		}
		th = restart(t, th, cfg, 2)
		if th.Expired(saved) {
			t.Fatal("state holding a URL's pause counted as expired")
		}
		if _, ok := th.Deferred(host, u); !ok {
			t.Fatal("the hold was lost across a restart and a new pass")
		}
		time.Sleep(55 * time.Minute)
		if _, ok := th.Deferred(host, u); ok {
			t.Fatal("5 minutes left with a 10 minute cap: the crawl should wait, not defer")
		}
		mustWait(t, th, host, 5*time.Minute)
		time.Sleep(5 * time.Minute)
		if _, ok := th.Deferred(host, u); ok {
			t.Fatal("held after the pause ended")
		}
		if p, _, _ := th.Reserve(host); p == nil {
			t.Fatal("host still paused after the pause ended")
		}
	})
}

// QA4 F1: a resend under a permit is one more request to the host: it
// waits for the window (the try before it is over), and past the quota
// it is refused.
func TestResendTakesTheHostsLimits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{WindowMax: 1, Window: 10 * time.Second, MaxInFlight: 1, QuotaRequests: 2}))
		p := acquire(t, th, host)
		time.Sleep(time.Second)
		// The first try failed now: it counts until 10 s from now.
		if wait, err := p.Resend(); wait != 10*time.Second || err != nil {
			t.Fatalf("Resend = %v, %v; want a wait of 10s", wait, err)
		}
		time.Sleep(10 * time.Second)
		if wait, err := p.Resend(); wait != 0 || err != nil {
			t.Fatalf("Resend after the wait = %v, %v; want sent", wait, err)
		}
		time.Sleep(10 * time.Second)
		if _, err := p.Resend(); !errors.Is(err, throttle.ErrQuota) {
			t.Fatalf("Resend past the quota: %v, want ErrQuota", err)
		}
		p.Done(throttle.Outcome{Status: 200})
	})
}

// A refused connection from a host that answered earlier in the pass is a
// server going down or restarting, not a dead link (qa6 Q2): it backs off
// like a reset, once per round of requests, and after as many rounds as a
// URL has tries the host is down: Reserve says ErrDown (a deferral) and
// Down says since when, after how many answers. An answer brings it back;
// the answers count survives a restart within the pass.
func TestRefusedAfterAnswersIsAHostGoingDown(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{MaxRetries: 2}))
		th.StartPass(1)
		for range 3 {
			acquire(t, th, host).Done(throttle.Outcome{Status: 200})
		}
		// Two requests in flight when it dies: one round, one step.
		p1, p2 := acquire(t, th, host), acquire(t, th, host)
		if !p1.Done(throttle.Outcome{Err: refused}).Retry {
			t.Fatal("a refusal after answers was not retried")
		}
		p2.Done(throttle.Outcome{Err: refused})
		if lvl := th.Stats()[0].BackoffLevel; lvl != 1 {
			t.Errorf("backoff level %d after one round of refusals, want 1", lvl)
		}
		if _, down := th.Down(host); down {
			t.Fatal("down after one round of refusals; a URL has 3 tries")
		}
		acquire(t, th, host).Done(throttle.Outcome{Err: refused, Attempt: 1})
		retry := acquire(t, th, host).Done(throttle.Outcome{Err: refused, Attempt: 2}).Retry
		d, down := th.Down(host)
		since := d.Since
		if !down || !retry || d.Answered != 3 || since.IsZero() || d.Host != host || d.How != "refused connections" {
			t.Fatalf("after three rounds of refusals: down %v %+v, retry %v; want down after 3 answers, refused connections, retried (deferred)", down, d, retry)
		}
		_, _, err := th.Reserve(host)
		if !errors.Is(err, throttle.ErrDown) || !errors.Is(err, throttle.ErrDeferred) {
			t.Errorf("Reserve of a host down: %v, want ErrDown, a deferral", err)
		}
		if at, held := th.Deferred(host, "http://"+host+"/x"); !held || !at.Equal(since) {
			t.Errorf("Deferred = %v, %v; want held since %v", at, held, since)
		}
		if lvl := th.Stats()[0].BackoffLevel; lvl != 0 {
			t.Errorf("backoff level %d once down, want 0: the next run need not wait for a port nobody listens on", lvl)
		}

		// A resumed run (a new throttle, the state saved) still knows the
		// host answered in this pass, and is not down until it refuses.
		b, err := th.ExportState(host)
		if err != nil {
			t.Fatal(err)
		}
		again := throttle.New(fixed(throttle.Settings{MaxRetries: 2}))
		again.StartPass(1)
		if err := again.ImportState(host, b); err != nil {
			t.Fatal(err)
		}
		if _, down := again.Down(host); down {
			t.Errorf("resumed: down; want not down until it refuses")
		}
		if !acquire(t, again, host).Done(throttle.Outcome{Err: refused}).Retry {
			t.Error("resumed: a refusal of a host that answered in this pass was not retried")
		}
		if again.Expired(b) {
			t.Error("the answers of the running pass were expired")
		}
		// A new pass starts clean: a refusal there is a dead link.
		again.StartPass(2)
		if acquire(t, again, host).Done(throttle.Outcome{Err: refused}).Retry {
			t.Error("a refusal in a pass where the host never answered was retried")
		}
	})
}

// TestRefusedByAHostThatNeverAnsweredSharingAKey: with hosts grouped by
// domain (--group-hosts domain) one limiter serves every host:port of the
// domain, but "it answered, so a refusal is the server going down" is a
// fact about one host:port. A closed port beside a host that answers is a
// dead link, not a host down: before, its refusals were retried, counted
// as the group stopping answering, and the link was reported "answered 12
// requests of this pass, then refused …: not checked, not a dead link"
// (transient, exit 0), while the site's own remaining URLs were held back.
func TestRefusedByAHostThatNeverAnsweredSharingAKey(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	const www, closed = "www.example.com:443", "old.example.com:8081"
	synctest.Test(t, func(t *testing.T) {
		cfg := fixed(throttle.Settings{MaxRetries: 2})
		cfg.Key = throttle.DomainKey
		th := throttle.New(cfg)
		th.StartPass(1)
		for range 3 {
			acquire(t, th, www).Done(throttle.Outcome{Status: 200})
		}
		for attempt := range 3 {
			if acquire(t, th, closed).Done(throttle.Outcome{Err: refused, Attempt: attempt}).Retry {
				t.Fatalf("try %d: a refusal by %s, which never answered, was retried because %s answered", attempt+1, closed, www)
			}
		}
		for _, h := range []string{www, closed} {
			if _, down := th.Down(h); down {
				t.Errorf("%s down after refusals by %s, which never answered", h, closed)
			}
		}
		// The host that answered is still one whose refusal is a restart.
		if !acquire(t, th, www).Done(throttle.Outcome{Err: refused}).Retry {
			t.Errorf("a refusal by %s after its answers was not retried", www)
		}
	})
}

// Decision.Paused tells, once per pause, that an answer paused the host,
// until when and why: -v said nothing while a host sat minutes on a
// backoff (qa7 Q2). The answers of one round, each lengthening the same
// pause a little, tell of it once; the next round's step is a new pause.
func TestPausedToldOncePerPause(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{MaxRetries: 100}))
		th.StartPass(1)
		acquire(t, th, host).Done(throttle.Outcome{Status: 200})
		// One round of three resets: one pause, told once.
		ps := []*throttle.Permit{acquire(t, th, host), acquire(t, th, host), acquire(t, th, host)}
		var told []throttle.Decision
		for _, p := range ps {
			if d := p.Done(throttle.Outcome{Err: reset}); d.Paused != "" {
				told = append(told, d)
			}
		}
		if len(told) != 1 {
			t.Fatalf("a round of 3 resets told of %d pauses, want 1: %+v", len(told), told)
		}
		d := told[0]
		if !d.PausedUntil.Equal(time.Now().Add(d.After)) || !strings.Contains(d.Paused, "until "+d.PausedUntil.Round(time.Second).Format(time.TimeOnly)) ||
			!strings.Contains(d.Paused, "lost its connection") {
			t.Errorf("Paused %q until %v (after %v); want until when, and that a request lost its connection", d.Paused, d.PausedUntil, d.After)
		}
		// The next round, after the pause: a new, longer one, told again.
		time.Sleep(d.After)
		if d2 := acquire(t, th, host).Done(throttle.Outcome{Err: os.ErrDeadlineExceeded}); d2.Paused == "" || !strings.Contains(d2.Paused, "timed out") {
			t.Errorf("the next round's step: Paused %q, want a new pause told, a request timed out", d2.Paused)
		}
		// A Retry-After the crawl waits for, host-wide.
		time.Sleep(10 * time.Minute)
		acquire(t, th, host).Done(throttle.Outcome{Status: 200})
		d3 := acquire(t, th, host).Done(throttle.Outcome{Status: 503, RetryAfter: "30"})
		if !strings.Contains(d3.Paused, "paused for 30s") || !strings.Contains(d3.Paused, "it answered 503 with Retry-After: 30") {
			t.Errorf("Retry-After 30: Paused %q", d3.Paused)
		}
		// A normal answer changes nothing worth telling.
		time.Sleep(time.Minute)
		if d := acquire(t, th, host).Done(throttle.Outcome{Status: 200}); d.Paused != "" {
			t.Errorf("a normal answer told %q", d.Paused)
		}
	})
	// A pause past MaxPause holds the host's URLs back: told, with why.
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{MaxPause: time.Minute, MaxRetries: 1}))
		th.StartPass(1)
		d := acquire(t, th, host).Done(throttle.Outcome{Status: 503, RetryAfter: "3600"})
		if !strings.Contains(d.Paused, "paused for 1h") || !strings.Contains(d.Paused, "no pause longer than 1m") || !strings.Contains(d.Paused, "held back") {
			t.Errorf("a pause past MaxPause told %q", d.Paused)
		}
	})
	// A host that stops answering is told of once, with no end.
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	synctest.Test(t, func(t *testing.T) {
		th := throttle.New(fixed(throttle.Settings{MaxRetries: 2}))
		th.StartPass(1)
		acquire(t, th, host).Done(throttle.Outcome{Status: 200})
		var down []string
		for attempt := range 5 {
			p, _, err := th.Reserve(host)
			if p == nil {
				if !errors.Is(err, throttle.ErrDown) {
					t.Fatalf("Reserve: %v", err)
				}
				break
			}
			d := p.Done(throttle.Outcome{Err: refused, Attempt: attempt})
			if strings.Contains(d.Paused, "stopped answering") && d.PausedUntil.IsZero() {
				down = append(down, d.Paused)
			}
			time.Sleep(d.After)
		}
		if len(down) != 1 || !strings.Contains(down[0], "refused connections") {
			t.Errorf("a host that stopped answering told %q, want it once, saying how", down)
		}
	})
}
