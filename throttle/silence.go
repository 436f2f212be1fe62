package throttle

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"time"
)

// silence is what a limiter knows of a host that answered earlier in the
// pass and has answered nothing since: every request since its last
// answer was refused, timed out or lost its connection. Enough rounds of
// that and the host stopped answering (see limiter.down and Throttle.Down):
// its remaining URLs are not dead links, and not worth a backoff of
// minutes each either (qa6 Q2; a server that died with timeouts once
// sat ten minutes on 19 requests of 80 URLs, and would have taken hours).
// Any answer, of any status, ends it: a host that answers some requests
// is alive, however slow the others are.
type silence struct {
	// since is when the first request went unanswered: in this run, or
	// in a run of the same pass before it (restored by ImportState),
	// since when nothing has answered. began is when this run saw its
	// first, and host the host:port that went to (with grouped hosts,
	// the one that went quiet). Whether the host is down is decided on
	// what this run sees, from began (a restart is a new look at the
	// host: the time between two runs is not the host's silence, and a
	// URL that failed in the run before is not another URL failing now;
	// review7 RV2 1).
	since time.Time
	began time.Time
	host  string
	// rounds counts the rounds of failures (the requests in flight at a
	// failure count once, see limiter.learn), last when the last was
	// counted.
	rounds int
	last   time.Time
	// how says in what ways the requests failed, urls how many distinct
	// URLs did (counted up to 2), first the first of them.
	how   failKinds
	urls  int
	first string
}

// failKinds are the ways a request to a host can go unanswered.
type failKinds uint8

const (
	failRefused failKinds = 1 << iota
	failTimeout
	failReset
	failOther
)

func failKind(err error) failKinds {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return failRefused
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return failTimeout
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, net.ErrClosed),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return failReset
	}
	return failOther
}

// one says how one request failed, for people: "timed out".
func (k failKinds) one() string {
	switch k {
	case failRefused:
		return "was refused"
	case failTimeout:
		return "timed out"
	case failReset:
		return "lost its connection"
	}
	return "failed"
}

// String says how the host failed, for people: "refused connections",
// "let every request time out and reset connections".
func (k failKinds) String() string {
	var parts []string
	if k&failTimeout != 0 {
		parts = append(parts, "let every request time out")
	}
	if k&failReset != 0 {
		parts = append(parts, "reset connections")
	}
	if k&failRefused != 0 {
		parts = append(parts, "refused connections")
	}
	if k&failOther != 0 {
		parts = append(parts, "failed every request")
	}
	return strings.Join(parts, " and ")
}

// fail counts one request to host for key that the host, which answered
// earlier in the pass, did not answer, and says whether it starts a new
// round (admitted after the last failure counted).
func (s *silence) fail(now, admitted time.Time, host, key string, err error) bool {
	if s.began.IsZero() {
		s.began, s.host, s.first = now, host, key
		if s.since.IsZero() {
			s.since = now
		}
	}
	s.how |= failKind(err)
	if s.urls == 0 || s.urls == 1 && key != s.first {
		s.urls++
	}
	if !admitted.After(s.last) {
		return false
	}
	s.rounds++
	s.last = now
	return true
}

// silentWindow is how long a host that answered must answer nothing, by
// timeouts or resets, before it stopped answering: a server paused for
// half a minute (a deploy, a long garbage collection, a SIGSTOP) is waited
// out, as before, and one that hangs for good is held back after about a
// minute, not after hours of backoffs.
const silentWindow = time.Minute

// over says at now whether the silence means the host stopped answering:
// as many rounds as a URL has tries (retries+1), each after a longer
// backoff, all unanswered. Refused connections say it alone: nothing
// listens there any more. A timeout or a reset may be one page's own
// trouble (a report that takes a minute to build) or a pause, so those
// need two URLs failing, for silentWindow of this run: a host whose
// every request fails for a minute is down, one whose single page fails
// is not.
func (s *silence) over(retries int, now time.Time) bool {
	if s.rounds <= retries {
		return false
	}
	return s.how == failRefused || s.urls > 1 && now.Sub(s.began) >= silentWindow
}

// HostDown is what Down tells of a host that stopped answering.
type HostDown struct {
	// Host is the host:port that stopped answering (never empty: this
	// run saw its requests go unanswered): with grouped hosts
	// (Config.Key) it may be another than the one asked about, which is
	// held back with it since they share their limits.
	Host string
	// Since is when it began to answer nothing; Answered how many
	// requests it answered in the pass before (with the hosts it shares
	// its limits with, this run and the runs before it).
	Since    time.Time
	Answered int64
	// How says how its requests failed since, for people: "refused
	// connections", "let every request time out", …
	How string
}
