package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/linkpatrol/linkpatrol/store"
)

// CoordinatorConfig configures a Coordinator.
type CoordinatorConfig struct {
	// DB is the merged database: passes begin here, and every result the
	// workers publish is committed here.
	DB *store.DB
	// Poll is how often the termination rule is checked while a pass
	// runs; default 200ms.
	Poll time.Duration
	// Logf, when set, is told what the coordinator drops or retries.
	Logf func(format string, args ...any)

	// onVerdict, a test hook, sees every verdict on the running pass.
	onVerdict func(Verdict)
}

// Coordinator owns the merged database and the pass: it begins passes,
// writes results and ends a pass by the termination rule.
type Coordinator struct {
	cfg  CoordinatorConfig
	nc   *nats.Conn
	js   jetstream.JetStream
	b    buckets
	todo jetstream.Stream
	res  jetstream.Consumer

	mu sync.Mutex // serialises beginning and ending passes

	leases leaseCache // the leases the rule last read
}

const (
	beginSubject = "lp.ctl.begin"
	stopSubject  = "lp.ctl.stop"
)

// NewCoordinator sets the cluster up on the server (Setup with opt) and
// returns its coordinator. Run it.
func NewCoordinator(ctx context.Context, js jetstream.JetStream, opt Options, cfg CoordinatorConfig) (*Coordinator, error) {
	if cfg.DB == nil {
		return nil, errors.New("coordinator: no merged database")
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 200 * time.Millisecond
	}
	if err := Setup(ctx, js, opt); err != nil {
		return nil, err
	}
	c := &Coordinator{cfg: cfg, nc: js.Conn(), js: js}
	var err error
	if c.b, err = openBuckets(ctx, js); err != nil {
		return nil, err
	}
	if c.todo, err = js.Stream(ctx, todoStream); err != nil {
		return nil, fmt.Errorf("coordinator: %w", err)
	}
	if c.res, err = js.Consumer(ctx, resStream, resultsConsumer); err != nil {
		return nil, fmt.Errorf("coordinator: %w", err)
	}
	// Results delivered and never acked were taken by a coordinator that
	// is gone (killed): one runs per cluster, since one process owns the
	// merged database. Deliver them again now, not AckWait after.
	if info, err := c.res.Info(ctx); err != nil {
		return nil, fmt.Errorf("coordinator: %w", err)
	} else if info.NumAckPending > 0 {
		if _, err := js.ResetConsumer(ctx, resStream, resultsConsumer); err != nil {
			c.logf("results: deliver again the %d a stopped coordinator left unacked: %v (they come after %s)", info.NumAckPending, err, ackWait)
		}
	}
	return c, nil
}

func (c *Coordinator) logf(format string, args ...any) {
	if c.cfg.Logf != nil {
		c.cfg.Logf(format, args...)
	}
}

