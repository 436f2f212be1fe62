package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.etcd.io/bbolt"
)

// verify reads the whole file before it is opened for writing, so that a
// damaged file is found before a check sends its first request rather than
// part way through the crawl (qa7 Q10: 2,560 requests, then exit 2 and no
// report). It reads in three steps:
//
//   - every bucket in key order under guard, on this goroutine, so that a
//     damaged page is ErrCorrupt and not a crash: every top-level bucket
//     and any bucket inside one (walkPages), and the freelist page read
//     from the file (checkFreelist);
//   - bbolt's own Tx.Check, which finds what a walk of the keys cannot:
//     pages both in use and on the freelist, which the next commits would
//     write over. It runs on a goroutine of bbolt's, where a memory fault
//     cannot be recovered, so only after the walk has read every page it
//     reads and the freelist it loads is known to fit its page (review8
//     F3: a damaged count was `fatal error: fault`);
//   - every pass, record, link list, task and outbox entry decoded:
//     everything a check, its report and a resumed pass read.
//
// Tx.Check keeps no page from being mapped, so it runs between the walks,
// when the heap holds none of the decoding's garbage, and the mapping is
// dropped after it.
//
// At 100,000 generated pages (an 84 MB file, warm cache, loaded) it costs
// about 0.4 CPU-seconds, most of it decoding the link lists, which the
// report of that check pays again, against ~16 for the crawl.
//
// In a file of schema 6 the walk of the records builds their index
// (buildRecordIndex), which also finds a URL with two records; Open hands
// it to the DB that writes when nothing changed in between.
func (db *DB) verify() (*recordIndex, error) {
	var damaged []byte // the bucket a walk was in, for the message
	decoding := false  // past the walk of the pages and Tx.Check
	var built *recordIndex
	err := db.view(func(tx *bbolt.Tx) error {
		decode := func() error {
			for _, name := range verifyOrder {
				b := tx.Bucket(name)
				if b == nil || db.opt.NewPass && bytes.Equal(name, bucketFrontier) {
					continue // the outbox of a schema-1 file; a queue to drop
				}
				damaged = name
				if bytes.Equal(name, bucketURLs) && db.schema >= 6 {
					x, err := db.buildRecordIndex(tx, db.verifier(b, name))
					if err != nil {
						return err
					}
					built = x
					continue
				}
				if err := db.scan(tx, b, db.verifier(b, name)); err != nil {
					return err
				}
			}
			damaged = nil
			return nil
		}
		if err := db.walkPages(tx, &damaged); err != nil {
			return err
		}
		if err := db.checkFreelist(tx); err != nil {
			return err
		}
		decoding = true
		var found []string
		for err := range tx.Check() {
			if len(found) < 3 {
				found = append(found, err.Error())
			}
		}
		if len(found) > 0 {
			return fmt.Errorf("%s: %w: %s", db.path, ErrCorrupt, strings.Join(found, "; "))
		}
		if tx.Size() > db.releaseAbove {
			db.release(tx)
		}
		return decode()
	})
	if err == nil && built != nil {
		built.file, err = os.Stat(db.path)
	}
	if err == nil || !errors.Is(err, ErrCorrupt) {
		return built, err
	}
	queueOnly := decoding && bytes.Equal(damaged, bucketFrontier)
	where := "in its list of free pages" // what checkFreelist or Tx.Check found
	if damaged != nil {
		var ok bool
		if where, ok = bucketWhat[string(damaged)]; len(damaged) == 0 {
			where = "in its list of buckets"
		} else if !ok {
			where = fmt.Sprintf("in a bucket it does not use, %q", damaged)
		}
	}
	advice := "restore it from a backup, or move it aside to start afresh (history, what is new or fixed since the last pass, then begins again)"
	if queueOnly {
		// Every page was read and every other value decoded, and
		// abandoning the pass drops the queue unread.
		advice = "add --new-pass to abandon that pass and keep the history of the passes before it, or " + advice
	}
	return nil, fmt.Errorf("open %s: %w %s (%s). The file was read whole before the first request, so nothing was checked: %s",
		db.path, ErrCorrupt, where, damageCause(err), advice)
}

