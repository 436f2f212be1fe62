package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/store"
)

// WorkerConfig configures a Worker.
type WorkerConfig struct {
	// Name is the worker's name, unique in the cluster and the same across
	// its restarts: leases and status are kept under it, and a worker
	// restarted under its name takes its own leases back. Letters, digits,
	// '-' and '_'.
	Name string
	// Shards are the shards the worker owns (ParseShards).
	Shards []int
	// DB is the worker's own database, opened with
	// store.Options{ForwardResults: true}.
	DB *store.DB
	// Batch is the most tasks one message carries; default 32.
	Batch int
	// Host and DBPath say where the worker runs (the machine, and its
	// database file as given), so that status and check --nats can say
	// where to start it again once its leases lapsed.
	Host, DBPath string
	// Logf, when set, is told what the worker retries or drops.
	Logf func(format string, args ...any)

	// beforeDrain, a test hook, runs before each look at the outbox;
	// afterAck after a task message is acked, before the worker notes it.
	beforeDrain func(ctx context.Context)
	afterAck    func(ctx context.Context)
	// renewFault, a test hook, runs after each lease write that landed;
	// an error it returns is taken as that write's failure, and it may
	// delay the write's answer as a slow server does.
	renewFault func(ctx context.Context, shard int) error
	// ackFault, a test hook, runs after each task message's ack that
	// landed; an error it returns is taken as that ack's failure, as when
	// the server is killed before it answers.
	ackFault func(shard int) error
	// beforeCommit, a test hook, runs when a task message of shard
	// arrives; when the frontier is closing by its end, the message is
	// left unacked.
	beforeCommit func(ctx context.Context, shard int)
	// ackWait, for tests, replaces the shard consumers' AckWait.
	ackWait time.Duration
	// lookEvery, for tests, replaces how often a frontier looks in the
	// stream for tasks of shards it has no consumer for (lookEvery).
	lookEvery time.Duration
	// clock, for tests, replaces the real time of the lease keeper.
	clock clock
	// reportEvery, for tests, replaces progressEvery.
	reportEvery time.Duration
}

const defaultBatch = 32

// lookEvery is how often a frontier looks in the stream for tasks of its
// shards that have no consumer yet, in case a doorbell missed them.
const lookEvery = time.Second

var validName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Worker is one process owning shards: it holds their leases while it
// lives. Its Context ends when it loses one.
type Worker struct {
	cfg   WorkerConfig
	js    jetstream.JetStream
	b     buckets
	owned [Shards]bool

	ctx    context.Context
	cancel context.CancelCauseFunc
	token  string // this process's, in its leases and reports
	dbID   string // its database's (store.DB.ID), in its leases
	leases *leases
	kept   chan struct{} // closed when the lease keeper and its reporter returned
	// ownerRev is the revision of this process's last owner report; only
	// the keeper's reporter writes it, and Close after it returned.
	ownerRev uint64
}

// NewWorker takes the leases of cfg.Shards, refusing (with *HeldError, one
// per holder, joined) any another worker holds; it then keeps them until
// Close. Leases held by another process of cfg.Name are taken at once
// only from a process that ran on cfg.DB's very file (cfg.Host and
// cfg.DBPath say which); from any other, NewWorker waits for them to lapse
// (up to two lease TTLs, logging why), and refuses them with a *HeldError
// (Twin) if they are renewed meanwhile. ctx bounds only the taking.
func NewWorker(ctx context.Context, js jetstream.JetStream, cfg WorkerConfig) (*Worker, error) {
	switch {
	case !validName.MatchString(cfg.Name):
		return nil, fmt.Errorf("worker name %q: use 1 to 64 letters, digits, '-' or '_'", cfg.Name)
	case len(cfg.Shards) == 0:
		return nil, errors.New("worker: no shards to own")
	case cfg.DB == nil:
		return nil, errors.New("worker: no database")
	}
	if cfg.Batch <= 0 {
		cfg.Batch = defaultBatch
	}
	if cfg.ackWait <= 0 {
		cfg.ackWait = ackWait
	}
	if cfg.lookEvery <= 0 {
		cfg.lookEvery = lookEvery
	}
	if cfg.clock == nil {
		cfg.clock = realClock{}
	}
	if cfg.reportEvery <= 0 {
		cfg.reportEvery = progressEvery
	}
	b, err := openBuckets(ctx, js)
	if err != nil {
		return nil, err
	}
	w := &Worker{cfg: cfg, js: js, b: b, kept: make(chan struct{})}
	for _, s := range cfg.Shards {
		if s < 0 || s >= Shards {
			return nil, fmt.Errorf("worker: shard %d out of range", s)
		}
		w.owned[s] = true
	}
	if w.token, err = newToken(); err != nil {
		return nil, err
	}
	if w.dbID, err = cfg.DB.ID(); err != nil {
		return nil, fmt.Errorf("worker: %w", err)
	}
	id := identity{name: cfg.Name, token: w.token, db: w.dbID, host: cfg.Host, path: cfg.DBPath}
	if w.leases, err = acquire(ctx, b, id, cfg.Shards, cfg.clock, w.logf); err != nil {
		return nil, err
	}
	w.leases.fault = cfg.renewFault
	w.ctx, w.cancel = context.WithCancelCause(context.Background())
	w.reportOwner(ctx, false)
	// The owner report is rewritten after each renewal round, but in a
	// goroutine of its own: a slow report must not hold the next round.
	renewed := make(chan struct{}, 1)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer close(renewed)
		w.leases.keep(w.ctx, w.cancel, w.logf, func() {
			select {
			case renewed <- struct{}{}:
			default: // the reporter is behind; it reports once for both
			}
		})
	}()
	go func() {
		defer wg.Done()
		for range renewed {
			rctx, cancel := context.WithTimeout(w.ctx, w.leases.ttl/writeFor)
			w.reportOwner(rctx, false)
			cancel()
		}
	}()
	go func() { wg.Wait(); close(w.kept) }()
	return w, nil
}

