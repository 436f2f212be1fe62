package store

import (
	"errors"
	"fmt"

	"go.etcd.io/bbolt"
)

const (
	// A transaction's arena starts at arenaFirst and each new chunk is
	// twice the last, up to arenaChunk: a commit of the crawler's default
	// 32 results needs about 30 KiB, and starting every one at 256 KiB made
	// the arena a quarter of the bytes a check allocates (BenchmarkPass).
	arenaFirst = 16 << 10
	arenaChunk = 256 << 10
	arenaSlack = 8 << 10 // more than most records and link lists take
)

func checkKey(url string) error {
	switch {
	case url == "":
		return errors.New("empty URL")
	case len(url) > MaxURLLength:
		return fmt.Errorf("URL of %d bytes is longer than the %d the store can hold: %.80s...", len(url), MaxURLLength, url)
	}
	return nil
}

func (db *DB) checkOpen(tx *bbolt.Tx, passID uint64) error {
	openID, err := db.metaUint(tx, keyOpenPass)
	if err != nil {
		return err
	}
	if openID != passID || passID == 0 {
		return fmt.Errorf("pass %d is not open", passID)
	}
	return nil
}

// putter returns a Put for one transaction. bbolt holds on to keys and
// values until the commit, so they are appended to an arena rather than a
// buffer reused per Put; an append never touches bytes handed out before.
// A new chunk is started when one fills up, instead of letting append copy
// everything so far.
func putter() func(b *bbolt.Bucket, key string, encode func([]byte) ([]byte, error)) error {
	var arena []byte
	next := arenaFirst
	return func(b *bbolt.Bucket, key string, encode func([]byte) ([]byte, error)) error {
		if cap(arena)-len(arena) < arenaSlack {
			arena = make([]byte, 0, next)
			next = min(2*next, arenaChunk)
		}
		start := len(arena)
		arena = append(arena, key...)
		mark := len(arena)
		var err error
		if arena, err = encode(arena); err != nil {
			return err
		}
		return b.Put(arena[start:mark:mark], arena[mark:])
	}
}

// Commit writes a batch of finished tasks of the open pass in one
// transaction. For each result in order it queues the Enqueue tasks that are
// neither queued already nor resolved in this pass, stores the record
// (stamping Pass when it is zero), replaces the page's links when SetLinks is
// set, and takes the record's URL off the frontier (or, with Requeue, keeps
// it there). The Forward tasks of all the results, and the results too with
// Options.ForwardResults, become one outbox entry, when there is anything to
// put in it. Nothing is written when an error is returned.
func (db *DB) Commit(passID uint64, results []Result) error {
	return db.CommitHosts(passID, results, nil)
}

