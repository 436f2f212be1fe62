package cluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// HeldError is the refusal of shards another worker holds.
type HeldError struct {
	Holder string
	Shards []int
	// Twin: the holder is another live process under this worker's own
	// name (a second worker started with the same --name, or the
	// database file's name, elsewhere); it renewed the leases while this
	// one waited for them to lapse. Where says where it runs, as it told.
	Twin  bool
	Where string
}

func (e *HeldError) Error() string {
	if e.Twin {
		return fmt.Sprintf("shards %s are held by another live process of worker %q%s, which renewed them while this one waited for them to lapse: two processes may not run under one name (stop that one: a worker started again on its own --db file takes its shards back at once; or give this one another --name and --shards)", FormatShards(e.Shards), e.Holder, e.Where)
	}
	return fmt.Sprintf("shards %s are held by worker %q (give this worker other --shards, or stop that one)", FormatShards(e.Shards), e.Holder)
}

// identity is who writes a lease: the worker's name, its process's token
// and its database's ID (store.DB.ID), and where that database is.
type identity struct {
	name, token, db string
	host, path      string
}

// leases are the shard leases one worker holds.
type leases struct {
	kv bucket
	id identity
	// value is what this process writes into each lease (leaseValue). The
	// token tells a late write of this process, which landed after the
	// renewal gave up waiting on it, from a write of a restarted worker
	// of the same name.
	value []byte
	ttl   time.Duration
	clock clock          // the keeper's time (realClock but in tests)
	revs  map[int]uint64 // shard -> revision of our last write
	// sent is, by shard, when our last write that landed was sent. The
	// server stamps a write when it arrives, no earlier, so the lease
	// lives at least until sent + ttl.
	sent map[int]time.Time
	// fault, a test hook, runs after a lease write landed; an error it
	// returns is taken as the write's failure (a timeout after the server
	// applied it). It may also delay the write's answer, as a slow server
	// does, until ctx ends.
	fault func(ctx context.Context, shard int) error
	// owner reads the owner report of the worker of our name (nil when
	// there is none); acquire asks it at most once.
	owner func(ctx context.Context) (*Owner, error)
}

// newToken is a worker process's own token: 64 random bits.
func newToken() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("leases: a token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// leaseValue is the value of a lease: name@token@db.
func leaseValue(id identity) []byte { return []byte(id.name + "@" + id.token + "@" + id.db) }

// holder is a lease's value read back: token and db are "" in a lease
// written before leases carried them.
type holder struct{ name, token, db string }

func parseLease(v []byte) holder {
	var h holder
	h.name, h.token, _ = strings.Cut(string(v), "@")
	h.token, h.db, _ = strings.Cut(h.token, "@")
	return h
}

// acquire takes the lease of every shard, or none. A shard another worker
// holds is refused at once, with every such shard named by its holder. A
// lease held under our name by another process is taken back at once
// only when that process ran on this machine with this very database file
// (it is gone: this process holds the file's lock now); otherwise it may
// be a live twin, so acquire waits for the lease to lapse, holding no
// lease meanwhile (none is renewed before acquire returns), refuses the
// shards if it is renewed meanwhile (see await), and takes them all once
// it lapsed.
func acquire(ctx context.Context, b buckets, id identity, shards []int, clk clock, logf func(string, ...any)) (*leases, error) {
	st, err := b.leases.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("leases: %w", err)
	}
	l := &leases{kv: b.leases, id: id, value: leaseValue(id), ttl: st.TTL(), clock: clk,
		revs: make(map[int]uint64, len(shards)), sent: make(map[int]time.Time, len(shards))}
	if l.ttl <= 0 {
		return nil, fmt.Errorf("leases: bucket %s has no TTL: %w", leaseBucket, ErrNotSetUp)
	}
	var (
		report *Owner
		read   bool
	)
	l.owner = func(ctx context.Context) (*Owner, error) {
		if !read {
			var o Owner
			found, err := getJSON(ctx, b.state, ownerKey(id.name), &o)
			if err != nil {
				return nil, err
			}
			if found {
				report = &o
			}
			read = true
		}
		return report, nil
	}
	for waited := false; ; waited = true {
		held := map[string][]int{}
		twins := map[int]uint64{} // shard -> revision of a twin's lease
		for _, shard := range shards {
			sent := l.clock.now()
			h, twin, rev, err := l.take(ctx, shard)
			switch {
			case err != nil:
				l.release(context.WithoutCancel(ctx))
				return nil, err
			case twin:
				twins[shard] = rev
			case h != "":
				held[h] = append(held[h], shard)
			default:
				l.revs[shard], l.sent[shard] = rev, sent
			}
		}
		var err error
		if len(held) == 0 {
			var elsewhere map[int]uint64
			if elsewhere, err = l.twinElsewhere(ctx, shards); err == nil {
				maps.Copy(twins, elsewhere)
				if len(twins) == 0 {
					return l, nil
				}
			}
		}
		// Nothing is kept while waiting for a twin's leases to lapse: the
		// keeper starts only once acquire returns, and leases taken now
		// would lapse unrenewed during a wait of up to 2*TTL.
		l.release(context.WithoutCancel(ctx))
		switch {
		case len(held) > 0 || err != nil:
			return nil, refusal(held, err)
		case waited: // a process of our name took them again meanwhile
			return nil, &HeldError{Holder: l.id.name, Shards: slices.Sorted(maps.Keys(twins)), Twin: true, Where: l.twinWhere(ctx)}
		}
		if err := l.await(ctx, twins, logf); err != nil {
			return nil, err
		}
	}
}

