package throttle

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	// backoffBase and backoffMax bound the backoff steps: 1 s, 2 s, 4 s …
	// up to 5 minutes (and never beyond the host's MaxPause).
	backoffBase = time.Second
	backoffMax  = 5 * time.Minute
	// maxRetryAfter bounds a Retry-After, in seconds: a longer one (a
	// year 9999, 99999999999999999999) is no time anyone will wait for,
	// and kept in full it held a host, in the state saved for the next
	// runs, until 2319 (qa8 R1). The hold is kept for MaxRetryAfter, and
	// the report says the server asked for at least that.
	maxRetryAfter = 7 * 24 * 3600
	// MaxRetryAfter is maxRetryAfter as a Duration.
	MaxRetryAfter = maxRetryAfter * time.Second
	// MaxComebacks is how often one URL may be sent away with a
	// Retry-After the crawl waits for and come back without spending a
	// retry (see Decision.Comeback): a server that honestly says "in 3 s"
	// is not failing, but one URL refused this often is, whatever it says.
	MaxComebacks = 10
	// refusingBudget bounds, when MaxPause sets no bound of its own, how
	// long a host may answer nothing but 429 and 503 before it is deferred,
	// and how long one URL's comebacks may wait in all (see
	// limiter.refusing).
	refusingBudget = 10 * time.Minute
	// maxSlow bounds the gap between request starts that pushbacks build
	// up (see limiter.slowDown).
	maxSlow = time.Minute
	// slowRecovery is the share of the pushback gap each normal answer
	// takes off: the pace comes back slowly, as TCP's does after a loss.
	slowRecovery = 16
	// floorRecovery is the share of the floor, the gap a host's limit
	// was found to allow (see limiter.slowDown), each normal answer takes
	// off: far slower, so that a pace found to be refused is tried again
	// only after many pages, not every few.
	floorRecovery = 256
	// trialRunMin and trialRunMax bound how many new URLs in a row a
	// halved pace must serve to show it was worth it (see paceTrial.run),
	// shareWindow how many new URLs shareCount speaks of.
	trialRunMin, trialRunMax = 4, 16
	shareWindow              = 64
	// sharePrior is how many new URLs refused at the host's own share
	// (see shareCount.since) the count starts with.
	sharePrior = 32
)

// Permit is the right to make one request to a host. Done must be called
// exactly once when the request is over (extra calls are ignored).
type Permit struct {
	t     *Throttle
	l     *limiter
	read  int64 // body bytes counted through Body; guarded by l.mu
	done  bool  // guarded by l.mu
	sends int   // requests sent under it and not over, resends included; guarded by l.mu
	// resending: the last send is over and a resend waits for its turn.
	resending bool
	// host is the host:port the permit was reserved for: with grouped
	// hosts (Config.Key) the limiter serves several, and whether a
	// refused connection is a server going down depends on whether that
	// one answered (see limiter.answered).
	host string
	// admitted is when the permit's request was let go, to tell the
	// answers to requests sent before the host was last slowed down from
	// the ones sent after (see limiter.slowDown).
	admitted time.Time
	// seq numbers the request among the host's (see limiter.pushback).
	seq int64
}

// Outcome is what the throttle learns from one finished request.
type Outcome struct {
	Status     int           // HTTP status; 0 when there was no response
	RetryAfter string        // raw Retry-After header: seconds or an HTTP-date
	Err        error         // network error (timeout, reset, refused …) or nil
	Bytes      int64         // body bytes read; those already read through Body are not counted twice
	Latency    time.Duration // time to first byte
	Attempt    int           // retries of this URL made before this request (0 on the first try)
	// Comebacks are this URL's earlier comebacks: retries the server
	// asked for with a Retry-After, which spent none (see Decision.Comeback).
	Comebacks Comebacks
	// Key names what was requested (the URL). A pause longer than MaxPause
	// asked for by one key holds back that key alone (see pushback); an
	// empty key speaks for the whole host, as robots.txt does.
	Key string
	// Abandoned: the crawl stopped (Ctrl-C, --max-time) before the answer
	// was in. The server may go on serving the request as after a kill, so
	// it is kept as an orphan for RequestLife after its start, and the next
	// run counts it in flight (see limiter.orphans).
	Abandoned bool
}

// Done releases the permit's in-flight slot and learns from the outcome:
//
//   - 429/503 with a usable Retry-After pauses the host until then; a pause
//     longer than MaxPause holds back the URL that asked for it, and defers
//     the whole host to a later pass only when the pause is evidently
//     host-wide (see pushback).
//   - 429/503 without one, timeouts and connection errors back the host off
//     exponentially with jitter; any response below 500 (other than 429)
//     resets the backoff level.
//   - Every 429, and 503 with Retry-After, that speaks for the host also
//     slows its pace: the gap
//     between request starts doubles (at most once for the requests sent
//     before the last slowdown) and shrinks again slowly with each normal
//     answer (see slowDown).
//   - The latency feeds the adaptive slowdown.
//   - A refused connection from a host that answered earlier in the pass
//     backs off like a reset; when a URL's last try is refused too, the
//     host stopped answering (see Throttle.Down).
//
// What it decided comes back in one Decision, taken under the one lock
// Done holds: a request locks its host once to settle.
func (p *Permit) Done(o Outcome) (d Decision) {
	t, l := p.t, p.l
	l.mu.Lock()
	if p.done {
		l.mu.Unlock()
		return Decision{}
	}
	p.done = true
	l.changed()
	if extra := o.Bytes - p.read; extra > 0 {
		l.usedBytes += extra
		l.bytesTotal += extra
	}
	d = l.learn(t.now, p.host, o, p.admitted, p.seq)
	if e, ok := l.robots[p.host]; ok && e.robots.noServer && o.Status > 0 {
		// The host answers now: its robots.txt, refused before, is asked
		// again before its next URL (see NoServerRobots).
		delete(l.robots, p.host)
	}
	if l.set.WindowMax > 0 {
		l.starts.over(t.now(), p.sends)
	}
	l.inFlight--
	if i := slices.Index(l.openAt, p.admitted); i >= 0 {
		l.openAt = slices.Delete(l.openAt, i, i+1)
		if o.Abandoned && l.life > 0 {
			at, _ := slices.BinarySearchFunc(l.orphans, p.admitted, time.Time.Compare)
			l.orphans = slices.Insert(l.orphans, at, p.admitted)
		}
	}
	if l.judging && l.inFlight == 0 {
		l.judge(t.now())
	}
	l.mu.Unlock()
	t.signal(l)
	return d
}

