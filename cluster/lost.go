package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// A Loss is shards of a pass whose queued URLs a worker database lost:
// more than one database joined them (Joined): a fresh or other file took
// a worker's shards during the pass, and the URLs queued in the database
// it replaced (or that it queued itself, if the first came back) may never
// have been checked; or one database came back as an older copy of itself
// (Behind), without the tasks it had taken since. Nothing in the cluster
// holds them any more, and only a new pass checks them. Which of them were
// lost is not known here, so every such shard counts.
type Loss struct {
	Shards []int
	DBs    []Joined // in the order they first joined
	// Behind, when set, is the finding of the one database in DBs that
	// came back older.
	Behind *Behind
}

func (l Loss) String() string {
	var b strings.Builder
	noun := "shards"
	if len(l.Shards) == 1 {
		noun = "shard"
	}
	if bh := l.Behind; bh != nil {
		j := l.DBs[0]
		held := "none of its task messages"
		if bh.Held > 0 {
			held = fmt.Sprintf("its task messages up to %d", bh.Held)
		}
		fmt.Fprintf(&b, "%s %s: worker %s's %s%s joined the pass again as an older copy of itself (restored from a backup?): of shard %d it holds %s, where worker %s had reported up to %d",
			noun, FormatShards(l.Shards), j.Name, j.DB, where(j), bh.Shard, held, bh.Worker, bh.Reported)
		return b.String()
	}
	fmt.Fprintf(&b, "%s %s were worked from %d databases:", noun, FormatShards(l.Shards), len(l.DBs))
	for i, j := range l.DBs {
		if i > 0 {
			b.WriteString(", then")
		}
		fmt.Fprintf(&b, " worker %s's %s%s", j.Name, j.DB, where(j))
	}
	return b.String()
}

// where says where a joined database is, as " (FILE on HOST)", or "".
func where(j Joined) string {
	switch {
	case j.DBPath != "" && j.Host != "":
		return fmt.Sprintf(" (%s on %s)", j.DBPath, j.Host)
	case j.DBPath != "":
		return fmt.Sprintf(" (%s)", j.DBPath)
	}
	return ""
}

// unfinishedBecause is what a pass with losses says in its report.
func unfinishedBecause(losses []Loss) string {
	parts := make([]string, len(losses))
	for i, l := range losses {
		parts[i] = l.String()
	}
	return "a worker's database changed during the pass (a second worker with the same name, or one started again on a lost, fresh or restored file): " +
		strings.Join(parts, "; ") +
		". What was queued in one of them and not in the other (or taken after the older copy was made) may never have been checked, and no worker holds it now. Check everything with a new pass: run check --nats again with --new-pass."
}

// lostWork returns the losses of pass: shards that more than one database
// joined, and those of a database that joined again older (every Joined
// record of the pass).
func lostWork(ctx context.Context, src stateReader, pass uint64) ([]Loss, error) {
	joined, err := joinedRecords(ctx, src)
	if err != nil {
		return nil, err
	}
	return lossesOf(joined, pass)
}

// lossesOf is lostWork of the Joined records already read.
func lossesOf(joined []Joined, pass uint64) ([]Loss, error) {
	joined = slices.DeleteFunc(slices.Clone(joined), func(j Joined) bool { return j.Pass != pass })
	slices.SortFunc(joined, func(a, b Joined) int {
		if c := a.First.Compare(b.First); c != 0 {
			return c
		}
		return strings.Compare(a.DB, b.DB)
	})
	// Shards by the set of databases that joined them.
	var by [Shards][]int // shard -> indexes into joined
	for i, j := range joined {
		shards, err := ParseShards(j.Shards)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", joinedKey(j.DB), err)
		}
		for _, s := range shards {
			by[s] = append(by[s], i)
		}
	}
	var out []Loss
	index := map[string]int{} // the databases' indexes -> out
	for s, dbs := range by {
		if len(dbs) < 2 {
			continue
		}
		k := fmt.Sprint(dbs)
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			l := Loss{}
			for _, d := range dbs {
				l.DBs = append(l.DBs, joined[d])
			}
			out = append(out, l)
		}
		out[i].Shards = append(out[i].Shards, s)
	}
	for _, j := range joined {
		if j.Behind == nil {
			continue
		}
		shards, err := ParseShards(j.Behind.Shards)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", joinedKey(j.DB), err)
		}
		out = append(out, Loss{Shards: shards, DBs: []Joined{j}, Behind: j.Behind})
	}
	return out, nil
}

// joinedRecords reads every Joined record.
func joinedRecords(ctx context.Context, src stateReader) ([]Joined, error) {
	es, err := src.entries(ctx, joinedKeyPrefix+"*")
	if err != nil {
		return nil, err
	}
	var out []Joined
	for _, e := range es {
		j, err := src.decoded(e, func(b []byte) (any, error) {
			j := Joined{rev: e.Revision()}
			err := json.Unmarshal(b, &j)
			return j, err
		})
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", e.Key(), err)
		}
		out = append(out, j.(Joined))
	}
	return out, nil
}

// forgetJoined deletes, of the Joined records read, those of passes
// before pass, which no later pass reads.
func forgetJoined(ctx context.Context, kv jetstream.KeyValue, joined []Joined, pass uint64) error {
	for _, j := range joined {
		if j.Pass < pass {
			// Only that revision: the database may be joining a new pass.
			err := kv.Delete(ctx, joinedKey(j.DB), jetstream.LastRevision(j.rev))
			if err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
				return fmt.Errorf("delete %s: %w", joinedKey(j.DB), err)
			}
		}
	}
	return nil
}