// reportOwner writes the worker's owner report: at the start, after each
// complete renewal round, and once released. Its time on the server is
// the last renewal, which tells when the leases lapse once the process
// is gone. A report of a restarted process of the same name is never
// overwritten by this one.
func (w *Worker) reportOwner(ctx context.Context, released bool) {
	o := Owner{Name: w.cfg.Name, Token: w.token, Shards: FormatShards(w.cfg.Shards), Host: w.cfg.Host, DBPath: w.cfg.DBPath, TTL: w.leases.ttl, Released: released}
	data, err := json.Marshal(o)
	if err != nil {
		w.logf("owner report: %v", err)
		return
	}
	var rev uint64
	if w.ownerRev == 0 {
		rev, err = w.b.state.Put(ctx, ownerKey(w.cfg.Name), data)
	} else {
		rev, err = w.b.state.Update(ctx, ownerKey(w.cfg.Name), data, w.ownerRev)
	}
	if err != nil {
		if w.ctx.Err() == nil || released {
			w.logf("owner report: %v", err)
		}
		return
	}
	w.ownerRev = rev
}

// Refuse tells the cluster this worker cannot run pass (why says why),
// so that check --nats fails at once with the reason instead of waiting
// for a worker that will not come.
func (w *Worker) Refuse(ctx context.Context, pass uint64, why string) error {
	return putJSON(ctx, w.b.state, workerKey(w.cfg.Name), &WorkerStatus{
		Name: w.cfg.Name, Token: w.token, Shards: FormatShards(w.cfg.Shards), Pass: pass, Refused: why, Updated: time.Now().UTC(),
	})
}

// Context ends, with the cause (context.Cause), when the worker loses a
// lease or is closed: run the crawler under it, so that its requests stop
// before another worker may own the shard.
func (w *Worker) Context() context.Context { return w.ctx }