// Decision is what Done decided from a request's outcome.
type Decision struct {
	// Retry says whether to try this URL again: after a 429, a 503, a
	// timeout or a connection error while Attempt < MaxRetries, or always
	// when the host has just been deferred or has stopped answering
	// (Reserve then answers ErrDeferred, and deferral is not a failure),
	// or when this URL has just been held back, or when the server said
	// when to come back and the crawl waits for it (see Comeback).
	Retry bool
	// After is how long the host's pause or backoff still runs, the
	// earliest moment Reserve can say yes.
	After time.Duration
	// Comeback says, with Retry, whether the retry is one the server asked
	// for, and with what Retry-After (0: it is not; "now", a Retry-After of
	// 0 or a past date, is retryNow): a 429 or 503 whose
	// Retry-After the crawl waits for is "come back at T", not a failed
	// try, so the caller does not count it against the URL's retries but
	// adds it to the URL's Comebacks, passed in Outcome.Comebacks. It stays
	// bounded: at most MaxComebacks per URL, whose Retry-Afters add up to
	// no more than MaxPause (refusingBudget when MaxPause is 0); past
	// either, the answer spends a retry like any failure. And a host that
	// has answered nothing but 429 and 503 with Retry-After for longer
	// than that is deferred, as for a pause past MaxPause (see
	// Throttle.Refusing).
	Comeback time.Duration
	// Paused says, once per pause, that the answer paused the host until
	// PausedUntil and why, in words for the person running the crawl: a
	// Retry-After the crawl waits for, or a step of the backoff after a
	// refusal without one or after a request that failed (see tellPause);
	// or, with PausedUntil zero, that the host stopped answering. A host
	// that sits idle for minutes must not look like a crawl that hangs
	// (qa7 Q2). "" when it paused nothing not told of already.
	Paused      string
	PausedUntil time.Time
	// Hold, with Retry, says the URL waits this long on its own before it
	// is asked again, whatever its host's pause: a URL refused again when
	// it came back as the Retry-After it was given said is refused for
	// itself (a search behind its own limit) or the limiter's Retry-After
	// was too short. While the host served nothing sent since its last
	// refusal, or refused other requests meanwhile, the host is paused as
	// ever, and the URL waits twice its Retry-After (2 s at least), so that
	// the host's next URLs, sent meanwhile, tell which it is. When they were served and no other URL
	// was refused, its refusals are its own (see refusedAgain): it waits
	// its Retry-After alone, its host neither paused nor slowed down for
	// it, and each such refusal spends one of its retries. Asked first
	// after each pause, it was all its host was sent through its ten
	// comebacks, and one such search held the rest of its site 39 s
	// (qa11 Q7).
	Hold time.Duration
	// Paced says what the answer did to the host's pace, in words for the
	// person running the crawl: that it slowed the host down and why, or
	// that it gave a slowdown up because the host's refusals do not come
	// from the pace (see slowDown); "" when it changed nothing worth
	// saying. A crawl that waits minutes on a host must say so, not look
	// hung.
	Paced string
}

// Comebacks are what one URL's comebacks (see Decision.Comeback) have used.
type Comebacks struct {
	N      int           // how many
	Waited time.Duration // their Retry-Afters added up
}

// Add counts one more comeback, with the Retry-After it was given.
func (c *Comebacks) Add(retryAfter time.Duration) {
	c.N++
	c.Waited += retryAfter
}

// waited says whether the URL came back after waiting: "come back now"
// (Retry-After: 0) each time is no wait, and a refusal after it no sign
// that the pace is too fast. A server refusing each URL's first two
// requests with "Retry-After: 0" looked like a limiter refusing
// comebacks, and kept its slowdown (qa8 P5).
func (c Comebacks) waited() bool {
	return c.Waited > time.Duration(c.N)*retryNow
}

// Tries is how many requests the one this permit is for may take, for a
// URL tried attempt times before: 1 + the host's retries left. An HTTP
// client that sends a request again on its own (net/http does, on a
// kept-alive connection that failed) spends one of them each time.
func (p *Permit) Tries(attempt int) int {
	return 1 + max(p.l.set.MaxRetries-attempt, 0)
}

// Resend asks to send the permit's request once more, as an HTTP client
// does on its own when a kept-alive connection fails: the server may have
// read the first one, so the resend is one more request to the host. It
// never blocks: the request before is over (it failed), and the resend takes a token, a place in the window, the gap and a
// request of the quota, as Reserve does (the permit keeps its in-flight
// slot), or answers how long to wait before asking again; ErrQuota and
// ErrDeferred when the host takes no more requests now.
func (p *Permit) Resend() (time.Duration, error) {
	t, l := p.t, p.l
	now := t.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case p.done:
		return 0, errors.New("resend under a permit that is done")
	case l.down:
		return 0, ErrDown
	case l.isDeferred(now):
		return 0, ErrDeferred
	case l.overQuota():
		return 0, ErrQuota
	}
	if !p.resending && p.sends > 0 && l.set.WindowMax > 0 {
		// The request before failed, so it is over now.
		l.starts.over(now, 1)
		p.sends--
	}
	p.resending = true
	if wait := l.sendWait(now); wait > 0 {
		return wait, nil
	}
	l.send(now)
	p.sends++
	p.resending = false
	return 0, nil
}

// outcomeClass is how an outcome reflects on the host.
type outcomeClass int

const (
	classNeutral  outcomeClass = iota // says nothing about the host's load (500, DNS, refused, our own cancel)
	classOK                           // the host answered normally
	classPushback                     // 429 or 503: the host asks us to slow down
	classFailure                      // timeout, reset, refused: the host may be overloaded
	classOwn                          // a 429 or 503 one URL gets for itself (see refusedAgain): not the host's
)

func classify(o Outcome) outcomeClass {
	if o.Err != nil {
		var dns *net.DNSError
		switch {
		case errors.Is(o.Err, context.Canceled):
			return classNeutral
		case errors.As(o.Err, &dns) && dns.IsNotFound:
			return classNeutral
		case notLoad(o.Err):
			return classNeutral
		}
		return classFailure
	}
	switch {
	case o.Status == http.StatusTooManyRequests || o.Status == http.StatusServiceUnavailable:
		return classPushback
	case o.Status > 0 && o.Status < 500:
		return classOK
	}
	return classNeutral
}

// notLoad says whether a request failed in a way that says nothing about
// the host's load: nothing listens on the port, the address is not one,
// the server refused the TLS handshake at once or does not speak TLS, its
// certificate is not one to trust (self-signed, expired, for another
// name), or it answered a redirect whose Location is not a URL. Backing
// off would only make the pass slower (three links to a closed port once
// cost 51 s, a self-signed start page 24 s for six handshakes, qa5 N7),
// and trying again cannot succeed. Nor can it for a response that cannot
// be read as sent: a Content-Length that is not a number, headers past
// the client's limit (20 MB of them were asked for three times, qa9 T4),
// or a header line that is not "Name: value".
func notLoad(err error) bool {
	var addr *net.AddrError
	var op *net.OpError
	var header tls.RecordHeaderError
	var cert *tls.CertificateVerificationError
	msg := err.Error()
	return errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &addr) ||
		errors.As(err, &header) || errors.As(err, &op) && op.Op == "remote error" ||
		errors.As(err, &cert) ||
		strings.Contains(msg, "server gave HTTP response to HTTPS client") ||
		strings.Contains(msg, "failed to parse Location header") ||
		strings.Contains(msg, "bad Content-Length") || strings.Contains(msg, "response headers exceeded") ||
		strings.Contains(msg, "malformed MIME header")
}