// CommitHosts is Commit and PutHostStates(hosts) in one transaction. The
// crawler saves the hosts whose state changed with every commit: a second
// transaction for them was a tenth of the commits' CPU, and in one the
// hosts' request counts never disagree with the results committed.
func (db *DB) CommitHosts(passID uint64, results []Result, hosts map[string][]byte) error {
	hostOrder, err := hostsOf(hosts)
	if err != nil {
		return fmt.Errorf("commit: host state: %w", err)
	}
	for i := range results {
		r := &results[i]
		if r.Tried != nil {
			if err := checkKey(r.Tried.URL); err != nil {
				return fmt.Errorf("commit: result %d (tried): %w", i, err)
			}
			continue
		}
		if err := checkKey(r.Record.URL); err != nil {
			return fmt.Errorf("commit: result %d: %w", i, err)
		}
		if r.Record.Pass != 0 && r.Record.Pass != passID {
			return fmt.Errorf("commit: result %d (%s) belongs to pass %d, not %d", i, r.Record.URL, r.Record.Pass, passID)
		}
		for _, t := range r.Enqueue {
			if err := checkKey(t.URL); err != nil {
				return fmt.Errorf("commit: result %d (%s) enqueues a task: %w", i, r.Record.URL, err)
			}
		}
		for _, t := range r.Forward {
			if err := checkKey(t.URL); err != nil {
				return fmt.Errorf("commit: result %d (%s) forwards a task: %w", i, r.Record.URL, err)
			}
		}
	}
	entry := db.outboxEntry(passID, results)
	var encoded []byte
	if entry != nil {
		var err error
		if encoded, err = appendOutbox(nil, entry); err != nil {
			return fmt.Errorf("commit %d results to pass %d: %w", len(results), passID, err)
		}
	}
	err = db.updateIndexed(func(tx *bbolt.Tx, front *frontier, recs *recordsTx) error {
		if err := db.checkOpen(tx, passID); err != nil {
			return err
		}
		if err := putHostStates(tx, hostOrder, hosts); err != nil {
			return err
		}
		links := tx.Bucket(bucketLinks)
		put := putter()
		var tasks []*Task
		for i := range results {
			for j := range results[i].Enqueue {
				tasks = append(tasks, &results[i].Enqueue[j])
			}
		}
		if _, err := db.queue(tx, front, recs, passID, tasks, put); err != nil {
			return err
		}
		if encoded != nil {
			if err := putOutbox(tx, encoded); err != nil {
				return err
			}
		}
		// Link lists are only ever appended under new numbers, so full
		// pages are right: none is split again by a later insert.
		links.FillPercent = 1
		// In the order given, so that the last result of a URL is the
		// one kept.
		for i := range results {
			r := &results[i]
			if r.Tried != nil {
				if err := front.update(tx, r.Tried, put); err != nil {
					return fmt.Errorf("keep the tries of %s: %w", r.Tried.URL, err)
				}
				continue
			}
			rec := r.Record
			rec.Pass = passID
			key := []byte(rec.URL)
			linksAt := uint64(linksNone)
			old, v, err := recs.find(key)
			if err != nil {
				return err
			}
			if v != nil {
				if _, linksAt, err = recordHead(v); err != nil {
					return db.corrupt("record", key, err)
				}
			}
			if r.SetLinks {
				if err := setLinks(links, key, &linksAt, r.Links, put); err != nil {
					return fmt.Errorf("write links of %s: %w", rec.URL, err)
				}
			}
			if err := recs.put(&rec, old, linksAt, put); err != nil {
				return fmt.Errorf("write record %s: %w", rec.URL, err)
			}
			if t := r.Requeue; t != nil {
				t := *t
				t.URL = rec.URL
				if err := front.keep(tx, &t, put); err != nil {
					return fmt.Errorf("keep %s queued: %w", rec.URL, err)
				}
			} else if err := front.remove(tx, rec.URL); err != nil {
				return fmt.Errorf("dequeue %s: %w", rec.URL, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("commit %d results to pass %d: %w", len(results), passID, err)
	}
	if encoded != nil {
		db.signalOutbox()
	}
	return nil
}

// setLinks replaces the link list of the page keyed url, which *linksAt
// says where to find, with list, and sets *linksAt to where list went. A
// list goes under the next number of the links bucket's sequence: keys in
// the order they are written, so that a commit appends its lists to the
// last page of the bucket instead of rewriting a page of it for each (at
// 100,000 pages a page of links each commit read, copied and wrote dozens
// of them).
func setLinks(links *bbolt.Bucket, url []byte, linksAt *uint64, list []Link, put func(*bbolt.Bucket, string, func([]byte) ([]byte, error)) error) error {
	if *linksAt != linksNone {
		if err := links.Delete(linksKey(url, *linksAt)); err != nil {
			return err
		}
		*linksAt = linksNone
	}
	if len(list) == 0 {
		return nil
	}
	if links.Sequence() < linksFirstSeq-1 {
		if err := links.SetSequence(linksFirstSeq - 1); err != nil {
			return err
		}
	}
	seq, err := links.NextSequence()
	if err != nil {
		return err
	}
	if err := put(links, string(be64(seq)), func(b []byte) ([]byte, error) { return appendLinks(b, list), nil }); err != nil {
		return err
	}
	*linksAt = seq
	return nil
}

// linksKey is the key of the link list of the page keyed url, which its
// record says is at linksAt (not linksNone).
func linksKey(url []byte, linksAt uint64) []byte {
	if linksAt == linksUnderURL {
		return url
	}
	return be64(linksAt)
}

// pageLinks reads the stored link list of the page keyed url, whose record
// is v: nil when it has none.
func (db *DB) pageLinks(links *bbolt.Bucket, url, v []byte) ([]byte, error) {
	_, at, err := recordHead(v)
	if err != nil {
		return nil, db.corrupt("record", url, err)
	}
	if at == linksNone {
		return nil, nil
	}
	return links.Get(linksKey(url, at)), nil
}

// Enqueue queues tasks in the open pass, in one transaction, by the rule
// Commit queues a result's Enqueue tasks with: those neither queued already
// nor resolved in the pass (nor repeated earlier in tasks). It returns the
// ones it added, in the order given: a cluster worker hands only those to
// its crawler, since the others are known to it already.
func (db *DB) Enqueue(passID uint64, tasks []Task) (added []Task, err error) {
	return db.enqueue(passID, tasks, nil)
}

// EnqueueReceived is Enqueue of the tasks of message seq of source (a
// stream's subject, for a cluster worker), noting in the same transaction
// that the file holds it: Received says so from then on. seq is the
// message's place in a sequence that only grows.
func (db *DB) EnqueueReceived(passID uint64, tasks []Task, source string, seq uint64) (added []Task, err error) {
	if source == "" {
		return nil, errors.New("enqueue: a message without a source")
	}
	return db.enqueue(passID, tasks, &received{source: source, seq: seq})
}

// received is one message EnqueueReceived notes.
type received struct {
	source string
	seq    uint64
}

func (db *DB) enqueue(passID uint64, tasks []Task, msg *received) (added []Task, err error) {
	for _, t := range tasks {
		if err := checkKey(t.URL); err != nil {
			return nil, fmt.Errorf("enqueue: %w", err)
		}
	}
	ptrs := make([]*Task, len(tasks))
	for i := range tasks {
		ptrs[i] = &tasks[i]
	}
	err = db.updateIndexed(func(tx *bbolt.Tx, front *frontier, recs *recordsTx) error {
		added = added[:0]
		if err := db.checkOpen(tx, passID); err != nil {
			return err
		}
		if msg != nil {
			if err := noteReceived(tx, passID, msg); err != nil {
				return err
			}
		}
		got, err := db.queue(tx, front, recs, passID, ptrs, putter())
		for _, t := range got {
			added = append(added, *t)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("enqueue %d tasks in pass %d: %w", len(tasks), passID, err)
	}
	return added, nil
}

// queue puts tasks on the frontier, in the order given, unless they are
// queued already or resolved in the pass.
func (db *DB) queue(tx *bbolt.Tx, front *frontier, recs *recordsTx, passID uint64, tasks []*Task, put func(*bbolt.Bucket, string, func([]byte) ([]byte, error)) error) (added []*Task, err error) {
	for _, t := range tasks {
		if queued, err := front.queued(tx, t.URL); err != nil {
			return nil, err
		} else if queued {
			continue
		}
		_, v, err := recs.find([]byte(t.URL))
		if err != nil {
			return nil, err
		}
		if v != nil {
			p, err := recordPass(v)
			if err != nil {
				return nil, db.corrupt("record", []byte(t.URL), err)
			}
			if p == passID {
				continue
			}
		}
		if err := front.add(tx, t, put); err != nil {
			return nil, fmt.Errorf("queue %s: %w", t.URL, err)
		}
		added = append(added, t)
	}
	return added, nil
}

// Get returns the record of a canonical URL.
func (db *DB) Get(url string) (rec URLRecord, ok bool, err error) {
	err = db.readByURL(false, func(_ *bbolt.Tx, get func([]byte) ([]byte, error)) error {
		v, err := get([]byte(url))
		if err != nil || v == nil {
			return err
		}
		if err := decodeRecord(url, v, &rec); err != nil {
			return db.corrupt("record", []byte(url), err)
		}
		ok = true
		return nil
	})
	return rec, ok, err
}

// Links returns the stored links of a page, in the order they were given;
// none when the page has no stored links.
func (db *DB) Links(page string) (links []Link, err error) {
	err = db.readByURL(false, func(tx *bbolt.Tx, get func([]byte) ([]byte, error)) error {
		key := []byte(page)
		rv, err := get(key)
		if err != nil || rv == nil {
			return err
		}
		v, err := db.pageLinks(tx.Bucket(bucketLinks), key, rv)
		if err != nil || v == nil {
			return err
		}
		if links, err = decodeLinks(v); err != nil {
			return db.corrupt("links of", []byte(page), err)
		}
		return nil
	})
	return links, err
}

// Records calls fn, in URL order, for every URL record resolved in the pass
// (record.Pass == passID). Each call gets a record of its own. fn runs inside
// a read transaction: it must not write to db. An error from fn stops the
// scan and is returned.
func (db *DB) Records(passID uint64, fn func(*URLRecord) error) error {
	return db.view(func(tx *bbolt.Tx) error {
		return db.passRecords(tx, passID, nil, func(url, v, _ []byte) error {
			rec := new(URLRecord)
			if err := decodeRecord(string(url), v, rec); err != nil {
				return db.corrupt("record", url, err)
			}
			return callback(func() error { return fn(rec) })
		})
	})
}

// PageLinks calls fn, in URL order, for every page resolved in the pass that
// has stored links (parsed now, or kept from before as a ghost or a 304), with
// those links. This one sequential scan of the records, reading each page's
// list where its record says, is how the referrers of every target are
// found; report.Merge relies on the URL order. fn must not write to db.
func (db *DB) PageLinks(passID uint64, fn func(page *URLRecord, links []Link) error) error {
	return db.view(func(tx *bbolt.Tx) error {
		links := tx.Bucket(bucketLinks)
		// A damaged branch page that points back at its own ancestors
		// sends a Get down for ever, past any recover (TestDamagedCycleEnds):
		// the keys are scanned first, which finds that (see scan). Only
		// the leaves' keys are read, sequentially.
		if err := db.scan(tx, links, func(_, _ []byte) error { return nil }); err != nil {
			return err
		}
		// The lists are read with the records, a window at a time in the
		// order they lie (see passRecords): read in URL order they were
		// all over the file (at 100,000 pages a page fault a list, 9 us of
		// the 20 a page PageLinks cost).
		return db.passRecords(tx, passID, links, func(k, rv, lv []byte) error {
			if lv == nil {
				return nil
			}
			page := new(URLRecord)
			if err := decodeRecord(string(k), rv, page); err != nil {
				return db.corrupt("record", k, err)
			}
			list, err := decodeLinks(lv)
			if err != nil {
				return db.corrupt("links of", k, err)
			}
			return callback(func() error { return fn(page, list) })
		})
	})
}

// Digests calls fn, in URL order, with every page resolved in the pass that
// was read for links with its content hashed (URLRecord.Digest): what a
// resumed crawl needs to know a later page of the same content by. Only a
// resumed run asks, so the records are decoded whole. fn must not write
// to db.
func (db *DB) Digests(passID uint64, fn func(url string, digest uint64) error) error {
	return db.view(func(tx *bbolt.Tx) error {
		return db.passRecords(tx, passID, nil, func(k, v, _ []byte) error {
			var rec URLRecord
			if err := decodeRecord(string(k), v, &rec); err != nil {
				return db.corrupt("record", k, err)
			}
			if !rec.Parsed || rec.Digest == 0 {
				return nil
			}
			return callback(func() error { return fn(rec.URL, rec.Digest) })
		})
	})
}

// ResolvedIn calls fn with every URL resolved in the pass, in URL order: what
// a resumed crawl must not fetch again. fn must not write to db.
func (db *DB) ResolvedIn(passID uint64, fn func(url string) error) error {
	return db.view(func(tx *bbolt.Tx) error {
		return db.passRecords(tx, passID, nil, func(k, _, _ []byte) error {
			url := string(k)
			return callback(func() error { return fn(url) })
		})
	})
}