// Close stops renewing the leases and gives them up, so another worker may
// take the shards at once. Without a connection to the server it gives
// nothing up: the writes would wait out their timeout (a worker stopped
// after its server was gone took seconds to exit), and the leases lapse by
// themselves a TTL after their last renewal, or are taken back at once by
// a worker started again on this database.
func (w *Worker) Close() error {
	w.cancel(errors.New("worker closed"))
	<-w.kept
	if !w.js.Conn().IsConnected() {
		if shards := w.leases.shards(); len(shards) > 0 {
			w.logf("not connected to the frontier: shards %s are not given up, and their leases lapse %s after their last renewal", FormatShards(shards), w.leases.ttl)
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	w.leases.release(ctx)
	w.reportOwner(ctx, true)
	return nil
}

// Owns says whether host is in one of the worker's shards, and the worker
// still holds their leases.
func (w *Worker) Owns(host string) bool {
	return w.ctx.Err() == nil && w.owned[Shard(host)]
}

func (w *Worker) logf(format string, args ...any) {
	if w.cfg.Logf != nil {
		w.cfg.Logf(format, args...)
	}
}

// WaitPass returns the pass the coordinator runs, once there is one in
// state running (and, when after is not zero, with an ID above after).
func (w *Worker) WaitPass(ctx context.Context, after uint64) (PassRecord, error) {
	watch, err := w.watchPass(ctx)
	if err != nil {
		return PassRecord{}, err
	}
	defer watch.stop()
	for {
		e, err := watch.next(ctx)
		if err != nil {
			return PassRecord{}, err
		}
		var rec PassRecord
		if err := json.Unmarshal(e.Value(), &rec); err != nil {
			return PassRecord{}, fmt.Errorf("read the pass: %w", err)
		}
		if rec.Pass.State == store.PassRunning && rec.Pass.ID > after {
			return rec, nil
		}
	}
}

// passWatch follows the pass record. A KV watch is an ordered consumer,
// which after the server restarts notices that its consumer is gone only
// when the consumer's heartbeats stop coming: a worker saw its pass end
// 20 s after the coordinator ended it (TestServerRestartedMidPass). So on
// each reconnection the watch is made again; a new watch starts with the
// record as it is, and misses nothing written meanwhile.
type passWatch struct {
	kv         jetstream.KeyValue
	nc         *nats.Conn
	reconnects chan nats.Status
	watch      jetstream.KeyWatcher
}

func (w *Worker) watchPass(ctx context.Context) (*passWatch, error) {
	p := &passWatch{kv: w.b.state, nc: w.js.Conn()}
	p.reconnects = p.nc.StatusChanged(nats.CONNECTED)
	var err error
	if p.watch, err = p.kv.Watch(ctx, passKey); err != nil {
		p.nc.RemoveStatusListener(p.reconnects)
		return nil, fmt.Errorf("watch the pass: %w", err)
	}
	return p, nil
}

// next returns the next value written to the pass record (after a new
// watch, the record's value now, which may be one already returned).
func (p *passWatch) next(ctx context.Context) (jetstream.KeyValueEntry, error) {
	for {
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-p.reconnects:
			watch, err := p.kv.Watch(ctx, passKey)
			if err != nil {
				continue // the old watch comes back by itself, later
			}
			_ = p.watch.Stop()
			p.watch = watch
		case e, ok := <-p.watch.Updates():
			if !ok {
				return nil, errors.New("watch the pass: the watch ended")
			}
			if e != nil && e.Operation() == jetstream.KeyValuePut {
				return e, nil
			}
		}
	}
}

func (p *passWatch) stop() {
	_ = p.watch.Stop()
	p.nc.RemoveStatusListener(p.reconnects)
}

// Frontier is a worker's part of one pass, the crawler's frontier
// (crawler.Frontier): it drains the outbox, receives the tasks of the
// worker's shards, reports the worker's status, and says when the pass is
// over everywhere. Begin the pass in the worker's database (BeginPass with
// the record's ID, no seeds: they come as tasks) before Join.
type Frontier struct {
	w        *Worker
	pass     uint64
	incoming chan []store.Task
	done     chan struct{}

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	stream jetstream.Stream // LP_TODO
	kick   chan struct{}    // wakes the reporter
	fed    chan struct{}    // wakes the feeder
	rung   chan struct{}    // wakes the activator

	// The shard consumers, made only for shards that get tasks (activate);
	// until then a doorbell, a plain subscription to the shard's subject,
	// says when one comes.
	consMu  sync.Mutex
	cons    []jetstream.ConsumeContext
	bells   map[int]*nats.Subscription // of owned shards not yet active
	ringing map[int]bool               // rung, not yet activated
	stopped bool                       // stopConsumers ran: add none

	// seeds are the pass's seeds of the worker's shards until they are
	// queued (queueSeeds).
	seedMu sync.Mutex
	seeds  []store.Task

	mu          sync.Mutex
	crawlerIdle bool
	queue       [][]store.Task // committed and acked, not yet handed to the crawler
	acked       map[string]uint64
	received    map[string]uint64 // WorkerStatus.Received
	lastErr     string
	ended       store.PassState // how the pass ended, once done is closed
	// doubts counts the events after which a shard consumer's ack floor
	// may have moved without this worker seeing an ack of its own: an ack
	// whose answer was lost, a reconnect (the server restarted), a consume
	// error. settled is doubts as it was when the floors last read showed
	// nothing pending on any shard of the worker (see settle).
	doubts, settled uint64
	progress        func() crawler.Progress
}

// progressEvery is how often a busy worker's report carries its crawler's
// counts when nothing else changed: often enough for status to show a pass
// moving, rarely enough to cost the server little (one write per worker).
const progressEvery = 2 * time.Second

// ReportProgress gives the frontier its crawler's counts, which the
// worker's status reports carry from then on (WorkerStatus.Queued, Done):
// the stream holds only tasks not yet taken, the worker's database the
// rest, and status shows both.
func (f *Frontier) ReportProgress(progress func() crawler.Progress) {
	f.mu.Lock()
	f.progress = progress
	f.mu.Unlock()
	f.kickReport()
}

// Join starts the worker's part of pass passID. The pass need not be open
// in the worker's database yet (crawler.Run opens it, with the Frontier
// already in its Config): until it is, delivered tasks wait and come again
// shortly, and the worker does not report idle. Close it when the crawler
// returns.
func (w *Worker) Join(ctx context.Context, passID uint64) (*Frontier, error) {
	f := &Frontier{
		w: w, pass: passID,
		incoming: make(chan []store.Task),
		done:     make(chan struct{}),
		kick:     make(chan struct{}, 1),
		fed:      make(chan struct{}, 1),
		rung:     make(chan struct{}, 1),
		acked:    map[string]uint64{},
		bells:    map[int]*nats.Subscription{},
		ringing:  map[int]bool{},
		// What the server did between the consumers' reads below and
		// the first deliveries is read again once the worker is idle.
		doubts: 1,
	}
	f.ctx, f.cancel = context.WithCancel(w.ctx)
	var err error
	if f.received, err = w.noteJoined(ctx, passID); err != nil {
		return nil, err
	}
	if err := f.ownSeeds(ctx); err != nil {
		return nil, err
	}
	// What was acked before this run (by this worker or the shard's
	// earlier owner) was committed before it was acked.
	var prev WorkerStatus
	if _, err := getJSON(ctx, w.b.state, workerKey(w.cfg.Name), &prev); err != nil {
		return nil, err
	}
	stream, err := w.js.Stream(ctx, todoStream)
	if err != nil {
		return nil, fmt.Errorf("join: %w", err)
	}
	f.stream = stream
	// Only sequences above zero: a report carries the map, and a worker
	// of every shard wrote 256 zeros into each report.
	for _, s := range w.cfg.Shards {
		if a := prev.acked(s); a > 0 {
			f.acked[strconv.Itoa(s)] = a
		}
	}
	// A consumer costs the server a file, and a worker of a real cluster
	// owns a range of the 256 shards, most of which a pass may never use:
	// a shard gets its consumer when it has tasks. The doorbells are rung
	// by every message published after they are subscribed (Flush: the
	// server has them); what came before is in the stream, read after.
	nc := w.js.Conn()
	for _, s := range w.cfg.Shards {
		shard := s
		sub, err := nc.Subscribe(todoSubject(s), func(*nats.Msg) { f.ring(shard) })
		if err != nil {
			f.stopConsumers()
			return nil, fmt.Errorf("join: watch shard %d: %w", s, err)
		}
		f.bells[s] = sub
	}
	fctx, cancel := context.WithTimeout(ctx, time.Minute) // Flush needs a deadline
	err = nc.FlushWithContext(fctx)
	cancel()
	if err != nil {
		f.stopConsumers()
		return nil, fmt.Errorf("join: %w", err)
	}
	waiting, err := f.waitingShards(ctx)
	if err != nil {
		f.stopConsumers()
		return nil, fmt.Errorf("join: %w", err)
	}
	// The shards' ack floors, as a report of this worker would have them.
	floors, _, err := f.readFloors(ctx)
	if err != nil {
		f.stopConsumers()
		return nil, fmt.Errorf("join: %w", err)
	}
	f.raiseAcked(floors)
	for _, s := range waiting {
		if err := f.activate(ctx, s); err != nil {
			f.stopConsumers()
			return nil, fmt.Errorf("join: %w", err)
		}
	}
	// The pass ends when the coordinator's record says so.
	watch, err := w.watchPass(f.ctx)
	if err != nil {
		f.stopConsumers()
		return nil, fmt.Errorf("join: %w (%v)", err, context.Cause(f.ctx))
	}
	// A server that restarted may have kept or lost what it did just
	// before: the worker reads its floors again (settle).
	reconnects := w.js.Conn().StatusChanged(nats.CONNECTED)
	f.wg.Add(6)
	go f.followPass(watch)
	go f.drain()
	go f.feed()
	go f.report()
	go f.activator()
	go func() {
		defer f.wg.Done()
		defer w.js.Conn().RemoveStatusListener(reconnects)
		for {
			select {
			case <-f.ctx.Done():
				return
			case <-reconnects:
				f.doubt()
			}
		}
	}()
	f.kickReport()
	return f, nil
}

// ownSeeds reads the pass's seeds of the worker's shards, which are
// queued before any message (see queueSeeds).
func (f *Frontier) ownSeeds(ctx context.Context) error {
	var rec PassRecord
	if _, err := getJSON(ctx, f.w.b.state, passKey, &rec); err != nil {
		return fmt.Errorf("join: %w", err)
	}
	if rec.Pass.ID != f.pass {
		return nil
	}
	for _, t := range rec.Seeds {
		if f.w.owned[shardOfURL(t.URL)] {
			f.seeds = append(f.seeds, t)
		}
	}
	return nil
}

// queueSeeds commits the seeds of the worker's shards to its database
// frontier and queues them for the crawler, as one process queues all its
// seeds before it fetches anything. receive calls it before it commits
// the first message, and every other message waits for it: whatever the
// crawler gets (from this queue, or from the database's frontier when it
// opens the pass), the seeds come with it or before it, so nothing it
// fetched can have linked to a start URL yet. The seeds' own messages
// would bring them too, but a shard's message can come after a page of
// another shard (of this worker, or a forward from another one that
// overtakes a message delivered again) linked to the start URL. The first
// task of a URL sets its depth, so the start URL would be recorded as
// reached by a link, not as a seed, and the report would differ from a
// single process's. Those messages then add nothing.
func (f *Frontier) queueSeeds() error {
	f.seedMu.Lock()
	defer f.seedMu.Unlock()
	if len(f.seeds) == 0 {
		return nil
	}
	added, err := f.w.cfg.DB.Enqueue(f.pass, f.seeds)
	if err != nil {
		return fmt.Errorf("queue the seeds of the worker's shards: %w", err)
	}
	f.seeds = nil
	if len(added) > 0 {
		f.mu.Lock()
		f.queue = append(f.queue, added)
		f.mu.Unlock()
	}
	return nil
}

// waitingShards are the owned shards without an active consumer that have
// messages in the stream: waiting, or delivered to an earlier owner and
// never acked (a work queue keeps a message until it is acked).
func (f *Frontier) waitingShards(ctx context.Context) ([]int, error) {
	f.consMu.Lock()
	inactive := map[int]bool{}
	for s := range f.bells {
		inactive[s] = true
	}
	f.consMu.Unlock()
	if len(inactive) == 0 {
		return nil, nil // every owned shard is consumed: nothing to look for
	}
	si, err := f.stream.Info(ctx, jetstream.WithSubjectFilter(todoSubjects))
	if err != nil {
		return nil, fmt.Errorf("tasks: %w", err)
	}
	var out []int
	for subject, n := range si.State.Subjects {
		if s, ok := subjectShard(subject); ok && n > 0 && inactive[s] {
			inactive[s] = false
			out = append(out, s)
		}
	}
	return out, nil
}

// readFloors reads the ack floors of the worker's shard consumers from the
// server, by shard as Acked keys them, and whether any of them has
// messages pending or unacked. Every message at or below a floor was
// acked, and the shard's owner acks only what it committed.
func (f *Frontier) readFloors(ctx context.Context) (floors map[string]uint64, busy bool, err error) {
	floors = map[string]uint64{}
	l := f.stream.ListConsumers(ctx)
	for info := range l.Info() {
		s, ok := consumerShard(info.Name)
		if !ok || !f.w.owned[s] {
			continue
		}
		floors[strconv.Itoa(s)] = info.AckFloor.Stream
		busy = busy || info.NumPending > 0 || info.NumAckPending > 0
	}
	if err := l.Err(); err != nil {
		return nil, false, fmt.Errorf("shard consumers: %w", err)
	}
	return floors, busy, nil
}

// raiseAcked raises the acked sequences to floors read from the server.
func (f *Frontier) raiseAcked(floors map[string]uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, v := range floors {
		if v > f.acked[k] {
			f.acked[k] = v
		}
	}
}

// ring is a doorbell: a task message came for shard.
func (f *Frontier) ring(shard int) {
	f.consMu.Lock()
	if _, ok := f.bells[shard]; ok {
		f.ringing[shard] = true
	}
	f.consMu.Unlock()
	select {
	case f.rung <- struct{}{}:
	default:
	}
}

// activator makes the consumers of the shards whose doorbells rang. It
// also looks at the stream now and then, for a message its doorbell
// missed (one published while the worker joined) or an activation that
// failed: either waits there, and the pass cannot end without it.
func (f *Frontier) activator() {
	defer f.wg.Done()
	look := time.NewTicker(f.w.cfg.lookEvery)
	defer look.Stop()
	for {
		select {
		case <-f.ctx.Done():
			return
		case <-f.rung:
		case <-look.C:
			waiting, err := f.waitingShards(f.ctx)
			if err != nil {
				if f.ctx.Err() == nil {
					f.w.logf("look for tasks: %v", err)
				}
				continue
			}
			f.consMu.Lock()
			for _, s := range waiting {
				f.ringing[s] = true
			}
			f.consMu.Unlock()
		}
		f.consMu.Lock()
		var shards []int
		for s := range f.ringing {
			shards = append(shards, s)
		}
		clear(f.ringing)
		f.consMu.Unlock()
		for _, s := range shards {
			if err := f.activate(f.ctx, s); err != nil && f.ctx.Err() == nil {
				f.fail("%v (trying again)", err)
			}
		}
	}
}

// activate makes the consumer of an owned shard and consumes it, unless it
// is active already.
func (f *Frontier) activate(ctx context.Context, s int) error {
	f.consMu.Lock()
	_, inactive := f.bells[s]
	f.consMu.Unlock()
	if !inactive {
		return nil
	}
	w := f.w
	c, err := ensureShardConsumer(ctx, w.js, s, w.leases.ttl, w.cfg.ackWait)
	if err != nil {
		return err
	}
	// This worker holds the lease: a pin left by a dead owner (or an
	// earlier run of this one) would hold deliveries back for PinnedTTL.
	if err := f.stream.UnpinConsumer(ctx, todoConsumer(s), ownerGroup); err != nil && !isNotPinned(err) {
		w.logf("unpin %s: %v", todoConsumer(s), err)
	}
	info, err := c.Info(ctx)
	if err != nil {
		return fmt.Errorf("consumer of shard %d: %w", s, err)
	}
	if info.NumAckPending > 0 {
		// Delivered and never acked: to a process that is gone (this
		// one holds the lease now, and a worker's database admits one
		// process). Deliver them again now, not AckWait after.
		if _, err := w.js.ResetConsumer(ctx, todoStream, todoConsumer(s)); err != nil {
			w.logf("redeliver the unacked tasks of shard %d: %v (they come after %s)", s, err, w.cfg.ackWait)
		}
	}
	f.raiseAcked(map[string]uint64{strconv.Itoa(s): info.AckFloor.Stream})
	cc, err := c.Consume(func(m jetstream.Msg) { f.receive(s, m) },
		jetstream.PullPriorityGroup(ownerGroup), jetstream.PullMaxMessages(64),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			if !errors.Is(err, jetstream.ErrNoHeartbeat) {
				w.logf("shard %d: %v", s, err)
				f.doubt()
			}
		}))
	if err != nil {
		return fmt.Errorf("consume shard %d: %w", s, err)
	}
	f.consMu.Lock()
	if f.stopped {
		f.consMu.Unlock()
		cc.Stop()
		<-cc.Closed()
		return nil
	}
	f.cons = append(f.cons, cc)
	bell := f.bells[s]
	delete(f.bells, s)
	f.consMu.Unlock()
	_ = bell.Unsubscribe()
	return nil
}

