package throttle

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// stateVersion is the layout of exported state; ImportState refuses newer.
const stateVersion = 1

// savedState is what survives a restart for one host. Quota use and the
// deferral are tagged with their pass so that a new pass starts clean.
type savedState struct {
	Version int    `json:"v"`
	Pass    uint64 `json:"pass,omitempty"`
	Standing
	// Answered (the exporting host's own, of this pass, like the quota)
	// and ConnRefusedSince keep what tells a host that stopped answering
	// from one never there across a resume: a refusal after answers is
	// not a dead link (see Down).
	Answered int64 `json:"answered,omitempty"`
	// AnsweredAt are the origins (scheme://host) that answered this pass
	// (see limiter.answeredFrom).
	AnsweredAt       []string     `json:"answered_at,omitempty"`
	ConnRefusedSince time.Time    `json:"conn_refused_since,omitzero"`
	Robots           *savedRobots `json:"robots,omitempty"`
	// Held are the URLs paused on their own, with the end of each pause;
	// like PausedUntil they outlive the pass.
	Held map[string]time.Time `json:"held,omitempty"`
	// Starts are the ends of the requests the flood window counted when
	// it was exported (an open one: the export), oldest first, so that a
	// restart does not begin with an empty window the server has not
	// forgotten. (The name is older than the window's counting by ends.)
	Starts []time.Time `json:"starts,omitempty"`
	// Open are the starts of the requests not over when the state was
	// exported, an earlier process's orphans included, oldest first: if
	// the process dies before they are, the next one counts them in flight
	// (see Config.RequestLife).
	Open []time.Time `json:"open,omitempty"`
	// LastStart is when the last request was let go, for the gap
	// (Crawl-delay); Tokens the rate bucket's tokens at Exported, so that
	// a restart starts with the bucket where it was, not full.
	LastStart time.Time `json:"last_start,omitzero"`
	// Slow is the gap between request starts that 429s taught (see
	// slowDown), so that a run resumed right after a stop goes on at that
	// pace: without it the resumed run sent --per-host requests at once
	// into a server that had just said 429 (qa8 P4).
	Slow time.Duration `json:"slow,omitempty"`
	// Floor is the gap the host's limit was found to allow (see
	// slowDown), so that a resumed run does not come back past it a
	// sixteenth per answer and meet the limit again.
	Floor time.Duration `json:"floor,omitempty"`
	// Trial is a halving of the pace still being judged, and ShareBase
	// the share of new URLs the host was found to refuse whatever the
	// pace (see slowDown): without them a resumed run came back from a
	// halving on trial at once, or halved again for refusals it had
	// found not to come from the pace.
	Trial     *savedTrial `json:"trial,omitempty"`
	ShareBase float64     `json:"share_base,omitempty"`
	Tokens    *float64    `json:"tokens,omitempty"`
	Exported  time.Time   `json:"exported,omitzero"`
	// PaceUntil is when the window, the gap, the bucket and the open
	// requests saved here no longer hold back a request: the state is kept until then.
	PaceUntil time.Time `json:"pace_until,omitzero"`
	// RefusingSince is when the host began refusing every request (see
	// Throttle.Refusing), so that a deferral for it says why after a
	// restart too.
	RefusingSince time.Time `json:"refusing_since,omitzero"`
}

// savedTrial is a paceTrial as saved.
type savedTrial struct {
	Gap    time.Duration `json:"gap"`
	Share  float64       `json:"share"`
	Served time.Duration `json:"served,omitempty"`
	Floor  time.Duration `json:"floor,omitempty"`
}

// Standing is what a host's limiter holds against it now: a pause, a
// deferral, a backoff, and what the host's quota for the pass has used.
// ExportState saves it, for a restart, and Stats shows it; each takes it
// from the limiter in one place (limiter.standing). (Embedded in
// savedState, its fields keep their places in the saved layout.)
type Standing struct {
	PausedUntil  time.Time `json:"paused_until,omitzero"`   // end of a Retry-After pause (zero or past = none)
	Deferred     bool      `json:"deferred,omitempty"`      // deferred to the next pass
	BackoffLevel int       `json:"backoff_level,omitempty"` // failures in a row
	BackoffUntil time.Time `json:"backoff_until,omitzero"`  // end of the current backoff step
	UsedRequests int64     `json:"used_requests,omitempty"` // of this pass's request quota
	UsedBytes    int64     `json:"used_bytes,omitempty"`    // of this pass's byte quota
}

