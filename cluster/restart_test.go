package cluster

import (
	"context"
	"errors"
	"maps"
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Acks that landed but whose answers never came, as when the server is
// killed after an ack and before its answer: every shard consumer has
// delivered beyond what its owner saw acked, and no message comes again.
// The owners read the ack floors back from the server once idle, and the
// pass ends with every URL. (Before, it never ended: "shard N delivered
// message M, its owner reported up to 0".)
func TestAckAnswersLost(t *testing.T) {
	t.Parallel()
	js := connect(t, startServer(t))
	wb := newWeb(12, 5)
	cfg, _ := ticks(t)
	c, merged, rec := coordinate(t, js, cfg, wb.url(0, 0))
	lost := errors.New("no answer (test)")
	var nodes []*node
	for i, shards := range wb.split(3) {
		name := "w" + strconv.Itoa(i+1)
		nodes = append(nodes, startNode(t, js, wb, name, shards, rec, WorkerConfig{
			Batch:    2,
			ackFault: func(int) error { return lost },
			Logf:     func(string, ...any) {}, // every ack "fails"
		}))
	}
	for _, n := range nodes {
		n.wait(t)
	}
	checkMerged(t, c, merged, rec, wb, nodes, 0)
}

// Removing the messages a consumer acked but the server kept (the
// coordinator's dropAcked) leaves the consumer where it was. A purge that
// empties the subject moves it to the stream's last sequence, beyond what
// the shard's owner reported acked, and the pass never ended.
func TestRemoveUpToKeepsTheConsumer(t *testing.T) {
	t.Parallel()
	js := connect(t, startServer(t))
	ctx := context.Background()
	if err := Setup(ctx, js, Options{}); err != nil {
		t.Fatal(err)
	}
	cons, err := ensureShardConsumer(ctx, js, 5, time.Minute, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// lp.todo.5 at 1 and 3, lp.todo.6 at 2, 4 and 5.
	for _, s := range []int{5, 6, 5, 6, 6} {
		if _, err := js.Publish(ctx, todoSubject(s), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	stream, err := js.Stream(ctx, todoStream)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := removeUpTo(ctx, stream, todoSubject(5), 3); n != 2 || err != nil {
		t.Fatalf("removeUpTo(lp.todo.5, 3) = %d, %v; want 2", n, err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Delivered.Stream != 0 || info.AckFloor.Stream != 0 || info.NumPending != 0 {
		t.Fatalf("consumer of lp.todo.5: delivered %d, ack floor %d, pending %d; want 0, 0, 0",
			info.Delivered.Stream, info.AckFloor.Stream, info.NumPending)
	}
	if n, err := removeUpTo(ctx, stream, todoSubject(6), 4); n != 2 || err != nil {
		t.Fatalf("removeUpTo(lp.todo.6, 4) = %d, %v; want 2", n, err)
	}
	si, err := stream.Info(ctx, jetstream.WithSubjectFilter("lp.todo.*"))
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]uint64{"lp.todo.6": 1}; !maps.Equal(si.State.Subjects, want) {
		t.Errorf("left %v, want %v", si.State.Subjects, want)
	}
}

// restartable is a NATS server on a fixed port and store that a test can
// shut down and start again, as serve-frontier is restarted.
type restartable struct {
	t    *testing.T
	dir  string
	port int
	s    *server.Server
}

func startRestartable(t *testing.T) *restartable {
	t.Helper()
	rs := &restartable{t: t, dir: storeDir(t), port: -1}
	rs.start()
	rs.port = rs.s.Addr().(*net.TCPAddr).Port
	t.Cleanup(rs.stop)
	return rs
}

func (rs *restartable) start() {
	rs.t.Helper()
	s, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: rs.port, JetStream: true, StoreDir: rs.dir,
		NoLog: true, NoSigs: true,
	})
	if err != nil {
		rs.t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(30 * time.Second) {
		rs.t.Fatal("NATS server not ready")
	}
	rs.s = s
}

func (rs *restartable) stop() {
	if rs.s != nil {
		rs.s.Shutdown()
		rs.s.WaitForShutdown()
		rs.s = nil
	}
}

func (rs *restartable) url() string { return "nats://127.0.0.1:" + strconv.Itoa(rs.port) }

// connectTo is a client as the commands connect: reconnecting for ever.
func connectTo(t *testing.T, url string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := Connect(url, ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

// The server stopped mid-pass, with the coordinator (serve-frontier runs
// both), and started again on its store and address: each worker
// reconnects on its own connection, pulls again from its consumers (the
// server forgot their pins), acks what the old server delivered, and a new
// coordinator on the merged database ends the pass with every URL, none
// fetched twice.
func TestServerRestartedMidPass(t *testing.T) {
	t.Parallel()
	rs := startRestartable(t)
	_, js := connectTo(t, rs.url())
	wb := newWeb(12, 5)
	merged := openDB(t, "merged.db", false)
	cfg, tick := ticks(t)
	c, stop := runCoordinator(t, js, merged, cfg)
	rec, err := c.Begin(context.Background(), BeginRequest{Pass: mergedPass(wb), Seeds: seedsOf(wb)})
	if err != nil {
		t.Fatal(err)
	}

	// One message waits in its worker's hands across the restart, so the
	// pass cannot end before it, and its ack goes to the new server.
	held, release := make(chan struct{}), make(chan struct{})
	var heldOnce, releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	var nodes []*node
	var conns []*nats.Conn
	victim := ""
	for i, shards := range wb.split(3) {
		name := "w" + strconv.Itoa(i+1)
		nc, wjs := connectTo(t, rs.url())
		conns = append(conns, nc)
		wcfg := WorkerConfig{Batch: 2}
		// Not the worker of the seed, or nothing would happen before.
		if victim == "" && !slices.Contains(shards, Shard("site0.test")) {
			victim = name
			wcfg.beforeCommit = func(ctx context.Context, _ int) {
				first := false
				heldOnce.Do(func() { first = true; close(held) })
				if !first {
					return
				}
				select {
				case <-release:
				case <-ctx.Done():
				}
			}
		}
		nodes = append(nodes, startNode(t, wjs, wb, name, shards, rec, wcfg))
	}
	waitFor(t, tick, "some results in the merged database", func() bool {
		return len(resolvedIn(t, merged, rec.Pass.ID)) > 0
	})
	select {
	case <-held:
	case <-time.After(60 * time.Second):
		t.Fatalf("worker %s was delivered nothing", victim)
	}

	reconnected := make([]chan nats.Status, len(conns))
	for i, nc := range conns {
		reconnected[i] = nc.StatusChanged(nats.CONNECTED)
	}
	stop()
	rs.stop()
	rs.start()
	for i, ch := range reconnected {
		select {
		case <-ch:
		case <-time.After(60 * time.Second):
			t.Fatalf("worker w%d did not reconnect", i+1)
		}
	}
	_, js2 := connectTo(t, rs.url())
	cfg2, _ := ticks(t)
	c2, _ := runCoordinator(t, js2, merged, cfg2)
	releaseOnce.Do(func() { close(release) })
	for _, n := range nodes {
		n.wait(t)
	}
	checkMerged(t, c2, merged, rec, wb, nodes, 0)
}

// What a killed coordinator was delivered and never acked reaches the
// coordinator started after it at once, not AckWait later: with the
// results consumer's AckWait an hour long, the pass completes only because
// the new coordinator has those results delivered again when it starts.
func TestRestartedCoordinatorGetsUnackedResultsAtOnce(t *testing.T) {
	t.Parallel()
	js := connect(t, startServer(t))
	wb := newWeb(12, 5)
	merged := openDB(t, "merged.db", false)
	opt := Options{LeaseTTL: leaseTTL, resultsAckWait: time.Hour}
	c, stop := runCoordinatorWith(t, js, merged, CoordinatorConfig{}, opt)
	rec, err := c.Begin(context.Background(), BeginRequest{Pass: mergedPass(wb), Seeds: seedsOf(wb)})
	if err != nil {
		t.Fatal(err)
	}
	stop()
	var nodes []*node
	for i, shards := range wb.split(3) {
		nodes = append(nodes, startNode(t, js, wb, "w"+strconv.Itoa(i+1), shards, rec, WorkerConfig{Batch: 2}))
	}
	// The killed coordinator: it takes a results message and dies with it.
	res, err := js.Consumer(context.Background(), resStream, resultsConsumer)
	if err != nil {
		t.Fatal(err)
	}
	batch, err := res.Fetch(1, jetstream.FetchMaxWait(60*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	taken := 0
	for range batch.Messages() {
		taken++
	}
	if info, err := res.Info(context.Background()); err != nil || taken != 1 || info.NumAckPending != 1 {
		t.Fatalf("took %d results messages, %+v, %v: want 1, left unacked", taken, info, err)
	}

	c2, _ := runCoordinatorWith(t, js, merged, CoordinatorConfig{}, opt)
	for _, n := range nodes {
		n.wait(t)
	}
	checkMerged(t, c2, merged, rec, wb, nodes, 0)
}
