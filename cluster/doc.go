// Package cluster runs one linkpatrol pass across processes over NATS
// JetStream, as ../shared/DISTRIBUTED.md designs it. It owns everything a
// pass keeps in NATS: the embedded server of serve-frontier and the
// connection every command opens to it (Serve, Connect), the streams,
// consumers and KV buckets, the shard of a host, the leases by which a
// worker owns shards, the messages that carry tasks and results between
// processes, the workers' status reports and the rule that says a pass is
// over. Only this package and cmd/linkpatrol import NATS; crawler, store
// and report never do.
//
// # Shape
//
// Hosts fall into Shards virtual shards by registrable domain (Shard). A
// Worker holds a KV lease on each of its shards and runs an ordinary crawler
// on its own database through a Frontier: the crawler fetches only hosts of
// its shards, and commits the links it finds to other shards, and with them
// its results, as an outbox entry in the transaction that stores the results
// (store.Result.Forward, store.Options.ForwardResults). The Frontier
// publishes the entries in order, tasks to lp.todo.<shard> of their
// destination and a commit's results as one message to lp.res.<shard of
// its first URL>, and deletes each after the
// server acknowledged it. It takes the tasks of its own shards from one
// durable pull consumer per shard, made when the shard first has tasks in
// the stream (a plain subscription to the shard's subject, its doorbell,
// says when, and a look into the stream each second catches what a
// doorbell missed), commits them to its database
// (store.DB.Enqueue), acks them and only then hands the new ones to its
// crawler. The stream is a mailbox, never the frontier: a task is acked
// within milliseconds, not held while a polite host makes it wait. The
// pass's seeds come as messages too, but a worker first queues those of
// its shards from the pass record, before its crawler gets any task: the
// first task of a URL sets its depth, and a start URL a page linked to
// before its own message came would be reported as no seed.
//
// A Coordinator owns the merged database: it begins passes (with the IDs
// every worker database uses too), commits every published result into it
// with store.DB.Commit, so reports work unchanged, and ends a pass by the
// termination rule below. A redirect chain that crossed into another
// worker's shard reaches it in two parts, the redirecting URL's records
// awaiting the target's (see crawler.FinishChain): when the pass ends, the
// coordinator finishes them from the target's record before it says so
// (chains.go), and gives a later record of such a URL, whose worker never
// learnt how that chain ended, its history from the merged record.
//
// # Streams, consumers, buckets
//
//	LP_TODO    work queue, lp.todo.<shard>; consumer todo-<shard> per shard,
//	           pull, explicit ack, pinned to one client of group "owner"
//	LP_RES     work queue, lp.res.<shard>; consumer "results" (the coordinator)
//	lp_leases  KV, TTL = the lease TTL: shard.<n> -> name@token@dbid of
//	           the worker process holding it and its database
//	lp_state   KV: "pass" -> PassRecord; worker.<name> -> WorkerStatus;
//	           owner.<name> -> Owner (rewritten at each lease renewal);
//	           joined.<dbid> -> Joined (a database that joined a pass)
//
// A message carries one store.OutboxEntry (store's own encoding): up to
// Batch tasks for one shard, or the results of one commit (split only past
// 512 KiB). Its Nats-Msg-Id is
// <pass>:<hash of its bytes>, so a drainer that publishes an entry again
// after a crash is deduplicated by the server within its window, and by the
// owner's store.DB.Enqueue after it.
//
// # Leases
//
// A worker creates shard.<n> in a bucket whose TTL is the lease TTL and
// renews it every TTL/3 by a compare-and-set Update (the leases of a
// round sent at once, their answers awaited together), in a goroutine of
// its own that crawling and commits never hold. A write that fails or is slow
// is tried again; the worker gives its shards up only when a lease is
// lost (its value changed: taken over, or expired at the server) or when
// 3/4 of the TTL passed since the sending of its last write that landed:
// it then cancels its Context, which the command runs its crawler under,
// so two processes never fetch one host. A shard held by
// another worker is refused with a *HeldError naming the holder. A
// lease's value carries a token of the process that wrote it, so a
// renewal that timed out but landed is known as this process's own, and
// a restarted process of the same name is not; and the ID of its
// database (store.DB.ID). A worker restarted under the same name on the
// same file (same ID, host and path) takes its own leases back at once:
// it holds the file's lock, so the old process is gone. From any other
// file it may be a live twin (a second worker given the same name): it
// waits for the leases to lapse, holding none of its shards meanwhile
// (they would not be renewed), and is refused (HeldError.Twin) if they
// are renewed meanwhile. After each renewal round
// a worker rewrites its Owner report, whose time on the server says when
// its leases lapse once it is gone (Owners, Stalled).
//
// # End of a pass
//
// A pass is complete only if each shard was worked from one database: a
// worker notes its database (Joined) when it joins a pass, before it can
// be handed a task, and when a shard was joined by two (a worker back on a
// lost or fresh file), what the first held queued may be lost with it. A
// copy of a file has its ID, so a worker back on a backup of its own file
// is told apart otherwise: the file notes each task message with its tasks
// (store.DB.EnqueueReceived), before the ack, and the worker reports what
// its file holds (WorkerStatus.Received) only after; a database that joins
// the pass again holding less than a worker on it reported is an older
// copy, which lacks the tasks of the messages acked since (Joined.Behind).
// The coordinator then ends the pass stopped, with Pass.Unfinished saying
// so (lost.go), however the rule below ends it.
//
// A worker reports idle (WorkerStatus.Idle) only when its crawler's last
// call was Idle(true) and, read from one database transaction after it
// noted its acked sequences, its frontier holds no unresolved task and its
// outbox is empty (store.DB.Quiet); with it, the last stream sequence it
// acked per shard. Where something may have moved a shard consumer's ack
// floor without an ack the worker saw answered (an ack whose answer was
// lost, a reconnect to a restarted server), it reads the floors back from
// the server before its next idle report and reports those: every message
// at or below a floor was acked, after its tasks were committed. The
// coordinator calls a pass over only when every lease holder and every
// worker that reported for the pass reports idle for it, and, read after
// that, every shard consumer has nothing pending, nothing unacked and
// delivered nothing beyond what was reported acked, and the results
// consumer has nothing pending or unacked. A message delivered after a
// worker's report therefore always shows as delivered beyond its acked
// sequence, and a pass never ends while a task is anywhere: in a stream, in
// flight to a worker, on a frontier, or in an outbox.
//
// The coordinator, and check --nats (WatchState), follow lp_state through
// one long-lived watch each, made again on every reconnection, and look
// again when it changes: a look at the rule while a worker is busy asks
// the server nothing. What the watch holds was written before it is read,
// and the streams and leases are read from the server after, so the rule
// above holds as it does for reports read from the server.
//
// A read of every key under a prefix (every lease: Holders, status, the
// rule's lease holders; every report or owner) is one watch too, read
// until a message of each key the bucket's stream held just before came
// (one stream-info request lists them). The watch's own word that it
// delivered every value is not enough: a key rewritten while the watch is
// made, a lease being renewed, comes after it, and such reads missed
// holders during renewal rounds.
//
// # Stopping and resuming a pass
//
// Stop (lp.ctl.stop; check --nats --max-time) marks the pass stopped in its
// record and in the merged database; each worker's Frontier then says Done,
// and the command stops its crawler as a signal would, keeping the pass open
// in its database. Begin with the same settings resumes a stopped pass
// (by Stop, or ended with URLs deferred): the record is written again as
// running, and until the pass ends the rule above counts only worker reports
// written after that record (their KV revisions are higher), so an idle
// report from before the stop never ends the resumed pass.
package cluster
