package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/maphash"

	"go.etcd.io/bbolt"
)

// The frontier in the order it is queued (schema 5).
//
// A task is stored under the next number of the frontier bucket's sequence
// (8 bytes big-endian, from 1), its URL in the value, so the tasks a commit
// queues go onto the last leaf, which bbolt fills whole, and the tasks its
// results take off lie near each other at the front: the crawler finishes
// tasks in about the order it queued them. Keyed by URL, the ~35 puts and
// 32 deletes of a commit of 32 results each read, copied and wrote a leaf
// of their own, at 100,000 pages the largest part of what a commit wrote.
//
// Queue's dedupe and Commit's delete still go by URL, through an index in
// memory of the open pass's frontier (frontierIndex), which the first
// write transaction that needs it builds from the bucket: a URL -> number
// index in the file would be keyed by URL, as random as before.

// frontierIndex maps the URL of every task in the frontier bucket to its
// number. It is keyed by two independent 64-bit hashes of the URL, not the
// URL itself: the map then holds no pointers for the garbage collector to
// scan and no copy of the URLs. A key found is checked against the URL in
// the stored entry before anything is done with it, so two URLs sharing a
// key (about n²/2¹²⁹ for n tasks) give an error, never a lost task.
type frontierIndex struct {
	at     map[[2]uint64]uint64
	s1, s2 maphash.Seed
}

func newFrontierIndex() *frontierIndex {
	return &frontierIndex{at: make(map[[2]uint64]uint64), s1: maphash.MakeSeed(), s2: maphash.MakeSeed()}
}

func (x *frontierIndex) key(url string) [2]uint64 {
	return [2]uint64{maphash.String(x.s1, url), maphash.String(x.s2, url)}
}

func (x *frontierIndex) keyBytes(url []byte) [2]uint64 {
	return [2]uint64{maphash.Bytes(x.s1, url), maphash.Bytes(x.s2, url)}
}

// frontier is the open pass's frontier inside one write transaction.
type frontier struct {
	db  *DB
	b   *bbolt.Bucket
	idx *frontierIndex
}

// updateIndexed is update for the transactions that change the frontier
// or the records, which the indexes in memory follow. They hold idxMu, so
// the indexes are only ever changed by one of them. A transaction that
// fails (its changes to the buckets rolled back) drops the frontier's
// index with the changes it made to it, and the records' index, which it
// did not change but which may no longer be the file's if the failure
// came as bbolt wrote it: the next one builds them again from the file.
// The records' changes reach their index once the transaction committed.
func (db *DB) updateIndexed(fn func(tx *bbolt.Tx, f *frontier, r *recordsTx) error) error {
	db.idxMu.Lock()
	defer db.idxMu.Unlock()
	var recs *recordsTx
	err := db.update(func(tx *bbolt.Tx) error {
		x, err := db.recordIndexLocked(tx)
		if err != nil {
			return err
		}
		recs = &recordsTx{db: db, b: tx.Bucket(bucketURLs), idx: x, at: map[uint64]uint64{}, more: map[string]uint64{}}
		return fn(tx, &frontier{db: db, b: tx.Bucket(bucketFrontier)}, recs)
	})
	if err != nil {
		db.front = nil
		db.recs.Store(nil)
		return err
	}
	recs.apply()
	return nil
}

// index returns the index of the frontier, building it from the bucket
// when this DB has none yet (the file was just opened) or dropped it.
func (f *frontier) index(tx *bbolt.Tx) (*frontierIndex, error) {
	if f.idx != nil {
		return f.idx, nil
	}
	if f.db.front != nil {
		f.idx = f.db.front
		return f.idx, nil
	}
	idx := newFrontierIndex()
	var last uint64
	err := f.db.scan(tx, f.b, func(k, v []byte) error {
		url, _, err := frontierEntry(k, v)
		if err != nil {
			return f.db.corrupt("task", k, err)
		}
		last = binary.BigEndian.Uint64(k)
		idx.at[idx.keyBytes(url)] = last
		return nil
	})
	if err != nil {
		return nil, err
	}
	// A number above the sequence would be given again, and its task
	// overwritten.
	if last > f.b.Sequence() {
		return nil, f.db.corrupt("frontier", be64(last), fmt.Errorf("above the bucket's sequence %d", f.b.Sequence()))
	}
	f.db.front, f.idx = idx, idx
	return idx, nil
}

// clear empties the frontier (a pass begins or ends).
func (f *frontier) clear(tx *bbolt.Tx) error {
	b, err := clearBucket(tx, bucketFrontier)
	if err != nil {
		return err
	}
	f.b, f.idx = b, newFrontierIndex()
	f.db.front = f.idx
	return nil
}

// find returns the number of the task of url, and whether there is one.
func (f *frontier) find(tx *bbolt.Tx, url string) (uint64, bool, error) {
	idx, err := f.index(tx)
	if err != nil {
		return 0, false, err
	}
	at, ok := idx.at[idx.key(url)]
	return at, ok, nil
}

// entry returns the stored entry at, checking that it is url's.
func (f *frontier) entry(c *bbolt.Cursor, at uint64, url string) error {
	k, v := c.Seek(be64(at))
	if k == nil || binary.BigEndian.Uint64(k) != at || len(k) != numberKeyLen {
		return f.db.corrupt("frontier", be64(at), fmt.Errorf("no task for %s", url))
	}
	got, _, err := frontierEntry(k, v)
	switch {
	case err != nil:
		return f.db.corrupt("task", k, err)
	case string(got) != url:
		return f.db.corrupt("task", k, fmt.Errorf("holds %s where %s was looked for", got, url))
	}
	return nil
}

