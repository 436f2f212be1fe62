package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"go.etcd.io/bbolt"
)

// PruneStats says what Prune removed.
type PruneStats struct {
	Passes    int // passes older than the oldest one kept
	URLs      int // URL records last resolved in one of those passes
	LinkLists int // pages among those URLs that had stored links
	Links     int // links in those lists
}

const defaultPruneChunk = 10_000

// Prune keeps the newest keep complete passes, every pass newer than the
// oldest of them (the open one included) and the URL records last resolved
// in any kept pass; it deletes the older passes and the records, with their
// links, last resolved in them. Nothing is deleted while fewer than keep
// passes are complete. It works in several transactions, and a prune cut
// short (by ctx between two of them, or by a crash) leaves a consistent
// file that the next Prune finishes.
func (db *DB) Prune(ctx context.Context, keep int) (PruneStats, error) {
	var st PruneStats
	if keep < 1 {
		return st, fmt.Errorf("prune: keep must be at least 1, not %d", keep)
	}
	var cutoff uint64 // the oldest kept pass
	err := db.view(func(tx *bbolt.Tx) error {
		c := tx.Bucket(bucketPasses).Cursor()
		complete := 0
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			p, err := db.decodePass(k, v)
			if err != nil {
				return err
			}
			if p.State != PassComplete {
				continue
			}
			if complete++; complete == keep {
				cutoff = p.ID
				return nil
			}
		}
		return nil
	})
	if err != nil || cutoff == 0 {
		return st, wrapPrune(err)
	}

	var from []byte
	for {
		if err := ctx.Err(); err != nil {
			return st, wrapPrune(err)
		}
		var chunk PruneStats
		var next []byte
		err := db.updateIndexed(func(tx *bbolt.Tx, _ *frontier, recs *recordsTx) error {
			links := tx.Bucket(bucketLinks)
			c := recs.b.Cursor()
			k, v := c.First()
			if from != nil {
				k, v = c.Seek(from)
			}
			type doomedURL struct {
				url     []byte
				at      uint64
				linksAt uint64
			}
			var doomed []doomedURL
			for ; k != nil && len(doomed) < db.pruneChunk; k, v = c.Next() {
				url, _, p, at, err := db.recordEntry(k, v)
				if err != nil {
					return err
				}
				if p < cutoff {
					doomed = append(doomed, doomedURL{bytes.Clone(url), binary.BigEndian.Uint64(k), at})
				}
			}
			next = bytes.Clone(k)
			for _, d := range doomed {
				if d.linksAt != linksNone {
					lk := linksKey(d.url, d.linksAt)
					if lv := links.Get(lk); lv != nil {
						n, err := linkCount(lv)
						if err != nil {
							return db.corrupt("links of", d.url, err)
						}
						if err := links.Delete(lk); err != nil {
							return err
						}
						chunk.LinkLists++
						chunk.Links += n
					}
				}
				if err := recs.remove(d.url, d.at); err != nil {
					return err
				}
				chunk.URLs++
			}
			return nil
		})
		if err != nil {
			return st, wrapPrune(err)
		}
		st.URLs += chunk.URLs
		st.LinkLists += chunk.LinkLists
		st.Links += chunk.Links
		if next == nil {
			break
		}
		from = next
	}

	// Passes go last, so an interrupted prune still finds its cutoff again.
	err = db.update(func(tx *bbolt.Tx) error {
		passes := tx.Bucket(bucketPasses)
		var doomed [][]byte
		c := passes.Cursor()
		for k, _ := c.First(); k != nil && binary.BigEndian.Uint64(k) < cutoff; k, _ = c.Next() {
			doomed = append(doomed, bytes.Clone(k))
		}
		for _, k := range doomed {
			if err := passes.Delete(k); err != nil {
				return err
			}
		}
		st.Passes = len(doomed)
		return nil
	})
	return st, wrapPrune(err)
}

func wrapPrune(err error) error {
	if err != nil {
		return fmt.Errorf("prune: %w", err)
	}
	return nil
}

// compactSuffix follows the database's name in the name of a Compact's
// copy, before the random part.
const compactSuffix = ".compact-"

// A rewrite costs a full copy of the file, so it is only done when it
// gives back at least compactMinFree bytes and a quarter of the file.
const (
	compactMinFree  = 1 << 20
	compactMinShare = 4
	// compactTxBytes bounds the data copied per transaction of the copy.
	compactTxBytes = 16 << 20
)

