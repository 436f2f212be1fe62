package crawler

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
)

// A chain whose claim of a redirect target failed (the task's time ran out
// while it asked, or the pass ended under it) stopped before recording
// that target. Its records are still made, never a crash of the run: the
// run panicked here when the task's deadline passed during the claim.
func TestChainWhoseClaimFailed(t *testing.T) {
	t.Parallel()
	db, err := store.Open(filepath.Join(t.TempDir(), "lp.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	const a, b, c3 = "http://127.0.0.1:1/a", "http://127.0.0.1:1/b", "http://127.0.0.1:1/c"
	engine, err := rules.New(rules.Config{Start: []string{a}})
	if err != nil {
		t.Fatal(err)
	}
	c := New(Config{}, engine, db)
	f := fetched{
		redirects: []store.Hop{{URL: a, Status: 301}, {URL: b, Status: 301}},
		keys:      []string{b}, // c3 was never claimed
		finalURL:  c3, reached: true,
	}
	f.err = errNoDispatcher
	tk := task{Task: store.Task{URL: a, Action: rules.Parse.String()}}
	o := c.chain(context.Background(), store.Pass{ID: 1}, tk, f, time.Now())
	if o.result.Record.URL != a || o.result.Record.Verdict == store.VerdictOK {
		t.Errorf("the task's record: %+v", o.result.Record)
	}
	for _, h := range o.hops {
		if h.Record.URL == c3 {
			t.Errorf("an unclaimed target was recorded: %+v", h.Record)
		}
	}
}
