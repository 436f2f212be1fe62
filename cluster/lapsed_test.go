package cluster

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

type lapsedEntry struct {
	jetstream.KeyValueEntry
	key string
}

func (e lapsedEntry) Key() string                     { return e.key }
func (e lapsedEntry) Operation() jetstream.KeyValueOp { return jetstream.KeyValuePut }

type lapsedWatch struct {
	jetstream.KeyWatcher
	ch chan jetstream.KeyValueEntry
}

func (w lapsedWatch) Updates() <-chan jetstream.KeyValueEntry { return w.ch }

// A key listed by keysNow lapses before the watch delivers it, while other
// keys' renewals keep coming every second: initialValues gives up on
// the read (done=false, to re-watch) within about watchQuiet, not never
// (review9 R5).
func TestInitialValuesGivesUpOnALapsedKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ch := make(chan jetstream.KeyValueEntry, 1)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			ch <- lapsedEntry{key: "shard.1"}
			ch <- nil
			for {
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Second):
				}
				select {
				case ch <- lapsedEntry{key: "shard.3"}:
				case <-ctx.Done():
					return
				}
			}
		}()
		start := time.Now()
		res := make(chan bool, 1)
		go func() {
			_, done, _ := initialValues(ctx, lapsedWatch{ch: ch}, map[string]bool{"shard.1": true, "shard.2": true})
			res <- done
		}()
		select {
		case done := <-res:
			// The bubble's clock: exact, whatever the machine's load.
			if done || time.Since(start) > 2*watchQuiet {
				t.Errorf("returned done=%v after %v; want not done (the read is made again) within %v", done, time.Since(start), 2*watchQuiet)
			}
		case <-time.After(5 * time.Minute):
			t.Errorf("initialValues still waiting after %v for a key that lapsed, while other keys' renewals come every second", time.Since(start))
		}
		cancel()
	})
}
