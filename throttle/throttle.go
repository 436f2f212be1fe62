package throttle

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/publicsuffix"
	"golang.org/x/time/rate"
)

var (
	// ErrQuota means the host has used its request or byte quota for this
	// pass: its remaining URLs are "skipped: quota".
	ErrQuota = errors.New("host quota for this pass used up")
	// ErrDeferred means the host asked for a pause longer than MaxPause:
	// its remaining URLs wait for a later pass (see Deferred).
	ErrDeferred = errors.New("host paused beyond the maximum pause; deferred to the next pass")
	// ErrDown means the host answered earlier in the pass and now refuses
	// connections, after the retries of a URL: it stopped answering, and
	// its remaining URLs wait for a later run (see Down). It is a
	// deferral: errors.Is(ErrDown, ErrDeferred) holds.
	ErrDown = fmt.Errorf("host stopped answering: %w", ErrDeferred)
)

const (
	// maxChunk is the most a paced body read takes at once: small enough
	// that the budget holds over short intervals, large enough to cost
	// little per byte.
	maxChunk = 8 << 10
	// inFlightHint is what Reserve suggests waiting when only the in-flight
	// cap binds and no latency is known yet; Ready usually fires sooner.
	inFlightHint = time.Second
	// rateSeconds is how many whole seconds the "current rate" in Stats
	// averages over.
	rateSeconds = 10
)

// Config configures a Throttle. The zero value throttles nothing.
type Config struct {
	// Settings answers the limits for a host ("host:port"). When Key groups
	// several hosts, the group takes the settings of the first of its hosts
	// the throttle sees, so rules should give a group's hosts the same
	// settings. Nil means no limits.
	Settings func(host string) Settings
	// Key maps a host to its limiter key; hosts with the same key share
	// every limit. It must be idempotent (Key(Key(h)) == Key(h)). Nil keys
	// each host:port on its own; DomainKey groups by registrable domain.
	Key func(host string) string
	// UserAgent chooses the robots.txt group whose Crawl-delay applies.
	UserAgent string
	// GlobalBytesPerSec paces body reads across all hosts together (0 = unlimited).
	GlobalBytesPerSec int64
	// RequestLife is the longest one request may last (the crawl's
	// timeout). A request that a process killed before it was over had
	// started is still in flight at the server for all we know: the next
	// process counts it against the host's in-flight cap until that long
	// after its start (see limiter.orphans). 0 counts none.
	RequestLife time.Duration
	// PerHost is the cap on requests in flight to one host that the
	// caller keeps itself (0 = none); a host's MaxInFlight, when lower,
	// takes its place. Only the orphans of RequestLife are counted
	// against it here.
	PerHost int
	// Now is the clock (nil = time.Now). Body pacing sleeps on real timers,
	// so tests of it run in a testing/synctest bubble instead.
	Now func() time.Time
}

// Throttle holds the politeness state of every host a crawl touches. It is
// safe for concurrent use.
type Throttle struct {
	cfg    Config
	now    func() time.Time
	global *rate.Limiter // nil when unlimited
	ready  chan struct{}

	// freed are the limiters with a permit done since Freed last asked,
	// changed those whose saved state changed since Changed last asked:
	// with thousands of hosts, walking every limiter for each grew with
	// the square of the hosts (qa8 S1).
	freed, changed limiterSet

	mu     sync.RWMutex
	byHost map[string]*limiter
	byKey  map[string]*limiter
	pass   uint64
	resume resumeMark
}

// resumeMark is what Resume was told: a process that died at or before
// at may have started up to unrecorded requests to any host that no saved
// state shows; and what Killed was: that it died with requests out that
// it may not have saved, the last of them started by killed, so any may
// be in flight at the server until RequestLife after killed.
type resumeMark struct {
	at         time.Time
	unrecorded int
	killed     time.Time
}

// New returns a Throttle with no hosts yet.
func New(cfg Config) *Throttle {
	t := &Throttle{
		cfg:    cfg,
		now:    cfg.Now,
		ready:  make(chan struct{}, 1),
		byHost: make(map[string]*limiter),
		byKey:  make(map[string]*limiter),
	}
	if t.now == nil {
		t.now = time.Now
	}
	if cfg.GlobalBytesPerSec > 0 {
		t.global = bytesLimiter(cfg.GlobalBytesPerSec)
	}
	return t
}