// noteJoined records that this worker's database takes part in pass
// (Joined), before the shard consumers can deliver it anything: the
// coordinator calls a pass whose shards two databases worked unfinished
// (lostWork), since what one of them held queued the other never had;
// and one whose database came back holding less of the pass than it had
// (Behind). It returns what the database holds of the pass
// (WorkerStatus.Received).
func (w *Worker) noteJoined(ctx context.Context, pass uint64) (map[string]uint64, error) {
	held, err := heldMessages(w.cfg.DB, pass)
	if err != nil {
		return nil, fmt.Errorf("join: %w", err)
	}
	statuses, err := workerStatuses(ctx, kvState{w.b.state})
	if err != nil {
		return nil, fmt.Errorf("join: %w", err)
	}
	j := Joined{Pass: pass, DB: w.dbID, Name: w.cfg.Name, Host: w.cfg.Host, DBPath: w.cfg.DBPath, First: time.Now().UTC(),
		Behind: behind(statuses, w.dbID, pass, held, &w.owned)}
	if b := j.Behind; b != nil {
		w.logf("this database holds less of pass %d than worker %s had reported it held (of shard %d, task messages up to %d; reported up to %d): it looks restored from an older copy, and the pass will end unfinished; run check --nats with --new-pass to check everything",
			pass, b.Worker, b.Shard, b.Held, b.Reported)
	}
	shards := w.cfg.Shards
	var prev Joined
	if found, err := getJSON(ctx, w.b.state, joinedKey(w.dbID), &prev); err != nil {
		return nil, fmt.Errorf("join: %w", err)
	} else if found && prev.Pass == pass {
		// Restarted with other --shards: it may still hold tasks of the
		// ones it had.
		if had, err := ParseShards(prev.Shards); err == nil {
			shards = append(had, shards...)
			slices.Sort(shards)
			shards = slices.Compact(shards)
		}
		j.First = prev.First
		// Once behind, always: a restored copy's reports say less from
		// then on, and what it lacked is still lost.
		j.Behind = prev.Behind.and(j.Behind)
	}
	j.Shards = FormatShards(shards)
	if err := putJSON(ctx, w.b.state, joinedKey(w.dbID), j); err != nil {
		return nil, fmt.Errorf("join: %w", err)
	}
	return held, nil
}