// learn updates the host from one outcome and makes the retry decision;
// comeback says the retry is one the server asked for (see
// Decision.Comeback). host is the host:port the request went to, admitted
// when it was let go. The clock is read only when the answer depends on
// it, which keeps a plain success cheap.
func (l *limiter) learn(clock func() time.Time, host string, o Outcome, admitted time.Time, seq int64) Decision {
	var paced string
	class := classify(o)
	refused := o.Err != nil && errors.Is(o.Err, syscall.ECONNREFUSED) && l.answeredFrom(host, o.Key)
	if refused {
		// Nothing listens any more where the host answered a moment
		// ago: it is going down or restarting, which a retry after a
		// backoff may well see over, as after a reset.
		class = classFailure
	}
	var now time.Time
	if class == classPushback || class == classFailure || l.set.Adaptive {
		now = clock()
	}
	if o.Status > 0 {
		if class != classPushback {
			delete(l.refusedAt, o.Key)
		}
		if l.answered == nil {
			l.answered = make(map[string]int64)
		}
		l.answered[host]++
		l.silence, l.down, l.saidDown = silence{}, false, false
		if o.Key != "" {
			if l.answeredAt == nil {
				l.answeredAt = make(map[string]bool)
			}
			if origin := originOf(o.Key); !l.answeredAt[origin] {
				l.answeredAt[strings.Clone(origin)] = true
			}
		}
	}
	var why string // what paused the host, if this answer did: see Decision.Paused
	wasDeferred := l.deferred
	newRound := true
	if class == classFailure && o.Status == 0 && l.answered[host] > 0 {
		// The requests sent before the last failure learn nothing new
		// from theirs, as in slowDown: one count, and one step of
		// backoff, per round. Each of them stepping it up once held the
		// next run of a site of 30 pages 90 s for nothing.
		newRound = l.silence.fail(now, admitted, host, o.Key, o.Err) && !l.down
		// A URL's last try refused is the host down too, whatever the
		// rounds, when its origin answered this run: nothing listens on
		// the port any more, which is never about one URL, and the URL
		// would otherwise end a dead link beside the host's held-back ones.
		if l.silence.over(l.set.MaxRetries, now) || refused && o.Attempt >= l.set.MaxRetries {
			// As many tries as a URL gets, each after a longer backoff,
			// all unanswered: the host stopped answering, and asking its
			// other URLs would only make dead links of them, or sit out
			// backoffs of minutes for each (qa6 Q2).
			// Counted per host, not per URL: a URL tried again goes to
			// the back of the queue, and every other URL would first be
			// refused once, each after a longer backoff. Nothing answers
			// there, so there is no load to spare: the next run (which
			// tries again) need not sit out the backoff.
			l.down = true
			l.backoffLevel, l.backoffUntil = 0, time.Time{}
			why = fmt.Sprintf("stopped answering: it %s since %s; its other URLs are not asked this run",
				l.silence.how, l.silence.since.Format(time.TimeOnly))
		}
	}
	var paused time.Duration // the host itself was paused this long by a Retry-After
	var hold time.Duration   // the URL alone waits this long (see Decision.Hold)
	if class == classPushback {
		// (A pause longer than MaxPause holds the URL back already, see
		// pushback.)
		if d, ok := parseRetryAfter(o.RetryAfter, now); ok && (l.set.MaxPause <= 0 || d <= l.set.MaxPause) {
			switch l.refusedAgain(o) {
			case refusedOwn:
				class, hold = classOwn, max(d, retryNow)
				paced = l.tellOwn(o, d)
				if undone := l.unslow(o.Key); undone != "" {
					paced = undone
				}
			case refusedWaited:
				hold = 2 * max(d, time.Second)
			}
		}
	}
	switch class {
	case classOK:
		l.backoffLevel = 0
		// The host serves: a long pause a URL asked for is that URL's
		// (see pushback).
		l.okSeq, l.judging = l.requests, false
		l.servedSeq = max(l.servedSeq, seq)
		l.refusingSince = time.Time{}
		l.served.count(o, admitted, l.slowedAt)
		l.cycle.served++
		if !returning(o) {
			// New URLs are served at this pace: a refusal may be about
			// the pace again, and the pace is why one was refused.
			l.perURL, l.doubt = false, 0
			l.shares.add(false)
			if l.trial.gap > 0 && l.served.first >= l.trial.run() {
				// The slower pace was worth it: more new URLs served
				// in a row than the faster one served between refusals.
				l.trial, l.proven = paceTrial{}, l.floor
			}
		}
		// Past one request per Retry-After the slowdown only kept a
		// host that refused everything from being pressed; once it
		// serves again, that is the pace it asked for (qa6 Q4: a gap of
		// a minute after a 20 s storm of "Retry-After: 1").
		if l.slowCap > 0 && l.slow > l.slowCap {
			l.slow = l.slowCap
		}
		if l.doubt == 0 && l.trial.gap == 0 {
			// In doubt, or on trial, the pace stays where it is, so
			// that the next refusal of a new URL, or its service,
			// comes at the slower pace that tells (see slowDown).
			l.slow -= l.slow / slowRecovery
			l.floor -= l.floor / floorRecovery
		}
		if l.floor < time.Millisecond {
			l.floor = 0
		}
		l.slow = max(l.slow, l.floor)
		if l.slow < time.Millisecond {
			l.slow = 0
		}
	case classPushback:
		if l.refusingSince.IsZero() {
			l.refusingSince = now
		}
		// A 503 without a Retry-After is as often one page failing as a
		// host overloaded: the backoff, which the next normal answer
		// ends, is enough for it; a 429, or a 503 that says when, is
		// the host asking for a slower pace.
		slow := o.Status == http.StatusTooManyRequests
		var ra time.Duration // the usable Retry-After, if any
		if d, ok := parseRetryAfter(o.RetryAfter, now); ok {
			// "Now" (0, a past date) is a comeback like any other, so
			// ra is kept above 0 for slowDown and Decision.Comeback.
			ra = max(d, retryNow)
			hostWide := l.pushback(now, d, o.Key, seq)
			if hostWide && !l.deferred && now.Sub(l.refusingSince) > l.waitBudget() {
				// Each pause is short, but the host has refused every
				// request for longer than the crawl waits for any one
				// pause: as good as a pause past MaxPause (see refusing).
				l.deferred = true
			}
			switch {
			case hostWide && !l.deferred:
				paused = ra
				if d > 0 {
					why = fmt.Sprintf("it answered %d with Retry-After: %s", o.Status, strings.TrimSpace(o.RetryAfter))
				}
			case hostWide && !wasDeferred && l.set.MaxPause > 0 && d > l.set.MaxPause:
				why = fmt.Sprintf("it answered %d with Retry-After: %s, and the crawl waits for no pause longer than %s: its URLs are held back for a later run",
					o.Status, strings.TrimSpace(o.RetryAfter), FormatDuration(l.set.MaxPause))
			case hostWide && !wasDeferred:
				why = fmt.Sprintf("it has refused every request for more than %s: its URLs are held back for a later run", FormatDuration(l.waitBudget()))
			}
			slow = hostWide
		} else if l.backedOffAt.IsZero() || admitted.After(l.backedOffAt) {
			// One step per round, as for a slowdown: eight refusals of
			// one burst once held a host for two minutes (qa6 Q4,
			// "Retry-After: soon").
			l.backOff(now)
			l.backedOffAt = now
			why = fmt.Sprintf("it answered %d without a usable Retry-After, so it is given a rest that doubles each round", o.Status)
		}
		if slow {
			if !returning(o) {
				l.shares.add(true)
				l.served.refuse(admitted, l.slowedAt)
			}
			if waited := o.Comebacks.waited(); !waited || o.Comebacks.N < 2 {
				before := l.paceMark(o.Key)
				paced = l.slowDown(now, admitted, o.Status, waited, ra)
				if l.slowedAt.Equal(now) && o.Key != "" && before.key != l.slowedBy.key {
					l.slowedBy = before
				}
			}
			// A URL refused again after it waited as told more than
			// once is refused for itself: the pace was halved for its
			// first such refusal, and halving for each next one took
			// two pages that always answer "429 Retry-After: 3" to
			// one request a minute, the rest of their host waiting
			// (qa10 Q7). It is still paused for, and its comebacks
			// stay bounded (see comebackAllowed).
		}
	case classFailure:
		// One step per round, as for refusals above: a broken answer
		// carries a status, which ends the silence, so newRound alone
		// took each failure of a round for a round of its own (qa7 Q2:
		// eleven failing pages held their host 224 s).
		if newRound && !l.down && (l.backedOffAt.IsZero() || admitted.After(l.backedOffAt)) {
			l.backOff(now)
			l.backedOffAt = now
			why = "a request " + failKind(o.Err).one() + ", so it is given a rest that doubles each round"
		}
	}
	said, saidUntil := l.tellPause(now, why)
	var latency time.Duration
	if o.Err == nil {
		latency = o.Latency
	}
	l.adapt.observe(now, latency, class == classPushback || class == classFailure, l.set, l.inFlight)

	switch class {
	case classOwn:
		// Not a comeback: the URL waited as told, and its server refuses
		// it still while it serves the rest. Ten comebacks of a search's
		// "Retry-After: 60" kept the pass open ten minutes for one URL.
		return l.decide(now, o, 0, hold, said, saidUntil, paced)
	case classPushback, classFailure:
		return l.decide(now, o, paused, hold, said, saidUntil, paced)
	}
	return Decision{Retry: false, After: 0, Comeback: 0, Paced: paced, Paused: said, PausedUntil: saidUntil}
}

