package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/linkpatrol/linkpatrol/store"
)

// PassRecord is the pass the cluster works on, as the coordinator stores it
// in KV: workers begin it in their own databases under the same ID, and
// decide URLs by its rules, not by their own files.
type PassRecord struct {
	// Pass is the merged database's pass: ID, StartURLs, SettingsHash,
	// State (running until the coordinator ends it), Deferred.
	Pass store.Pass `json:"pass"`
	// Config is the bytes of the config file the pass runs with (empty for
	// none); each worker expands its ${ENV} secrets itself.
	Config []byte `json:"config,omitempty"`
	// MaxRedirects is BeginRequest.MaxRedirects.
	MaxRedirects int `json:"max_redirects,omitempty"`
	// Seeds are BeginRequest.Seeds. Each worker queues those of its
	// shards before its crawler gets any task (Frontier.queueSeeds), so
	// that nothing it crawls reaches them by a link first: the first task
	// of a URL sets its depth, and a start URL reached first by a link
	// would be recorded as no seed (and its links one hop too far for
	// --max-depth).
	Seeds []store.Task `json:"seeds,omitempty"`
}

// WorkerStatus is what a worker last reported, at worker.<name>.
type WorkerStatus struct {
	Name string `json:"name"`
	// Token is the reporting process's own (Owner.Token): a report of an
	// earlier process of the same name has another.
	Token  string `json:"token,omitempty"`
	Shards string `json:"shards"` // as FormatShards writes them
	Pass   uint64 `json:"pass"`   // the pass the report is about
	// Refused, when set, says why the worker cannot run Pass (its
	// settings do not apply there): it takes no part in it.
	Refused string `json:"refused,omitempty"`
	// Idle: nothing queued, in flight, parked or in the outbox, and every
	// acked task handed over and resolved (see the package comment).
	Idle bool `json:"idle"`
	// Deferred counts URLs resolved provisionally, held back by a server's
	// pause to a later run; meaningful when Idle.
	Deferred int `json:"deferred,omitempty"`
	// Acked is the last stream sequence of lp.todo.<shard> this worker
	// acked, per shard (as decimal strings, JSON keys), after committing
	// the message's tasks; a shard it acked nothing of is left out.
	Acked map[string]uint64 `json:"acked,omitempty"`
	// DB is the ID of the worker's database (store.DB.ID), and Received
	// the last stream sequence of lp.todo.<shard> whose tasks that file
	// holds in the pass, per shard as in Acked (store.DB.Received):
	// committed there before the message was acked, and reported only
	// after. Unlike Acked it never counts what another database acked.
	// A database that joins the pass again holding less than this is an
	// older copy of the file (Joined.Behind).
	DB       string            `json:"db_id,omitempty"`
	Received map[string]uint64 `json:"received,omitempty"`
	// Outbox is the number of entries waiting to be published.
	Outbox int `json:"outbox"`
	// Queued and Done are the worker's crawler's counts in this run: URLs
	// on its own frontier or in flight, and URLs done (ReportProgress).
	// The stream's backlog (Queued, the function) is not in them.
	Queued int64 `json:"queued,omitempty"`
	Done   int64 `json:"done,omitempty"`
	// Error is the last failure the worker could not get past on its own
	// (it keeps retrying), empty when there is none.
	Error   string    `json:"error,omitempty"`
	Updated time.Time `json:"updated"`

	rev uint64 // the report's revision in KV, as read
}

// Joined is a worker database that took part in a pass, at
// joined.<its ID>: written when a worker joins the pass, before any task
// of it can reach that database. Shards are all it joined the pass with,
// over every run of the pass; First is when it first did.
type Joined struct {
	Pass   uint64    `json:"pass"`
	DB     string    `json:"db_id"`
	Name   string    `json:"name"`
	Shards string    `json:"shards"` // as FormatShards writes them
	Host   string    `json:"host,omitempty"`
	DBPath string    `json:"db,omitempty"`
	First  time.Time `json:"first"`
	// Behind, once set, says the database joined the pass again holding
	// less than a worker on it had reported: an older copy of the file.
	Behind *Behind `json:"behind,omitempty"`

	rev uint64 // the record's revision in KV, as read
}

// Behind is a worker database that joined a pass again holding fewer of
// the pass's task messages than a worker running on it had reported it
// held (WorkerStatus.Received): an older copy of the file, such as a
// backup restored after a crash. The tasks of the messages it lacks were
// acked, so the stream holds them no more, and nothing will check them.
type Behind struct {
	Shards string `json:"shards"` // as FormatShards writes them
	// Shard is the first of them: Reported is the last message of it
	// that worker Worker had reported its file held, Held the last the
	// file holds now.
	Shard    int    `json:"shard"`
	Worker   string `json:"worker"`
	Reported uint64 `json:"reported"`
	Held     uint64 `json:"held"`
}

func (s *WorkerStatus) acked(shard int) uint64 { return s.Acked[strconv.Itoa(shard)] }

// reportSays is what a report says, apart from its time: two reports say
// the same when these are equal. (A report carries a sequence per shard,
// so the reporter keeps the last one's, not the report, to compare.)
func reportSays(st *WorkerStatus) []byte {
	x := *st
	x.Updated = time.Time{}
	b, _ := json.Marshal(x)
	return b
}

