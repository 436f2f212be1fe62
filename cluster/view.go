package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// stateReader reads the state bucket: the values of its keys under a
// filter ("worker.*"), and one key. kvState reads them from the server;
// a stateView has them already.
type stateReader interface {
	entries(ctx context.Context, filter string) ([]jetstream.KeyValueEntry, error)
	// entry returns jetstream.ErrKeyNotFound for a key without a value.
	entry(ctx context.Context, key string) (jetstream.KeyValueEntry, error)
	// decoded returns what decode makes of e's value: a stateView
	// decodes each revision of a key once, for every look after.
	decoded(e jetstream.KeyValueEntry, decode func([]byte) (any, error)) (any, error)
}

// kvState reads the state bucket from the server at each call.
type kvState struct{ kv bucket }

func (s kvState) entries(ctx context.Context, filter string) ([]jetstream.KeyValueEntry, error) {
	return entries(ctx, s.kv, filter)
}

func (s kvState) entry(ctx context.Context, key string) (jetstream.KeyValueEntry, error) {
	return s.kv.Get(ctx, key)
}

func (kvState) decoded(e jetstream.KeyValueEntry, decode func([]byte) (any, error)) (any, error) {
	return decode(e.Value())
}

// stateView follows the state bucket with one long-lived watch and holds
// the value of every key. The coordinator looks at the termination rule
// five times a second and check --nats follows the pass: read from the
// server, each look was a watch (an ephemeral consumer made and deleted)
// and a few requests, most of what the server did while a pass ran. From
// the view a look costs the server nothing, and changed says when there is
// something new to look at.
//
// Like passWatch, the watch is made again on each reconnection: after a
// server restart a watch notices that its consumer is gone only when
// heartbeats stop coming. A new watch starts from the values as they are.
type stateView struct {
	kv         bucket
	nc         *nats.Conn
	reconnects chan nats.Status
	cancel     context.CancelFunc
	done       chan struct{}

	mu      sync.Mutex
	values  map[string]jetstream.KeyValueEntry
	changed chan struct{} // closed at the next change, then made again
	stale   error         // why values may be out of date; nil when not
	// decodes holds, by key, what its value decoded to (decoded): a
	// worker's report is JSON with a sequence per shard, and a look at
	// the rule reads every report.
	decodes map[string]decodedValue
}

type decodedValue struct {
	rev uint64
	val any
}

// watchState makes the view, once the watch delivered every value.
func watchState(ctx context.Context, nc *nats.Conn, kv bucket) (*stateView, error) {
	v := &stateView{kv: kv, nc: nc, changed: make(chan struct{}), done: make(chan struct{}), decodes: map[string]decodedValue{}}
	v.reconnects = nc.StatusChanged(nats.CONNECTED)
	w, values, err := v.load(ctx)
	if err != nil {
		nc.RemoveStatusListener(v.reconnects)
		return nil, err
	}
	v.values = values
	fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	v.cancel = cancel
	go v.follow(fctx, w)
	return v, nil
}

// load makes a watch of the whole bucket and reads the value of every key
// through it, as entries does (initialValues): it makes the watch again
// when it goes quiet before it delivered them all.
func (v *stateView) load(ctx context.Context) (jetstream.KeyWatcher, map[string]jetstream.KeyValueEntry, error) {
	for {
		keys, err := v.kv.keysNow(ctx, ">")
		if err != nil {
			return nil, nil, fmt.Errorf("watch %s: %w", stateBucket, err)
		}
		w, err := v.kv.Watch(ctx, ">")
		if err != nil {
			return nil, nil, fmt.Errorf("watch %s: %w", stateBucket, err)
		}
		values, done, err := initialValues(ctx, w, keys)
		if err != nil {
			_ = w.Stop()
			return nil, nil, fmt.Errorf("watch %s: %w", stateBucket, err)
		}
		if done {
			return w, values, nil
		}
		_ = w.Stop()
	}
}

func apply(values map[string]jetstream.KeyValueEntry, e jetstream.KeyValueEntry) {
	if e.Operation() == jetstream.KeyValuePut {
		values[e.Key()] = e
	} else {
		delete(values, e.Key())
	}
}

// follow applies every change until ctx ends, making the watch again on
// each reconnection (and, while that fails, every second).
func (v *stateView) follow(ctx context.Context, w jetstream.KeyWatcher) {
	defer close(v.done)
	defer func() {
		if w != nil {
			_ = w.Stop()
		}
	}()
	var retry <-chan time.Time
	again := func() {
		nw, values, err := v.load(ctx)
		v.mu.Lock()
		defer v.mu.Unlock()
		if err != nil {
			v.stale = err
			retry = time.After(time.Second)
			return
		}
		if w != nil {
			_ = w.Stop()
		}
		w, retry = nw, nil
		v.values, v.stale = values, nil
		v.notify()
	}
	for {
		var updates <-chan jetstream.KeyValueEntry
		if w != nil {
			updates = w.Updates()
		}
		select {
		case <-ctx.Done():
			return
		case <-v.reconnects:
			again()
		case <-retry:
			again()
		case e, ok := <-updates:
			if !ok {
				_ = w.Stop()
				w = nil
				again()
				continue
			}
			if e == nil {
				continue
			}
			v.mu.Lock()
			apply(v.values, e)
			v.notify()
			v.mu.Unlock()
		}
	}
}

