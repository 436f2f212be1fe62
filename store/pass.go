package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"go.etcd.io/bbolt"
)

// SameSite says whether p and q are passes of the same start URLs, in any
// order: one site (or set of sites), whose passes are one history. A pass
// of other start URLs is another site's, never its previous pass.
func (p Pass) SameSite(q Pass) bool {
	a, b := slices.Clone(p.StartURLs), slices.Clone(q.StartURLs)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// Heartbeat is how often a run working on a pass stores that it is alive
// (Pass.Alive), busy or idle.
const Heartbeat = 5 * time.Second

// LastSeen is when the run working on p was last known alive: its Alive,
// or RunStarted before its first heartbeat. Zero when no run works on p,
// or the last one ended properly (it clears RunStarted).
func (p Pass) LastSeen() time.Time {
	if p.RunStarted.IsZero() {
		return time.Time{}
	}
	if p.Alive.After(p.RunStarted) {
		return p.Alive
	}
	return p.RunStarted
}

// Interrupted says whether p, stored as running, was left so by a run that
// died (killed, crashed, its machine down) rather than one working on it
// at now: three heartbeats missed (one may come late behind a slow
// commit). A pass no run ever stored a sign of life for is not: nothing
// says either way.
func (p Pass) Interrupted(now time.Time) bool {
	seen := p.LastSeen()
	return p.State == PassRunning && !seen.IsZero() && now.Sub(seen) > 3*Heartbeat
}

// open reports whether the state is one a pass can be resumed from.
func (s PassState) open() bool { return s == PassRunning || s == PassStopped }

func (s PassState) valid() bool {
	return s.open() || s == PassComplete || s == PassAbandoned
}

func (db *DB) getPass(tx *bbolt.Tx, id uint64) (Pass, bool, error) {
	v := tx.Bucket(bucketPasses).Get(be64(id))
	if v == nil {
		return Pass{}, false, nil
	}
	p, err := db.decodePass(be64(id), v)
	return p, err == nil, err
}

func (db *DB) decodePass(key, v []byte) (Pass, error) {
	var p Pass
	if err := json.Unmarshal(v, &p); err != nil {
		return Pass{}, db.corrupt("pass", key, err)
	}
	if len(key) != 8 || p.ID != binary.BigEndian.Uint64(key) {
		return Pass{}, db.corrupt("pass", key, fmt.Errorf("holds pass %d", p.ID))
	}
	return p, nil
}

func putPass(tx *bbolt.Tx, p Pass) error {
	v, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encode pass %d: %w", p.ID, err)
	}
	if err := tx.Bucket(bucketPasses).Put(be64(p.ID), v); err != nil {
		return fmt.Errorf("write pass %d: %w", p.ID, err)
	}
	return nil
}

// openPass returns the pass in state running or stopped, if any.
func (db *DB) openPass(tx *bbolt.Tx) (Pass, bool, error) {
	id, err := db.metaUint(tx, keyOpenPass)
	if err != nil || id == 0 {
		return Pass{}, false, err
	}
	p, ok, err := db.getPass(tx, id)
	if err == nil && !ok {
		err = db.corrupt("meta", keyOpenPass, fmt.Errorf("names pass %d, which is not stored", id))
	}
	return p, ok, err
}

// OpenPass returns the pass in state running or stopped, if any: the one a
// check resumes.
func (db *DB) OpenPass() (p Pass, ok bool, err error) {
	err = db.view(func(tx *bbolt.Tx) error {
		p, ok, err = db.openPass(tx)
		return err
	})
	return p, ok, err
}

// LastPass returns the newest pass, whatever its state.
func (db *DB) LastPass() (p Pass, ok bool, err error) {
	err = db.view(func(tx *bbolt.Tx) error {
		k, v := tx.Bucket(bucketPasses).Cursor().Last()
		if k == nil {
			return nil
		}
		p, err = db.decodePass(k, v)
		ok = err == nil
		return err
	})
	return p, ok, err
}