func getJSON(ctx context.Context, kv bucket, key string, v any) (ok bool, err error) {
	return getState(ctx, kvState{kv}, key, v)
}

func putJSON(ctx context.Context, kv jetstream.KeyValue, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("write %s: %w", key, err)
	}
	if _, err := kv.Put(ctx, key, b); err != nil {
		return fmt.Errorf("write %s: %w", key, err)
	}
	return nil
}

// entries reads the current value of every key of a bucket matching
// filter, deleted keys left out; none is not an error. It is one watch,
// whose consumer delivers the last message of each key: one request for
// any number of keys, where getting each key is a request per key (and
// at a poll a second, with a lease per shard, the most of what the server
// does during a pass). See initialValues for when it has them all.
func entries(ctx context.Context, kv bucket, filter string) ([]jetstream.KeyValueEntry, error) {
	for {
		values, done, err := entriesOnce(ctx, kv, filter)
		if err != nil {
			return nil, err
		}
		if done {
			out := make([]jetstream.KeyValueEntry, 0, len(values))
			for _, e := range values {
				out = append(out, e)
			}
			slices.SortFunc(out, func(a, b jetstream.KeyValueEntry) int { return strings.Compare(a.Key(), b.Key()) })
			return out, nil
		}
	}
}

// watchQuiet is how long a read of every key waits for a watch's next
// value before it makes the watch again. A watch sends its values in one
// burst; a gap this long means they are not coming.
const watchQuiet = 2 * time.Second

// entriesOnce is one watch of entries; done is false when it went quiet.
func entriesOnce(ctx context.Context, kv bucket, filter string) (values map[string]jetstream.KeyValueEntry, done bool, err error) {
	keys, err := kv.keysNow(ctx, filter)
	if err != nil {
		return nil, true, fmt.Errorf("read %s: %w", filter, err)
	}
	if len(keys) == 0 {
		return nil, true, nil
	}
	w, err := kv.Watch(ctx, filter)
	if err != nil {
		return nil, true, fmt.Errorf("read %s: %w", filter, err)
	}
	defer func() { _ = w.Stop() }()
	values, done, err = initialValues(ctx, w, keys)
	if err != nil {
		return nil, true, fmt.Errorf("read %s: %w", filter, err)
	}
	return values, done, nil
}

// initialValues reads from w, a watch made after keys were read
// (keysNow), until it has delivered a message of each of them, and
// returns the last value of every key it delivered, deleted keys left
// out; done is false when the watch went quiet before.
//
// The watch's own word that it has delivered every value (a nil entry)
// is not enough. Its consumer delivers the last message of each key as
// the server held them when it was made, in stream order, skipping one
// the server removed meanwhile; a key rewritten meanwhile (a lease
// renewed) comes only later, as an update, and the nil entry may come
// before it: a read of all leases during a renewal round missed holders
// (TestLeaseReadDuringRenewalsMissesNone). A key that held a message
// when keys were read either comes in the watch's first values, or was
// rewritten, deleted or purged since, and that later message comes. Only
// a key that lapsed (the lease bucket's TTL) or was purged without a
// marker comes never: a watch that delivers nothing for watchQuiet is
// made again, and the new one starts from the keys as they are then.
func initialValues(ctx context.Context, w jetstream.KeyWatcher, keys map[string]bool) (values map[string]jetstream.KeyValueEntry, done bool, err error) {
	values = map[string]jetstream.KeyValueEntry{}
	missing := len(keys)
	quiet := time.NewTimer(watchQuiet)
	defer quiet.Stop()
	for missing > 0 {
		select {
		case <-ctx.Done():
			return nil, true, ctx.Err()
		case <-quiet.C:
			return nil, false, nil
		case e, ok := <-w.Updates():
			if !ok {
				return nil, true, errors.New("the watch ended early")
			}
			if e == nil {
				continue
			}
			if keys[e.Key()] {
				keys[e.Key()] = false
				missing--
				// Only a key still awaited is progress: other keys'
				// renewals, which come every few seconds from each
				// worker, kept a read waiting for a lease that lapsed
				// before it was delivered (review9 R5).
				quiet.Reset(watchQuiet)
			}
			apply(values, e)
		}
	}
	return values, true, nil
}

// CurrentPass returns the pass record the coordinator last wrote; ok is
// false before any pass began.
func CurrentPass(ctx context.Context, js jetstream.JetStream) (rec PassRecord, ok bool, err error) {
	b, err := openBuckets(ctx, js)
	if err != nil {
		return rec, false, err
	}
	ok, err = getJSON(ctx, b.state, passKey, &rec)
	return rec, ok, err
}

// Workers returns every worker's last status report, by name.
func Workers(ctx context.Context, js jetstream.JetStream) ([]WorkerStatus, error) {
	b, err := openBuckets(ctx, js)
	if err != nil {
		return nil, err
	}
	return workersIn(ctx, kvState{b.state})
}

// workersIn is Workers read from src.
func workersIn(ctx context.Context, src stateReader) ([]WorkerStatus, error) {
	m, err := workerStatuses(ctx, src)
	if err != nil {
		return nil, err
	}
	out := make([]WorkerStatus, 0, len(m))
	for _, st := range m {
		out = append(out, *st)
	}
	slices.SortFunc(out, func(a, b WorkerStatus) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}
