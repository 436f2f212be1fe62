package store

import (
	"maps"
	"os"
	"path/filepath"
	"testing"
)

// Received is what EnqueueReceived committed in a pass, by source: the
// highest message, never lowered by a message delivered again, nothing of
// an earlier pass, and nothing when the commit failed. A copy of the file
// taken earlier says less, which is how a cluster worker on a restored
// backup is told from one on its own file.
func TestEnqueueReceived(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "w.db")
	db := openAt(t, path)
	p1 := begin(t, db, home)
	received := func(pass uint64) map[string]uint64 {
		t.Helper()
		got, err := db.Received(pass)
		if err != nil {
			t.Fatalf("Received(%d): %v", pass, err)
		}
		return got
	}
	enqueue := func(pass uint64, url, source string, seq uint64) {
		t.Helper()
		if _, err := db.EnqueueReceived(pass, []Task{{URL: url, Action: "check"}}, source, seq); err != nil {
			t.Fatalf("EnqueueReceived(%s %d): %v", source, seq, err)
		}
	}
	if got := received(p1.ID); len(got) != 0 {
		t.Fatalf("Received of a fresh pass = %v; want none", got)
	}
	enqueue(p1.ID, "http://127.0.0.1/a", "lp.todo.3", 10)
	enqueue(p1.ID, "http://127.0.0.1/b", "lp.todo.3", 7) // delivered again, or out of order
	enqueue(p1.ID, "http://127.0.0.1/c", "lp.todo.9", 12)
	enqueue(p1.ID, "http://127.0.0.1/a", "lp.todo.9", 14) // adds nothing, still held
	if _, err := db.EnqueueReceived(p1.ID+1, []Task{{URL: "http://127.0.0.1/d", Action: "check"}}, "lp.todo.3", 99); err == nil {
		t.Fatal("EnqueueReceived into a pass that is not open succeeded")
	}
	if _, err := db.EnqueueReceived(p1.ID, []Task{{URL: "", Action: "check"}}, "lp.todo.3", 98); err == nil {
		t.Fatal("EnqueueReceived of an empty URL succeeded")
	}
	want := map[string]uint64{"lp.todo.3": 10, "lp.todo.9": 14}
	if got := received(p1.ID); !maps.Equal(got, want) {
		t.Fatalf("Received(%d) = %v; want %v", p1.ID, got, want)
	}

	// A copy, then more: the copy holds less.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(t.TempDir(), "backup.db")
	if err := os.WriteFile(backup, data, 0o600); err != nil {
		t.Fatal(err)
	}
	db = openAt(t, path)
	enqueue(p1.ID, "http://127.0.0.1/e", "lp.todo.3", 20)
	if got := received(p1.ID)["lp.todo.3"]; got != 20 {
		t.Fatalf("Received after reopening = %d; want 20", got)
	}
	old := openAt(t, backup)
	if got, err := old.Received(p1.ID); err != nil || got["lp.todo.3"] != 10 {
		t.Fatalf("the copy's Received = %v, %v; want lp.todo.3 at 10", got, err)
	}

	// The next pass starts from nothing.
	finish(t, db, p1, PassComplete)
	p2 := begin(t, db, home)
	if got := received(p2.ID); len(got) != 0 {
		t.Fatalf("Received of the next pass = %v; want none", got)
	}
	enqueue(p2.ID, "http://127.0.0.1/a", "lp.todo.3", 30)
	if got, want := received(p2.ID), map[string]uint64{"lp.todo.3": 30}; !maps.Equal(got, want) {
		t.Fatalf("Received(%d) = %v; want %v", p2.ID, got, want)
	}
	// One mark per source: the newer pass's replaced the older's.
	if got, want := received(p1.ID), map[string]uint64{"lp.todo.9": 14}; !maps.Equal(got, want) {
		t.Fatalf("Received(%d) after pass %d noted = %v; want %v", p1.ID, p2.ID, got, want)
	}
}
