package cluster

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Setup on a cluster already set up as it asks updates no stream: an
// update, even to the same settings, rewrites the stream's configuration
// in the server while workers may be making consumers on it, a data race
// in nats-server that -race caught when a coordinator restarted mid-pass
// (TestAckAnswersLost, TestServerRestartedMidPass). A setting that did
// change is still applied.
func TestSetupAgainUpdatesNoStream(t *testing.T) {
	t.Parallel()
	url := startServer(t)
	js := connect(t, url)
	ctx := context.Background()
	if err := Setup(ctx, js, Options{LeaseTTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	// The server says so for every stream update; its advisories come in
	// order, so once the marker's has come, any of Setup's would have.
	nc := js.Conn()
	updates := make(chan *nats.Msg, 64)
	sub, err := nc.ChanSubscribe("$JS.EVENT.ADVISORY.STREAM.UPDATED.>", updates)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := Setup(ctx, js, Options{LeaseTTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	marker := jetstream.StreamConfig{Name: "MARKER", Subjects: []string{"marker"}}
	if _, err := js.CreateStream(ctx, marker); err != nil {
		t.Fatal(err)
	}
	marker.Description = "updated"
	if _, err := js.UpdateStream(ctx, marker); err != nil {
		t.Fatal(err)
	}
	var updated []string
	for done := false; !done; {
		select {
		case m := <-updates:
			if strings.HasSuffix(m.Subject, ".MARKER") {
				done = true
			} else {
				updated = append(updated, strings.TrimPrefix(m.Subject, "$JS.EVENT.ADVISORY.STREAM.UPDATED."))
			}
		case <-time.After(30 * time.Second):
			t.Fatal("no advisory of the marker stream's update")
		}
	}
	if len(updated) > 0 {
		t.Errorf("Setup on a cluster set up as it asks updated streams %q", updated)
	}

	if err := Setup(ctx, js, Options{LeaseTTL: 2 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, leaseBucket)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := kv.Status(ctx); err != nil || st.TTL() != 2*time.Minute {
		t.Errorf("after Setup with a lease TTL of 2m, the bucket's status %v, %v", st, err)
	}
}
