package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.etcd.io/bbolt"
)

// A page both in use and on the freelist reads fine, key by key, until a
// commit is given it and writes over what it holds. Open finds it first
// (Tx.Check in verify), before a check's first request.
func TestOpenFindsAPageInUseAndFree(t *testing.T) {
	t.Parallel()
	content, _ := filledDB(t, Options{})
	path := filepath.Join(t.TempDir(), "lp.db")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	root := rootPage(t, path, bucketURLs)
	page := freelistPage(content)
	if count := binary.LittleEndian.Uint16(page[10:]); count == 0xffff {
		t.Fatal("a freelist too long for this test")
	} else {
		// One more free page: the bucket's root, which is in use.
		binary.LittleEndian.PutUint16(page[10:], count+1)
		binary.LittleEndian.PutUint64(page[16+8*int(count):], root)
	}
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := Open(path, Options{})
	if err == nil {
		db.Close()
		t.Fatal("Open found nothing wrong with a page in use and free")
	}
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "reachable freed") || strings.Contains(err.Error(), "\n") {
		t.Errorf("Open: %v; want ErrCorrupt naming the page, on one line", err)
	}
}

// verify decodes every bucket there is.
func TestVerifyOrderHasEveryBucket(t *testing.T) {
	t.Parallel()
	var got, want []string
	for _, b := range verifyOrder {
		got = append(got, string(b))
	}
	for _, b := range allBuckets {
		want = append(want, string(b))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("verifyOrder has %q, want %q", got, want)
	}
}

// freelistPage is the freelist page of a file's content. The meta page of
// the newer transaction says where it is (bbolt's layout: a 16-byte page
// header, then magic, version, page size and flags, the root bucket, the
// freelist's page, the high water mark and the transaction).
func freelistPage(content []byte) []byte {
	const pageSize = 4096
	meta := content[:pageSize]
	if txid := func(m []byte) uint64 { return binary.LittleEndian.Uint64(m[64:]) }; txid(content[pageSize:]) > txid(meta) {
		meta = content[pageSize : 2*pageSize]
	}
	free := binary.LittleEndian.Uint64(meta[48:])
	return content[free*pageSize : (free+1)*pageSize]
}

// firstLeaf is the first leaf page of the bucket whose root page is root,
// found through the first element of each branch page.
func firstLeaf(content []byte, root uint64) []byte {
	const pageSize = 4096
	for {
		p := content[root*pageSize : (root+1)*pageSize]
		if binary.LittleEndian.Uint16(p[8:]) != 0x01 { // not a branch
			return p
		}
		root = binary.LittleEndian.Uint64(p[16+8:]) // element 0: pos, ksize, pgid
	}
}

