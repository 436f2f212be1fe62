package store

import (
	"path/filepath"
	"testing"
)

// A file's ID is written once and read back the same after a reopen,
// read-only too; another file has another.
func TestID(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "a.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	id, err := db.ID()
	if err != nil || len(id) != 16 {
		t.Fatalf("ID() = %q, %v", id, err)
	}
	if again, err := db.ID(); err != nil || again != id {
		t.Fatalf("second ID() = %q, %v; want %q", again, err, id)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ro.ID(); err != nil || got != id {
		t.Errorf("read-only ID() = %q, %v; want %q", got, err, id)
	}
	_ = ro.Close()
	if got, _ := openAt(t, path).ID(); got != id {
		t.Errorf("after reopening ID() = %q; want %q", got, id)
	}
	if other, _ := openAt(t, filepath.Join(dir, "b.db")).ID(); other == id || other == "" {
		t.Errorf("another file's ID = %q (the first's: %q)", other, id)
	}
}