// queued reports whether url has a task.
func (f *frontier) queued(tx *bbolt.Tx, url string) (bool, error) {
	at, ok, err := f.find(tx, url)
	if err != nil || !ok {
		return false, err
	}
	return true, f.entry(f.b.Cursor(), at, url)
}

// add queues t, which has no task yet, after every task queued before.
func (f *frontier) add(tx *bbolt.Tx, t *Task, put func(*bbolt.Bucket, string, func([]byte) ([]byte, error)) error) error {
	idx, err := f.index(tx)
	if err != nil {
		return err
	}
	seq, err := f.b.NextSequence()
	if err != nil {
		return err
	}
	// Only ever appended, so full pages are right: none is split again.
	f.b.FillPercent = 1
	if err := f.put(seq, t, put); err != nil {
		return err
	}
	idx.at[idx.key(t.URL)] = seq
	return nil
}

func (f *frontier) put(at uint64, t *Task, put func(*bbolt.Bucket, string, func([]byte) ([]byte, error)) error) error {
	return put(f.b, string(be64(at)), func(b []byte) ([]byte, error) { return appendFrontierEntry(b, t), nil })
}

// keep replaces url's task with t where it stands, or queues t when url
// has none (Result.Requeue).
func (f *frontier) keep(tx *bbolt.Tx, t *Task, put func(*bbolt.Bucket, string, func([]byte) ([]byte, error)) error) error {
	at, ok, err := f.find(tx, t.URL)
	switch {
	case err != nil:
		return err
	case !ok:
		return f.add(tx, t, put)
	}
	if err := f.entry(f.b.Cursor(), at, t.URL); err != nil {
		return err
	}
	return f.put(at, t, put)
}

// update replaces t.URL's task with t when it is queued, and does nothing
// when it is not.
func (f *frontier) update(tx *bbolt.Tx, t *Task, put func(*bbolt.Bucket, string, func([]byte) ([]byte, error)) error) error {
	at, ok, err := f.find(tx, t.URL)
	if err != nil || !ok {
		return err
	}
	if err := f.entry(f.b.Cursor(), at, t.URL); err != nil {
		return err
	}
	return f.put(at, t, put)
}

// remove takes url's task off the frontier, if it has one.
func (f *frontier) remove(tx *bbolt.Tx, url string) error {
	at, ok, err := f.find(tx, url)
	if err != nil || !ok {
		return err
	}
	c := f.b.Cursor()
	if err := f.entry(c, at, url); err != nil {
		return err
	}
	if err := c.Delete(); err != nil {
		return err
	}
	delete(f.idx.at, f.idx.key(url))
	return nil
}

// appendFrontierEntry encodes a task as the frontier bucket stores it since
// schema 5: its URL, then the task as appendTask writes it.
func appendFrontierEntry(buf []byte, t *Task) []byte {
	e := encoder{buf: buf}
	e.str(t.URL)
	return appendTask(e.bytes(), t)
}

// frontierEntry splits a stored frontier entry of schema 5 into its URL
// and the task's encoding.
func frontierEntry(k, v []byte) (url, task []byte, err error) { return urlEntry(k, v) }

// decodeFrontier decodes the frontier entry k, v of a file of the given
// schema: keyed by URL before schema 5.
func decodeFrontier(schema uint64, k, v []byte) (Task, error) {
	if schema < 5 {
		return decodeTask(string(k), v)
	}
	url, task, err := frontierEntry(k, v)
	if err != nil {
		return Task{}, err
	}
	return decodeTask(string(url), task)
}

// Frontier returns every task queued or in flight in the open pass, in the
// order they were queued (in URL order in a file of schema 4 or older
// opened read-only); none when no pass is open.
func (db *DB) Frontier() (tasks []Task, err error) {
	err = db.view(func(tx *bbolt.Tx) error {
		return db.scan(tx, tx.Bucket(bucketFrontier), func(k, v []byte) error {
			t, err := decodeFrontier(db.schema, k, v)
			if err != nil {
				return db.corrupt("task", k, err)
			}
			tasks = append(tasks, t)
			return nil
		})
	})
	return tasks, err
}

// frontierURL returns the URL of the frontier entry k, v of a file of the
// given schema.
func frontierURL(schema uint64, k, v []byte) ([]byte, error) {
	if schema < 5 {
		return k, nil
	}
	url, _, err := frontierEntry(k, v)
	return url, err
}

// migrateFrontier moves the tasks of a frontier keyed by URL (schema 4 and
// older) under numbers, in URL order, the only order such a file knows.
// Each task's bytes move as they are: Open's verify decoded them already,
// unless Options.NewPass, whose pass drops them unread, so that a task that
// does not decode cannot stop a check --new-pass from keeping the history
// (review7 R4).
func (db *DB) migrateFrontier(tx *bbolt.Tx) error {
	type entry struct{ url, task []byte }
	var entries []entry
	err := db.scan(tx, tx.Bucket(bucketFrontier), func(k, v []byte) error {
		entries = append(entries, entry{bytes.Clone(k), bytes.Clone(v)})
		return nil
	})
	if err != nil {
		return err
	}
	f := &frontier{db: db}
	if err := f.clear(tx); err != nil {
		return err
	}
	f.b.FillPercent = 1 // only ever appended, as in add
	for _, e := range entries {
		seq, err := f.b.NextSequence()
		if err != nil {
			return err
		}
		enc := encoder{}
		enc.strBytes(e.url)
		if err := f.b.Put(be64(seq), append(enc.bytes(), e.task...)); err != nil {
			return fmt.Errorf("move task %s: %w", e.url, err)
		}
		f.idx.at[f.idx.keyBytes(e.url)] = seq
	}
	return nil
}