// bytesLimiter paces bytes at bps. Its bucket, which is also the largest
// read, holds at most one chunk and at most 1/20 s of budget, so the free
// start of a full bucket moves the rate over a 10 s body by under 0.5%.
func bytesLimiter(bps int64) *rate.Limiter {
	return rate.NewLimiter(rate.Limit(bps), int(max(1, min(maxChunk, bps/20))))
}

// DomainKey is a Config.Key that groups hosts by registrable domain (the
// public suffix list's eTLD+1), so www.example.com:443 and
// static.example.com:80 share one limiter. Ports are dropped, since one
// server usually answers every port of a name; IP addresses and names
// without a public suffix (localhost) are their own key.
func DomainKey(host string) string {
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	if net.ParseIP(name) != nil {
		return name
	}
	if d, err := publicsuffix.EffectiveTLDPlusOne(name); err == nil {
		return d
	}
	return name
}

// Reserve asks to start one request to host ("host:port") now. It never
// blocks. When the request may start it returns a Permit, with the
// in-flight slot, a token, a window slot and a request of the quota taken;
// the caller must call Permit.Done. Otherwise it returns how long to wait
// before asking again: exact for the rate, gap, pause and backoff and for
// the window while it is full of requests that are over, the least it can
// be when requests in flight must end first or only the in-flight cap binds
// (Ready fires when a permit is done).
// The errors are ErrQuota, ErrDeferred and ErrDown (wrapped; use errors.Is).
func (t *Throttle) Reserve(host string) (*Permit, time.Duration, error) {
	l := t.limiterFor(host)
	now := t.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.down {
		return nil, 0, fmt.Errorf("%s: %w", host, ErrDown)
	}
	if l.isDeferred(now) {
		return nil, 0, fmt.Errorf("%s: %w", host, ErrDeferred)
	}
	if l.overQuota() {
		return nil, 0, fmt.Errorf("%s: %w", host, ErrQuota)
	}
	if wait := l.waitAt(now); wait > 0 {
		if l.waitingSince.IsZero() {
			l.waitingSince = now
		}
		return nil, wait, nil
	}
	l.admit(now)
	return &Permit{t: t, l: l, sends: 1, host: host, admitted: now, seq: l.requests}, 0, nil
}

// Deferred reports whether a request for key (a URL) on host must wait for
// a later pass, and until when the server asked to be left alone: the host
// is deferred (Reserve would answer ErrDeferred), or key itself is held by
// a pause of its own longer than MaxPause. A hold with no more than
// MaxPause left to run becomes a pause of the whole host, which the crawl
// waits for: a little over-polite, and no URL needs a queue of its own.
//
// A host that stopped answering (see Down) is deferred too, until the
// time it stopped: a later run may try it at any time.
func (t *Throttle) Deferred(host, key string) (time.Time, bool) {
	l := t.limiterFor(host)
	now := t.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.down {
		return l.silence.since, true
	}
	if l.isDeferred(now) {
		return l.pausedUntil, true
	}
	until, ok := l.held[key]
	switch {
	case !ok:
	case !until.After(now):
		delete(l.held, key)
		l.changed()
	case l.set.MaxPause > 0 && until.Sub(now) > l.set.MaxPause:
		return until, true
	default:
		delete(l.held, key)
		if until.After(l.pausedUntil) {
			l.pausedUntil = until
		}
		l.changed()
	}
	return time.Time{}, false
}

// PausedBy says why key (a URL) on host is held back (see Deferred): own
// when the server asked key itself for a pause longer than MaxPause;
// otherwise from lists the URLs whose long pauses were found to be the
// host's (none when robots.txt asked, or the host refused everything, or
// the pause was read from an earlier run's state).
func (t *Throttle) PausedBy(host, key string) (own bool, from []string) {
	l := t.limiterFor(host)
	now := t.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if until, ok := l.held[key]; ok && key != "" && until.After(now) {
		return true, nil
	}
	return false, slices.Clone(l.pausedBy)
}

// answeredAll is how many requests the hosts of the limiter answered in
// the pass.
func (l *limiter) answeredAll() int64 {
	var n int64
	for _, a := range l.answered {
		n += a
	}
	return n
}

// Refusing says since when host has answered every request with 429 or
// 503 (zero when it has not, or answered normally since): a host
// deferred while that lasted longer than MaxPause (see Decision.Comeback)
// was deferred for it, not for one long pause.
func (t *Throttle) Refusing(host string) time.Time {
	l := t.limiterFor(host)
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.refusingSince
}

