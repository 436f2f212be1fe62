package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Backlog is what waits in the streams: for each shard with a consumer,
// the tasks not yet delivered (Pending) and delivered but not yet acked
// (Unacked); and the results not yet written to the merged database.
type Backlog struct {
	Pending, Unacked [Shards]uint64
	Results          uint64 // pending and unacked on the results consumer
}

// Queued reads the backlog of every shard from the server, for status.
func Queued(ctx context.Context, js jetstream.JetStream) (Backlog, error) {
	var b Backlog
	stream, err := js.Stream(ctx, todoStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return b, ErrNotSetUp
	}
	if err != nil {
		return b, fmt.Errorf("read %s: %w", todoStream, err)
	}
	// One listing, a page of consumers per request, not a request per
	// consumer: 256 of those outlasted status's deadline on a starved
	// server (qa4 F19).
	list := stream.ListConsumers(ctx)
	for info := range list.Info() {
		shard, ok := consumerShard(info.Name)
		if !ok {
			continue
		}
		b.Pending[shard], b.Unacked[shard] = info.NumPending, uint64(info.NumAckPending)
	}
	if err := list.Err(); err != nil {
		return b, fmt.Errorf("list consumers of %s: %w", todoStream, err)
	}
	res, err := js.Consumer(ctx, resStream, resultsConsumer)
	if err != nil {
		return b, fmt.Errorf("read the results consumer: %w", err)
	}
	info := res.CachedInfo()
	b.Results = info.NumPending + uint64(info.NumAckPending)
	return b, nil
}

// Owner is a worker process as it last described itself, at owner.<name>:
// written when it took its leases, after each complete renewal round and
// when it gave them up.
type Owner struct {
	Name   string `json:"name"`
	Token  string `json:"token"`  // the process's own, as in its leases
	Shards string `json:"shards"` // as FormatShards writes them
	// Host and DBPath are where the worker runs, as it said.
	Host   string        `json:"host,omitempty"`
	DBPath string        `json:"db,omitempty"`
	TTL    time.Duration `json:"ttl"`
	// Released: the worker stopped and gave its leases up.
	Released bool `json:"released,omitempty"`

	// Written is the server's time of the report: the last renewal
	// while the worker lives.
	Written time.Time `json:"-"`
	// Holds are the shards whose lease this process holds now (Owners).
	Holds []int `json:"-"`
}

// Lost says the process holds none of its leases and did not give them
// up: it was killed, or lost touch with the server, and has not been
// started again.
func (o *Owner) Lost() bool { return !o.Released && len(o.Holds) == 0 }

// Gone is when the process's shards were left without an owner: when it
// gave its leases up, or when they lapsed, a TTL after its last renewal.
func (o *Owner) Gone() time.Time {
	if o.Released {
		return o.Written
	}
	return o.Written.Add(o.TTL)
}

// Owners returns the last owner report of every worker, by name, with the
// shards each process holds now.
func Owners(ctx context.Context, js jetstream.JetStream) ([]Owner, error) {
	b, err := openBuckets(ctx, js)
	if err != nil {
		return nil, err
	}
	values, err := leaseValues(ctx, b.leases)
	if err != nil {
		return nil, err
	}
	return owners(ctx, kvState{b.state}, values)
}