// decide makes the retry decision for a refusal or a failure: comeback is
// the Retry-After the crawl waits for (0: none), hold the URL's own wait
// (see Decision.Hold).
func (l *limiter) decide(now time.Time, o Outcome, comeback, hold time.Duration, said string, saidUntil time.Time, paced string) Decision {
	if l.deferred || l.down || l.heldAt(o.Key, now) {
		return Decision{Retry: true, After: 0, Comeback: 0, Paced: paced, Paused: said, PausedUntil: saidUntil}
	}
	after := max(l.pausedUntil.Sub(now), l.backoffUntil.Sub(now), 0)
	if comeback > 0 && l.comebackAllowed(o.Comebacks, comeback) {
		return Decision{Retry: true, After: after, Comeback: comeback, Paced: paced, Paused: said, PausedUntil: saidUntil, Hold: hold}
	}
	if o.Attempt >= l.set.MaxRetries {
		delete(l.refusedAt, o.Key)
		return Decision{Retry: false, After: 0, Comeback: 0, Paced: paced, Paused: said, PausedUntil: saidUntil}
	}
	return Decision{Retry: true, After: after, Comeback: 0, Paced: paced, Paused: said, PausedUntil: saidUntil, Hold: hold}
}

// refusal is what a URL's refusal with a Retry-After the crawl waits for
// says of it (see refusedAgain).
type refusal uint8

const (
	refusedNew    refusal = iota // the URL's first: the host's, as ever
	refusedWaited                // again when it came back as told, not found its own: it waits twice as long (Decision.Hold)
	refusedOwn                   // again when it came back as told, the host serving the rest (Decision.Hold)
)

// refusedAgain tells a URL's refusal from the host's (see refusal), and
// counts it. A limiter that said when to come back lets a URL that came
// back then through; refused again, the URL is suspect, and waits twice
// as long (2 s at least: "come back now" is no wait), so that it takes no
// turn of the host's other URLs. When the host
// then serves a request sent after that refusal and refuses no other
// request, the next refusal is the URL's own, and so are the ones after
// it while nothing else is refused. A limiter refuses whichever requests
// find it full, and a host refusing everything serves none: their
// refusals pause the host as before. Two URLs refused every time are
// never alone, but each waiting twice its Retry-After, the rest of the
// site goes between them.
func (l *limiter) refusedAgain(o Outcome) refusal {
	l.refusals++
	if o.Key == "" {
		return refusedNew
	}
	last, seen := l.refusedAt[o.Key]
	if l.refusedAt == nil {
		l.refusedAt = make(map[string]refusedURL)
	}
	r := refusedURL{seq: l.requests, n: l.refusals}
	defer func() { l.refusedAt[o.Key] = r }()
	switch {
	case o.Comebacks.N == 0:
		return refusedNew
	case seen && last.n == l.refusals-1 && (last.own || l.servedSeq > last.seq):
		r.own = true
		return refusedOwn
	}
	return refusedWaited
}

// refusedURL is what a URL's refusals told (see refusedAgain): seq is how
// many requests had been sent to its host at the latest, n how many
// refusals the host had given then, own whether it was found to be refused
// for itself.
type refusedURL struct {
	seq, n int64
	own    bool
}

// paceMark is the pace of the host before a slowdown for a refusal of
// key: what to go back to if key turns out to be refused for itself (see
// unslow).
type paceMark struct {
	key                 string
	slow, floor, proven time.Duration
	trial               paceTrial
}