// Run writes results into the merged database, answers Begin requests and
// ends the running pass when the termination rule holds, until ctx ends.
func (c *Coordinator) Run(ctx context.Context) error {
	sub, err := c.nc.Subscribe(beginSubject, func(m *nats.Msg) { c.answerBegin(ctx, m) })
	if err != nil {
		return fmt.Errorf("coordinator: %w", err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	stopSub, err := c.nc.Subscribe(stopSubject, func(m *nats.Msg) { c.answerStop(ctx, m) })
	if err != nil {
		return fmt.Errorf("coordinator: %w", err)
	}
	defer func() { _ = stopSub.Unsubscribe() }()
	errc := make(chan error, 2)
	go func() { errc <- c.writeResults(ctx) }()
	go func() { errc <- c.watchEnd(ctx) }()
	err = <-errc
	if ctx.Err() == nil {
		// One failed for good: stop the other too.
		return err
	}
	<-errc
	return nil
}

// BeginRequest asks the coordinator to begin a pass, or to resume the one
// running.
type BeginRequest struct {
	// Pass carries what the pass is: StartURLs, SettingsHash, Started,
	// Config, CheckFragments, ... (ID and State are the coordinator's).
	Pass store.Pass `json:"pass"`
	// Config is the bytes of the config file, for the workers.
	Config []byte `json:"config,omitempty"`
	// Seeds are the pass's start URLs as tasks (Depth 0), published to
	// their shards.
	Seeds []store.Task `json:"seeds,omitempty"`
	// New abandons a running pass and begins another; without it, a
	// running pass with the same SettingsHash is resumed, and one with
	// another is an error.
	New bool `json:"new,omitempty"`
	// MaxRedirects is the pass's limit on a redirect chain, which the
	// coordinator applies to chains that cross workers (see
	// finishChains); 0 is crawler.DefaultMaxRedirects.
	MaxRedirects int `json:"max_redirects,omitempty"`
}

type beginReply struct {
	Record PassRecord `json:"record"`
	Error  string     `json:"error,omitempty"`
}

// Begin asks the coordinator listening on nc's server to begin (or resume)
// a pass, and returns its record.
func Begin(ctx context.Context, nc *nats.Conn, req BeginRequest) (PassRecord, error) {
	data, err := json.Marshal(req)
	if err != nil {
		return PassRecord{}, err
	}
	m, err := nc.RequestWithContext(ctx, beginSubject, data)
	if errors.Is(err, nats.ErrNoResponders) {
		return PassRecord{}, fmt.Errorf("begin a pass: no coordinator is running (start linkpatrol serve-frontier): %w", err)
	}
	if err != nil {
		return PassRecord{}, fmt.Errorf("begin a pass: %w", err)
	}
	var rep beginReply
	if err := json.Unmarshal(m.Data, &rep); err != nil {
		return PassRecord{}, fmt.Errorf("begin a pass: %w", err)
	}
	if rep.Error != "" {
		return PassRecord{}, fmt.Errorf("begin a pass: %s", rep.Error)
	}
	return rep.Record, nil
}

// Stop asks the coordinator listening on nc's server to stop the running
// pass passID (see Coordinator.Stop).
func Stop(ctx context.Context, nc *nats.Conn, passID uint64) (PassRecord, error) {
	data, err := json.Marshal(stopRequest{Pass: passID})
	if err != nil {
		return PassRecord{}, err
	}
	m, err := nc.RequestWithContext(ctx, stopSubject, data)
	if err != nil {
		return PassRecord{}, fmt.Errorf("stop pass %d: %w", passID, err)
	}
	var rep beginReply
	if err := json.Unmarshal(m.Data, &rep); err != nil {
		return PassRecord{}, fmt.Errorf("stop pass %d: %w", passID, err)
	}
	if rep.Error != "" {
		return PassRecord{}, fmt.Errorf("stop pass %d: %s", passID, rep.Error)
	}
	return rep.Record, nil
}

type stopRequest struct {
	Pass uint64 `json:"pass"`
}

func (c *Coordinator) answerStop(ctx context.Context, m *nats.Msg) {
	var req stopRequest
	var rep beginReply
	if err := json.Unmarshal(m.Data, &req); err != nil {
		rep.Error = err.Error()
	} else if rep.Record, err = c.Stop(ctx, req.Pass); err != nil {
		rep.Error = err.Error()
	}
	data, _ := json.Marshal(rep)
	_ = m.Respond(data)
}

func (c *Coordinator) answerBegin(ctx context.Context, m *nats.Msg) {
	var req BeginRequest
	var rep beginReply
	if err := json.Unmarshal(m.Data, &req); err != nil {
		rep.Error = err.Error()
	} else if rep.Record, err = c.Begin(ctx, req); err != nil {
		rep.Error = err.Error()
	}
	data, _ := json.Marshal(rep)
	_ = m.Respond(data)
}

// Begin begins a pass in the merged database, publishes its seeds to their
// shards and then its record, which workers wait for; or resumes the pass
// running (see BeginRequest.New).
func (c *Coordinator) Begin(ctx context.Context, req BeginRequest) (PassRecord, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	db := c.cfg.DB
	open, ok, err := db.OpenPass()
	if err != nil {
		return PassRecord{}, err
	}
	if ok {
		var rec PassRecord
		if _, err := getJSON(ctx, c.b.state, passKey, &rec); err != nil {
			return PassRecord{}, err
		}
		switch {
		case req.New:
			open.State, open.Finished = store.PassAbandoned, time.Now()
			if err := db.UpdatePass(open); err != nil {
				return PassRecord{}, err
			}
		case !open.SameSite(req.Pass):
			// Following it would print another site's report and exit
			// code as this command's (qa5 N12).
			return PassRecord{}, otherSite(open)
		case open.SettingsHash != req.Pass.SettingsHash:
			return PassRecord{}, fmt.Errorf("pass %d is %s with other settings: finish it, or begin a new pass", open.ID, open.State)
		case rec.Pass.ID == open.ID:
			switch rec.Pass.State {
			case store.PassRunning:
				return rec, nil
			case store.PassStopped:
				if rec.Pass.Unfinished != "" {
					// Work was lost (lostWork): resumed, it could end
					// no better, and its Joined records, which say so,
					// are gone. It ends the same way, at once; only
					// --new-pass checks everything (qa5 N19).
					return rec, nil
				}
				return c.resume(ctx, rec)
			}
			// The coordinator stopped after ending it here but before
			// closing it in the database.
			return rec, c.closeMerged(rec.Pass)
		default:
			// The record was never written: begin it under the same ID.
			return c.publishPass(ctx, PassRecord{Pass: open, Config: req.Config, MaxRedirects: req.MaxRedirects}, req.Seeds)
		}
	}
	p := req.Pass
	p.ID, p.State = 0, ""
	// Never an ID any worker database may already hold: after the last
	// pass the cluster began, even when this merged database is newer.
	var last PassRecord
	if found, err := getJSON(ctx, c.b.state, passKey, &last); err != nil {
		return PassRecord{}, err
	} else if found {
		if prev, ok, err := db.LastPass(); err != nil {
			return PassRecord{}, err
		} else if !ok || prev.ID <= last.Pass.ID {
			p.ID = last.Pass.ID + 1
		}
	}
	if p.Started.IsZero() {
		p.Started = time.Now()
	}
	begun, err := db.BeginPass(p, nil)
	if err != nil {
		return PassRecord{}, err
	}
	return c.publishPass(ctx, PassRecord{Pass: begun, Config: req.Config, MaxRedirects: req.MaxRedirects}, req.Seeds)
}

// otherSite is the refusal of a pass of other start URLs while open, the
// cluster's one open pass, is unfinished: what it is, and what to do.
func otherSite(open store.Pass) error {
	starts := open.StartURLs
	const named = 5
	more := ""
	if len(starts) > named {
		starts, more = starts[:named], fmt.Sprintf(" and %d more", len(starts)-named)
	}
	wait := "wait for it to end (status --nats shows its progress) and run this command again"
	if open.State == store.PassStopped {
		wait = "resume it to its end with the command that began it (status --nats shows it), then run this command again"
	}
	return fmt.Errorf("pass %d of other start URLs is %s (begun %s): %s%s; this command's report would be that pass's, not its own: %s, or add --new-pass to abandon pass %d and begin this one",
		open.ID, open.State, open.Started.Local().Format(time.DateTime), strings.Join(starts, " "), more, wait, open.ID)
}

// resume runs a stopped pass again: its tasks wait in the workers'
// databases and in the stream. The record is written again, so that only
// what workers report after it counts for the end of the pass (Verdict).
func (c *Coordinator) resume(ctx context.Context, rec PassRecord) (PassRecord, error) {
	stored, err := c.cfg.DB.Pass(rec.Pass.ID)
	if err != nil {
		return PassRecord{}, err
	}
	// Unfinished is found again when the pass ends: what was lost stays lost.
	stored.State, stored.Finished, stored.Deferred, stored.Unfinished = store.PassRunning, time.Time{}, 0, ""
	if err := c.cfg.DB.UpdatePass(stored); err != nil {
		return PassRecord{}, err
	}
	rec.Pass.State, rec.Pass.Finished, rec.Pass.Deferred, rec.Pass.Unfinished = store.PassRunning, time.Time{}, 0, ""
	if err := putJSON(ctx, c.b.state, passKey, rec); err != nil {
		return PassRecord{}, err
	}
	return rec, nil
}

// Stop stops the running pass passID: the workers stop crawling it and
// keep what they hold, and Begin with the same settings resumes it. It
// is check --nats's --max-time.
func (c *Coordinator) Stop(ctx context.Context, passID uint64) (PassRecord, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var rec PassRecord
	if found, err := getJSON(ctx, c.b.state, passKey, &rec); err != nil {
		return PassRecord{}, err
	} else if !found || rec.Pass.ID != passID {
		return PassRecord{}, fmt.Errorf("pass %d is not the cluster's pass", passID)
	}
	if rec.Pass.State != store.PassRunning {
		return rec, nil // ended meanwhile
	}
	rec.Pass.State, rec.Pass.Finished = store.PassStopped, time.Now()
	rec.Pass.Elapsed = rec.Pass.Finished.Sub(rec.Pass.Started)
	if err := c.closeMerged(rec.Pass); err != nil {
		return PassRecord{}, err
	}
	return rec, putJSON(ctx, c.b.state, passKey, rec)
}

// publishPass publishes the seeds, then the record: a worker that sees the
// record and reports idle for the pass did so after the seeds were in the
// stream.
func (c *Coordinator) publishPass(ctx context.Context, rec PassRecord, seeds []store.Task) (PassRecord, error) {
	byShard := map[int][]store.Task{}
	for _, t := range seeds {
		s := shardOfURL(t.URL)
		byShard[s] = append(byShard[s], t)
	}
	var msgs []*nats.Msg
	for s, tasks := range byShard {
		for i := 0; i < len(tasks); i += defaultBatch {
			data, err := store.OutboxEntry{Pass: rec.Pass.ID, Tasks: tasks[i:min(i+defaultBatch, len(tasks))]}.MarshalBinary()
			if err != nil {
				return PassRecord{}, err
			}
			m := nats.NewMsg(todoSubject(s))
			m.Data = data
			m.Header.Set(jetstream.MsgIDHeader, fmt.Sprintf("%d:seed:%d:%d", rec.Pass.ID, s, i))
			msgs = append(msgs, m)
		}
	}
	if err := publishAll(ctx, c.js, msgs); err != nil {
		return PassRecord{}, fmt.Errorf("publish the seeds of pass %d: %w", rec.Pass.ID, err)
	}
	rec.Seeds = seeds
	if err := putJSON(ctx, c.b.state, passKey, rec); err != nil {
		return PassRecord{}, err
	}
	return rec, nil
}

// writeResults commits published results into the merged database, many
// messages to a transaction, acking each after the commit.
func (c *Coordinator) writeResults(ctx context.Context) error {
	for ctx.Err() == nil {
		// What is there now, without waiting; when nothing is, wait for
		// the next message.
		msgs, err := c.take(ctx)
		if err == nil && len(msgs) == 0 {
			fctx, cancel := context.WithTimeout(ctx, time.Second)
			msgs, err = c.fetch(ctx, func() (jetstream.MessageBatch, error) { return c.res.Fetch(1, jetstream.FetchContext(fctx)) })
			cancel()
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			c.logf("results: fetch: %v", err)
			select { // not a busy loop against a failing server
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		if len(msgs) > 0 {
			c.commit(ctx, msgs)
		}
	}
	return nil
}

// commitBytes bounds one transaction of the merged database by the size
// of the result messages it takes (about 1,000–2,000 results). The pages a
// bbolt transaction dirties, and bbolt's pool that keeps them for the next,
// grow with the leaf pages its keys fall on: on a large file about one per
// result. Bounding the commit bounds the coordinator's memory at any size
// of the merged file (BenchmarkDistributedCoordinatorMemory).
const commitBytes = 256 << 10

// take fetches, without waiting, the result messages of one commit.
func (c *Coordinator) take(ctx context.Context) ([]jetstream.Msg, error) {
	const each = 32
	var msgs []jetstream.Msg
	for size := 0; size < commitBytes; {
		got, err := c.fetch(ctx, func() (jetstream.MessageBatch, error) { return c.res.FetchNoWait(each) })
		msgs = append(msgs, got...)
		if err != nil {
			return msgs, err
		}
		for _, m := range got {
			size += len(m.Data())
		}
		if len(got) < each {
			break
		}
	}
	return msgs, nil
}

func (c *Coordinator) fetch(ctx context.Context, fetch func() (jetstream.MessageBatch, error)) ([]jetstream.Msg, error) {
	batch, err := fetch()
	if err != nil {
		return nil, err
	}
	var msgs []jetstream.Msg
	for m := range batch.Messages() {
		msgs = append(msgs, m)
	}
	if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return msgs, err
	}
	return msgs, nil
}

func (c *Coordinator) commit(ctx context.Context, msgs []jetstream.Msg) {
	open, ok, err := c.cfg.DB.OpenPass()
	if err != nil {
		c.logf("results: %v", err)
		return // not acked: delivered again
	}
	var results []store.Result
	var done []jetstream.Msg
	for _, m := range msgs {
		var e store.OutboxEntry
		if err := e.UnmarshalBinary(m.Data()); err != nil {
			c.logf("results: %s: %v", m.Subject(), err)
			_ = m.NakWithDelay(time.Minute)
			continue
		}
		if !ok || e.Pass != open.ID {
			c.logf("results: dropped %d results of pass %d, which is not running", len(e.Results), e.Pass)
			_ = m.Ack()
			continue
		}
		results = append(results, e.Results...)
		done = append(done, m)
	}
	if err := c.redoHistories(open, results); err != nil {
		c.logf("results: %v", err)
		for _, m := range done {
			_ = m.NakWithDelay(time.Second)
		}
		return
	}
	if len(results) > 0 {
		if err := c.cfg.DB.Commit(open.ID, results); err != nil {
			c.logf("results: %v", err)
			for _, m := range done {
				_ = m.NakWithDelay(time.Second)
			}
			return
		}
	}
	// Committed: ack even when the coordinator is stopping, or the
	// messages wait out AckWait before its successor gets them again.
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	for _, m := range done {
		if err := m.DoubleAck(actx); err != nil {
			c.logf("results: ack: %v", err)
		}
	}
}

// watchEnd ends the running pass once the termination rule holds. It
// looks at the rule every Poll, and at once when the pass record or a
// worker's report changes (most looks end there, at a busy worker), with
// the state bucket read from a stateView: while workers are busy a look
// costs the server nothing.
func (c *Coordinator) watchEnd(ctx context.Context) error {
	tick := time.NewTicker(c.cfg.Poll)
	defer tick.Stop()
	var (
		view    *stateView
		changed <-chan struct{}
	)
	defer func() {
		if view != nil {
			view.stop()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-changed:
		}
		if view == nil {
			var err error
			if view, err = watchState(ctx, c.nc, c.b.state); err != nil {
				if ctx.Err() == nil {
					c.logf("end of pass: %v", err)
				}
				continue
			}
		}
		changed = view.next()
		rec, _, found, err := passRecord(ctx, view)
		if err != nil || !found || rec.Pass.State != store.PassRunning {
			continue
		}
		v, err := c.verdict(ctx, rec.Pass.ID, view)
		if err != nil {
			if ctx.Err() == nil {
				c.logf("end of pass: %v", err)
			}
			continue
		}
		if c.cfg.onVerdict != nil {
			c.cfg.onVerdict(v)
		}
		if v.Over {
			if err := c.end(ctx, rec, v); err != nil {
				c.logf("end pass %d: %v", rec.Pass.ID, err)
			}
		}
	}
}

// Verdict is the termination rule applied once.
type Verdict struct {
	Over     bool
	Why      string // what keeps the pass running, when not Over
	Deferred int    // URLs deferred to a later run, summed over the workers
}

// Verdict applies the termination rule to pass now: every lease holder and
// every worker that reported for the pass reports idle for it; and, read
// after that, every shard consumer has nothing pending or unacked and has
// delivered nothing beyond the last sequence reported acked for it, and
// the results consumer has nothing pending or unacked.
func (c *Coordinator) Verdict(ctx context.Context, pass uint64) (Verdict, error) {
	return c.verdict(ctx, pass, kvState{c.b.state})
}

// verdict is Verdict with the state bucket read from src. Whatever src
// holds was written before it is read here, and the streams are read
// after: an idle report src holds is as good as one read now.
func (c *Coordinator) verdict(ctx context.Context, pass uint64, src stateReader) (Verdict, error) {
	// Statuses first: while a pass runs some worker is busy, and the
	// leases (one key per shard) need not be read to say so.
	statuses, err := workerStatuses(ctx, src)
	if err != nil {
		return Verdict{}, err
	}
	// While the pass runs, reports written before its record was are
	// about an earlier run of it: a resumed pass ends only on what its
	// workers said since. (Ending it writes the record again.)
	floor, err := runningSince(ctx, src, pass)
	if err != nil {
		return Verdict{}, err
	}
	var v Verdict
	var acked [Shards]uint64
	for _, st := range statuses {
		for s := range Shards {
			acked[s] = max(acked[s], st.acked(s))
		}
		if st.Pass != pass {
			continue
		}
		if st.rev < floor {
			return Verdict{Why: fmt.Sprintf("worker %s has not reported since pass %d was resumed", st.Name, pass)}, nil
		}
		if !st.Idle {
			replaced, err := c.replaced(ctx, src, pass, st.Name)
			if err != nil {
				return Verdict{}, err
			}
			if !replaced {
				return Verdict{Why: fmt.Sprintf("worker %s is busy", st.Name)}, nil
			}
			// Its last word was "busy", and it will never say more: its
			// shards went to another database, and end says so (lostWork).
			continue
		}
		v.Deferred += st.Deferred
	}
	leases, err := c.leaseValues(ctx)
	if err != nil {
		return Verdict{}, err
	}
	holders := holdersOf(leases)
	for s, h := range holders {
		if h == "" {
			continue
		}
		st, ok := statuses[h]
		if !ok || st.Pass != pass {
			return Verdict{Why: fmt.Sprintf("worker %s (holding shard %d) has not reported for pass %d", h, s, pass)}, nil
		}
	}
	// In a work queue a message stays in the stream until it is acked:
	// any message on a shard's subject is waiting or unacked.
	si, err := c.todo.Info(ctx, jetstream.WithSubjectFilter(todoSubjects))
	if err != nil {
		return Verdict{}, fmt.Errorf("tasks: %w", err)
	}
	for subject, n := range si.State.Subjects {
		if n == 0 {
			continue
		}
		if dropped, err := c.dropAcked(ctx, subject); err != nil {
			c.logf("tasks: %v", err)
		} else if dropped {
			return Verdict{Why: fmt.Sprintf("%s held messages its consumer had acked; removed", subject)}, nil
		}
		return Verdict{Why: fmt.Sprintf("%s holds %d messages waiting or unacked", subject, n)}, nil
	}
	lister := c.todo.ListConsumers(ctx)
	for info := range lister.Info() {
		s, ok := consumerShard(info.Name)
		if !ok {
			continue
		}
		switch {
		case info.NumPending > 0 || info.NumAckPending > 0:
			return Verdict{Why: fmt.Sprintf("shard %d has %d messages waiting, %d unacked (owner: %s)", s, info.NumPending, info.NumAckPending, orNone(holders[s]))}, nil
		case info.Delivered.Stream > acked[s]:
			return Verdict{Why: fmt.Sprintf("shard %d delivered message %d, its owner reported up to %d", s, info.Delivered.Stream, acked[s])}, nil
		}
	}
	if err := lister.Err(); err != nil {
		return Verdict{}, fmt.Errorf("shard consumers: %w", err)
	}
	info, err := c.res.Info(ctx)
	if err != nil {
		return Verdict{}, fmt.Errorf("results: %w", err)
	}
	if info.NumPending > 0 || info.NumAckPending > 0 {
		return Verdict{Why: fmt.Sprintf("%d results messages not yet written", info.NumPending+uint64(info.NumAckPending))}, nil
	}
	v.Over = true
	return v, nil
}

// dropAcked removes from the work queue the messages of subject that its
// shard's consumer has acked, which the server should have removed then
// (removeUpTo). A
// server SIGKILLed while a worker acked can come back with the consumer's
// ack floor past a message that is still stored (nats-server keeps the two
// apart): it will never be delivered again, and the pass would never end.
// A worker acks a message only after committing its tasks, so nothing is
// lost. Messages above the ack floor are left alone.
func (c *Coordinator) dropAcked(ctx context.Context, subject string) (bool, error) {
	s, ok := subjectShard(subject)
	if !ok {
		return false, nil
	}
	cons, err := c.todo.Consumer(ctx, todoConsumer(s))
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		// Nothing delivered: the shard's owner has not made its
		// consumer yet (it does when the shard first has tasks), or
		// nobody owns the shard.
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("consumer of %s: %w", subject, err)
	}
	// The info that lookup fetched: asking again costs the server a
	// request and reads the same state.
	info := cons.CachedInfo()
	if info.NumPending > 0 || info.NumAckPending > 0 {
		return false, nil
	}
	last, err := c.todo.GetLastMsgForSubject(ctx, subject)
	if err != nil {
		return false, fmt.Errorf("last message of %s: %w", subject, err)
	}
	if last.Sequence > info.AckFloor.Stream {
		return false, nil
	}
	n, err := removeUpTo(ctx, c.todo, subject, info.AckFloor.Stream)
	if n > 0 {
		c.logf("tasks: removed %d messages of %s up to %d, acked by its consumer but kept by the server", n, subject, info.AckFloor.Stream)
	}
	if err != nil {
		return n > 0, fmt.Errorf("remove acked messages of %s: %w", subject, err)
	}
	return n > 0, nil
}

// removeUpTo deletes the messages of subject with sequences up to upTo,
// one by one, and returns how many it deleted. Not a purge: a purge that
// empties a subject moves its consumer to the stream's last sequence, past
// what the shard's owner reported acked, and the pass would never end.
func removeUpTo(ctx context.Context, stream jetstream.Stream, subject string, upTo uint64) (int, error) {
	n := 0
	for seq := uint64(1); seq <= upTo; {
		m, err := stream.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if m.Sequence > upTo {
			return n, nil
		}
		if err := stream.DeleteMsg(ctx, m.Sequence); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
			return n, err
		}
		n++
		seq = m.Sequence + 1
	}
	return n, nil
}

// runningSince is the KV revision of the record of pass while it runs:
// the record is written again when a pass is resumed. 0 otherwise.
func runningSince(ctx context.Context, src stateReader, pass uint64) (uint64, error) {
	rec, rev, ok, err := passRecord(ctx, src)
	if err != nil || !ok || rec.Pass.ID != pass || rec.Pass.State != store.PassRunning {
		return 0, err
	}
	return rev, nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func workerStatuses(ctx context.Context, src stateReader) (map[string]*WorkerStatus, error) {
	es, err := src.entries(ctx, workerKeyPrefix+"*")
	if err != nil {
		return nil, err
	}
	// The reports are shared with src's other readers: read, never
	// written.
	out := make(map[string]*WorkerStatus, len(es))
	for _, e := range es {
		v, err := src.decoded(e, func(b []byte) (any, error) {
			st := &WorkerStatus{rev: e.Revision()}
			err := json.Unmarshal(b, st)
			return st, err
		})
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", e.Key(), err)
		}
		out[strings.TrimPrefix(e.Key(), workerKeyPrefix)] = v.(*WorkerStatus)
	}
	return out, nil
}

// replaced says whether the worker called name is gone from pass for
// good: it holds no lease, and a database other than its own joined its
// shards (a Loss names it). What it held queued is lost, so the pass can
// only end unfinished; waiting for its "idle" would wait for ever (qa5
// N19: a replacement worker under another name on a new file).
//
// It runs for every busy worker at every look at the rule, so the few
// Joined records are read first (from src: the coordinator's view, not
// the server); the 256 leases only when a loss names the worker, which is
// rare.
func (c *Coordinator) replaced(ctx context.Context, src stateReader, pass uint64, name string) (bool, error) {
	losses, err := lostWork(ctx, src, pass)
	if err != nil {
		return false, err
	}
	named := slices.ContainsFunc(losses, func(l Loss) bool {
		return slices.ContainsFunc(l.DBs, func(j Joined) bool { return j.Name == name })
	})
	if !named {
		return false, nil
	}
	leases, err := c.leaseValues(ctx)
	if err != nil {
		return false, err
	}
	holders := holdersOf(leases)
	return !slices.Contains(holders[:], name), nil
}

// leaseCache is the coordinator's last read of every lease, and the state
// of the lease bucket's stream just before it: its last sequence and the
// keys that held a message. While the stream has stored nothing since
// (every write, delete or purge of a lease stores a message) and holds
// the same keys (none lapsed), every lease holds what that read found.
// A look at the rule while every worker is idle then asks the server
// for the keys alone, one request, not for a watch of every lease: at
// each Poll, and with 256 leases, that watch was most of what the rule
// cost the server.
type leaseCache struct {
	mu     sync.Mutex
	ok     bool
	last   uint64
	keys   map[string]bool
	values [Shards][]byte
}

// keysAtReader is a bucket that says, in one request, the keys matching
// filter that hold a message and its stream's last sequence (kvBucket).
type keysAtReader interface {
	keysAt(ctx context.Context, filter string) (keys map[string]bool, last uint64, err error)
}

// leaseValues is leaseValues of the lease bucket, read again only when
// the bucket changed since the last read (leaseCache).
func (c *Coordinator) leaseValues(ctx context.Context) ([Shards][]byte, error) {
	kv, ok := c.b.leases.(keysAtReader)
	if !ok {
		return leaseValues(ctx, c.b.leases)
	}
	keys, last, err := kv.keysAt(ctx, leaseKeys)
	if err != nil {
		return [Shards][]byte{}, fmt.Errorf("the leases: %w", err)
	}
	lc := &c.leases
	lc.mu.Lock()
	if lc.ok && lc.last == last && maps.Equal(lc.keys, keys) {
		values := lc.values
		lc.mu.Unlock()
		return values, nil
	}
	lc.mu.Unlock()
	// Read after keys and last: what it finds is the bucket as they say,
	// or newer, and anything newer moved the stream past last.
	values, err := leaseValues(ctx, c.b.leases)
	if err != nil {
		return values, err
	}
	lc.mu.Lock()
	lc.ok, lc.last, lc.keys, lc.values = true, last, keys, values
	lc.mu.Unlock()
	return values, nil
}

// end closes the pass: complete, or stopped when URLs wait for a later run.
func (c *Coordinator) end(ctx context.Context, rec PassRecord, v Verdict) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var now PassRecord
	if _, err := getJSON(ctx, c.b.state, passKey, &now); err != nil {
		return err
	}
	if now.Pass.ID != rec.Pass.ID || now.Pass.State != store.PassRunning {
		return nil // stopped (or replaced) since the verdict
	}
	rec.Pass.State = store.PassComplete
	if v.Deferred > 0 {
		rec.Pass.State = store.PassStopped
	}
	// Nothing is left anywhere, but what a replaced database held was
	// never anywhere the rule above can see: never complete, then.
	joined, err := joinedRecords(ctx, kvState{c.b.state})
	if err != nil {
		return err
	}
	losses, err := lossesOf(joined, rec.Pass.ID)
	if err != nil {
		return err
	}
	if len(losses) > 0 {
		rec.Pass.State, rec.Pass.Unfinished = store.PassStopped, unfinishedBecause(losses)
		c.logf("pass %d is unfinished: %s", rec.Pass.ID, rec.Pass.Unfinished)
	}
	rec.Pass.Deferred = v.Deferred
	rec.Pass.Finished = time.Now()
	rec.Pass.Elapsed = rec.Pass.Finished.Sub(rec.Pass.Started)
	// The merged database first: once the record says the pass is over,
	// a check --nats may read the report, with every chain finished.
	if err := c.finishChains(rec.Pass, rec.MaxRedirects); err != nil {
		return err
	}
	if err := c.closeMerged(rec.Pass); err != nil {
		return err
	}
	if err := putJSON(ctx, c.b.state, passKey, rec); err != nil {
		return err
	}
	if err := forgetJoined(ctx, c.b.state, joined, rec.Pass.ID); err != nil {
		c.logf("end pass %d: %v", rec.Pass.ID, err)
	}
	return nil
}

// closeMerged stores the pass's end in the merged database.
func (c *Coordinator) closeMerged(p store.Pass) error {
	stored, err := c.cfg.DB.Pass(p.ID)
	if err != nil {
		return err
	}
	stored.State, stored.Finished, stored.Elapsed, stored.Deferred, stored.Unfinished = p.State, p.Finished, p.Elapsed, p.Deferred, p.Unfinished
	return c.cfg.DB.UpdatePass(stored)
}