// Passes returns every stored pass, oldest first.
func (db *DB) Passes() (ps []Pass, err error) {
	err = db.view(func(tx *bbolt.Tx) error {
		return db.scan(tx, tx.Bucket(bucketPasses), func(k, v []byte) error {
			p, err := db.decodePass(k, v)
			if err != nil {
				return err
			}
			ps = append(ps, p)
			return nil
		})
	})
	return ps, err
}

// Pass returns the pass with the given ID; the error wraps ErrNoPass when it
// is not stored (never begun, or pruned).
func (db *DB) Pass(id uint64) (p Pass, err error) {
	err = db.view(func(tx *bbolt.Tx) error {
		var ok bool
		p, ok, err = db.getPass(tx, id)
		if err == nil && !ok {
			err = fmt.Errorf("pass %d: %w", id, ErrNoPass)
		}
		return err
	})
	return p, err
}

// PreviousComplete returns the newest complete pass with an ID below before:
// what a report compares a pass with.
func (db *DB) PreviousComplete(before uint64) (p Pass, ok bool, err error) {
	err = db.view(func(tx *bbolt.Tx) error {
		c := tx.Bucket(bucketPasses).Cursor()
		k, v := c.Seek(be64(before))
		if k == nil {
			k, v = c.Last()
		}
		for ; k != nil; k, v = c.Prev() {
			if binary.BigEndian.Uint64(k) >= before {
				continue
			}
			var q Pass
			if q, err = db.decodePass(k, v); err != nil {
				return err
			}
			if q.State == PassComplete {
				p, ok = q, true
				return nil
			}
		}
		return nil
	})
	return p, ok, err
}

// base is the Base of p, a pass about to begin: the newest complete pass
// of the same site below it, 0 for none.
func (db *DB) base(tx *bbolt.Tx, p Pass) (uint64, error) {
	c := tx.Bucket(bucketPasses).Cursor()
	for k, v := c.Last(); k != nil; k, v = c.Prev() {
		if binary.BigEndian.Uint64(k) >= p.ID {
			continue
		}
		q, err := db.decodePass(k, v)
		if err != nil {
			return 0, err
		}
		if q.State == PassComplete && q.SameSite(p) {
			return q.ID, nil
		}
	}
	return 0, nil
}

// BeginPass stores p as a new running pass and seeds as its frontier, in one
// transaction, and returns it with ID and State set. The pass gets the next
// ID, or p.ID when it is set: a cluster's workers and merged database all
// use the coordinator's IDs, so p.ID must be newer than every pass stored.
// Its Base is the newest complete pass of the same site, unless p has one
// (a worker's pass has the coordinator's).
// The frontier and outbox of earlier passes are dropped. It fails while
// another pass is open: finish it or mark it abandoned first.
func (db *DB) BeginPass(p Pass, seeds []Task) (Pass, error) {
	for _, t := range seeds {
		if err := checkKey(t.URL); err != nil {
			return Pass{}, fmt.Errorf("seed: %w", err)
		}
	}
	err := db.updateIndexed(func(tx *bbolt.Tx, front *frontier, _ *recordsTx) error {
		if open, ok, err := db.openPass(tx); err != nil {
			return err
		} else if ok {
			return fmt.Errorf("pass %d is still %s: finish it or mark it abandoned before beginning another", open.ID, open.State)
		}
		next, err := db.metaUint(tx, keyNextPass)
		if err != nil {
			return err
		}
		switch {
		case p.ID == 0:
			p.ID = next
		case p.ID < next:
			return fmt.Errorf("pass %d is not newer than the passes this database holds (the next would be %d): is it another cluster's database?", p.ID, next)
		default:
			next = p.ID
		}
		if p.Base == 0 {
			if p.Base, err = db.base(tx, p); err != nil {
				return err
			}
		}
		p.State = PassRunning
		if err := putPass(tx, p); err != nil {
			return err
		}
		meta := tx.Bucket(bucketMeta)
		if err := meta.Put(keyNextPass, be64(next+1)); err != nil {
			return fmt.Errorf("write meta: %w", err)
		}
		if err := meta.Put(keyOpenPass, be64(p.ID)); err != nil {
			return fmt.Errorf("write meta: %w", err)
		}
		if err := front.clear(tx); err != nil {
			return err
		}
		// Entries of an earlier pass (one abandoned) are worthless now;
		// their numbers are not given again.
		seq := tx.Bucket(bucketOutbox).Sequence()
		outbox, err := clearBucket(tx, bucketOutbox)
		if err != nil {
			return err
		}
		if err := outbox.SetSequence(seq); err != nil {
			return fmt.Errorf("clear outbox: %w", err)
		}
		put := putter()
		for i := range seeds {
			// A seed given twice is one task, the last one's, as when
			// the frontier was keyed by URL.
			if err := front.keep(tx, &seeds[i], put); err != nil {
				return fmt.Errorf("queue seed %s: %w", seeds[i].URL, err)
			}
		}
		return nil
	})
	if err != nil {
		return Pass{}, fmt.Errorf("begin pass: %w", err)
	}
	return p, nil
}

