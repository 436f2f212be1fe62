package store

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"

	"go.etcd.io/bbolt"
)

// PutHostStates stores the state of several hosts, each replacing what was
// there (an empty value forgets the host), in one transaction: a commit
// saves every host that changed at once, not one transaction per host.
func (db *DB) PutHostStates(states map[string][]byte) error {
	if len(states) == 0 {
		return nil
	}
	hosts := slices.Sorted(maps.Keys(states))
	for _, host := range hosts {
		if host == "" {
			return errors.New("put host state: empty host")
		}
		if len(host) > bbolt.MaxKeySize {
			return fmt.Errorf("put host state: host name of %d bytes is too long", len(host))
		}
	}
	err := db.update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketHosts)
		for _, host := range hosts {
			var err error
			if v := states[host]; len(v) == 0 {
				err = b.Delete([]byte(host))
			} else {
				err = b.Put([]byte(host), v)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", host, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("put host state of %d hosts: %w", len(hosts), err)
	}
	return nil
}

// ForEachHostState calls fn for every host with stored state, in host order.
// v is a copy fn may keep. fn must not write to db.
func (db *DB) ForEachHostState(fn func(host string, v []byte) error) error {
	return db.view(func(tx *bbolt.Tx) error {
		return db.scan(tx, tx.Bucket(bucketHosts), func(k, v []byte) error {
			host, state := string(k), bytes.Clone(v)
			return callback(func() error { return fn(host, state) })
		})
	})
}