// heldMessages is what a worker's database holds of pass: by shard, the
// last message whose tasks it committed (store.DB.Received).
func heldMessages(db *store.DB, pass uint64) (map[string]uint64, error) {
	bySubject, err := db.Received(pass)
	if err != nil {
		return nil, err
	}
	out := make(map[string]uint64, len(bySubject))
	for subject, seq := range bySubject {
		if s, ok := subjectShard(subject); ok {
			out[strconv.Itoa(s)] = seq
		}
	}
	return out, nil
}

// behind compares what database db holds of pass (held, by shard) with
// what the workers that ran on it reported it held, on the shards it is to
// work (owned): nil when it holds all of that. Only a copy of the file
// from before can hold less: the file notes a message with its tasks, and
// a worker reports it only after. Other shards are not its to lose: a copy
// of a live worker's file, started on other shards, holds less of that
// worker's, and no task of theirs comes to it.
func behind(statuses map[string]*WorkerStatus, db string, pass uint64, held map[string]uint64, owned *[Shards]bool) *Behind {
	var b *Behind
	var shards []int
	for _, name := range slices.Sorted(maps.Keys(statuses)) {
		st := statuses[name]
		if st.DB != db || st.Pass != pass {
			continue
		}
		for key, reported := range st.Received {
			s, err := strconv.Atoi(key)
			if err != nil || s < 0 || s >= Shards || !owned[s] || reported <= held[key] {
				continue
			}
			shards = append(shards, s)
			if b == nil || s < b.Shard || s == b.Shard && reported > b.Reported {
				b = &Behind{Shard: s, Worker: name, Reported: reported, Held: held[key]}
			}
		}
	}
	if b != nil {
		slices.Sort(shards)
		b.Shards = FormatShards(slices.Compact(shards))
	}
	return b
}

