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
// there (an empty value forgets the host), in one transaction. A commit
// saves the hosts that changed with its results (CommitHosts).
func (db *DB) PutHostStates(states map[string][]byte) error {
	if len(states) == 0 {
		return nil
	}
	hosts, err := hostsOf(states)
	if err != nil {
		return fmt.Errorf("put host state: %w", err)
	}
	err = db.update(func(tx *bbolt.Tx) error { return putHostStates(tx, hosts, states) })
	if err != nil {
		return fmt.Errorf("put host state of %d hosts: %w", len(hosts), err)
	}
	return nil
}

// hostsOf returns the hosts of states in order, or why one cannot be a key.
func hostsOf(states map[string][]byte) ([]string, error) {
	hosts := slices.Sorted(maps.Keys(states))
	for _, host := range hosts {
		if host == "" {
			return nil, errors.New("empty host")
		}
		if len(host) > bbolt.MaxKeySize {
			return nil, fmt.Errorf("host name of %d bytes is too long", len(host))
		}
	}
	return hosts, nil
}

// putHostStates writes states in tx, hosts (its keys) in order.
func putHostStates(tx *bbolt.Tx, hosts []string, states map[string][]byte) error {
	b := tx.Bucket(bucketHosts)
	for _, host := range hosts {
		var err error
		if v := states[host]; len(v) == 0 {
			err = b.Delete([]byte(host))
		} else {
			err = b.Put([]byte(host), v)
		}
		if err != nil {
			return fmt.Errorf("host state of %s: %w", host, err)
		}
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