// standing is l's Standing; l.mu is held.
func (l *limiter) standing() Standing {
	return Standing{
		PausedUntil:  l.pausedUntil,
		Deferred:     l.deferred,
		BackoffLevel: l.backoffLevel,
		BackoffUntil: l.backoffUntil,
		UsedRequests: l.usedRequests,
		UsedBytes:    l.usedBytes,
	}
}

type savedRobots struct {
	Status  int       `json:"status"`
	Body    []byte    `json:"body,omitempty"`
	Fetched time.Time `json:"fetched"`
}

// ExportState encodes what must survive a restart for host: its limiter's
// pause, deferral, backoff and quota used this pass, and host's own
// robots.txt cache entry when it is the site's answer, not a failure to
// get one (see Robots.saved). With grouped hosts every host of a group exports
// the group's limiter state.
func (t *Throttle) ExportState(host string) ([]byte, error) {
	t.mu.RLock()
	l, pass := t.byHost[host], t.pass
	t.mu.RUnlock()
	if l == nil {
		return nil, fmt.Errorf("export state of %s: host not seen", host)
	}
	l.mu.Lock()
	st := savedState{
		Version:          stateVersion,
		Pass:             pass,
		Standing:         l.standing(),
		Answered:         l.answered[host],
		AnsweredAt:       slices.Sorted(maps.Keys(l.answeredAt)),
		ConnRefusedSince: l.silence.since,
		Held:             maps.Clone(l.held),
		RefusingSince:    l.refusingSince,
	}
	now := t.now()
	if l.set.WindowMax > 0 {
		st.Starts = l.starts.recent(now, l.set.WindowMax, l.set.Window)
		if n := len(st.Starts); n > 0 {
			st.PaceUntil = st.Starts[n-1].Add(l.set.Window)
		}
	}
	if l.life > 0 {
		st.Open = append(slices.Clone(l.liveOrphans(now)), l.openAt...)
		if n := len(st.Open); n > 0 {
			if until := st.Open[n-1].Add(l.life); until.After(st.PaceUntil) {
				st.PaceUntil = until
			}
		}
	}
	st.Slow, st.Floor, st.ShareBase = l.slow, l.floor, l.shareBase
	if l.trial.gap > 0 {
		st.Trial = &savedTrial{Gap: l.trial.gap, Share: l.trial.share, Served: l.trial.served, Floor: l.trial.floor}
	}
	if !l.lastStart.IsZero() {
		st.LastStart = l.lastStart
		if until := l.lastStart.Add(l.gap()); until.After(st.PaceUntil) {
			st.PaceUntil = until
		}
	}
	if l.bucket != nil {
		tokens := l.bucket.TokensAt(now)
		st.Tokens, st.Exported = &tokens, now
		if short := float64(l.set.Burst) - tokens; short > 0 {
			if until := now.Add(time.Duration(short / l.set.Rate * float64(time.Second))); until.After(st.PaceUntil) {
				st.PaceUntil = until
			}
		}
	}
	if e, ok := l.robots[host]; ok && e.robots.saved() {
		st.Robots = &savedRobots{Status: e.robots.status, Body: e.robots.body, Fetched: e.fetched}
	}
	l.mu.Unlock()
	b, err := json.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("export state of %s: %w", host, err)
	}
	return b, nil
}

