package store

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"go.etcd.io/bbolt"
)

var keyID = []byte("db_id")

// ID is the file's own random identity: 64 bits, written into the meta
// bucket the first time it is asked for and never changed. A cluster tells
// by it whether a worker came back with the database it worked on or with
// another one (a fresh file, a file of another machine), whose frontier
// lacks what the first held. A copy of the file has the same ID. A file
// opened read-only that has none yet has the ID "".
func (db *DB) ID() (string, error) {
	var id string
	read := func(tx *bbolt.Tx) error {
		id = string(tx.Bucket(bucketMeta).Get(keyID))
		return nil
	}
	if err := db.view(read); err != nil || id != "" || db.opt.ReadOnly {
		return id, err
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("%s: an ID: %w", db.path, err)
	}
	err := db.update(func(tx *bbolt.Tx) error {
		// Another caller may have written one meanwhile: keep it.
		if err := read(tx); err != nil || id != "" {
			return err
		}
		id = hex.EncodeToString(b[:])
		return tx.Bucket(bucketMeta).Put(keyID, []byte(id))
	})
	if err != nil {
		return "", fmt.Errorf("%s: write its ID: %w", db.path, err)
	}
	return id, nil
}