// Down says whether host stopped answering in this run: it (or, with
// grouped hosts, another host it shares its limits with) answered requests
// earlier in the pass, then left every request unanswered through as many
// rounds as a URL has tries (see silence.over). Its remaining URLs are not
// dead links but not checked: Reserve answers ErrDown for the rest of the
// run, and the next run tries again.
func (t *Throttle) Down(host string) (HostDown, bool) {
	l := t.limiterFor(host)
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.down {
		return HostDown{}, false
	}
	return HostDown{Host: l.silence.host, Since: l.silence.since, Answered: l.answeredAll(), How: l.silence.how.String()}, true
}

// Ready is signalled whenever a permit is done, so a dispatcher that is
// waiting on timers can ask again at once. The channel holds one signal;
// signals that find it full are dropped, which loses nothing because the
// dispatcher re-checks every host Freed names.
func (t *Throttle) Ready() <-chan struct{} {
	return t.ready
}

// Freed returns the hosts a permit done since the last call may have let
// go sooner than Reserve said (its in-flight slot, above all): every host
// that shares a limiter with the permit's host. A permit done shortens no
// other host's wait, so a dispatcher with thousands of hosts waiting asks
// again for these only, not for every host at each Ready (qa8 S1).
func (t *Throttle) Freed() []string {
	var hosts []string
	for _, l := range t.freed.take() {
		l.mu.Lock()
		hosts = append(hosts, l.hosts...)
		l.mu.Unlock()
	}
	return hosts
}

func (t *Throttle) signal(l *limiter) {
	t.freed.add(l)
	select {
	case t.ready <- struct{}{}:
	default:
	}
}

// StartPass tells the throttle which pass is running. Quotas and deferrals
// belong to a pass: a new id clears them for every host, and ImportState
// restores them only from state exported during the same pass. Calling it
// again with the running pass's id changes nothing.
func (t *Throttle) StartPass(pass uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if pass == t.pass {
		return
	}
	t.pass = pass
	for _, l := range t.byKey {
		l.mu.Lock()
		l.usedRequests, l.usedBytes, l.deferred = 0, 0, false
		l.answered, l.answeredAt, l.silence, l.down = nil, nil, silence{}, false
		l.refusedAt = nil
		l.mu.Unlock()
	}
}

// Resume tells the throttle that it takes over a pass from a process
// that may have died without saving its last requests: up to unrecorded
// requests to each host, started after the state it saved (ImportState)
// and before now. Each host is then treated as though those requests had
// all just started: its flood window holds that many more starts (up to
// its limit), its rate bucket is empty and its gap runs from now. That
// costs at most one window of a host's pace after a crash, and no server
// sees more than its limits across it. Call it after ImportState.
func (t *Throttle) Resume(unrecorded int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.resume = resumeMark{at: t.now(), unrecorded: unrecorded}
	for _, l := range t.byKey {
		l.mu.Lock()
		l.assumeStarts(t.resume)
		l.mu.Unlock()
	}
}

// Killed tells the throttle that the process before it died (a SIGKILL,
// a crash) instead of stopping, and so may have had requests out that its
// saved state does not show: those it started after its last save, at
// most a commit interval before it died. Which hosts they went to is not
// known, only that none started after startedBy (when the dead process
// was last known alive, plus how long it could have gone on unseen; zero
// or later than now: now); and a request the saved state shows as over
// may have freed its place to one of them. So every host counts its whole
// in-flight cap as started at startedBy (see limiter.orphans), and nothing
// more goes to it before RequestLife after that: a wait of up to
// --timeout after a fresh kill, none after one older than that, the price
// of no server ever seeing more than its cap across it (the killed run's
// saved requests alone once let 3 and 4 in at --per-host 2). They count
// against the host's request quota for the pass as well. A host first met
// after this counts them too. Call it after ImportState; a run that
// stopped cleanly saved every request, and needs none of this.
func (t *Throttle) Killed(startedBy time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if startedBy.IsZero() || startedBy.After(now) {
		startedBy = now
	}
	t.resume.killed = startedBy
	for _, l := range t.byKey {
		l.mu.Lock()
		l.assumeInFlight(t.resume.killed, now)
		l.mu.Unlock()
	}
}

// assumeInFlight counts the host's in-flight cap of requests started at
// at as orphans (see Killed), and against the pass's request quota: the
// quota use saved does not hold them either (qa8 P1: 68 requests for a
// quota of 60 across five kills).
func (l *limiter) assumeInFlight(at, now time.Time) {
	c := l.orphanCap()
	if c <= 0 || at.IsZero() {
		return
	}
	if l.set.QuotaRequests > 0 {
		l.usedRequests += int64(c)
	}
	if l.life > 0 {
		l.adopt(slices.Repeat([]time.Time{at}, c), now)
	}
}