// rootPage is the root page of the top-level bucket name of the file at path.
func rootPage(t *testing.T, path string, name []byte) uint64 {
	t.Helper()
	var root uint64
	bdb, err := bbolt.Open(path, 0, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	err = bdb.View(func(tx *bbolt.Tx) error { root = uint64(tx.Bucket(name).RootPage()); return nil })
	_ = bdb.Close()
	if err != nil || root == 0 {
		t.Fatalf("root page %d of %s: %v", root, name, err)
	}
	return root
}

// Damage that Tx.Check, on its own goroutine, would meet before any
// guarded read: a freelist bbolt loads there, a value whose flag says it is
// a bucket (review8 F3). Open says the file is damaged, where, on one line.
func TestOpenFindsWhatTxCheckWouldCrashOn(t *testing.T) {
	t.Parallel()
	content, used := filledDB(t, Options{})
	const pageSize = 4096
	pgid := uint64(used / pageSize)
	path := filepath.Join(t.TempDir(), "real.db")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	urlsLeaf := firstLeaf(content, rootPage(t, path, bucketURLs))
	off := func(page []byte) int { return cap(content) - cap(page) }
	for _, tc := range []struct {
		name, where string
		damage      func(b []byte)
	}{
		// RV8's dmg.py: the count overflows into the first word, which
		// runs the list far past its page (a fault on Check's goroutine)...
		{"big", "free pages", func(b []byte) {
			p := freelistPage(b)
			binary.LittleEndian.PutUint16(p[10:], 0xFFFF)
			binary.LittleEndian.PutUint64(p[16:], 1<<26)
		}},
		// ... or asks for 64 GiB (out of memory).
		{"huge", "free pages", func(b []byte) {
			p := freelistPage(b)
			binary.LittleEndian.PutUint16(p[10:], 0xFFFF)
			binary.LittleEndian.PutUint64(p[16:], 1<<33)
		}},
		{"free page past the end", "free pages", func(b []byte) {
			p := freelistPage(b)
			binary.LittleEndian.PutUint16(p[10:], 1)
			binary.LittleEndian.PutUint64(p[16:], pgid+3)
		}},
		{"not a freelist page", "free pages", func(b []byte) {
			binary.LittleEndian.PutUint16(freelistPage(b)[8:], 0x02) // a leaf
		}},
		{"a value flagged as a bucket", "records of its URLs", func(b []byte) {
			binary.LittleEndian.PutUint32(b[off(urlsLeaf)+16:], 0x01) // element 0's flags
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			damaged := bytes.Clone(content)
			tc.damage(damaged)
			path := filepath.Join(t.TempDir(), "lp.db")
			if err := os.WriteFile(path, damaged, 0o644); err != nil {
				t.Fatal(err)
			}
			db, err := Open(path, Options{})
			if err == nil {
				db.Close()
				t.Fatal("Open found nothing wrong")
			}
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.where) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Open: %v; want ErrCorrupt naming %q, on one line", err, tc.where)
			}
		})
	}
}

// Tx.Check walks every bucket of the file, and so does Open first, under
// guard: here one it does not use, holding a bucket whose root page lies
// far outside the file.
func TestOpenWalksBucketsItDoesNotUse(t *testing.T) {
	t.Parallel()
	content, _ := filledDB(t, Options{})
	path := filepath.Join(t.TempDir(), "lp.db")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	bdb, err := bbolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = bdb.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucket([]byte("zz-other"))
		if err != nil {
			return err
		}
		inner, err := b.CreateBucket([]byte("inner"))
		if err != nil {
			return err
		}
		for i := range 500 { // more than a page: not inline
			if err := inner.Put(binary.BigEndian.AppendUint64(nil, uint64(i)), bytes.Repeat([]byte("x"), 40)); err != nil {
				return err
			}
		}
		return nil
	})
	if cerr := bdb.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if db, err := Open(path, Options{}); err != nil {
		t.Fatalf("Open of a sound file with a bucket it does not use: %v", err)
	} else if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	content, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The outer bucket's leaf holds "inner" -> its root page and sequence.
	outer := rootPage(t, path, []byte("zz-other"))
	for _, tc := range []struct {
		name string
		root uint64
	}{
		{"unmapped", 1 << 30}, // 4 TiB in
		{"inside itself", outer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			damaged := bytes.Clone(content)
			leaf := firstLeaf(damaged, outer)
			pos := binary.LittleEndian.Uint32(leaf[16+4:])
			ksize := binary.LittleEndian.Uint32(leaf[16+8:])
			binary.LittleEndian.PutUint64(leaf[16+pos+ksize:], tc.root)
			path := filepath.Join(t.TempDir(), "lp.db")
			if err := os.WriteFile(path, damaged, 0o644); err != nil {
				t.Fatal(err)
			}
			db, err := Open(path, Options{})
			if err == nil {
				db.Close()
				t.Fatal("Open found nothing wrong")
			}
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), `in a bucket it does not use, "zz-other"`) {
				t.Errorf("Open: %v; want ErrCorrupt naming the bucket", err)
			}
		})
	}
}
