// Package cluster runs a pass across several worker processes over NATS
// JetStream (see DISTRIBUTED.md): the embedded server of serve-frontier,
// the connection every command opens to it, shards and their leases, the
// frontier a worker's crawler takes its foreign work through, and the
// coordinator that merges results and decides when a pass is complete.
//
// Only this package and cmd/linkpatrol import NATS.
package cluster