func (l *limiter) paceMark(key string) paceMark {
	return paceMark{key: key, slow: l.slow, floor: l.floor, proven: l.proven, trial: l.trial}
}

// unslow undoes the slowdowns key's refusals made, when no other URL's
// refusal slowed the host down since: key is refused for itself (see
// refusedAgain), so they were not about the pace. Kept, the pause its
// first comeback waited for counted in the floor as the host's pace, and
// the rest of the site went one page every 5 s at a limit of one a
// second (qa11 R11). It says so, or returns "".
func (l *limiter) unslow(key string) string {
	m := l.slowedBy
	if m.key != key {
		return ""
	}
	l.slowedBy = paceMark{}
	l.slow, l.floor = min(l.slow, m.slow), min(l.floor, m.floor)
	l.proven, l.trial, l.doubt = m.proven, m.trial, 0
	l.served, l.cycle = servedSince{}, cycle{}
	l.saidSlow = 0
	if l.slow < time.Millisecond {
		return "back to full pace: " + key + " is refused for itself, not for the pace"
	}
	return fmt.Sprintf("back to one request every %s: %s is refused for itself, not for the pace", l.slow.Round(time.Millisecond), key)
}

// tellOwn says, once per host, that a URL is held on its own (see
// Decision.Hold): a URL coming back for minutes must not look like a host
// paused or a crawl that hangs.
func (l *limiter) tellOwn(o Outcome, d time.Duration) string {
	if l.saidOwn {
		return ""
	}
	l.saidOwn = true
	return fmt.Sprintf("%s answers %d each time it comes back while the host serves its other URLs: it alone waits for its Retry-After (%s), the host goes on",
		o.Key, o.Status, FormatDuration(d))
}

// tellPause says, once per pause, why and until when the host is paused
// (see Decision.Paused): when why is what this answer did to it and the
// pause now ends more than a second after the last one told of, so that
// the requests of one round, whose answers each lengthen the same pause a
// little, tell of it once. A host that stopped answering is told of once.
func (l *limiter) tellPause(now time.Time, why string) (string, time.Time) {
	switch {
	case why == "":
		return "", time.Time{}
	case l.down:
		if l.saidDown {
			return "", time.Time{}
		}
		l.saidDown = true
		return why, time.Time{}
	}
	until := l.pausedUntil
	if l.backoffUntil.After(until) {
		until = l.backoffUntil
	}
	if !until.After(now) || !until.After(l.saidPause.Add(time.Second)) {
		return "", time.Time{}
	}
	l.saidPause = until
	return fmt.Sprintf("paused for %s, until %s: %s", FormatDuration(until.Sub(now).Round(time.Second)), until.Round(time.Second).Format(time.TimeOnly), why), until
}

// returning says whether o answers a URL asked before: a retry or a
// comeback, which has waited as it was told.
func returning(o Outcome) bool {
	return o.Attempt > 0 || o.Comebacks.N > 0
}

// servedSince counts the normal answers to the requests admitted since
// the host's pace last changed: to URLs asked for the first time, and to
// URLs that came back (see returning); and the URLs asked for the first
// time that were refused, with a 429 or a 503 that speaks for the host.
type servedSince struct {
	first, returning, refused int
}

// refuse counts a new URL refused, admitted when given, if it was sent
// since the pace last changed.
func (s *servedSince) refuse(admitted, since time.Time) {
	if admitted.After(since) || since.IsZero() {
		s.refused++
	}
}

// share is the share of the new URLs refused among those answered.
func (s servedSince) share() float64 {
	if s.first+s.refused == 0 {
		return 0
	}
	return float64(s.refused) / float64(s.first+s.refused)
}

// paceTrial is a halving of the pace being judged (see slowDown): gap is
// the pace that was halved, share the share of the new URLs refused at
// it, served the gap between the normal answers the host gave meanwhile
// (see cycle; 0 when unknown): a slower pace still faster than that may
// meet a limiter's refusals as often as the faster one did. floor is the
// floor to go back to if the halving fails: the last floor a halving was
// shown to be worth it at (limiter.proven); the floors measured since
// may have counted the pauses of refusals that were not about the pace as
// the host's pace.
type paceTrial struct {
	gap    time.Duration
	share  float64
	served time.Duration
	floor  time.Duration
}

// run is how many new URLs in a row the slower pace must serve to show
// that it was worth it: twice as many as the faster pace served between
// its refusals, within bounds, so that a limiter's slower pace is held
// for a few pages only.
func (p paceTrial) run() int {
	if p.share <= 0 {
		return trialRunMax
	}
	return min(max(int(math.Ceil(2/p.share)), trialRunMin), trialRunMax)
}

// shareCount counts the new URLs of a host's last requests, and how many
// of them were refused, whatever the pace: halved past shareWindow, so
// that it speaks of the last hundred or so.
type shareCount struct {
	asked, refused int
}

func (c *shareCount) add(refused bool) {
	c.asked++
	if refused {
		c.refused++
	}
	if c.asked > shareWindow {
		c.asked, c.refused = c.asked/2, c.refused/2
	}
}

// since is the share counted since the host was found to refuse base of
// the new URLs whatever the pace, as if it began with sharePrior new URLs
// refused at that share: the first refusals after it are weighed against
// it, not taken for the share (one in one), and a run of them is a limit
// (for a host refusing one in three, eleven in a row; one in ten, two).
func (c shareCount) since(base float64) float64 {
	return (float64(c.refused) + base*sharePrior) / float64(c.asked+sharePrior)
}

func (s *servedSince) count(o Outcome, admitted, since time.Time) {
	if !admitted.After(since) && !since.IsZero() {
		return
	}
	if returning(o) {
		s.returning++
	} else {
		s.first++
	}
}

// cycle measures what a host's limit allows from one slowdown to the
// next (see slowDown): the time the crawl was busy with the host, and the
// normal answers the host gave in it. Between two request starts it was
// busy while a request was out or waiting for its turn, the pause a
// Retry-After asked for included (that is the server's pace too); when
// the crawl had nothing to ask, it counts no more than the gap in force,
// so that a minute with nothing to ask does not pass for a slow limit.
type cycle struct {
	since  time.Time // the slowdown it began with; zero before the first
	busy   time.Duration
	served int
}

// admit counts the time from last, the start before, to now, a start:
// busy says a request was out or waited for its turn meanwhile.
func (c *cycle) admit(now, last time.Time, busy bool, gap time.Duration) {
	if c.since.IsZero() {
		return
	}
	if last.Before(c.since) {
		last = c.since
	}
	d := now.Sub(last)
	if !busy {
		d = min(d, gap)
	}
	c.busy += max(d, 0)
}