// ImportState merges state exported earlier into host's limiter, keeping
// whichever is stricter: the later pause and backoff, the larger quota use
// (only when exported during the running pass, see StartPass) and the more
// recently fetched robots.txt. Import before the host's first Reserve so a
// resumed pass never hits a host before its pause ends.
func (t *Throttle) ImportState(host string, b []byte) error {
	var st savedState
	if err := json.Unmarshal(b, &st); err != nil {
		return fmt.Errorf("import state of %s: %w", host, err)
	}
	if st.Version > stateVersion {
		return fmt.Errorf("import state of %s: layout version %d is newer than %d", host, st.Version, stateVersion)
	}
	l := t.limiterFor(host)
	t.mu.RLock()
	pass := t.pass
	t.mu.RUnlock()

	l.mu.Lock()
	defer l.mu.Unlock()
	// What was just read needs no saving again.
	defer func(dirty bool) { l.dirty = dirty }(l.dirty)
	if st.PausedUntil.After(l.pausedUntil) {
		l.pausedUntil = st.PausedUntil
	}
	if st.BackoffUntil.After(l.backoffUntil) {
		l.backoffUntil = st.BackoffUntil
	}
	l.backoffLevel = max(l.backoffLevel, st.BackoffLevel)
	l.rested(t.now())
	if l.refusingSince.IsZero() {
		l.refusingSince = st.RefusingSince
	}
	if l.set.WindowMax > 0 && len(st.Starts) > 0 {
		l.starts.restore(st.Starts, l.set.WindowMax)
		if last := st.Starts[len(st.Starts)-1]; last.After(l.lastStart) {
			l.lastStart = last
		}
	}
	if st.LastStart.After(l.lastStart) {
		l.lastStart = st.LastStart
	}
	l.floor = max(l.floor, min(st.Floor, maxSlow))
	if st.Trial != nil && l.trial.gap == 0 && st.Trial.Gap > 0 {
		l.trial = paceTrial{gap: min(st.Trial.Gap, maxSlow), share: min(max(st.Trial.Share, 0), 1), served: st.Trial.Served, floor: min(st.Trial.Floor, maxSlow)}
	}
	if l.shareBase == 0 {
		l.shareBase = min(max(st.ShareBase, 0), 1)
	}
	l.slow = max(l.slow, min(st.Slow, maxSlow), l.floor)
	l.adopt(st.Open, t.now())
	if st.Tokens != nil && l.bucket != nil {
		// The bucket refilled at the rate since the export; take from a
		// fresh one what it has more than that.
		now := t.now()
		tokens := *st.Tokens + l.set.Rate*now.Sub(st.Exported).Seconds()
		if have := l.bucket.TokensAt(now); tokens < have {
			l.bucket.ReserveN(now, min(int(math.Ceil(have-tokens)), l.set.Burst))
		}
	}
	for k, until := range st.Held {
		if l.held == nil {
			l.held = make(map[string]time.Time)
		}
		if until.After(l.held[k]) {
			l.held[k] = until
		}
	}
	if st.Pass == pass {
		l.deferred = l.deferred || st.Deferred
		l.usedRequests = max(l.usedRequests, st.UsedRequests)
		l.usedBytes = max(l.usedBytes, st.UsedBytes)
		if st.Answered > 0 {
			if l.answeredAt == nil {
				l.answeredAt = make(map[string]bool)
			}
			for _, o := range st.AnsweredAt {
				l.answeredAt[o] = true
			}
			if len(st.AnsweredAt) == 0 {
				l.answeredAt[anyOrigin] = true // saved before origins were kept
			}
		}
		if st.Answered > l.answered[host] {
			if l.answered == nil {
				l.answered = make(map[string]int64)
			}
			l.answered[host] = st.Answered
			// Nothing has answered since: the note of a host that
			// stops answering says so. Whether it is down is this
			// run's to see (see silence.began).
			if st.ConnRefusedSince.After(l.silence.since) {
				l.silence.since = st.ConnRefusedSince
			}
		}
	}
	if sr := st.Robots; sr != nil {
		// A failure saved by an older version is no verdict for this
		// run either (see Robots.saved).
		if e, ok := l.robots[host]; !ok || sr.Fetched.After(e.fetched) {
			if r := ParseRobots(sr.Status, sr.Body); r.saved() {
				l.setRobots(host, r, sr.Fetched, t.cfg.UserAgent)
			}
		}
	}
	return nil
}

