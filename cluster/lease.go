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
	kv jetstream.KeyValue
	id identity
	// value is what this process writes into each lease (leaseValue). The
	// token tells a late write of this process, which landed after the
	// renewal gave up waiting on it, from a write of a restarted worker
	// of the same name.
	value []byte
	ttl   time.Duration
	revs  map[int]uint64 // shard -> revision of our last write
	// fault, a test hook, runs after a lease write landed; an error it
	// returns is taken as the write's failure (a timeout after the server
	// applied it).
	fault func(shard int) error
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
// be a live twin, so acquire waits for the lease to lapse and refuses the
// shards if it is renewed meanwhile (see await).
func acquire(ctx context.Context, b buckets, id identity, shards []int, logf func(string, ...any)) (*leases, error) {
	st, err := b.leases.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("leases: %w", err)
	}
	l := &leases{kv: b.leases, id: id, value: leaseValue(id), ttl: st.TTL(), revs: make(map[int]uint64, len(shards))}
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
	held := map[string][]int{}
	pending := map[int]uint64{} // shard -> revision of a twin's lease
	for _, shard := range shards {
		h, rev, err := l.take(ctx, shard)
		switch {
		case err != nil:
			l.release(context.WithoutCancel(ctx))
			return nil, err
		case h == twin:
			pending[shard] = rev
		case h != "":
			held[h] = append(held[h], shard)
		default:
			l.revs[shard] = rev
		}
	}
	if len(held) == 0 {
		var elsewhere map[int]uint64
		if elsewhere, err = l.twinElsewhere(ctx, shards); err == nil && len(pending)+len(elsewhere) > 0 {
			err = l.await(ctx, pending, elsewhere, logf)
		}
		if err == nil {
			return l, nil
		}
	}
	l.release(context.WithoutCancel(ctx))
	holders := make([]string, 0, len(held))
	for h := range held {
		holders = append(holders, h)
	}
	sort.Strings(holders)
	errs := make([]error, len(holders))
	for i, h := range holders {
		errs[i] = &HeldError{Holder: h, Shards: held[h]}
	}
	return nil, errors.Join(append(errs, err)...)
}

// twin is what take says of a lease another process of our name holds,
// which may be alive.
const twin = "\x00twin"

// take creates one lease, or takes back our own; holder names another
// worker holding it, or is twin, with the lease's revision.
func (l *leases) take(ctx context.Context, shard int) (holder string, rev uint64, err error) {
	key := leaseKey(shard)
	for range 3 { // a lease may expire between Create and Get
		rev, err = l.kv.Create(ctx, key, l.value)
		if err == nil {
			return "", rev, nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return "", 0, fmt.Errorf("lease of shard %d: %w", shard, err)
		}
		e, err := l.kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return "", 0, fmt.Errorf("lease of shard %d: %w", shard, err)
		}
		h := parseLease(e.Value())
		if h.name != l.id.name {
			return h.name, 0, nil
		}
		if gone, err := l.gone(ctx, h); err != nil {
			return "", 0, fmt.Errorf("lease of shard %d: %w", shard, err)
		} else if !gone {
			return twin, e.Revision(), nil
		}
		rev, err = l.kv.Update(ctx, key, l.value, e.Revision())
		if err == nil {
			return "", rev, nil
		}
		if !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return "", 0, fmt.Errorf("lease of shard %d: %w", shard, err)
		}
	}
	return "", 0, fmt.Errorf("lease of shard %d: it keeps changing hands", shard)
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
	out := map[int]uint64{}
	for _, s := range its {
		if slices.Contains(shards, s) {
			continue
		}
		e, err := l.kv.Get(ctx, leaseKey(s))
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("lease of shard %d: %w", s, err)
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

// await waits for the leases a twin holds to lapse: pending (shard -> the
// revision read) are ours to take then, elsewhere are its other shards,
// only watched. When any is written again meanwhile, the twin is alive,
// and this worker is refused. It polls: the server lets a lease lapse
// without a word to watchers.
func (l *leases) await(ctx context.Context, pending, elsewhere map[int]uint64, logf func(string, ...any)) error {
	waiting := slices.Sorted(maps.Keys(pending))
	waiting = append(waiting, slices.Collect(maps.Keys(elsewhere))...)
	slices.Sort(waiting)
	where := l.twinWhere(ctx)
	limit := 2 * l.ttl
	logf("shards %s are held by another process of worker %s%s: waiting up to %s for their leases to lapse (if that process lives, it renews them and this one stops)",
		FormatShards(waiting), l.id.name, where, limit)
	every := min(max(l.ttl/20, 50*time.Millisecond), time.Second)
	tick := time.NewTicker(every)
	defer tick.Stop()
	deadline := time.After(limit)
	var renewed []int
	for len(pending)+len(elsewhere) > 0 && len(renewed) == 0 {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-deadline:
			return fmt.Errorf("the leases of shards %s, held by another process of worker %s%s, did not lapse in %s: try again, or give this worker another --name", FormatShards(waiting), l.id.name, where, limit)
		case <-tick.C:
		}
		for _, shard := range slices.Sorted(maps.Keys(elsewhere)) {
			e, err := l.kv.Get(ctx, leaseKey(shard))
			switch {
			case errors.Is(err, jetstream.ErrKeyNotFound):
				delete(elsewhere, shard)
			case err != nil:
				return fmt.Errorf("lease of shard %d: %w", shard, err)
			case e.Revision() != elsewhere[shard]:
				renewed = append(renewed, shard)
			}
		}
		for _, shard := range slices.Sorted(maps.Keys(pending)) {
			key := leaseKey(shard)
			e, err := l.kv.Get(ctx, key)
			switch {
			case errors.Is(err, jetstream.ErrKeyNotFound):
				rev, err := l.kv.Create(ctx, key, l.value)
				if errors.Is(err, jetstream.ErrKeyExists) {
					renewed = append(renewed, shard) // someone was quicker
					continue
				}
				if err != nil {
					return fmt.Errorf("lease of shard %d: %w", shard, err)
				}
				l.revs[shard] = rev
				delete(pending, shard)
			case err != nil:
				return fmt.Errorf("lease of shard %d: %w", shard, err)
			case e.Revision() != pending[shard]:
				renewed = append(renewed, shard)
			}
		}
	}
	if len(renewed) == 0 {
		return nil
	}
	return &HeldError{Holder: l.id.name, Shards: waiting, Twin: true, Where: where}
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

// renewInFlight bounds the lease writes of one renewal round. Written one
// after another, the 256 leases of a worker owning every shard took longer
// than the round may (TTL/6) on a starved machine, and the worker gave up
// all its shards while the server was merely slow.
const renewInFlight = 16

// renew writes every lease again, each only if it is still ours. A lease
// renewed before the round failed keeps its new revision, so the retry
// round sends the right one; a write that failed but landed all the same
// is recognised by this process's token and renewed from its revision.
func (l *leases) renew(ctx context.Context) error {
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		lost error
		errs []error
	)
	// The writes below update l.revs, which must not be ranged over meanwhile.
	revs := maps.Clone(l.revs)
	slots := make(chan struct{}, renewInFlight)
	for shard, rev := range revs {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			next, err := l.renewOne(ctx, shard, rev)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyNotFound):
				lost = &lostError{shard: shard, cause: err}
			case err != nil:
				errs = append(errs, fmt.Errorf("renew lease of shard %d: %w", shard, err))
			default:
				l.revs[shard] = next
			}
		}()
	}
	wg.Wait()
	if lost != nil {
		return lost
	}
	return errors.Join(errs...)
}

