package store

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"go.etcd.io/bbolt"
)

// keyReceived prefixes, in the meta bucket, the last message of each
// source whose tasks EnqueueReceived committed: "received:" + source ->
// pass, seq (uint64 big-endian each).
var keyReceived = []byte("received:")

// noteReceived raises the source's mark to msg.seq in pass; a mark of an
// earlier pass is replaced.
func noteReceived(tx *bbolt.Tx, pass uint64, msg *received) error {
	meta := tx.Bucket(bucketMeta)
	key := append(bytes.Clone(keyReceived), msg.source...)
	if p, seq, ok := decodeReceived(meta.Get(key)); ok && p == pass && seq >= msg.seq {
		return nil
	}
	v := binary.BigEndian.AppendUint64(be64(pass), msg.seq)
	if err := meta.Put(key, v); err != nil {
		return fmt.Errorf("note message %d of %s: %w", msg.seq, msg.source, err)
	}
	return nil
}

func decodeReceived(v []byte) (pass, seq uint64, ok bool) {
	if len(v) != 16 {
		return 0, 0, false
	}
	return binary.BigEndian.Uint64(v), binary.BigEndian.Uint64(v[8:]), true
}

// Received returns, by source, the last message whose tasks
// EnqueueReceived committed to this file in pass passID (the highest
// seq). A cluster worker compares it with what it reported before: a
// file that holds less than the process on it had committed is an older
// copy (a restored backup), which lacks those tasks.
func (db *DB) Received(passID uint64) (map[string]uint64, error) {
	out := map[string]uint64{}
	err := db.view(func(tx *bbolt.Tx) error {
		c := tx.Bucket(bucketMeta).Cursor()
		for k, v := c.Seek(keyReceived); k != nil && bytes.HasPrefix(k, keyReceived); k, v = c.Next() {
			pass, seq, ok := decodeReceived(v)
			if !ok {
				return db.corrupt("meta", k, errShort)
			}
			if pass == passID {
				out[string(k[len(keyReceived):])] = seq
			}
		}
		return nil
	})
	return out, err
}