// HostStats is a snapshot of one limiter key for the status page and the
// summary.
type HostStats struct {
	Key      string
	Hosts    []string // the hosts sharing the key
	Requests int64    // requests started since the throttle was made
	Bytes    int64    // body bytes read since the throttle was made
	Rate     float64  // requests started per second over the last 10 s
	// Limit is the most request starts per second the host's settings
	// allow (rate, window, crawl delay), 0 when none of them is set.
	Limit         float64
	QuotaRequests int64 // the per-pass quotas configured, 0 = none
	QuotaBytes    int64
	InFlight      int           // requests running now
	MaxInFlight   int           // the cap in force now, adaptive included (0 = none)
	Gap           time.Duration // the minimum gap between starts in force now
	Latency       time.Duration // moving average of time to first byte
	Standing
	Waited        time.Duration // time a request to the host was waiting for its turn
	ReadWait      time.Duration // time body reads waited for the byte budgets
	Robots        []RobotsStatus
	IgnoresRobots bool
}

// RobotsStatus describes one host's cached robots.txt.
type RobotsStatus struct {
	Host       string
	Kind       RobotsKind
	Status     int
	Fetched    time.Time
	Fresh      bool
	CrawlDelay time.Duration
}

// Stats returns a snapshot of every limiter key, sorted by key.
func (t *Throttle) Stats() []HostStats {
	t.mu.RLock()
	limiters := make([]*limiter, 0, len(t.byKey))
	for _, l := range t.byKey {
		limiters = append(limiters, l)
	}
	t.mu.RUnlock()
	slices.SortFunc(limiters, func(a, b *limiter) int { return strings.Compare(a.key, b.key) })

	now := t.now()
	out := make([]HostStats, 0, len(limiters))
	for _, l := range limiters {
		l.mu.Lock()
		s := HostStats{
			Key:           l.key,
			Hosts:         slices.Clone(l.hosts),
			Requests:      l.requests,
			Bytes:         l.bytesTotal,
			Rate:          l.recent.perSecond(now),
			Limit:         l.limit(),
			QuotaRequests: l.set.QuotaRequests,
			QuotaBytes:    l.set.QuotaBytes,
			InFlight:      l.inFlight,
			MaxInFlight:   l.maxInFlight(),
			Gap:           l.gap(),
			Latency:       l.adapt.latency,
			Standing:      l.standing(),
			Waited:        l.waited,
			ReadWait:      l.readWait,
			IgnoresRobots: l.set.IgnoreRobots,
		}
		if !l.waitingSince.IsZero() {
			s.Waited += now.Sub(l.waitingSince)
		}
		for _, h := range s.Hosts {
			if e, ok := l.robots[h]; ok {
				s.Robots = append(s.Robots, RobotsStatus{
					Host:       h,
					Kind:       e.robots.Kind(),
					Status:     e.robots.status,
					Fetched:    e.fetched,
					Fresh:      now.Sub(e.fetched) < e.robots.ttl(),
					CrawlDelay: e.robots.CrawlDelay(t.cfg.UserAgent),
				})
			}
		}
		l.mu.Unlock()
		out = append(out, s)
	}
	return out
}

// holding says whether a URL's own pause is still running.
func holding(held map[string]time.Time, now time.Time) bool {
	for _, until := range held {
		if until.After(now) {
			return true
		}
	}
	return false
}

// Expired says whether state exported earlier holds nothing a pass still
// needs: no pause or backoff left to run (a URL's own included), a robots.txt old enough to be
// fetched again anyway, and quota use, answers or a deferral only of another pass
// than the running one (see StartPass). Such state can be forgotten.
// State that cannot be read is not expired: ImportState reports it.
func (t *Throttle) Expired(b []byte) bool {
	var st savedState
	if err := json.Unmarshal(b, &st); err != nil || st.Version > stateVersion {
		return false
	}
	t.mu.RLock()
	pass := t.pass
	t.mu.RUnlock()
	now := t.now()
	switch {
	case st.Pass == pass && (st.UsedRequests > 0 || st.UsedBytes > 0 || st.Deferred || st.Answered > 0),
		st.PausedUntil.After(now), st.BackoffUntil.After(now), holding(st.Held, now),
		st.PaceUntil.After(now):
		return false
	case st.Robots != nil:
		if r := ParseRobots(st.Robots.Status, st.Robots.Body); r.saved() {
			return now.Sub(st.Robots.Fetched) >= r.ttl()
		}
	}
	return true
}