// refusal is acquire's error: a HeldError for each worker holding some of
// the shards, and err.
func refusal(held map[string][]int, err error) error {
	holders := slices.Sorted(maps.Keys(held))
	errs := make([]error, len(holders))
	for i, h := range holders {
		errs[i] = &HeldError{Holder: h, Shards: held[h]}
	}
	return errors.Join(append(errs, err)...)
}

// take creates one lease, or takes back our own, and returns its revision.
// Otherwise holder names another worker holding it, or twin says another
// process of our name holds it, which may be alive (rev is then the
// lease's revision).
func (l *leases) take(ctx context.Context, shard int) (holder string, twin bool, rev uint64, err error) {
	key := leaseKey(shard)
	for range 3 { // a lease may expire between Create and Get
		rev, err = l.kv.Create(ctx, key, l.value)
		if err == nil {
			return "", false, rev, nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return "", false, 0, fmt.Errorf("lease of shard %d: %w", shard, err)
		}
		e, err := l.kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return "", false, 0, fmt.Errorf("lease of shard %d: %w", shard, err)
		}
		h := parseLease(e.Value())
		if h.name != l.id.name {
			return h.name, false, 0, nil
		}
		if gone, err := l.gone(ctx, h); err != nil {
			return "", false, 0, fmt.Errorf("lease of shard %d: %w", shard, err)
		} else if !gone {
			return "", true, e.Revision(), nil
		}
		rev, err = l.kv.Update(ctx, key, l.value, e.Revision())
		if err == nil {
			return "", false, rev, nil
		}
		if !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return "", false, 0, fmt.Errorf("lease of shard %d: %w", shard, err)
		}
	}
	return "", false, 0, fmt.Errorf("lease of shard %d: it keeps changing hands", shard)
}

// gone says whether the process of our name that wrote lease h is known
// to be gone: it wrote it with this very database file (the same ID, and,
// by its owner report, the same path on the same machine), whose lock
// this process holds now. Anything else may be a live twin.
func (l *leases) gone(ctx context.Context, h holder) (bool, error) {
	if h.db == "" || h.db != l.id.db || l.id.path == "" {
		return false, nil
	}
	o, err := l.owner(ctx)
	if err != nil || o == nil {
		return false, err
	}
	return o.Token == h.token && o.Host == l.id.host && o.DBPath == l.id.path, nil
}

// twinElsewhere returns the leases, outside shards, that the last process
// of our name to report as owner still holds (shard -> revision), unless
// it is gone (see gone). Two live processes under one name, even on
// other shards, would overwrite each other's reports.
func (l *leases) twinElsewhere(ctx context.Context, shards []int) (map[int]uint64, error) {
	o, err := l.owner(ctx)
	if err != nil || o == nil || o.Released || o.Token == l.id.token {
		return nil, err
	}
	its, err := ParseShards(o.Shards)
	if err != nil {
		return nil, nil // not a range we can read: nothing to wait for
	}
	held, err := leaseEntries(ctx, l.kv)
	if err != nil {
		return nil, err
	}
	out := map[int]uint64{}
	for _, s := range its {
		e := held[s]
		if e == nil || slices.Contains(shards, s) {
			continue
		}
		h := parseLease(e.Value())
		if h.name != l.id.name || h.token != o.Token {
			continue
		}
		if gone, err := l.gone(ctx, h); err != nil {
			return nil, err
		} else if !gone {
			out[s] = e.Revision()
		}
	}
	return out, nil
}