// UpdatePass stores changes to a pass: its state, Finished, Elapsed. A pass
// that leaves the open states (complete, abandoned) drops its frontier and
// can never be reopened.
func (db *DB) UpdatePass(p Pass) error {
	if !p.State.valid() {
		return fmt.Errorf("update pass %d: unknown state %q", p.ID, p.State)
	}
	err := db.updateIndexed(func(tx *bbolt.Tx, front *frontier, _ *recordsTx) error {
		old, ok, err := db.getPass(tx, p.ID)
		if err != nil {
			return err
		}
		if !ok {
			return ErrNoPass
		}
		openID, err := db.metaUint(tx, keyOpenPass)
		if err != nil {
			return err
		}
		isOpen := openID == p.ID
		if !isOpen && p.State.open() {
			return fmt.Errorf("it is %s and cannot be reopened", old.State)
		}
		// A caller's copy of the pass may predate an origin added since
		// (the crawler's heartbeat writes one made when its run began).
		p.SiteOrigins = unionSorted(old.SiteOrigins, p.SiteOrigins)
		if err := putPass(tx, p); err != nil {
			return err
		}
		if isOpen && !p.State.open() {
			if err := tx.Bucket(bucketMeta).Put(keyOpenPass, be64(0)); err != nil {
				return fmt.Errorf("write meta: %w", err)
			}
			if err := front.clear(tx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("update pass %d: %w", p.ID, err)
	}
	return nil
}

// clearBucket empties a bucket by dropping and recreating it, which frees its
// pages without visiting every key.
func clearBucket(tx *bbolt.Tx, name []byte) (*bbolt.Bucket, error) {
	if err := tx.DeleteBucket(name); err != nil {
		return nil, fmt.Errorf("clear %s: %w", name, err)
	}
	b, err := tx.CreateBucket(name)
	if err != nil {
		return nil, fmt.Errorf("clear %s: %w", name, err)
	}
	return b, nil
}

// AddSiteOrigins adds origins to the SiteOrigins of pass id, in a
// transaction of its own: committed before anything decided with them is,
// so that a run killed after it resumes deciding as it did.
func (db *DB) AddSiteOrigins(id uint64, origins []string) error {
	err := db.update(func(tx *bbolt.Tx) error {
		p, ok, err := db.getPass(tx, id)
		if err != nil {
			return err
		}
		if !ok {
			return ErrNoPass
		}
		p.SiteOrigins = unionSorted(p.SiteOrigins, origins)
		return putPass(tx, p)
	})
	if err != nil {
		return fmt.Errorf("add site origins to pass %d: %w", id, err)
	}
	return nil
}

// unionSorted is the sorted set of the strings of a and b.
func unionSorted(a, b []string) []string {
	if len(b) == 0 {
		return a
	}
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}