// end closes the cycle at now, a refusal that slows the host down again,
// with the requests since last, the latest start, still out, and begins
// the next. It returns the gap between normal answers the host's limit
// allowed in it: 0 when there is none to tell (the first slowdown, or
// nothing served since the one before).
func (c *cycle) end(now, last time.Time) time.Duration {
	var gap time.Duration
	if !c.since.IsZero() && c.served > 0 {
		if last.Before(c.since) {
			last = c.since
		}
		gap = (c.busy + max(now.Sub(last), 0)) / time.Duration(c.served)
	}
	*c = cycle{since: now}
	return gap
}

// comebackAllowed says whether a URL sent away with a Retry-After d the
// crawl waits for, after the comebacks c it had, may come back once more
// without spending a retry: a server that rate-limits honestly is
// answered by waiting, not by giving its pages up. The bounds keep one
// URL that is refused forever (a page in maintenance) from holding the
// crawl: it comes back at most MaxComebacks times and is asked to wait
// no more than waitBudget in all. A host that refuses everything is
// deferred instead (see learn and Throttle.Refusing).
func (l *limiter) comebackAllowed(c Comebacks, d time.Duration) bool {
	return c.N < MaxComebacks && c.Waited+d <= l.waitBudget()
}

// waitBudget is the most the crawl waits for the host's Retry-Afters, in
// one pause, in one URL's comebacks, or while the host refuses every
// request: MaxPause, or refusingBudget when that is 0 (no cap on one
// pause).
func (l *limiter) waitBudget() time.Duration {
	if l.set.MaxPause > 0 {
		return l.set.MaxPause
	}
	return refusingBudget
}

// slowDown halves the host's pace after a 429, or a 503 with Retry-After,
// that speaks for the host: without it, the requests queued behind a
// pause all go out the moment it ends and are refused again. The gap
// between request starts doubles from the pace of the last seconds (see
// recentStarts.pace), up to maxSlow, and each normal answer takes a
// slowRecovery-th of it off again (see learn); once the host serves
// again it is at most one request per Retry-After ra (a second when
// there is none, the shortest Retry-After there is). The requests
// already sent when the host was last slowed down learn nothing new
// from their refusals, so they do not halve it again: one cut per round
// trip, as TCP's congestion control does.
//
// The pace comes back no faster than to the floor: the gap between
// normal answers the host's limit allowed from the slowdown before to
// this one (see cycle), which only a floorRecovery-th per normal answer
// takes off. A limiter serves at most its rate from one refusal to the
// next, whatever its window, so the floor is at most its rate. Coming
// back a sixteenth per answer alone, the pace met the limit again every
// ten pages or so, for ever: 12% of the requests to a server allowing 3
// in any second refused, one every 5 s (qa8 P5).
//
// A halving is only worth its cost while the refusals come from the
// pace. They do when a URL that waited the Retry-After it was given is
// refused again (waited: a comeback), when new URLs were served at this
// pace and this one was not, and, as far as we can tell, when the host
// served nothing since the last cut (when it said when to come back;
// without a Retry-After, the backoff holds it off). They do not when the
// host refuses each URL's first request whatever the pace and serves it
// when it comes back (a cache warming up). Halving for those only spaced
// the refusals out: each new URL met its 429 alone, the gap grew to a
// minute, and a crawl checked one page of 41 in four minutes (qa6 Q4).
// But a limiter whose room went to the URLs that came back after a pause
// looks the same at one pace: the next new URL is refused. So the first
// time, the pace halves (doubt); only when a new URL is refused again at
// the slower pace (or at one request per Retry-After) while the URLs that
// came back are served is the slowdown undone, and halving stops until a
// new URL is served or a comeback refused (perURL). Undone at the first
// time, a server allowing 3 requests in any second was sent every new
// URL at full pace (qa8 P5).
//
// Nor is a halving for a new URL refused where others were served taken
// on trust: it is put on trial (paceTrial). The slower pace is held until
// it serves twice as many new URLs in a row as the faster one served
// between refusals (it was worth it), or until a new URL is refused there.
// A limit refuses fewer new URLs at half the pace once the pace is below
// it; a server that refuses some URLs whatever the pace (a CDN limiting
// its search pages, each with "Retry-After: 3") refuses as many. When the
// slower pace, no faster than the host served at the faster one, still
// sees two thirds of the faster one's share refused, the halving is
// undone (see notThePace). Halving for each such refusal took a site whose
// every third new URL was refused once to one request every 19 s, 92 URLs
// in 9 minutes (qa10 Q1). It returns what it did, in words ("" for
// nothing).
func (l *limiter) slowDown(now, admitted time.Time, status int, waited bool, ra time.Duration) string {
	if !l.slowedAt.IsZero() && !admitted.After(l.slowedAt) {
		return ""
	}
	if l.requests <= 1 && !waited {
		// The host's first request, alone (a robots.txt): there is no
		// pace yet that could be the cause, and the pause it asked for
		// is kept. Halving for it left a site of 15 URLs at a crawl
		// long after a single "429 Retry-After: 2" on its robots.txt:
		// 19 s where 2.3 s do (qa6 Q4). Refused again once it has
		// waited, it halves as any comeback does.
		return ""
	}
	l.slowCap = max(ra, time.Second)
	why := fmt.Sprintf("it answered %d", status)
	// The halving is put on trial (see paceTrial), and the floor to go
	// back to if it fails it: the last one a halving was shown to be
	// worth it at.
	trial, fell, back, proven := false, false, l.proven, false
	if l.trial.gap > 0 {
		back = l.trial.floor
	}
	switch {
	case waited && l.trial.gap > 0:
		// The pace that would tell is on trial already, and the next
		// new URL's answer there tells it: one page refused every time
		// at any pace halved it for each of its comebacks (qa10 Q7).
		return ""
	case waited:
		l.perURL, l.doubt, l.trial, l.shareBase = false, 0, paceTrial{}, 0
		proven = true
		why += " to a URL that had waited the Retry-After it was given"
	case l.perURL:
		return ""
	case l.shareBase > 0 && l.floor == 0 && l.shares.since(l.shareBase) <= l.shareBase+max(l.shareBase/2, 0.05):
		// About as many new URLs refused as it refuses whatever the
		// pace.
		return ""
	case l.trial.gap > 0:
		share := l.served.share()
		switch {
		case l.served.first == 0 && l.served.refused < 2:
			// Too soon to tell: the URLs that came back may have
			// taken a limiter's room (see doubt).
			return ""
		case share <= 0.5 && l.trial.share <= 0.5 && 3*share >= 2*l.trial.share && l.trial.served > 0 && l.slow >= l.trial.served:
			return l.notThePace(now, status, share)
		}
		trial, fell = true, 3*share < 2*l.trial.share
		why += fmt.Sprintf(" to %d of the %d new URLs asked at the slower pace", l.served.refused, l.served.first+l.served.refused)
	case l.slow > 0 && l.served.first == 0 && l.served.returning > 0:
		if l.doubt > 0 && l.slow >= min(2*l.doubt, l.slowCap, maxSlow) {
			l.perURL = true
			l.slow, l.floor, l.doubt, l.slowedAt, l.served, l.cycle = 0, 0, 0, now, servedSince{}, cycle{}
			l.trial = paceTrial{}
			// A slowdown after this one is news again.
			l.saidSlow = 0
			if l.saidPerURL {
				return ""
			}
			l.saidPerURL = true
			return fmt.Sprintf("back to full pace: it answers %d to each new URL and serves it when it comes back, even at half the pace", status)
		}
		l.doubt = l.slow
		why += " to a new URL while it served only URLs that came back"
	case l.slow > 0 && l.served.first > 0:
		// Whether halving was worth it, the share of new URLs refused
		// at the slower pace tells.
		trial = true
		why += " to a new URL at a pace where it served others"
	case l.slow > 0 && ra == 0:
		// Serving nothing, without saying when to come back: its
		// backoff, which doubles for each round, holds it off already.
		// Halving on top held a server refusing each URL's first two
		// requests with "Retry-After: 0" for minutes (qa6 Q4).
		return ""
	case l.slow > 0:
		why += " and has served nothing since the last slowdown"
	}
	gap := l.slow
	if gap == 0 {
		gap = time.Duration(float64(time.Second) / l.recent.pace(now))
	}
	l.slow = min(2*gap, maxSlow)
	floor := l.cycle.end(now, l.lastStart)
	if floor > 0 {
		// No slower than the halved pace: a cycle slower than that
		// measured the crawl's own slowdown, not the host's limit.
		l.floor = min(floor, l.slow)
	}
	if proven {
		l.proven = l.floor
	}
	if trial {
		if fell {
			back, l.proven = l.floor, l.floor
		}
		l.trial = paceTrial{gap: gap, share: l.served.share(), served: floor, floor: back}
	}
	l.slowedAt, l.served = now, servedSince{}
	// Said the first time, and then at each new longest gap of a second
	// or more: a person wants to know why a host goes slowly, not each
	// step of a pace that comes and goes.
	if l.saidSlow > 0 && (l.slow <= l.saidSlow || l.slow < time.Second) {
		return ""
	}
	l.saidSlow = l.slow
	return fmt.Sprintf("slowing down to one request every %s: %s", l.slow.Round(time.Millisecond), why)
}