// assumeStarts counts m.unrecorded starts at m.at that no state recorded.
func (l *limiter) assumeStarts(m resumeMark) {
	if l.set.WindowMax > 0 {
		n := min(m.unrecorded, l.set.WindowMax-l.starts.count(m.at, l.set.Window))
		for range n {
			l.starts.push(m.at) // started, and over, before the resume
		}
	}
	if l.bucket != nil {
		if tokens := l.bucket.TokensAt(m.at); tokens >= 1 {
			l.bucket.AllowN(m.at, int(tokens))
		}
	}
	if m.at.After(l.lastStart) {
		l.lastStart = m.at
	}
}

// Changed lists, sorted, the hosts whose state (see ExportState) may have
// changed since the last call, so that only they are saved again: a pass
// that meets many hosts must not rewrite all of them at every commit.
func (t *Throttle) Changed() []string {
	var hosts []string
	for _, l := range t.changed.take() {
		l.mu.Lock()
		if l.dirty {
			l.dirty = false
			hosts = append(hosts, l.hosts...)
		}
		l.mu.Unlock()
	}
	slices.Sort(hosts)
	return hosts
}

// limiterSet collects limiters, each once, until they are taken.
type limiterSet struct {
	mu sync.Mutex
	in map[*limiter]struct{}
}

func (s *limiterSet) add(l *limiter) {
	s.mu.Lock()
	if s.in == nil {
		s.in = make(map[*limiter]struct{})
	}
	s.in[l] = struct{}{}
	s.mu.Unlock()
}

// take returns the limiters added since the last take.
func (s *limiterSet) take() []*limiter {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.in) == 0 {
		return nil
	}
	ls := make([]*limiter, 0, len(s.in))
	for l := range s.in {
		ls = append(ls, l)
	}
	clear(s.in)
	return ls
}

// changed marks l's saved state changed, for Changed; l.mu is held.
func (l *limiter) changed() {
	if !l.dirty {
		l.dirty = true
		l.changes.add(l)
	}
}

// Hosts lists every host the throttle has seen, sorted.
func (t *Throttle) Hosts() []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	hosts := make([]string, 0, len(t.byHost))
	for h := range t.byHost {
		hosts = append(hosts, h)
	}
	slices.Sort(hosts)
	return hosts
}

// SetRobots records host's robots.txt as fetched at the given time. Its
// Crawl-delay for Config.UserAgent becomes a minimum gap for the host's
// limiter unless the host's settings ignore robots.txt. A nil r is
// recorded as a missing file (allow all).
func (t *Throttle) SetRobots(host string, r *Robots, fetched time.Time) {
	if r == nil {
		r = ParseRobots(http.StatusNotFound, nil)
	}
	l := t.limiterFor(host)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.setRobots(host, r, fetched, t.cfg.UserAgent)
}

// CrawlDelay is what host's robots.txt asks for as Crawl-delay (0 for
// none) and the gap the host's requests keep for it: the same, MaxPause
// when that is shorter and Settings.CapCrawlDelay is set, or 0 when the
// settings ignore robots.txt or put the owner's own crawl delay in its
// place. A kept gap longer than MaxPause defers the host.
func (t *Throttle) CrawlDelay(host string) (asked, kept time.Duration) {
	l := t.limiterFor(host)
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.robotsGap, l.robotsDelay()
}

// Robots returns host's cached robots.txt if it is still fresh: fetched
// within 24 hours, or within one hour for a "disallow all" that came from
// a server error or an unreachable host.
func (t *Throttle) Robots(host string) (*Robots, bool) {
	t.mu.RLock()
	l := t.byHost[host]
	t.mu.RUnlock()
	if l == nil {
		return nil, false
	}
	now := t.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.robots[host]
	if !ok || now.Sub(e.fetched) >= e.robots.ttl() {
		return nil, false
	}
	return e.robots, true
}