// and is b with the shards of c: the first finding's figures, every
// shard found behind.
func (b *Behind) and(c *Behind) *Behind {
	if b == nil || c == nil {
		if b == nil {
			return c
		}
		return b
	}
	x, errB := ParseShards(b.Shards)
	y, errC := ParseShards(c.Shards)
	if errB != nil || errC != nil {
		return b
	}
	all := append(x, y...)
	slices.Sort(all)
	out := *b
	out.Shards = FormatShards(slices.Compact(all))
	return &out
}

func isNotPinned(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.Code == 404
}

// Owns: the worker's shards, while it holds their leases.
func (f *Frontier) Owns(host string) bool { return f.w.Owns(host) }

// Incoming delivers batches of tasks of the worker's shards found by other
// workers (or the pass's start URLs), each already committed to the
// worker's database frontier.
func (f *Frontier) Incoming() <-chan []store.Task { return f.incoming }

// Idle is the crawler saying it is idle, or busy again.
func (f *Frontier) Idle(idle bool) {
	f.mu.Lock()
	f.crawlerIdle = idle
	f.mu.Unlock()
	f.kickReport()
}

// Done closes when the coordinator has ended the pass.
func (f *Frontier) Done() <-chan struct{} { return f.done }

// Ended is the state the coordinator gave the pass, once Done is closed:
// complete, or stopped while URLs were deferred to a later run, or
// abandoned when a newer pass began.
func (f *Frontier) Ended() store.PassState {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ended
}

// Close stops draining, receiving and reporting. What is left in the
// outbox or on the frontier stays in the database for the next run.
func (f *Frontier) Close() error {
	// Cancel first: a message handler waiting on an ack (or a test hook)
	// returns, and the consumers can stop.
	f.cancel()
	f.stopConsumers()
	f.wg.Wait()
	return nil
}

func (f *Frontier) stopConsumers() {
	f.consMu.Lock()
	f.stopped = true
	cons, bells := f.cons, f.bells
	f.cons, f.bells = nil, map[int]*nats.Subscription{}
	f.consMu.Unlock()
	for _, b := range bells {
		_ = b.Unsubscribe()
	}
	for _, cc := range cons {
		cc.Stop()
	}
	for _, cc := range cons {
		<-cc.Closed()
	}
}

// doubt notes that a shard consumer's ack floor may have moved without
// this worker acking, and has the reporter read the floors again.
func (f *Frontier) doubt() {
	f.mu.Lock()
	f.doubts++
	f.mu.Unlock()
	f.kickReport()
}

func (f *Frontier) kickReport() {
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

func (f *Frontier) fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	f.w.logf("%s", msg)
	f.mu.Lock()
	f.lastErr = msg
	f.mu.Unlock()
	f.kickReport()
}

// receive commits one message's tasks to the database frontier, acks it and
// queues the new tasks for the crawler. A message that cannot be committed
// is not acked: it comes back, and the pass cannot end without it.
func (f *Frontier) receive(shard int, m jetstream.Msg) {
	if h := f.w.cfg.beforeCommit; h != nil {
		h(f.ctx, shard)
		if f.ctx.Err() != nil {
			return
		}
	}
	meta, err := m.Metadata()
	if err != nil {
		f.fail("shard %d: a message without metadata: %v", shard, err)
		return
	}
	var e store.OutboxEntry
	if err := e.UnmarshalBinary(m.Data()); err != nil {
		f.fail("shard %d: message %d: %v", shard, meta.Sequence.Stream, err)
		_ = m.NakWithDelay(time.Minute)
		return
	}
	var added []store.Task
	committed := false
	switch {
	case e.Pass > f.pass:
		// A newer pass began; this one is about to be over here.
		_ = m.NakWithDelay(time.Second)
		return
	case e.Pass == f.pass:
		if !f.passOpen() {
			_ = m.NakWithDelay(250 * time.Millisecond)
			return
		}
		if err := f.queueSeeds(); err != nil {
			f.fail("shard %d: message %d: %v", shard, meta.Sequence.Stream, err)
			_ = m.NakWithDelay(time.Second)
			return
		}
		// The file notes the message with its tasks, before the ack:
		// a copy of it from before lacks both (Joined.Behind).
		if added, err = f.w.cfg.DB.EnqueueReceived(f.pass, e.Tasks, todoSubject(shard), meta.Sequence.Stream); err != nil {
			f.fail("shard %d: commit message %d: %v", shard, meta.Sequence.Stream, err)
			_ = m.NakWithDelay(time.Second)
			return
		}
		committed = true
	default:
		f.w.logf("shard %d: dropped %d tasks of pass %d, which is over", shard, len(e.Tasks), e.Pass)
	}
	ackErr := m.DoubleAck(f.ctx)
	if ackErr == nil && f.w.cfg.ackFault != nil {
		ackErr = f.w.cfg.ackFault(shard)
	}
	if ackErr == nil && f.w.cfg.afterAck != nil {
		f.w.cfg.afterAck(f.ctx)
	}
	f.mu.Lock()
	if len(added) > 0 {
		// Committed: the crawler gets them even if the ack failed (then
		// the message comes again and adds nothing).
		f.queue = append(f.queue, added)
	}
	key := strconv.Itoa(shard)
	if committed {
		f.received[key] = max(f.received[key], meta.Sequence.Stream)
	}
	if ackErr == nil {
		f.acked[key] = max(f.acked[key], meta.Sequence.Stream)
	}
	f.mu.Unlock()
	select {
	case f.fed <- struct{}{}:
	default:
	}
	if ackErr != nil && f.ctx.Err() == nil {
		// The ack may have landed (its answer lost, as when the server
		// is killed), and then this message never comes again.
		f.doubt()
		f.fail("shard %d: ack message %d: %v", shard, meta.Sequence.Stream, ackErr)
	}
	f.kickReport()
}

