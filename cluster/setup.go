package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const (
	todoStream      = "LP_TODO"
	resStream       = "LP_RES"
	leaseBucket     = "lp_leases"
	stateBucket     = "lp_state"
	resultsConsumer = "results"
	ownerGroup      = "owner"
	passKey         = "pass"
	workerKeyPrefix = "worker."
	ownerKeyPrefix  = "owner."
	joinedKeyPrefix = "joined."
	todoSubjects    = "lp.todo.*" // every todoSubject
	leaseKeys       = "shard.*"   // every leaseKey
	// dedupeWindow is how long the server remembers a Nats-Msg-Id: a
	// drainer killed between a publish and the outbox delete repeats the
	// entry within it, as a rule.
	dedupeWindow = 2 * time.Minute
)

func todoSubject(shard int) string  { return fmt.Sprintf("lp.todo.%d", shard) }
func resSubject(shard int) string   { return fmt.Sprintf("lp.res.%d", shard) }
func todoConsumer(shard int) string { return fmt.Sprintf("todo-%d", shard) }
func leaseKey(shard int) string     { return fmt.Sprintf("shard.%d", shard) }
func workerKey(name string) string  { return workerKeyPrefix + name }
func ownerKey(name string) string   { return ownerKeyPrefix + name }
func joinedKey(db string) string    { return joinedKeyPrefix + db }

// consumerShard is the shard of a shard consumer's name (todoConsumer).
func consumerShard(name string) (int, bool) { return nameShard(name, todoConsumer) }

// subjectShard is the shard of a task subject (todoSubject).
func subjectShard(subject string) (int, bool) { return nameShard(subject, todoSubject) }

// leaseShard is the shard of a lease's key (leaseKey).
func leaseShard(key string) (int, bool) { return nameShard(key, leaseKey) }

// nameShard is the shard that format, one of the names above, gives name:
// the one whose name it is exactly, so that "lp.todo.07" or "todo-5x"
// belong to no shard.
func nameShard(name string, format func(int) string) (int, bool) {
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	s, err := strconv.Atoi(name[i:])
	if err != nil || s < 0 || s >= Shards || format(s) != name {
		return 0, false
	}
	return s, true
}

// Options are the settings of a whole cluster, fixed by whoever runs Setup
// (the coordinator); workers read them from the server.
type Options struct {
	// LeaseTTL is how long a shard lease lives without renewal; default
	// 15s. A worker renews at a third of it and gives up at half.
	LeaseTTL time.Duration

	// resultsAckWait, for tests, replaces the results consumer's AckWait.
	resultsAckWait time.Duration
}

const (
	defaultLeaseTTL = 15 * time.Second
	// ackWait is how long a worker (or the coordinator's writer) may take
	// to commit and ack a delivered message before it is delivered again:
	// it only commits, never waits on a host, so this is generous. A
	// worker that takes a shard's lease has what a dead process of it left
	// unacked delivered again at once (Worker.Join), without this wait.
	ackWait = 10 * time.Second
)

func (o Options) withDefaults() Options {
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = defaultLeaseTTL
	}
	if o.resultsAckWait <= 0 {
		o.resultsAckWait = ackWait
	}
	return o
}