// limiterFor returns host's limiter, creating it (and asking for its
// settings) the first time the host or its key is seen.
func (t *Throttle) limiterFor(host string) *limiter {
	t.mu.RLock()
	l := t.byHost[host]
	t.mu.RUnlock()
	if l != nil {
		return l
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if l := t.byHost[host]; l != nil {
		return l
	}
	key := host
	if t.cfg.Key != nil {
		key = t.cfg.Key(host)
	}
	l = t.byKey[key]
	if l == nil {
		var s Settings
		if t.cfg.Settings != nil {
			s = t.cfg.Settings(host)
		}
		l = newLimiter(key, s.normalized())
		l.changes = &t.changed
		l.life, l.perHost = t.cfg.RequestLife, t.cfg.PerHost
		if t.resume.unrecorded > 0 {
			l.assumeStarts(t.resume)
		}
		l.assumeInFlight(t.resume.killed, t.now())
		t.byKey[key] = l
	}
	l.mu.Lock()
	l.hosts = append(l.hosts, host)
	slices.Sort(l.hosts)
	l.mu.Unlock()
	t.byHost[host] = l
	return l
}

// robotsEntry is one host's cached robots.txt.
type robotsEntry struct {
	robots  *Robots
	fetched time.Time
}

// limiter is the politeness state of one key. Every field below mu is
// guarded by it.
type limiter struct {
	key     string
	set     Settings
	life    time.Duration // Config.RequestLife
	perHost int           // Config.PerHost
	bucket  *rate.Limiter // nil when Rate is unlimited
	bytes   *rate.Limiter // nil when BytesPerSec is unlimited

	changes *limiterSet // the Throttle's, for Changed (see changed)

	mu    sync.Mutex
	hosts []string
	// dirty: state that ExportState saves changed since Changed last
	// reported the limiter's hosts; set by changed, which puts the
	// limiter on changes too.
	dirty bool

	starts    window
	lastStart time.Time
	inFlight  int
	// openAt are the starts of this process's requests not over yet, in
	// the order they started (see ExportState); orphans the starts of
	// those an earlier process left unfinished when it died, which count
	// as in flight until Config.RequestLife after each (see waitAt).
	openAt      []time.Time
	orphans     []time.Time
	pausedUntil time.Time
	deferred    bool
	held        map[string]time.Time // URLs paused on their own beyond MaxPause, until when (see pushback)
	// holdSeq is the number of the request whose long pause began the
	// live holds, okSeq how many requests had been sent when the host
	// last served one; judging says a second URL's long pause waits for
	// the requests still out to tell whether the host serves (see
	// pushback); pausedBy are the URLs whose holds made the pause the
	// host's (none when robots.txt or a short pause made it).
	holdSeq, okSeq int64
	judging        bool
	pausedBy       []string
	// refusedAt holds the URLs refused with a Retry-After the crawl waits
	// for and not answered otherwise since (see refusedAgain); servedSeq is
	// the number of the latest request the host served. A URL refused
	// again after it waited as told, when the host served a request sent
	// after its last refusal, is refused for itself, and held alone (see
	// Decision.Hold): in this run only, since a resume that cannot tell
	// pauses the host as before.
	refusedAt map[string]refusedURL
	servedSeq int64
	// refusals counts the 429s and 503s with a Retry-After the crawl
	// waits for (see refusedAgain).
	refusals int64
	saidOwn  bool // Decision.Paced told of a URL held alone
	// slowedBy is the pace before the slowdowns the refusals of one URL
	// made, while no other URL's made one since (see unslow).
	slowedBy paceMark

	backoffLevel int
	backoffUntil time.Time
	usedRequests int64
	usedBytes    int64
	// answered counts, by host:port, the requests answered (with any
	// status) in this pass; silence is what went unanswered since the
	// last answer, and down says it lasted long enough that the host
	// stopped answering (see Down). A refusal from a host:port that never
	// answered says the link is dead; from one that answered a moment
	// ago, that the server is going down or restarting. By host:port, not
	// for the limiter: with grouped hosts (Config.Key) a closed port
	// beside a host that answers is a dead link, not the group going
	// down.
	answered map[string]int64
	// answeredAt holds the origins (scheme://host) that answered this
	// run: a host is the crawler's u.Host, the same for http and https on
	// their default ports, while a refusal is about the one port dialled
	// (review9 R1: an https site whose port 80 is closed is not down).
	answeredAt map[string]bool
	silence    silence
	down       bool
	robots     map[string]robotsEntry
	robotsGap  time.Duration

	adapt adaptive
	// refusingSince is when the host began answering only 429 and 503
	// (zero while it answers normally); slow is the gap between request
	// starts its refusals imposed, slowedAt when it was last doubled or
	// undone, served what the host answered normally since (see
	// slowDown), slowCap the longest gap once it serves again (one
	// request per Retry-After), and perURL says its refusals were found
	// not to be about the pace.
	refusingSince time.Time
	slow          time.Duration
	slowedAt      time.Time
	served        servedSince
	slowCap       time.Duration
	perURL        bool
	// floor is the gap the host's limit was found to allow, which the
	// pace comes back to no further than slowly (see slowDown): the
	// time it was busy with the host (see cycle.admit) over the normal
	// answers it gave, from one slowdown to the next. doubt is the gap
	// at which a new URL was refused while only URLs that came back were
	// served, until a slower pace tells whether its refusals come from
	// the pace.
	floor time.Duration
	cycle cycle
	doubt time.Duration
	// trial is the halving being judged by the share of new URLs refused
	// at the slower pace (see slowDown), proven the floor when a halving
	// was last shown to be worth it (by fewer refusals at the slower pace,
	// or a URL that waited refused again); shares counts the new URLs of
	// the host's last requests, and those refused, whatever the pace;
	// shareBase is the share it was found to refuse whatever the pace (0
	// while none was found), saidShare whether that was told.
	trial     paceTrial
	proven    time.Duration
	shares    shareCount
	shareBase float64
	saidShare bool
	// saidSlow is the longest gap Decision.Paced has told of, saidPerURL
	// whether it told that the refusals are not about the pace.
	saidSlow   time.Duration
	saidPerURL bool
	// saidPause is the end of the pause Decision.Paused last told of,
	// saidDown whether it told that the host stopped answering.
	saidPause time.Time
	saidDown  bool
	// backedOffAt is when a refusal without a usable Retry-After, or a
	// failure, last stepped the backoff up (see learn): once per round.
	backedOffAt time.Time

	requests     int64
	bytesTotal   int64
	recent       recentStarts
	waitingSince time.Time
	waited       time.Duration
	readWait     time.Duration
}

func newLimiter(key string, s Settings) *limiter {
	l := &limiter{key: key, set: s, robots: make(map[string]robotsEntry)}
	if s.Rate > 0 {
		l.bucket = rate.NewLimiter(rate.Limit(s.Rate), s.Burst)
	}
	if s.BytesPerSec > 0 {
		l.bytes = bytesLimiter(s.BytesPerSec)
	}
	return l
}

// isDeferred reports whether the host is deferred for this pass. A pause
// that still has more than MaxPause to run defers it, and the deferral
// sticks for the rest of the pass so all its URLs are treated alike.
//
// Another site's robots.txt Crawl-delay longer than MaxPause (see
// Settings.CapCrawlDelay) is such a pause from each request start on:
// asking sooner than robots.txt asks is not polite, and waiting longer
// than MaxPause is not what the run may do, so the host is deferred as
// for a long Retry-After.
func (l *limiter) isDeferred(now time.Time) bool {
	if l.deferred || l.set.MaxPause <= 0 {
		return l.deferred
	}
	if d := l.robotsDelay(); d > l.set.MaxPause && !l.lastStart.IsZero() {
		if until := l.lastStart.Add(d); until.Sub(now) > l.set.MaxPause && until.After(l.pausedUntil) {
			l.pausedUntil = until
		}
	}
	if l.pausedUntil.Sub(now) > l.set.MaxPause {
		l.deferred = true
		l.changed()
	}
	return l.deferred
}

func (l *limiter) overQuota() bool {
	return (l.set.QuotaRequests > 0 && l.usedRequests >= l.set.QuotaRequests) ||
		(l.set.QuotaBytes > 0 && l.usedBytes >= l.set.QuotaBytes)
}

// waitAt is how long from now until every limit lets one more request
// start. Each limit only relaxes as time passes (tokens refill, starts leave
// the window, gaps and pauses run out), so the longest single wait is the
// exact answer; only the in-flight cap depends on events instead.
func (l *limiter) waitAt(now time.Time) time.Duration {
	wait := l.sendWait(now)
	if l.judging && wait <= 0 {
		// Ready fires as the requests that decide end.
		return inFlightHint
	}
	if wait <= 0 {
		c := l.maxInFlight()
		if len(l.orphans) > 0 {
			c = l.orphanCap()
		}
		if c <= 0 {
			return wait
		}
		if orphans := l.liveOrphans(now); l.inFlight+len(orphans) >= c {
			wait = inFlightHint
			if lat := l.adapt.latency; lat > 0 {
				wait = max(lat, time.Millisecond)
			}
			if len(orphans) > 0 {
				// Nothing but time ends an orphan: the oldest frees a
				// slot when it runs out, unless a request of ours ends
				// first (Ready fires then).
				out := orphans[0].Add(l.life).Sub(now)
				if l.inFlight > 0 {
					out = min(out, wait)
				}
				wait = out
			}
		}
	}
	return wait
}

// orphanCap is the most requests the host may have in flight, ours and
// orphans together: the lower of MaxInFlight (adaptive included) and the
// caller's own cap (0 = none).
func (l *limiter) orphanCap() int {
	c := l.maxInFlight()
	if l.perHost > 0 && (c == 0 || l.perHost < c) {
		c = l.perHost
	}
	return c
}

// liveOrphans drops the orphans whose request would be over by now, had
// it run to its timeout, and returns the rest, oldest first.
func (l *limiter) liveOrphans(now time.Time) []time.Time {
	i := 0
	for i < len(l.orphans) && !l.orphans[i].Add(l.life).After(now) {
		i++
	}
	if i > 0 {
		l.orphans = l.orphans[i:]
		l.changed()
	}
	return l.orphans
}

// adopt counts starts, saved by a process that may have died before
// those requests were over, as orphans: the server may still be serving
// them. Every host of a group saves the group's starts, so a start is
// taken as often as one host's state holds it, not once per host. The
// newest MaxInFlight are kept, which no more than that can have been in
// flight together.
func (l *limiter) adopt(starts []time.Time, now time.Time) {
	if l.life <= 0 || len(starts) == 0 {
		return
	}
	have := make(map[time.Time]int, len(l.orphans))
	for _, s := range l.orphans {
		have[s.Round(0)]++
	}
	for _, s := range starts {
		s = s.Round(0)
		if have[s] > 0 {
			have[s]--
		} else if s.Add(l.life).After(now) {
			l.orphans = append(l.orphans, s)
		}
	}
	slices.SortFunc(l.orphans, time.Time.Compare)
	if c := l.orphanCap(); c > 0 && len(l.orphans) > c {
		l.orphans = l.orphans[len(l.orphans)-c:]
	}
}

// sendWait is waitAt without the in-flight cap: how long until one more
// request may reach the host.
func (l *limiter) sendWait(now time.Time) time.Duration {
	var wait time.Duration
	if l.pausedUntil.After(now) {
		wait = l.pausedUntil.Sub(now)
	}
	if l.backoffUntil.After(now) {
		wait = max(wait, l.backoffUntil.Sub(now))
	}
	if gap := l.gap(); gap > 0 && !l.lastStart.IsZero() {
		wait = max(wait, l.lastStart.Add(gap).Sub(now))
	}
	if l.set.WindowMax > 0 {
		wait = max(wait, l.starts.waitAt(now, l.set.WindowMax, l.set.Window))
	}
	if l.bucket != nil {
		if tokens := l.bucket.TokensAt(now); tokens < 1 {
			// Rounded up so that asking again after exactly this long finds
			// a whole token despite floating point.
			wait = max(wait, time.Duration(math.Ceil((1-tokens)/l.set.Rate*float64(time.Second))))
		}
	}
	return wait
}

// admit takes everything one request start uses; waitAt has said it may.
func (l *limiter) admit(now time.Time) {
	l.cycle.admit(now, l.lastStart, !l.waitingSince.IsZero() || l.inFlight > 0, l.gap())
	l.send(now)
	l.inFlight++
	l.openAt = append(l.openAt, now)
	if !l.waitingSince.IsZero() {
		l.waited += now.Sub(l.waitingSince)
		l.waitingSince = time.Time{}
	}
}

// send takes what one request reaching the server uses: a token, a place
// in the window (open until the request is over, see window), the gap and
// a request of the quota. A resend under the same permit takes it again.
func (l *limiter) send(now time.Time) {
	if l.bucket != nil {
		l.bucket.AllowN(now, 1)
	}
	if l.set.WindowMax > 0 {
		l.starts.open++
	}
	l.lastStart = now
	l.usedRequests++
	l.changed()
	l.requests++
	l.recent.add(now)
}

// gap is the minimum time between request starts right now.
func (l *limiter) gap() time.Duration {
	g := l.delay()
	if l.set.Adaptive {
		g = max(g, l.adapt.delay)
	}
	return max(g, l.slow)
}

// limit is the most request starts per second the settings allow: the
// tightest of the rate, the window's average and the configured (or
// robots.txt) gap; 0 when none is set. The adaptive slowdown is not a
// limit but a reaction, so it is left out.
func (l *limiter) limit() float64 {
	lim := l.set.Rate
	tighter := func(v float64) {
		if v > 0 && (lim == 0 || v < lim) {
			lim = v
		}
	}
	if l.set.WindowMax > 0 && l.set.Window > 0 {
		tighter(float64(l.set.WindowMax) / l.set.Window.Seconds())
	}
	if g := l.delay(); g > 0 {
		tighter(1 / g.Seconds())
	}
	return lim
}

// delay is the configured gap between request starts: the settings' crawl
// delay, raised by robots.txt's (see robotsDelay).
func (l *limiter) delay() time.Duration {
	return max(l.set.CrawlDelay, l.robotsDelay())
}

// robotsDelay is the gap robots.txt's Crawl-delay puts between request
// starts: none when the settings ignore robots.txt or put the owner's own
// delay in its place, and on the site's own hosts at most MaxPause. A
// Crawl-delay of an hour would otherwise hold a site of 100 pages for
// four days; the host's longest pause is also the longest gap (qa5 N11).
// Another site's is kept in full (review6 B): past MaxPause it defers
// the host (see isDeferred).
func (l *limiter) robotsDelay() time.Duration {
	if l.set.IgnoreRobots || l.set.OwnCrawlDelay {
		return 0
	}
	if l.set.CapCrawlDelay && l.set.MaxPause > 0 {
		return min(l.robotsGap, l.set.MaxPause)
	}
	return l.robotsGap
}

// maxInFlight is the in-flight cap right now (0 = none): the configured
// one, lowered by the adaptive cap while the host is slow.
func (l *limiter) maxInFlight() int {
	c := l.set.MaxInFlight
	if l.set.Adaptive && l.adapt.cap > 0 && (c == 0 || l.adapt.cap < c) {
		c = l.adapt.cap
	}
	return c
}

func (l *limiter) setRobots(host string, r *Robots, fetched time.Time, userAgent string) {
	l.robots[host] = robotsEntry{robots: r, fetched: fetched}
	l.changed()
	l.robotsGap = 0
	for _, e := range l.robots {
		l.robotsGap = max(l.robotsGap, e.robots.CrawlDelay(userAgent))
	}
}

// recentStarts counts request starts per second over the last rateSeconds
// seconds, for the current rate in Stats.
type recentStarts struct {
	counts [rateSeconds]int64
	second int64 // the Unix second the latest slot belongs to
}

func (r *recentStarts) add(now time.Time) {
	r.advance(now.Unix())
	r.counts[bucket(r.second)]++
}

// bucket is second's slot; Euclidean so that a clock before 1970 works too.
func bucket(second int64) int64 {
	return (second%rateSeconds + rateSeconds) % rateSeconds
}

// advance moves to second sec, clearing the seconds that had no starts.
func (r *recentStarts) advance(sec int64) {
	if sec <= r.second {
		return
	}
	for s := max(r.second+1, sec-rateSeconds+1); s <= sec; s++ {
		r.counts[bucket(s)] = 0
	}
	r.second = sec
}

// pace is the rate of the starts of the last rateSeconds seconds over
// the seconds they span (at least one second, and at least one start:
// the request that asks is one): unlike perSecond it does not take a
// burst at the start of a crawl for a slow pace.
func (r *recentStarts) pace(now time.Time) float64 {
	r.advance(now.Unix())
	var sum int64
	span := int64(1)
	for back := int64(rateSeconds - 1); back >= 0; back-- {
		c := r.counts[bucket(r.second-back)]
		if c > 0 && sum == 0 {
			span = max(span, back+1)
		}
		sum += c
	}
	return float64(max(sum, 1)) / float64(span)
}

// perSecond is the average rate over the last rateSeconds seconds.
func (r *recentStarts) perSecond(now time.Time) float64 {
	r.advance(now.Unix())
	var sum int64
	for _, c := range r.counts {
		sum += c
	}
	return float64(sum) / rateSeconds
}

// Resettle gives host the limits Config.Settings has for it now, when it
// has a limiter of its own already: a host that became one of the site's
// after its first request (a start URL redirects there, and the start
// host's robots.txt came through the same redirect, at a third party's
// pace) is then crawled at the site's pace. Its limiter is replaced, the
// robots.txt it holds carried over; requests in flight finish on the old
// one. A limiter shared with other hosts (Config.Key) is left as it is.
func (t *Throttle) Resettle(host string) {
	if t.cfg.Settings == nil {
		return
	}
	s := t.cfg.Settings(host).normalized()
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.byHost[host]
	if old == nil || old.set == s {
		return
	}
	old.mu.Lock()
	defer old.mu.Unlock()
	if len(old.hosts) != 1 {
		return
	}
	l := newLimiter(old.key, s)
	l.changes = old.changes
	l.life, l.perHost = old.life, old.perHost
	l.hosts = []string{host}
	l.robots = maps.Clone(old.robots)
	t.byKey[old.key], t.byHost[host] = l, l
}