// await waits for the leases a twin holds (shard -> the revision read)
// to lapse, its shards that this worker wants and its others alike. When
// any is written again meanwhile, the twin is alive, and this worker is
// refused. A write is seen at once, by a watch of those keys; a lapse is
// not (the server drops the lease without a word to watchers), so the
// keys are also read every TTL/20 or so: a request per key, never a read
// of every lease, whose watch can miss its end when a lease lapses
// during it (entries).
func (l *leases) await(ctx context.Context, twins map[int]uint64, logf func(string, ...any)) error {
	waiting := slices.Sorted(maps.Keys(twins))
	where := l.twinWhere(ctx)
	limit := 2 * l.ttl
	logf("shards %s are held by another process of worker %s%s: waiting up to %s for their leases to lapse, holding no shard meanwhile (if that process lives, it renews them and this one stops)",
		FormatShards(waiting), l.id.name, where, limit)
	keys := make([]string, len(waiting))
	for i, s := range waiting {
		keys[i] = leaseKey(s)
	}
	var written <-chan jetstream.KeyValueEntry
	if watch, err := l.kv.WatchFiltered(ctx, keys, jetstream.UpdatesOnly()); err == nil {
		defer func() { _ = watch.Stop() }()
		written = watch.Updates()
	}
	every := min(max(l.ttl/20, 50*time.Millisecond), time.Second)
	tick := time.NewTicker(every)
	defer tick.Stop()
	deadline := time.After(limit)
	for len(twins) > 0 {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-deadline:
			return fmt.Errorf("the leases of shards %s, held by another process of worker %s%s, did not lapse in %s: try again, or give this worker another --name", FormatShards(waiting), l.id.name, where, limit)
		case <-tick.C:
		case _, ok := <-written:
			if !ok {
				written = nil // the ticks go on
			}
		}
		for shard, rev := range twins {
			e, err := l.kv.Get(ctx, leaseKey(shard))
			switch {
			case errors.Is(err, jetstream.ErrKeyNotFound):
				delete(twins, shard)
			case err != nil:
				return fmt.Errorf("lease of shard %d: %w", shard, err)
			case e.Revision() != rev:
				return &HeldError{Holder: l.id.name, Shards: waiting, Twin: true, Where: where}
			}
		}
	}
	return nil
}

// twinWhere says where the other process of our name runs, by its owner
// report, as " (database FILE on host HOST)", or "".
func (l *leases) twinWhere(ctx context.Context) string {
	o, err := l.owner(ctx)
	if err != nil || o == nil || o.DBPath == "" {
		return ""
	}
	if o.Host == "" {
		return fmt.Sprintf(" (database %s)", o.DBPath)
	}
	return fmt.Sprintf(" (database %s on host %s)", o.DBPath, o.Host)
}

// Renewal timing, in parts of the lease TTL. A lease lives at least a TTL
// from the sending of its last write that landed (the server stamps it on
// arrival). It is written again TTL/3 after that; the worker stops only
// when 3/4 of the TTL passed without a write that landed, which leaves a
// write 5/12 of the TTL to land, tried again as often as it fails, and the
// last quarter for the worker's requests to end before the lease can
// lapse and another worker take the shard. (Renewing more often would
// leave more time, at the cost of a write per shard per round on a server
// that fsyncs each.) One slow or failed round costs
// nothing: on a machine at load 20-30 a round of 128 writes took longer
// than the TTL/6 the worker once allowed it, and every worker gave up all
// its shards (qa4 F6).
const (
	renewEvery = 3 // a lease is written again TTL/renewEvery after the last
	giveUpAt   = 4 // and the worker stops TTL*3/giveUpAt after it, without one
	// writeFor bounds one write, TTL/writeFor, so that a request whose
	// answer never comes (lost in a reconnection) is sent again.
	writeFor = 4
	// retryIn is how soon, TTL/retryIn, a round with failed writes is
	// followed by another for them.
	retryIn = 20
)

// renewInFlight bounds the lease writes of one renewal round. Written one
// after another, the 256 leases of a worker owning every shard took longer
// than a round could wait on a starved machine.
const renewInFlight = 16

// due returns the shards whose lease should be written again at now:
// all but those a retry renewed moments ago (less than TTL/(2*renewEvery)),
// so that the leases stay in step and a round is one burst of writes.
func (l *leases) due(now time.Time) []int {
	var out []int
	for shard, sent := range l.sent {
		if now.Sub(sent) >= l.ttl/(2*renewEvery) {
			out = append(out, shard)
		}
	}
	sort.Ints(out)
	return out
}

// deadline is when the worker must have stopped fetching, unless a write
// lands before: giveUpAt after the oldest write that landed.
func (l *leases) deadline() time.Time {
	return l.oldest().Add(l.ttl * (giveUpAt - 1) / giveUpAt)
}