// feed hands queued batches to the crawler, in the order they came.
func (f *Frontier) feed() {
	defer f.wg.Done()
	for {
		f.mu.Lock()
		var batch []store.Task
		if len(f.queue) > 0 {
			batch = f.queue[0]
		}
		f.mu.Unlock()
		if batch == nil {
			select {
			case <-f.ctx.Done():
				return
			case <-f.fed:
				continue
			}
		}
		select {
		case <-f.ctx.Done():
			return
		case f.incoming <- batch:
		}
		f.mu.Lock()
		f.queue = f.queue[1:]
		f.mu.Unlock()
	}
}

// drain publishes the outbox, entry by entry in order, deleting each once
// every message of it is acknowledged by the server.
func (f *Frontier) drain() {
	defer f.wg.Done()
	db := f.w.cfg.DB
	backoff := 100 * time.Millisecond
	for {
		if h := f.w.cfg.beforeDrain; h != nil {
			h(f.ctx)
		}
		if f.ctx.Err() != nil {
			return
		}
		err := db.Outbox(func(seq uint64, e store.OutboxEntry) error {
			if e.Pass == f.pass {
				if err := f.publish(e); err != nil {
					return err
				}
			} else {
				f.w.logf("outbox: dropped entry %d of pass %d, which is over", seq, e.Pass)
			}
			return db.DeleteOutbox(seq)
		})
		f.kickReport()
		wait := time.Duration(0)
		if err != nil {
			if f.ctx.Err() != nil {
				return
			}
			f.fail("outbox: %v (retrying)", err)
			wait, backoff = backoff, min(2*backoff, 5*time.Second)
		} else {
			backoff = 100 * time.Millisecond
		}
		if !f.waitOutbox(wait) {
			return
		}
	}
}

// waitOutbox waits for a new outbox entry, or for wait when it is not
// zero; false when the frontier is closing.
func (f *Frontier) waitOutbox(wait time.Duration) bool {
	var retry <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		retry = t.C
	}
	select {
	case <-f.ctx.Done():
		return false
	case <-f.w.cfg.DB.OutboxReady():
	case <-retry:
	}
	return true
}

// publish sends one outbox entry: its tasks to their shards' subjects, at
// most Batch to a message, and its results in one message, and waits for
// every acknowledgement.
func (f *Frontier) publish(e store.OutboxEntry) error {
	var msgs []*nats.Msg
	add := func(subject string, part store.OutboxEntry) error {
		data, err := part.MarshalBinary()
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		m := nats.NewMsg(subject)
		m.Data = data
		m.Header.Set(jetstream.MsgIDHeader, fmt.Sprintf("%d:%s", e.Pass, hex.EncodeToString(sum[:16])))
		msgs = append(msgs, m)
		return nil
	}
	byShard := map[int][]store.Task{}
	var order []int
	for _, t := range e.Tasks {
		s := shardOfURL(t.URL)
		if _, ok := byShard[s]; !ok {
			order = append(order, s)
		}
		byShard[s] = append(byShard[s], t)
	}
	for _, s := range order {
		tasks := byShard[s]
		for i := 0; i < len(tasks); i += f.w.cfg.Batch {
			if err := add(todoSubject(s), store.OutboxEntry{Pass: e.Pass, Tasks: tasks[i:min(i+f.w.cfg.Batch, len(tasks))]}); err != nil {
				return err
			}
		}
	}
	// The coordinator reads every lp.res.* through one consumer: a
	// commit's results go as one message (more only past maxResultBytes),
	// on the subject of its first URL's shard.
	if len(e.Results) > 0 {
		if err := f.addResults(add, shardOfURL(e.Results[0].Record.URL), e.Pass, e.Results); err != nil {
			return err
		}
	}
	return publishAll(f.ctx, f.w.js, msgs)
}

// maxResultBytes keeps a results message well below NATS's default 1 MB
// payload limit.
const maxResultBytes = 512 << 10

// addResults splits results into messages below maxResultBytes.
func (f *Frontier) addResults(add func(string, store.OutboxEntry) error, shard int, pass uint64, results []store.Result) error {
	for len(results) > 0 {
		n := len(results)
		for {
			part := store.OutboxEntry{Pass: pass, Results: results[:n]}
			data, err := part.MarshalBinary()
			if err != nil {
				return err
			}
			if len(data) <= maxResultBytes || n == 1 {
				break
			}
			n = (n + 1) / 2
		}
		if err := add(resSubject(shard), store.OutboxEntry{Pass: pass, Results: results[:n]}); err != nil {
			return err
		}
		results = results[n:]
	}
	return nil
}

// publishAll publishes msgs at once and waits for every acknowledgement.
func publishAll(ctx context.Context, js jetstream.JetStream, msgs []*nats.Msg) error {
	futures := make([]jetstream.PubAckFuture, 0, len(msgs))
	for _, m := range msgs {
		pf, err := js.PublishMsgAsync(m)
		if err != nil {
			return fmt.Errorf("publish to %s: %w", m.Subject, err)
		}
		futures = append(futures, pf)
	}
	for _, pf := range futures {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-pf.Ok():
		case err := <-pf.Err():
			return fmt.Errorf("publish to %s: %w", pf.Msg().Subject, err)
		}
	}
	return nil
}