// Setup creates, or updates to opt, the streams, buckets and the results
// consumer of a cluster on a JetStream server. The coordinator runs it; it
// is idempotent. A shard's consumer is created by its owner when the shard
// first has tasks in the stream (Frontier.activate): a consumer costs the
// server a file and a worker a pull subscription, so only shards in use
// have one.
//
// A stream or bucket already as opt wants it is left alone: a stream
// update, even to the same settings, rewrites the stream's configuration
// in nats-server while a worker may be making a consumer on it, a data
// race in the server (v2.15.2) that -race caught when a coordinator
// restarted mid-pass.
func Setup(ctx context.Context, js jetstream.JetStream, opt Options) error {
	opt = opt.withDefaults()
	for _, sc := range []jetstream.StreamConfig{
		{Name: todoStream, Subjects: []string{todoSubjects}},
		{Name: resStream, Subjects: []string{"lp.res.*"}},
	} {
		sc.Retention = jetstream.WorkQueuePolicy
		sc.Storage = jetstream.FileStorage
		sc.Duplicates = dedupeWindow
		if s, err := js.Stream(ctx, sc.Name); err == nil {
			if c := s.CachedInfo().Config; slices.Equal(c.Subjects, sc.Subjects) && c.Retention == sc.Retention && c.Storage == sc.Storage && c.Duplicates == sc.Duplicates {
				continue
			}
		}
		if _, err := js.CreateOrUpdateStream(ctx, sc); err != nil {
			return fmt.Errorf("set up stream %s: %w", sc.Name, err)
		}
	}
	for _, kc := range []jetstream.KeyValueConfig{
		{Bucket: leaseBucket, TTL: opt.LeaseTTL, Description: "linkpatrol shard leases: shard.<n> -> worker"},
		{Bucket: stateBucket, Description: "linkpatrol pass record and worker status"},
	} {
		kc.History, kc.Storage = 1, jetstream.FileStorage
		if kv, err := js.KeyValue(ctx, kc.Bucket); err == nil {
			if st, err := kv.Status(ctx); err == nil && st.TTL() == kc.TTL && st.History() == int64(kc.History) && st.BackingStore() == "JetStream" {
				if c := kvStreamConfig(st); c != nil && c.Storage == kc.Storage && c.Description == kc.Description {
					continue
				}
			}
		}
		if _, err := js.CreateOrUpdateKeyValue(ctx, kc); err != nil {
			return fmt.Errorf("set up bucket %s: %w", kc.Bucket, err)
		}
	}
	if _, err := js.CreateOrUpdateConsumer(ctx, resStream, jetstream.ConsumerConfig{
		Durable:       resultsConsumer,
		FilterSubject: "lp.res.*",
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       opt.resultsAckWait,
		MaxAckPending: 4096,
	}); err != nil {
		return fmt.Errorf("set up consumer %s: %w", resultsConsumer, err)
	}
	return nil
}

// kvStreamConfig is the configuration of a bucket's stream, nil when its
// status does not say.
func kvStreamConfig(st jetstream.KeyValueStatus) *jetstream.StreamConfig {
	if s, ok := st.(*jetstream.KeyValueBucketStatus); ok {
		return &s.StreamInfo().Config
	}
	return nil
}

// ErrNotSetUp is wrapped when the server has no linkpatrol streams or
// buckets: no coordinator has run Setup on it.
var ErrNotSetUp = errors.New("this NATS server has no linkpatrol frontier (start linkpatrol serve-frontier first)")

// buckets are the KV buckets a worker or client uses.
type buckets struct {
	leases, state bucket
}

// A bucket is a KV bucket and the stream under it, which says which keys
// the bucket holds at a moment: what a read of every key must deliver
// (entries).
type bucket interface {
	jetstream.KeyValue
	// keysNow returns the keys matching filter that hold a message now:
	// a value, or the marker of a delete or purge.
	keysNow(ctx context.Context, filter string) (map[string]bool, error)
}

type kvBucket struct {
	jetstream.KeyValue
	stream jetstream.Stream
	js     jetstream.JetStream // for updateAll
}

func openBucket(ctx context.Context, js jetstream.JetStream, name string) (bucket, error) {
	kv, err := js.KeyValue(ctx, name)
	if err != nil {
		return nil, err
	}
	s, err := js.Stream(ctx, "KV_"+name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, jetstream.ErrBucketNotFound
	}
	if err != nil {
		return nil, err
	}
	return kvBucket{KeyValue: kv, stream: s, js: js}, nil
}

