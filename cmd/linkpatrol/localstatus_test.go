package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/store"
)

// status without --nats reads the database's last pass. A pass whose check
// was killed (SIGKILL) stays "running" in the store; its heartbeat (Alive,
// stored every 5 s while a run works) tells a dead run from a live one, so
// status says "interrupted" and how to resume, and "running" only while
// the heartbeat is fresh. The records are built by hand: no run is killed,
// nothing waits for a heartbeat to age.
func TestStatusTellsAKilledPassFromARunningOne(t *testing.T) {
	t.Parallel()
	now := time.Now()
	const start = "http://127.0.0.1:1/"
	for _, tc := range []struct {
		name        string
		state       store.PassState
		alive       time.Time
		want, never string
	}{
		{name: "killed", state: store.PassRunning, alive: now.Add(-9 * time.Minute),
			want:  "interrupted (last seen " + now.Add(-9*time.Minute).Local().Format(time.DateTime) + ", resume with `linkpatrol check --db DB " + start + "`)",
			never: "running"},
		// A heartbeat ahead of the clock stays fresh however slowly the
		// test runs.
		{name: "alive", state: store.PassRunning, alive: now.Add(time.Minute), want: "pass 1, running (last seen 0s ago), of " + start, never: "interrupted"},
		{name: "stopped", state: store.PassStopped, want: "pass 1, stopped (resume with `linkpatrol check --db DB " + start + "`)", never: "running"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "a.db")
			db, err := store.Open(path, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			p, err := db.BeginPass(store.Pass{StartURLs: []string{start}, Started: now.Add(-10 * time.Minute), RunStarted: now.Add(-10 * time.Minute)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			p.State, p.Alive = tc.state, tc.alive
			if err := db.UpdatePass(p); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			r := runInProcess(t, "status", "--db", path)
			want := strings.ReplaceAll(tc.want, "DB", path)
			if r.code != exitOK || !strings.Contains(r.stdout, want) || strings.Contains(r.stdout, tc.never) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 0 with %q and no %q", r.code, r.stdout, r.stderr, want, tc.never)
			}
		})
	}
}