// owners is Owners with the leases already read (leaseValues), and the
// owner reports read from src.
func owners(ctx context.Context, src stateReader, leases [Shards][]byte) ([]Owner, error) {
	es, err := src.entries(ctx, ownerKeyPrefix+"*")
	if err != nil {
		return nil, err
	}
	out := make([]Owner, 0, len(es))
	for _, e := range es {
		var o Owner
		if err := json.Unmarshal(e.Value(), &o); err != nil {
			return nil, fmt.Errorf("read %s: %w", e.Key(), err)
		}
		o.Written = e.Created()
		for s, v := range leases {
			if h := parseLease(v); v != nil && h.name == o.Name && h.token == o.Token {
				o.Holds = append(o.Holds, s)
			}
		}
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b Owner) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// A Stall is shards of a pass that hold work nobody can do: no live
// process owns them, so the pass cannot end until a worker takes them.
type Stall struct {
	Shards []int // the shards without an owner
	Range  []int // the shards to start Worker with: all it owned
	// Worker is the worker whose part this is (it reported it unfinished,
	// or its report names the shards); "" when no worker ever owned them.
	Worker string
	Host   string    // where Worker ran, as it said
	DBPath string    // its database file there
	Since  time.Time // when its leases lapsed or it gave them up; zero when unknown
	Tasks  uint64    // messages of tasks for the shards waiting in the stream
}

// Stalled returns the stalls of pass: every worker that reported its part
// of pass unfinished and holds no lease now, and the shards whose tasks
// wait in the stream with no lease holder.
func Stalled(ctx context.Context, js jetstream.JetStream, pass uint64) ([]Stall, error) {
	b, err := openBuckets(ctx, js)
	if err != nil {
		return nil, err
	}
	return stalled(ctx, js, b.leases, kvState{b.state}, pass)
}

// stalled is Stalled with the workers' and owners' reports read from src.
func stalled(ctx context.Context, js jetstream.JetStream, leaseKV bucket, src stateReader, pass uint64) ([]Stall, error) {
	statuses, err := workerStatuses(ctx, src)
	if err != nil {
		return nil, err
	}
	// One read of the leases for both: who holds each shard, and what
	// each owner holds.
	leases, err := leaseValues(ctx, leaseKV)
	if err != nil {
		return nil, err
	}
	ows, err := owners(ctx, src, leases)
	if err != nil {
		return nil, err
	}
	holders := holdersOf(leases)
	// Messages per subject, not per consumer: a shard no worker ever
	// joined has no consumer, and in a work queue a message stays in the
	// stream until acked.
	stream, err := js.Stream(ctx, todoStream)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", todoStream, err)
	}
	si, err := stream.Info(ctx, jetstream.WithSubjectFilter(todoSubjects))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", todoStream, err)
	}
	var waitingIn [Shards]uint64
	for subject, n := range si.State.Subjects {
		if s, ok := subjectShard(subject); ok {
			waitingIn[s] = n
		}
	}
	byName := map[string]*Owner{}
	for i := range ows {
		byName[ows[i].Name] = &ows[i]
	}
	var out []Stall
	covered := [Shards]bool{}
	// add records the shards of worker name (its whole range: all) that
	// no process holds, unless a process of that name holds any of its
	// shards: it lives, or its leases are lapsing one by one.
	add := func(name string, all, shards []int) {
		st := Stall{Worker: name, Range: all}
		for _, s := range all {
			if name != "" && holders[s] == name {
				return
			}
		}
		for _, s := range shards {
			if holders[s] != "" || covered[s] {
				continue
			}
			covered[s] = true
			st.Shards = append(st.Shards, s)
			st.Tasks += waitingIn[s]
		}
		if len(st.Shards) == 0 {
			return
		}
		if name == "" {
			st.Range = st.Shards
		}
		if o := byName[name]; o != nil {
			st.Host, st.DBPath, st.Since = o.Host, o.DBPath, o.Gone()
		}
		out = append(out, st)
	}
	names := make([]string, 0, len(statuses))
	for n := range statuses {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		st := statuses[n]
		if st.Pass != pass || st.Idle || st.Refused != "" {
			continue
		}
		if shards, err := ParseShards(st.Shards); err == nil {
			add(n, shards, shards)
		}
	}
	// Tasks waiting for shards nobody holds: the last worker whose report
	// names the shard, if any, is the one to start.
	var waiting []int
	for s := range Shards {
		if holders[s] == "" && !covered[s] && waitingIn[s] > 0 {
			waiting = append(waiting, s)
		}
	}
	for _, o := range ows {
		if shards, err := ParseShards(o.Shards); err == nil {
			var mine []int
			for _, s := range shards {
				if slices.Contains(waiting, s) {
					mine = append(mine, s)
				}
			}
			add(o.Name, shards, mine)
		}
	}
	add("", nil, waiting)
	return out, nil
}