// renewOne writes one lease over revision rev. When rev is not the
// lease's last, the lease is read: if it still holds this process's value
// an earlier write of ours landed after we gave up on it, and the lease is
// renewed over that revision; anything else (another token: this worker
// restarted elsewhere; another name; no lease) means it is lost.
func (l *leases) renewOne(ctx context.Context, shard int, rev uint64) (uint64, error) {
	key := leaseKey(shard)
	next, err := l.write(ctx, shard, rev)
	if !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return next, err
	}
	e, gerr := l.kv.Get(ctx, key)
	switch {
	case errors.Is(gerr, jetstream.ErrKeyNotFound):
		return 0, gerr
	case gerr != nil:
		// Not known lost: the round fails and is tried again.
		return 0, fmt.Errorf("read the lease after a stale revision: %w", gerr)
	case !bytes.Equal(e.Value(), l.value):
		return 0, err
	}
	return l.write(ctx, shard, e.Revision())
}

func (l *leases) write(ctx context.Context, shard int, rev uint64) (uint64, error) {
	next, err := l.kv.Update(ctx, leaseKey(shard), l.value, rev)
	if err == nil && l.fault != nil {
		err = l.fault(shard)
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

// keep renews the leases every TTL/3 until ctx ends, and calls lost (once)
// when a lease is gone, or TTL/2 has passed since the last renewal of all
// of them: past that, another worker may soon hold a shard, so this one
// must stop fetching its hosts before. renewed runs after each complete
// round.
func (l *leases) keep(ctx context.Context, lost func(error), logf func(string, ...any), renewed func()) {
	// A failed round is tried again soon, not a whole period later: one
	// slow round must not cost the shards.
	every, retry := l.ttl/3, l.ttl/12
	next := time.NewTimer(every)
	defer next.Stop()
	giveUp := time.NewTimer(l.ttl / 2)
	defer giveUp.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-giveUp.C:
			lost(fmt.Errorf("leases not renewed for %s (their TTL is %s): giving up shards %s", l.ttl/2, l.ttl, FormatShards(l.shards())))
			return
		case <-next.C:
			rctx, cancel := context.WithTimeout(ctx, l.ttl/6)
			err := l.renew(rctx)
			cancel()
			var le *lostError
			switch {
			case errors.As(err, &le):
				lost(err)
				return
			case err == nil:
				giveUp.Reset(l.ttl / 2)
				next.Reset(every)
				renewed()
			default:
				if ctx.Err() == nil {
					logf("%v (retrying)", err)
				}
				next.Reset(retry)
			}
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
func (l *leases) release(ctx context.Context) {
	for shard, rev := range l.revs {
		_ = l.kv.Delete(ctx, leaseKey(shard), jetstream.LastRevision(rev))
	}
	l.revs = map[int]uint64{}
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
func leaseValues(ctx context.Context, kv jetstream.KeyValue) ([Shards][]byte, error) {
	var out [Shards][]byte
	es, err := entries(ctx, kv, "shard.*")
	if err != nil {
		return out, err
	}
	for _, e := range es {
		var n int
		if _, err := fmt.Sscanf(strings.TrimPrefix(e.Key(), "shard."), "%d", &n); err != nil || n < 0 || n >= Shards {
			continue
		}
		out[n] = e.Value()
	}
	return out, nil
}