// oldest is the sending of the oldest lease write that landed.
func (l *leases) oldest() time.Time {
	var out time.Time
	for _, sent := range l.sent {
		if out.IsZero() || sent.Before(out) {
			out = sent
		}
	}
	return out
}

// renew writes the leases of shards again, each only if it is still
// ours. A lease renewed before another's write failed keeps its new
// revision, so the retry sends the right one; a write that failed but
// landed all the same is recognised by this process's token and renewed
// from its revision.
func (l *leases) renew(ctx context.Context, shards []int) error {
	var (
		mu     sync.Mutex
		wg     sync.WaitGroup
		lost   error
		failed []int
		first  error
	)
	fail := func(shard int, err error) {
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			first = fmt.Errorf("renew lease of shard %d: %w", shard, err)
		}
		failed = append(failed, shard)
	}
	// The writes below update l.revs, which must not be read meanwhile.
	revs := maps.Clone(l.revs)
	// All at once first; a write that met another revision is done again
	// one by one below (renewOne), which reads the lease. A test's fault
	// hook sees every write one by one.
	if all, ok := l.kv.(allUpdater); ok && l.fault == nil && len(shards) > 0 {
		shards = l.renewAll(ctx, all, shards, revs, fail)
	}
	slots := make(chan struct{}, renewInFlight)
	for _, shard := range shards {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			fail(shard, ctx.Err())
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			wctx, cancel := l.clock.withDeadline(ctx, l.clock.now().Add(l.ttl/writeFor))
			defer cancel()
			next, sent, err := l.renewOne(wctx, shard, revs[shard])
			if err != nil && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) && !errors.Is(err, jetstream.ErrKeyNotFound) {
				fail(shard, err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				lost = &lostError{shard: shard, cause: err}
				return
			}
			l.revs[shard], l.sent[shard] = next, sent
		}()
	}
	wg.Wait()
	switch {
	case lost != nil:
		return lost
	case len(failed) == 1:
		return first
	case len(failed) > 1:
		sort.Ints(failed)
		return fmt.Errorf("%d lease writes failed (shards %s); the first: %w", len(failed), FormatShards(failed), first)
	}
	return nil
}

// allUpdater is a bucket that writes many keys at once (kvBucket.updateAll).
type allUpdater interface {
	updateAll(ctx context.Context, keys []string, value []byte, revs []uint64) ([]uint64, []error)
}

// renewAll writes the leases of shards again at once, each over its
// revision in revs, notes those that landed, passes those that failed to
// fail, and returns those whose lease was not at its revision: renewOne
// tells a late write of ours from a lost lease.
func (l *leases) renewAll(ctx context.Context, all allUpdater, shards []int, revs map[int]uint64, fail func(int, error)) (stale []int) {
	keys := make([]string, len(shards))
	at := make([]uint64, len(shards))
	for i, shard := range shards {
		keys[i], at[i] = leaseKey(shard), revs[shard]
	}
	wctx, cancel := l.clock.withDeadline(ctx, l.clock.now().Add(l.ttl/writeFor))
	defer cancel()
	sent := l.clock.now()
	next, errs := all.updateAll(wctx, keys, l.value, at)
	for i, shard := range shards {
		switch err := errs[i]; {
		case err == nil:
			l.revs[shard], l.sent[shard] = next[i], sent
		case errors.Is(err, jetstream.ErrKeyRevisionMismatch):
			stale = append(stale, shard)
		default:
			fail(shard, err)
		}
	}
	return stale
}

// renewOne writes one lease over revision rev, and says when the write
// that landed was sent. When rev is not the lease's last, the lease is
// read: if it still holds this process's value an earlier write of ours
// landed after we gave up on it, and the lease is renewed over that
// revision; anything else (another token: this worker restarted
// elsewhere; another name; no lease) means it is lost.
func (l *leases) renewOne(ctx context.Context, shard int, rev uint64) (uint64, time.Time, error) {
	key := leaseKey(shard)
	sent := l.clock.now()
	next, err := l.write(ctx, shard, rev)
	if !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return next, sent, err
	}
	e, gerr := l.kv.Get(ctx, key)
	switch {
	case errors.Is(gerr, jetstream.ErrKeyNotFound):
		return 0, sent, gerr
	case gerr != nil:
		// Not known lost: the write is tried again.
		return 0, sent, fmt.Errorf("read the lease after a stale revision: %w", gerr)
	case !bytes.Equal(e.Value(), l.value):
		return 0, sent, err
	}
	sent = l.clock.now()
	next, err = l.write(ctx, shard, e.Revision())
	return next, sent, err
}