// updateAll writes value to every key of keys, each over its revision
// in revs, at once: the writes go out together and their answers come
// back together (PublishMsgAsync), where Update sends one write and
// waits for its answer. A worker on every shard renews 256 leases a
// round; one by one, each write cost a request of its own and a wakeup
// of its own goroutine, and a round twice the CPU, client and server
// (about 8 ms a round at the server of a test, against 4). next holds the
// new revisions, errs each write's error, which wraps
// jetstream.ErrKeyRevisionMismatch when the key was not at revs[i], as
// Update's does. ctx bounds the wait for the answers, and so does quiet,
// the longest wait for the next answer: a round of 256 writes on a
// loaded machine may take longer than one write is given (TTL/writeFor)
// while its answers keep coming, but one whose answers stopped (lost in
// a reconnection) is given up and tried again.
func (b kvBucket) updateAll(ctx context.Context, keys []string, value []byte, revs []uint64, quiet time.Duration) (next []uint64, errs []error) {
	next, errs = make([]uint64, len(keys)), make([]error, len(keys))
	futures := make([]jetstream.PubAckFuture, len(keys))
	for i, key := range keys {
		m := nats.NewMsg("$KV." + b.Bucket() + "." + key)
		m.Data = value
		f, err := b.js.PublishMsgAsync(m, jetstream.WithExpectLastSequencePerSubject(revs[i]))
		if err != nil {
			errs[i] = fmt.Errorf("write %s: %w", key, err)
			continue
		}
		futures[i] = f
	}
	silence := time.NewTimer(quiet)
	defer silence.Stop()
	stopped := error(nil)
	for i, f := range futures {
		if f == nil {
			continue
		}
		if stopped != nil {
			errs[i] = fmt.Errorf("write %s: %w", keys[i], stopped)
			continue
		}
		select {
		case <-ctx.Done():
			stopped = ctx.Err()
			errs[i] = fmt.Errorf("write %s: %w", keys[i], stopped)
		case <-silence.C:
			stopped = fmt.Errorf("no answer for %s", quiet)
			errs[i] = fmt.Errorf("write %s: %w", keys[i], stopped)
		case ack := <-f.Ok():
			silence.Reset(quiet)
			next[i] = ack.Sequence
		case err := <-f.Err():
			var apiErr *jetstream.APIError
			if errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant) {
				err = fmt.Errorf("%w: %w", err, jetstream.ErrKeyRevisionMismatch)
			}
			errs[i] = fmt.Errorf("write %s: %w", keys[i], err)
		}
	}
	return next, errs
}

// keysNow is one request, the stream's info with the subjects matching
// filter and their counts of messages.
func (b kvBucket) keysNow(ctx context.Context, filter string) (map[string]bool, error) {
	keys, _, err := b.keysAt(ctx, filter)
	return keys, err
}

// keysAt is keysNow, and the stream's last sequence, from the same
// request.
func (b kvBucket) keysAt(ctx context.Context, filter string) (map[string]bool, uint64, error) {
	pre := "$KV." + b.Bucket() + "."
	info, err := b.stream.Info(ctx, jetstream.WithSubjectFilter(pre+filter))
	if err != nil {
		return nil, 0, fmt.Errorf("the keys of %s: %w", b.Bucket(), err)
	}
	keys := make(map[string]bool, len(info.State.Subjects))
	for subj := range info.State.Subjects {
		keys[strings.TrimPrefix(subj, pre)] = true
	}
	return keys, info.State.LastSeq, nil
}

func openBuckets(ctx context.Context, js jetstream.JetStream) (buckets, error) {
	var b buckets
	var err error
	if b.leases, err = openBucket(ctx, js, leaseBucket); err == nil {
		b.state, err = openBucket(ctx, js, stateBucket)
	}
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return b, ErrNotSetUp
	}
	if err != nil {
		return b, fmt.Errorf("open buckets: %w", err)
	}
	return b, nil
}

// ensureShardConsumer creates, or updates, the consumer of a shard.
func ensureShardConsumer(ctx context.Context, js jetstream.JetStream, shard int, leaseTTL, ackWait time.Duration) (jetstream.Consumer, error) {
	c, err := js.CreateOrUpdateConsumer(ctx, todoStream, jetstream.ConsumerConfig{
		Durable:        todoConsumer(shard),
		FilterSubject:  todoSubject(shard),
		AckPolicy:      jetstream.AckExplicitPolicy,
		AckWait:        ackWait,
		MaxAckPending:  1024,
		PriorityPolicy: jetstream.PriorityPolicyPinned,
		PriorityGroups: []string{ownerGroup},
		// A crashed owner's pin ends when its lease would.
		PinnedTTL: leaseTTL,
	})
	if err != nil {
		return nil, fmt.Errorf("consumer of shard %d: %w", shard, err)
	}
	return c, nil
}