// shardOfURL is the shard of a task's or record's URL; one that does not
// parse (the store keeps the raw text of an invalid URL) goes to shard 0.
func shardOfURL(raw string) int {
	u, err := url.Parse(raw)
	if err != nil {
		return 0
	}
	return Shard(u.Host)
}

// report writes the worker's status whenever it may have changed. Idle is
// judged from the database, read after the acked sequences are noted, so a
// task acked before the note is on the frontier, resolved, or in the
// outbox by the time the database is read. A report that could not be
// written, or floors still unsettled, are tried again a second later: the
// last report of an idle worker is what ends the pass, and nothing else
// may come to wake the reporter.
func (f *Frontier) report() {
	defer f.wg.Done()
	var last []byte // what the last report written says (reportSays)
	tick := time.NewTicker(f.w.cfg.reportEvery)
	defer tick.Stop()
	var again <-chan time.Time
	for {
		select {
		case <-f.ctx.Done():
			return
		case <-f.kick:
		case <-tick.C:
		case <-again:
		}
		again = nil
		select {
		case <-f.done:
			// The crawler closes the pass in its database now; a report
			// would only say it is not open.
			return
		default:
		}
		st, unsettled := f.status()
		if unsettled {
			again = time.After(time.Second)
		}
		says := reportSays(st)
		if bytes.Equal(says, last) {
			continue
		}
		if err := putJSON(f.ctx, f.w.b.state, workerKey(f.w.cfg.Name), st); err != nil {
			if f.ctx.Err() != nil {
				return
			}
			f.w.logf("report status: %v (again in 1s)", err)
			again = time.After(time.Second)
			continue
		}
		last = says
	}
}

// settle reads the ack floors of the worker's shard consumers from the
// server into the acked sequences, once something may have moved them
// without an ack of this worker: an ack whose answer never came, or a
// restarted server that kept an ack it never answered, or moved a
// consumer past messages it lost or removed. Without it the coordinator
// would see a shard delivered beyond what its owner reported, for ever.
// A floor is safe to report: every message at or below it was acked, and
// the shard's owner acks only what it committed, so the database read
// after this sees its tasks. It returns true while the floors are not
// settled yet: the read failed, or a shard still has messages pending or
// unacked while the worker is idle (a restarted server redelivers them,
// or drops what it lost).
func (f *Frontier) settle() bool {
	f.mu.Lock()
	doubts, settled := f.doubts, f.settled
	f.mu.Unlock()
	if doubts == settled {
		return false
	}
	ctx, cancel := context.WithTimeout(f.ctx, 5*time.Second)
	defer cancel()
	floors, busy, err := f.readFloors(ctx)
	if err != nil {
		if f.ctx.Err() == nil {
			f.w.logf("read the shard consumers: %v (again in 1s)", err)
		}
		return true
	}
	f.raiseAcked(floors)
	if !busy {
		f.mu.Lock()
		f.settled = doubts
		f.mu.Unlock()
	}
	return busy
}

// status is the worker's report now, and whether the floors are not
// settled yet (settle).
func (f *Frontier) status() (*WorkerStatus, bool) {
	st := &WorkerStatus{Name: f.w.cfg.Name, Token: f.w.token, Shards: FormatShards(f.w.cfg.Shards), Pass: f.pass, DB: f.w.dbID, Updated: time.Now().UTC()}
	f.mu.Lock()
	idleSoFar := f.crawlerIdle && len(f.queue) == 0
	f.mu.Unlock()
	// Only an idle report needs the floors: a busy one ends nothing.
	unsettled := idleSoFar && f.settle()
	f.mu.Lock()
	st.Acked, st.Received = maps.Clone(f.acked), maps.Clone(f.received)
	crawlerIdle, queued, progress := f.crawlerIdle, len(f.queue), f.progress
	st.Error = f.lastErr
	f.mu.Unlock()
	if progress != nil {
		p := progress()
		st.Queued, st.Done = p.Queued+p.InFlight, p.Done
	}
	db := f.w.cfg.DB
	if !f.passOpen() {
		// Not open yet (the crawler opens it) or closed already.
		st.Outbox, _ = db.OutboxLen()
		return st, unsettled
	}
	quiet, deferred, err := db.Quiet(f.pass)
	if err != nil {
		st.Error = err.Error()
	}
	st.Idle = crawlerIdle && quiet && queued == 0 && err == nil
	if st.Idle {
		st.Deferred = deferred
	}
	st.Outbox, _ = db.OutboxLen()
	return st, unsettled
}

// passOpen says whether the pass is open in the worker's database.
func (f *Frontier) passOpen() bool {
	p, ok, err := f.w.cfg.DB.OpenPass()
	return err == nil && ok && p.ID == f.pass
}

// followPass closes done when the coordinator ends the pass, or begins a
// newer one.
func (f *Frontier) followPass(watch *passWatch) {
	defer f.wg.Done()
	defer watch.stop()
	for {
		e, err := watch.next(f.ctx)
		if err != nil {
			return
		}
		var rec PassRecord
		if err := json.Unmarshal(e.Value(), &rec); err != nil {
			f.fail("read the pass: %v", err)
			continue
		}
		ended := store.PassState("")
		switch {
		case rec.Pass.ID == f.pass && rec.Pass.State != store.PassRunning:
			ended = rec.Pass.State
		case rec.Pass.ID > f.pass:
			ended = store.PassAbandoned
		}
		if ended != "" {
			f.mu.Lock()
			f.ended = ended
			f.mu.Unlock()
			close(f.done)
			return
		}
	}
}