func (l *leases) write(ctx context.Context, shard int, rev uint64) (uint64, error) {
	next, err := l.kv.Update(ctx, leaseKey(shard), l.value, rev)
	if err == nil && l.fault != nil {
		err = l.fault(ctx, shard)
	}
	return next, err
}

// lostError: a lease expired or was taken while we held it.
type lostError struct {
	shard int
	cause error
}

func (e *lostError) Error() string {
	return fmt.Sprintf("lost the lease of shard %d (expired or taken over): %v", e.shard, e.cause)
}

// keep renews the leases until ctx ends (see renewEvery), and calls lost
// (once) when a lease is gone, or when no write of one landed for
// TTL*3/giveUpAt: past that, the lease may soon lapse at the server and
// another worker hold the shard, so this one must stop fetching its hosts
// before. renewed runs after each round that renewed every lease due; it
// must not block.
func (l *leases) keep(ctx context.Context, lost func(error), logf func(string, ...any), renewed func()) {
	// From the oldest write, not from now: taking many leases one after
	// another on a slow server can take a good part of the TTL.
	next := l.oldest().Add(l.ttl / renewEvery)
	for {
		if !l.clock.sleepUntil(ctx, next) {
			return
		}
		rctx, cancel := l.clock.withDeadline(ctx, l.deadline())
		err := l.renew(rctx, l.due(l.clock.now()))
		cancel()
		if ctx.Err() != nil {
			return
		}
		var le *lostError
		now := l.clock.now()
		switch {
		case errors.As(err, &le):
			lost(err)
			return
		case !now.Before(l.deadline()):
			lost(fmt.Errorf("leases not renewed for %s (their TTL is %s): giving up shards %s; the last try: %v",
				now.Sub(l.oldest()).Round(time.Millisecond), l.ttl, FormatShards(l.shards()), err))
			return
		case err == nil:
			renewed()
			next = l.oldest().Add(l.ttl / renewEvery)
		default:
			logf("%v (retrying; the shards are given up at %s unless a write lands)", err, l.deadline().Format(time.TimeOnly))
			next = now.Add(l.ttl / retryIn)
		}
	}
}

func (l *leases) shards() []int {
	out := make([]int, 0, len(l.revs))
	for s := range l.revs {
		out = append(out, s)
	}
	sort.Ints(out)
	return out
}

// release deletes the leases still ours, so another worker may take them
// at once.
// A renewal cut short by the worker's end may have landed unseen: a lease
// that still holds this process's value is deleted at its revision.
func (l *leases) release(ctx context.Context) {
	var wg sync.WaitGroup
	slots := make(chan struct{}, renewInFlight)
	for shard, rev := range l.revs {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			key := leaseKey(shard)
			if l.kv.Delete(ctx, key, jetstream.LastRevision(rev)) == nil {
				return
			}
			if e, err := l.kv.Get(ctx, key); err == nil && bytes.Equal(e.Value(), l.value) {
				_ = l.kv.Delete(ctx, key, jetstream.LastRevision(e.Revision()))
			}
		}()
	}
	wg.Wait()
	l.revs, l.sent = map[int]uint64{}, map[int]time.Time{}
}

// Holders returns the worker holding each shard's lease, "" where none does.
func Holders(ctx context.Context, js jetstream.JetStream) ([Shards]string, error) {
	b, err := openBuckets(ctx, js)
	if err != nil {
		return [Shards]string{}, err
	}
	values, err := leaseValues(ctx, b.leases)
	if err != nil {
		return [Shards]string{}, err
	}
	return holdersOf(values), nil
}

// holdersOf is Holders of leases already read.
func holdersOf(leases [Shards][]byte) [Shards]string {
	var out [Shards]string
	for s, v := range leases {
		if v != nil {
			out[s] = parseLease(v).name
		}
	}
	return out
}

// leaseValues reads every lease: its raw value by shard, nil where none.
func leaseValues(ctx context.Context, kv bucket) ([Shards][]byte, error) {
	var out [Shards][]byte
	es, err := leaseEntries(ctx, kv)
	for s, e := range es {
		if e != nil {
			out[s] = e.Value()
		}
	}
	return out, err
}

// leaseEntries reads every lease, by shard, nil where none: one watch for
// all of them (entries), not a request per shard.
func leaseEntries(ctx context.Context, kv bucket) ([Shards]jetstream.KeyValueEntry, error) {
	var out [Shards]jetstream.KeyValueEntry
	es, err := entries(ctx, kv, leaseKeys)
	if err != nil {
		return out, fmt.Errorf("the leases: %w", err)
	}
	for _, e := range es {
		if s, ok := leaseShard(e.Key()); ok {
			out[s] = e
		}
	}
	return out, nil
}
