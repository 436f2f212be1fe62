package store

import (
	"encoding/binary"
	"fmt"

	"go.etcd.io/bbolt"
)

// outboxChunk bounds the entries Outbox reads per read transaction, so a
// caller that publishes each entry over the network never holds a
// transaction open for long (a long read transaction stalls a writer that
// must grow the file).
const outboxChunk = 64

// outboxEntry builds the outbox entry of a Commit: nil when it has nothing
// to forward.
func (db *DB) outboxEntry(passID uint64, results []Result) *OutboxEntry {
	e := &OutboxEntry{Pass: passID}
	for i := range results {
		e.Tasks = append(e.Tasks, results[i].Forward...)
	}
	if db.opt.ForwardResults {
		e.Results = make([]Result, 0, len(results))
		for _, r := range results {
			if r.Tried != nil {
				continue // nothing the merged database keeps
			}
			r.Record.Pass = passID
			r.Enqueue, r.Forward = nil, nil
			e.Results = append(e.Results, r)
		}
	}
	if len(e.Tasks) == 0 && len(e.Results) == 0 {
		return nil
	}
	return e
}

// putOutbox adds an encoded entry after the last one. The bucket's sequence
// numbers the entries, so a number is never given twice, even to an entry
// after one already delivered and deleted (Compact keeps the sequence).
func putOutbox(tx *bbolt.Tx, encoded []byte) error {
	b := tx.Bucket(bucketOutbox)
	seq, err := b.NextSequence()
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	if err := b.Put(be64(seq), encoded); err != nil {
		return fmt.Errorf("outbox entry %d: %w", seq, err)
	}
	return nil
}

func (db *DB) signalOutbox() {
	select {
	case db.outboxReady <- struct{}{}:
	default:
	}
}

// OutboxReady gets a value after a Commit adds an outbox entry (one value
// for any number of commits not yet noticed): what the one process that
// drains the outbox waits on between looks at Outbox.
func (db *DB) OutboxReady() <-chan struct{} { return db.outboxReady }

// Outbox calls fn with every outbox entry, oldest first, until fn returns an
// error, which Outbox returns. fn runs outside any transaction, so it may
// take its time (publish the entry) and write to db (DeleteOutbox). Entries
// added while Outbox runs are visited too when they come after the last one
// read.
func (db *DB) Outbox(fn func(seq uint64, e OutboxEntry) error) error {
	var from uint64
	for {
		type item struct {
			seq uint64
			e   OutboxEntry
		}
		var chunk []item
		err := db.view(func(tx *bbolt.Tx) error {
			b := tx.Bucket(bucketOutbox)
			if b == nil {
				return nil // a schema-1 file opened read-only
			}
			c := b.Cursor()
			for k, v := c.Seek(be64(from)); k != nil && len(chunk) < outboxChunk; k, v = c.Next() {
				if len(k) != 8 {
					return db.corrupt("outbox key", k, errFormat)
				}
				it := item{seq: binary.BigEndian.Uint64(k)}
				if err := decodeOutbox(v, &it.e); err != nil {
					return db.corrupt("outbox entry", k, err)
				}
				chunk = append(chunk, it)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("outbox: %w", err)
		}
		for _, it := range chunk {
			if err := fn(it.seq, it.e); err != nil {
				return err
			}
		}
		if len(chunk) < outboxChunk {
			return nil
		}
		from = chunk[len(chunk)-1].seq + 1
	}
}

// DeleteOutbox removes the entry seq, once it is delivered. Removing one
// that is not there does nothing.
func (db *DB) DeleteOutbox(seq uint64) error {
	err := db.update(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketOutbox).Delete(be64(seq))
	})
	if err != nil {
		return fmt.Errorf("delete outbox entry %d: %w", seq, err)
	}
	return nil
}

// OutboxLen is the number of entries waiting in the outbox.
func (db *DB) OutboxLen() (n int, err error) {
	err = db.view(func(tx *bbolt.Tx) error {
		if b := tx.Bucket(bucketOutbox); b != nil {
			n = b.Stats().KeyN
		}
		return nil
	})
	return n, err
}

// Quiet says, from one read transaction, whether the open pass passID has
// nothing left to do in this database: no task on the frontier that the
// pass has not resolved, and an empty outbox. deferred counts the frontier
// tasks the pass resolved provisionally (held back by a server's pause, see
// Result.Requeue), which wait for a later run and do not keep it busy; it is
// complete only when quiet is true. One transaction matters: a Commit moves
// work from the frontier to the outbox atomically, and two reads could miss
// it in both. The scan stops at the first unresolved task, so asking a busy
// database costs little.
func (db *DB) Quiet(passID uint64) (quiet bool, deferred int, err error) {
	// Exact: a record committed since the index was read would be a task
	// not resolved.
	err = db.readByURL(true, func(tx *bbolt.Tx, get func([]byte) ([]byte, error)) error {
		quiet, deferred = false, 0
		if err := db.checkOpen(tx, passID); err != nil {
			return err
		}
		if b := tx.Bucket(bucketOutbox); b != nil {
			if k, _ := b.Cursor().First(); k != nil {
				return nil
			}
		}
		c := tx.Bucket(bucketFrontier).Cursor()
		for k, fv := c.First(); k != nil; k, fv = c.Next() {
			url, err := frontierURL(db.schema, k, fv)
			if err != nil {
				return db.corrupt("task", k, err)
			}
			v, err := get(url)
			if err != nil || v == nil {
				return err
			}
			p, err := recordPass(v)
			if err != nil {
				return db.corrupt("record", url, err)
			}
			if p != passID {
				return nil
			}
			deferred++
		}
		quiet = true
		return nil
	})
	if err != nil {
		return false, 0, fmt.Errorf("quiet: %w", err)
	}
	return quiet, deferred, nil
}