// notify wakes whoever waits on changed; v.mu is held.
func (v *stateView) notify() {
	close(v.changed)
	v.changed = make(chan struct{})
}

// next is closed at the next change after the call.
func (v *stateView) next() <-chan struct{} {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.changed
}

// err says why the view may be out of date: the connection is down, or
// the watch could not be made again since it came back.
func (v *stateView) err() error {
	if !v.nc.IsConnected() {
		return fmt.Errorf("watch %s: %w", stateBucket, nats.ErrConnectionReconnecting)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.stale
}

func (v *stateView) stop() {
	v.cancel()
	<-v.done
	v.nc.RemoveStatusListener(v.reconnects)
}

func (v *stateView) entries(_ context.Context, filter string) ([]jetstream.KeyValueEntry, error) {
	prefix, ok := strings.CutSuffix(filter, "*")
	if !ok {
		return nil, fmt.Errorf("read %s: only a filter ending in one wildcard token is read from the view", filter)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []jetstream.KeyValueEntry
	for k, e := range v.values {
		if rest, ok := strings.CutPrefix(k, prefix); ok && rest != "" && !strings.Contains(rest, ".") {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b jetstream.KeyValueEntry) int { return strings.Compare(a.Key(), b.Key()) })
	return out, nil
}

func (v *stateView) entry(_ context.Context, key string) (jetstream.KeyValueEntry, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if e, ok := v.values[key]; ok {
		return e, nil
	}
	return nil, jetstream.ErrKeyNotFound
}

func (v *stateView) decoded(e jetstream.KeyValueEntry, decode func([]byte) (any, error)) (any, error) {
	v.mu.Lock()
	d, ok := v.decodes[e.Key()]
	v.mu.Unlock()
	if ok && d.rev == e.Revision() {
		return d.val, nil
	}
	val, err := decode(e.Value())
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	if len(v.decodes) > len(v.values) { // keys deleted since
		for k := range v.decodes {
			if _, ok := v.values[k]; !ok {
				delete(v.decodes, k)
			}
		}
	}
	v.decodes[e.Key()] = decodedValue{rev: e.Revision(), val: val}
	v.mu.Unlock()
	return val, nil
}

// getState is getJSON from a stateReader.
func getState(ctx context.Context, src stateReader, key string, v any) (ok bool, err error) {
	e, err := src.entry(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", key, err)
	}
	if err := json.Unmarshal(e.Value(), v); err != nil {
		return false, fmt.Errorf("read %s: %w", key, err)
	}
	return true, nil
}

// passRecord reads the pass record from src, and its revision; ok is
// false when there is none.
func passRecord(ctx context.Context, src stateReader) (rec PassRecord, rev uint64, ok bool, err error) {
	e, err := src.entry(ctx, passKey)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return rec, 0, false, nil
	}
	if err != nil {
		return rec, 0, false, fmt.Errorf("read %s: %w", passKey, err)
	}
	v, err := src.decoded(e, func(b []byte) (any, error) {
		var r PassRecord
		err := json.Unmarshal(b, &r)
		return r, err
	})
	if err != nil {
		return rec, 0, false, fmt.Errorf("read %s: %w", passKey, err)
	}
	return v.(PassRecord), e.Revision(), true, nil
}

// A StateWatch follows the pass record and the workers' reports through
// one long-lived watch (a stateView), for a client that follows a pass
// (check --nats): reading them costs the server nothing, and Changed says
// when there is something new.
type StateWatch struct {
	v      *stateView
	js     jetstream.JetStream
	leases bucket
}

// WatchState starts a StateWatch; Stop it.
func WatchState(ctx context.Context, js jetstream.JetStream) (*StateWatch, error) {
	b, err := openBuckets(ctx, js)
	if err != nil {
		return nil, err
	}
	v, err := watchState(ctx, js.Conn(), b.state)
	if err != nil {
		return nil, err
	}
	return &StateWatch{v: v, js: js, leases: b.leases}, nil
}

// Stop ends the watch.
func (w *StateWatch) Stop() { w.v.stop() }

// Changed is closed at the next change after the call.
func (w *StateWatch) Changed() <-chan struct{} { return w.v.next() }

// Err says why what the watch holds may be out of date: the connection to
// the server is down, or the watch could not be made again since it came
// back. It is nil when the watch follows the server.
func (w *StateWatch) Err() error { return w.v.err() }

// Pass is CurrentPass, as the watch holds it.
func (w *StateWatch) Pass() (rec PassRecord, ok bool, err error) {
	rec, _, ok, err = passRecord(context.Background(), w.v)
	return rec, ok, err
}

// Workers is Workers, as the watch holds them.
func (w *StateWatch) Workers() ([]WorkerStatus, error) {
	return workersIn(context.Background(), w.v)
}

// Stalled is Stalled, with the workers' and owners' reports as the watch
// holds them; the leases and the stream are read from the server (a lease
// lapses without a word to watchers).
func (w *StateWatch) Stalled(ctx context.Context, pass uint64) ([]Stall, error) {
	return stalled(ctx, w.js, w.leases, w.v, pass)
}
