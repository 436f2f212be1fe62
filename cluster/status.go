package cluster

import (
	"context"
	"errors"
	"fmt"

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
	names := stream.ConsumerNames(ctx)
	for name := range names.Name() {
		var shard int
		if _, err := fmt.Sscanf(name, "todo-%d", &shard); err != nil || shard < 0 || shard >= Shards || todoConsumer(shard) != name {
			continue
		}
		c, err := stream.Consumer(ctx, name)
		if err != nil {
			return b, fmt.Errorf("read consumer %s: %w", name, err)
		}
		info := c.CachedInfo()
		b.Pending[shard], b.Unacked[shard] = info.NumPending, uint64(info.NumAckPending)
	}
	if err := names.Err(); err != nil {
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
