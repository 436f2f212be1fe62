package store

import (
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
	var root uint64 // the first page of the urls bucket
	bdb, err := bbolt.Open(path, 0, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	err = bdb.View(func(tx *bbolt.Tx) error { root = uint64(tx.Bucket(bucketURLs).RootPage()); return nil })
	_ = bdb.Close()
	if err != nil || root == 0 {
		t.Fatalf("root page %d: %v", root, err)
	}
	// The meta page of the newer transaction says where the freelist is
	// (bbolt's layout: a 16-byte page header, then magic, version, page
	// size and flags, the root bucket, the freelist's page, the high
	// water mark and the transaction).
	const pageSize = 4096
	meta := content[:pageSize]
	if txid := func(m []byte) uint64 { return binary.LittleEndian.Uint64(m[64:]) }; txid(content[pageSize:]) > txid(meta) {
		meta = content[pageSize : 2*pageSize]
	}
	free := binary.LittleEndian.Uint64(meta[48:])
	page := content[free*pageSize : (free+1)*pageSize]
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