// Compact rewrites the file without its free pages when they take at least a
// quarter of it (and 1 MiB): a copy into a temporary file next to it, synced,
// then renamed over it. The lock is held throughout, so no other process can
// slip in. It returns the file size before and after; they are equal when
// the rewrite was not worth it. A cancelled ctx abandons the copy and leaves
// the file as it was.
func (db *DB) Compact(ctx context.Context) (before, after int64, err error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.bolt == nil {
		return 0, 0, fmt.Errorf("compact %s: %w", db.path, errClosed)
	}
	db.syncs.Wait() // a background fsync of the file about to be replaced
	if db.opt.ReadOnly {
		return 0, 0, fmt.Errorf("compact %s: opened read-only", db.path)
	}
	st, err := os.Stat(db.path)
	if err != nil {
		return 0, 0, fmt.Errorf("compact: %w", err)
	}
	before = st.Size()
	var inUse, data int64
	err = guard(db.path, func() error {
		return db.bolt.View(func(tx *bbolt.Tx) error {
			s := db.bolt.Stats()
			inUse = tx.Size() - int64(s.FreePageN+s.PendingPageN)*int64(db.bolt.Info().PageSize)
			if inUse > int64(db.bolt.AllocSize) {
				return nil // copySize needs no more
			}
			return tx.ForEach(func(_ []byte, b *bbolt.Bucket) error {
				st := b.Stats()
				data += int64(st.BranchInuse + st.LeafInuse + st.InlineBucketInuse)
				return nil
			})
		})
	})
	if err != nil {
		return before, before, fmt.Errorf("compact: %w", err)
	}
	size := copySize(inUse, data, int64(db.bolt.AllocSize))
	if free := before - size; free < compactMinFree || free*compactMinShare < before {
		return before, before, nil
	}

	dst, tmp, err := db.copyTo(ctx, st.Mode().Perm(), size)
	if err != nil {
		return before, before, fmt.Errorf("compact %s: %w", db.path, err)
	}
	if err := os.Rename(tmp, db.path); err != nil {
		_ = dst.Close()
		_ = os.Remove(tmp)
		return before, before, fmt.Errorf("compact %s: %w", db.path, err)
	}
	// From here the new file is the database, whatever else fails.
	old := db.bolt
	db.bolt = dst
	errs := []error{syncDir(filepath.Dir(db.path)), old.Close()}
	if st, err := os.Stat(db.path); err == nil {
		after = st.Size()
	}
	if err := errors.Join(errs...); err != nil {
		return before, after, fmt.Errorf("compact %s: %w", db.path, err)
	}
	return before, after, nil
}

// copySize is about the size of the file a Compact writes, for a database
// with inUse bytes of pages, data bytes of them filled. bbolt makes a file
// of up to allocSize the power of two (32 KiB at least) that holds its
// pages, and grows a larger one as pages are added. The copy fills its
// pages: they come to 2-6% more than data, with the meta and freelist
// pages (TestCopySize). Counting only the free pages of a small file, the
// first pass of a 10,000-page check (16 MiB, 12 of them in use, 8.2 of
// data) was copied at the end of every run into a file of 16 MiB again, for
// 4% of the run's CPU.
func copySize(inUse, data, allocSize int64) int64 {
	if inUse > allocSize {
		return inUse
	}
	pages := data + data/16 + 4<<12
	size := int64(32 << 10)
	for size < pages {
		size *= 2
	}
	return size
}

// copyTo copies every bucket into a new file next to the database and syncs
// it. The new file is open, and so locked, when it is returned. size is
// copySize of the database: the copy is mapped that large from the start.
// Mapped as bbolt grows it, from 32 KiB, the copy was mapped again at every
// doubling, and each time bbolt copied every key and value the transaction
// held out of the old mapping: two thirds of a Compact's CPU at the end of a
// 10,000-page check. The file grows as before: to the mapping's size while
// that is within AllocSize (where size is the file's size, TestCopySize),
// page by page above it.
func (db *DB) copyTo(ctx context.Context, perm os.FileMode, size int64) (dst *bbolt.DB, tmp string, err error) {
	f, err := os.CreateTemp(filepath.Dir(db.path), filepath.Base(db.path)+compactSuffix+"*")
	if err != nil {
		return nil, "", err
	}
	tmp = f.Name()
	err = errors.Join(f.Chmod(perm), f.Close())
	if err == nil {
		opt := boltOptions(db.opt, nil)
		opt.InitialMmapSize = int(size)
		dst, err = bbolt.Open(tmp, perm, opt)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return nil, "", err
	}
	// Syncing once at the end is enough: the copy is worthless until renamed.
	dst.NoSync = true
	err = guard(db.path, func() error { return copyBuckets(ctx, dst, db.bolt) })
	dst.NoSync = false
	if err == nil {
		err = dst.Sync()
	}
	if err != nil {
		_ = dst.Close()
		_ = os.Remove(tmp)
		return nil, "", err
	}
	return dst, tmp, nil
}

// copyBuckets copies our flat layout (top-level buckets of plain keys) with
// full pages, a bounded amount per transaction, checking ctx in between.
// bbolt.Compact does the same but cannot be cancelled.
func copyBuckets(ctx context.Context, dst, src *bbolt.DB) error {
	return src.View(func(stx *bbolt.Tx) error {
		return stx.ForEach(func(name []byte, sb *bbolt.Bucket) error {
			c := sb.Cursor()
			k, v := c.First()
			for {
				if err := ctx.Err(); err != nil {
					return err
				}
				err := dst.Update(func(dtx *bbolt.Tx) error {
					b, err := dtx.CreateBucketIfNotExists(name)
					if err != nil {
						return err
					}
					b.FillPercent = 1
					// The outbox numbers its entries by the sequence.
					if err := b.SetSequence(sb.Sequence()); err != nil {
						return err
					}
					for n := 0; k != nil && n < compactTxBytes; k, v = c.Next() {
						if v == nil {
							return fmt.Errorf("bucket %s holds a nested bucket %q", name, k)
						}
						if err := b.Put(k, v); err != nil {
							return err
						}
						n += len(k) + len(v)
					}
					return nil
				})
				if err != nil || k == nil {
					return err
				}
			}
		})
	})
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