// notThePace undoes the halving on trial (see slowDown): at the slower
// pace the host refused new URLs about as often, share of them, as at
// the faster one, so its refusals do not come from the pace. The pace
// goes back to the faster one and comes back from there as after any
// slowdown, and the floor to the last one a halving was shown to be
// worth it at (see paceTrial). While no floor is in force, refusals of
// new URLs halve the pace no more as long as their share stays within
// half as much again as the host's own (shareBase, at least 5 points
// more): each still pauses the host for its Retry-After. A share past
// that is a limit's again, and halves it.
func (l *limiter) notThePace(now time.Time, status int, share float64) string {
	// The lower of the two: a faster pace may have met a limit too,
	// and a share taken too high would let a limit's refusals pass for
	// the host's own. The count starts again from here.
	l.shareBase, l.shares = min(share, l.trial.share), shareCount{}
	l.slow, l.floor, l.doubt, l.slowedAt, l.served, l.cycle = l.trial.gap, min(l.trial.floor, l.trial.gap), 0, now, servedSince{}, cycle{}
	l.trial = paceTrial{}
	if l.saidShare {
		return ""
	}
	// A slowdown after this one is news again, and told once: each
	// told after every undoing was forty lines for a host that limits
	// its rate too.
	l.saidShare, l.saidSlow = true, 0
	if l.shareBase <= 0 {
		// No new URL was refused at one of the two paces (the halving
		// came from a retry's refusal): there is no share to tell, nor
		// one that spares the next refusals a halving.
		return fmt.Sprintf("back to one request every %s: it answered %d to new URLs no less often at half the pace, so halving bought nothing",
			l.slow.Round(time.Millisecond), status)
	}
	return fmt.Sprintf("back to one request every %s: it answers %d to about one new URL in %d whatever the pace (as often at half the pace), so those only pause it for their Retry-After",
		l.slow.Round(time.Millisecond), status, int(math.Round(1/l.shareBase)))
}

// pushback takes a Retry-After of d from a request for key, the seq-th
// request to the host. A pause the crawl can wait for (up to MaxPause)
// holds the whole host, which is the polite reading. A longer one holds
// back key alone: one endpoint behind its own rate limit (a search, a
// download counter) says nothing about the rest of the site, and
// deferring the host for it would leave most of the site unchecked. The
// pause is taken as host-wide, deferring the host, only when it evidently
// is: the answer was not about one URL (an empty key: robots.txt
// answering 429 or 503), or a second distinct URL asks for a long pause
// while the first is held and the host has served nothing since the
// first one's request was sent. Two such endpoints once held back a site
// whose 13 other pages were served in the same 40 ms, every night (qa8
// R1). While requests sent meanwhile are still out, their answers decide
// (see judge): the host gets no new request until then. It says whether
// the pause is the host's (false: key alone is held, for now).
func (l *limiter) pushback(now time.Time, d time.Duration, key string, seq int64) bool {
	if key != "" && l.set.MaxPause > 0 && d > l.set.MaxPause {
		other, live := false, 0
		for k, until := range l.held {
			switch {
			case !until.After(now):
				delete(l.held, k)
			case k != key:
				other = true
				live++
			default:
				live++
			}
		}
		if live == 0 {
			l.holdSeq = seq
		}
		if l.held == nil {
			l.held = make(map[string]time.Time)
		}
		if until := now.Add(d); until.After(l.held[key]) {
			l.held[key] = until
		}
		switch {
		case !other, l.okSeq >= l.holdSeq:
			return false
		case l.inFlight > 1:
			l.judging = true
			return false
		}
		l.pausedBy = l.holding(now)
	} else if key == "" {
		l.pausedBy = nil
	}
	l.pause(now, d)
	return true
}

// judge settles, once the requests that were out when a second URL asked
// for a long pause are over, whether the pause is the host's: it is when
// none of them was served (see pushback). The host is then paused until
// the latest of the holds.
func (l *limiter) judge(now time.Time) {
	l.judging = false
	if l.okSeq >= l.holdSeq {
		return
	}
	var until time.Time
	for _, u := range l.held {
		if u.After(until) {
			until = u
		}
	}
	if until.After(now) {
		l.pausedBy = l.holding(now)
		l.pause(now, until.Sub(now))
	}
}