// walkPages reads every page Tx.Check will read, under guard on this
// goroutine, so that a damaged one is ErrCorrupt and not a crash on
// Check's: every top-level bucket, ours or not, and the buckets inside one
// that is not ours. Ours hold none, so a bucket entry in one of them is a
// flipped flag, whose value Check would follow as a root page (review8
// F3). *damaged is set to the bucket being read, and left set on an error.
func (db *DB) walkPages(tx *bbolt.Tx, damaged *[]byte) error {
	// A page is in one bucket only: a bucket whose root was seen before
	// is damage, and would make both walks go round for ever.
	roots := map[uint64]bool{}
	var walk func(b *bbolt.Bucket, ours bool) error
	walk = func(b *bbolt.Bucket, ours bool) error {
		if r := uint64(b.RootPage()); r != 0 {
			if roots[r] {
				return fmt.Errorf("%s: %w (two buckets at page %d)", db.path, ErrCorrupt, r)
			}
			roots[r] = true
		}
		return db.scan(tx, b, func(k, v []byte) error {
			if v != nil {
				return nil
			}
			child := b.Bucket(k)
			switch {
			case child == nil:
				return nil // an empty value
			case ours:
				return fmt.Errorf("%s: %w (a bucket under key %q, where none is ever written)", db.path, ErrCorrupt, k)
			}
			return walk(child, false)
		})
	}
	c := tx.Cursor()
	var prev []byte
	for name, _ := c.First(); name != nil; name, _ = c.Next() {
		if prev != nil && bytes.Compare(name, prev) <= 0 {
			*damaged = []byte{} // the root: the list of buckets
			return fmt.Errorf("%s: %w (buckets out of order after %q)", db.path, ErrCorrupt, prev)
		}
		prev = name
		b := tx.Bucket(name)
		if b == nil {
			continue // a value, which Check does not follow
		}
		*damaged = name
		_, ours := bucketWhat[string(name)]
		if err := walk(b, ours); err != nil {
			return err
		}
	}
	*damaged = nil
	return nil
}

// verifyOrder is the order verify decodes the buckets in: the frontier
// last, so that damage found there is the only damage (see its advice).
var verifyOrder = [][]byte{bucketMeta, bucketPasses, bucketURLs, bucketLinks, bucketHosts, bucketOutbox, bucketFrontier}

// damageCause is what an error wrapping ErrCorrupt found, without the
// file's name and the advice, which verify says once.
func damageCause(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, ErrCorrupt.Error()); i >= 0 {
		msg = msg[i+len(ErrCorrupt.Error()):]
	}
	msg = strings.TrimSuffix(msg, ")")
	msg = strings.TrimSuffix(msg, "; restore it from a backup, or move it aside to start afresh")
	return strings.TrimLeft(msg, " (:,")
}

// bucketWhat says what each bucket holds, for the message of a damaged one.
var bucketWhat = map[string]string{
	"meta":     "in its own identity and counters",
	"passes":   "in its list of passes",
	"urls":     "in the records of its URLs",
	"links":    "in the link lists of its pages",
	"frontier": "in the queue of its unfinished pass",
	"hosts":    "in its state of hosts",
	"outbox":   "in its outbox",
}

// verifier returns what verify checks of each value of the bucket name.
func (db *DB) verifier(b *bbolt.Bucket, name []byte) func(k, v []byte) error {
	switch string(name) {
	case string(bucketPasses):
		return func(k, v []byte) error {
			_, err := db.decodePass(k, v)
			return err
		}
	case string(bucketURLs):
		var r URLRecord
		return func(k, v []byte) error {
			url := k
			if db.schema >= 6 {
				var err error
				if url, v, err = urlEntry(k, v); err != nil {
					return db.corrupt("record", k, err)
				}
			}
			if err := decodeRecord(string(url), v, &r); err != nil {
				return db.corrupt("record", k, err)
			}
			return nil
		}
	case string(bucketLinks):
		return func(k, v []byte) error {
			if _, err := decodeLinks(v); err != nil {
				return db.corrupt("link list", k, err)
			}
			return nil
		}
	case string(bucketFrontier):
		return func(k, v []byte) error {
			if _, err := decodeFrontier(db.schema, k, v); err != nil {
				return db.corrupt("task", k, err)
			}
			// A number past the sequence would be given again (frontier.go).
			if db.schema >= 5 && binary.BigEndian.Uint64(k) > b.Sequence() {
				return db.corrupt("task", k, fmt.Errorf("above the bucket's sequence %d", b.Sequence()))
			}
			return nil
		}
	case string(bucketOutbox):
		var o OutboxEntry
		return func(k, v []byte) error {
			if err := decodeOutbox(v, &o); err != nil {
				return db.corrupt("outbox entry", k, err)
			}
			return nil
		}
	}
	// meta and hosts hold values only their readers can judge (the hosts'
	// are the caller's opaque bytes); walking them still reads every page.
	return func(k, v []byte) error { return nil }
}