// holding lists, sorted, the URLs held by a pause of their own at now.
func (l *limiter) holding(now time.Time) []string {
	var keys []string
	for k, until := range l.held {
		if until.After(now) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// heldAt reports whether key is held back by a pause of its own at now.
func (l *limiter) heldAt(key string, now time.Time) bool {
	until, ok := l.held[key]
	return ok && key != "" && until.After(now)
}

// pause holds the host until now+d. The whole pause is kept, even past
// MaxPause, so that neither the next pass nor a restart hits the host
// early; only the waiting for it is given up (deferral).
func (l *limiter) pause(now time.Time, d time.Duration) {
	if until := now.Add(d); until.After(l.pausedUntil) {
		l.pausedUntil = until
	}
	if l.set.MaxPause > 0 && d > l.set.MaxPause {
		l.deferred = true
	}
}

// backOff starts the next backoff step. The jitter keeps at least half the
// step, so it spreads retries out without ever making them pushier.
func (l *limiter) backOff(now time.Time) {
	l.backoffLevel++
	d := l.backoffStep(l.backoffLevel)
	d = d/2 + rand.N(d/2+1)
	if until := now.Add(d); until.After(l.backoffUntil) {
		l.backoffUntil = until
	}
}

// backoffStep is the longest backoff at level (1 and up), before jitter.
func (l *limiter) backoffStep(level int) time.Duration {
	d := backoffMax
	if level <= 20 {
		d = min(d, backoffBase<<(level-1))
	}
	if l.set.MaxPause > 0 {
		d = min(d, l.set.MaxPause)
	}
	return d
}

// rested lowers the backoff level by the rest the host has had since its
// last step ended, as a run resumed later finds it (see ImportState): each
// step's length of rest past the end takes its level off, the longest
// first. The end itself is kept as the absolute time it was; what is
// past it asks no wait. Kept whole, the level of a host that failed the
// night before held it one to two minutes at the resumed run's first
// failure, more at each run, and a nightly job with a short --max-time
// sent it one round of requests a night (qa11 Q10).
func (l *limiter) rested(now time.Time) {
	if l.backoffUntil.IsZero() || l.backoffUntil.After(now) {
		return
	}
	rest := now.Sub(l.backoffUntil)
	for l.backoffLevel > 0 {
		step := l.backoffStep(l.backoffLevel)
		if rest < step {
			return
		}
		rest -= step
		l.backoffLevel--
	}
}

// retryNow is the Retry-After a comeback is given for "come back now" (0
// or a past date): Decision.Comeback and slowDown read 0 as "the server
// said nothing usable", so "now" is the shortest duration above it.
const retryNow = time.Nanosecond

// parseRetryAfter reads a Retry-After value: delay-seconds or an HTTP-date.
// A value that is missing or malformed is not usable, and the caller backs
// off instead. 0 and a date not in the future are usable, with no wait:
// RFC 9110 allows both, and the server has said when to come back (now),
// which a refusal without a Retry-After does not; the host's pace is still
// halved, as for any 429. Taken as unusable, they spent a third-party
// link's retries, unverifiable after two requests where "1" ended OK
// (qa8 R3).
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseUint(v, 10, 64); err == nil {
		return time.Duration(min(secs, maxRetryAfter)) * time.Second, true
	} else if errors.Is(err, strconv.ErrRange) {
		return maxRetryAfter * time.Second, true
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return min(max(at.Sub(now), 0), MaxRetryAfter), true
}

const (
	latencyWeight = 0.3  // weight of a new sample in the latency average
	baselineDrift = 0.01 // how fast the baseline follows a lasting rise
	slowFactor    = 2    // latency above slowFactor×baseline counts as slow
	// maxAdaptiveDelay bounds the adaptive gap, as AutoThrottle's max delay.
	maxAdaptiveDelay = time.Minute
)

// adaptive is the AutoThrottle-style state of one host. Latency and
// baseline are tracked for every host (Stats shows them); delay and cap are
// applied only when the settings ask for Adaptive.
type adaptive struct {
	latency  time.Duration // moving average of time to first byte
	baseline time.Duration // the host's normal latency: the lowest average, drifting up slowly
	delay    time.Duration // gap between request starts, as AutoThrottle computes it
	cap      int           // in-flight cap while the host is slow (0 = none)
	lastCut  time.Time
}

// observe learns from one response. The gap follows AutoThrottle: aim for
// latency/concurrency between starts (concurrency = MaxInFlight, or 1),
// move halfway there each response, and never shorten it after a failure.
// The in-flight cap is AIMD: halved at most once per latency period while
// the host is slow or failing, raised by one per response at no more than
// 1.5× its baseline, and dropped once it reaches MaxInFlight again. Both
// only ever add to the configured limits.
func (a *adaptive) observe(now time.Time, latency time.Duration, failed bool, s Settings, inFlight int) {
	if latency > 0 {
		if a.latency == 0 {
			a.latency = latency
		} else {
			a.latency += time.Duration(latencyWeight * float64(latency-a.latency))
		}
		if a.baseline == 0 || a.latency < a.baseline {
			a.baseline = a.latency
		} else {
			a.baseline += time.Duration(baselineDrift * float64(a.latency-a.baseline))
		}
	}
	if !s.Adaptive {
		return
	}
	if latency > 0 {
		next := (a.delay + latency/time.Duration(max(1, s.MaxInFlight))) / 2
		if failed {
			next = max(next, a.delay)
		}
		a.delay = min(next, maxAdaptiveDelay)
	}
	switch {
	case failed || a.latency > slowFactor*a.baseline:
		if a.lastCut.IsZero() || now.Sub(a.lastCut) >= a.latency {
			current := a.cap
			if current == 0 {
				current = inFlight
			}
			a.cap = max(1, current/2)
			a.lastCut = now
		}
	case a.cap > 0 && 2*a.latency <= 3*a.baseline:
		a.cap++
		if s.MaxInFlight > 0 && a.cap >= s.MaxInFlight {
			a.cap = 0
		}
	}
}

// answeredFrom says whether a request for key got an answer from where
// key's would go this pass: its origin (scheme://host) for a URL, since a
// host here is the same for http and https on their default ports while a
// refusal is about the one port dialled (review9 R1, R6: an https site
// whose port 80 is closed was taken down by its http:// links); the host
// for robots.txt (key ""), which speaks for it. A state saved before
// origins were kept counts for every origin.
func (l *limiter) answeredFrom(host, key string) bool {
	if key == "" {
		return l.answered[host] > 0
	}
	return l.answeredAt[originOf(key)] || l.answeredAt[anyOrigin] && l.answered[host] > 0
}

// anyOrigin stands for every origin in answeredAt (see answeredFrom).
const anyOrigin = "*"

// originOf is the scheme and host of a URL (a Key), "" for anything else:
// the start of key itself, so that the lookup on every answer allocates
// nothing (a string kept in answeredAt is cloned first).
func originOf(key string) string {
	i := strings.Index(key, "://")
	if i < 0 {
		return ""
	}
	end := i + 3
	if j := strings.IndexByte(key[end:], '/'); j >= 0 {
		return key[:end+j]
	}
	return key
}
