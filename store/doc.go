// Package store owns the linkpatrol database: one bbolt file holding the
// passes, the latest record of every URL, the links of every parsed page, the
// frontier of the open pass and the per-host state that must survive a
// restart. No other package imports bbolt.
//
// # Layout
//
// Seven top-level buckets, created together when the file is new:
//
//	meta      "magic" = "linkpatrol", "schema" = SchemaVersion,
//	          "next_pass", "open_pass" (0: none); all uint64 big-endian;
//	          "db_id", the file's random identity (DB.ID), once asked for
//	          "received:"+source -> pass, seq: the last message of source
//	          whose tasks EnqueueReceived committed in pass (Received)
//	passes    pass ID (uint64 big-endian, so newest sorts last) -> Pass as JSON
//	urls      record number (uint64 big-endian, the bucket's sequence, so
//	          records sort in the order they were written) -> a canonical
//	          URL and its latest URLRecord, and where its page's link list
//	          is; one record a URL, found by URL through an index in memory
//	links     list number (uint64 big-endian, the bucket's sequence, so
//	          lists sort in the order they were written) -> a page's
//	          links, in page order; the page's record says the number
//	frontier  task number (uint64 big-endian, the bucket's sequence, so
//	          tasks sort in the order they were queued) -> URL and Task
//	          of the open pass
//	hosts     host -> the caller's opaque bytes
//	outbox    entry number (uint64 big-endian, the bucket's sequence) ->
//	          OutboxEntry: what one Commit left for other processes
//
// Schema 2 added the outbox; a schema-1 file gains it, empty, in one
// transaction when it is first opened for writing, and reads as having an
// empty one when opened read-only (TestMigrateSchema1, on a file the
// schema-1 build wrote). Schema 3 writes link lists in a smaller format
// (2); the format-1 lists of an older file read as they are, so migrating
// only changes the schema number, which keeps schema-2 builds, which cannot
// read format 2, out (TestMigrateSchema2, on a file the schema-2 build
// wrote). Schema 4 keys link lists by number instead of by page URL (see
// "Links in the order they are written"); the lists and records of an older
// file read as they are, and a page's list moves to a number when the page
// is stored again (TestMigrateSchema3, on a file the schema-3 build wrote).
// Schema 5 keys the frontier by number too (see "The frontier"); migrating
// moves the tasks of an older file under numbers in URL order in its one
// transaction, and a reader of an older file reads them under their URLs
// (TestMigrateSchema4, on a file the schema-4 build wrote). Schema 6 keys
// the records by number (see "Records in the order they are written");
// migrating moves the records of an older file under numbers in URL order
// in its one transaction, and a reader of an older file reads them under
// their URLs (TestMigrateSchema5, on a file the schema-5 build wrote). A
// build of schema 5 refuses a file of schema 6 (ErrTooNew) rather than
// misread it.
//
// A URL has one record, the latest; URLRecord.Pass says which pass resolved
// it, and PrevVerdict/PrevPass carry what the pass before said: the Base of
// the record's pass (the newest complete pass before it), read through any
// unfinished pass between them (Pass.Skips), so that a night stopped part
// way never becomes what the next complete pass is compared with. So Records
// for the newest pass is complete, while an older pass only still owns the
// URLs that no later pass resolved again.
//
// # The frontier
//
// The frontier is the open pass's tasks, one a URL, in the order they were
// queued: the crawler keeps its own order in memory, and a resumed pass
// queues the stored tasks again in theirs. It is emptied when its pass
// completes or is abandoned, and when a pass begins. A task is stored
// under the next number of the bucket's sequence, its URL in the value,
// so a commit's new tasks go onto the last leaf (filled whole) and the
// tasks its results take off, which the crawler finishes in about the
// order it queued them, lie on the first few. Keyed by URL, a commit of 32
// results wrote a leaf for each of its ~35 new tasks and 32 finished ones.
// Queue's dedupe and Commit's delete go by URL through an index in memory
// (frontier.go), built from the bucket by the first write that needs it
// after Open and dropped when a write fails. At 100,000 generated pages
// (scripts/bench.sh) the frontier held up to 83,147 tasks, for an index of
// 3.3 MiB; against schema 4 (four alternated pairs, loaded) minor faults
// went from 262-279k to 183-195k, CPU from 187-207 to 153-178 us a page,
// and at 10,000 pages from 140-173 to 121-151; peak RSS stayed 117-120 MiB.
//
// # Records in the order they are written
//
// A commit of 32 results put 32 records under their URLs: 32 random leaves
// of the urls bucket, and at 100,000 pages a branch page for each as well,
// so a commit dirtied 62 pages against 40 at 10,000 and wrote twice the
// bytes a page. A record now goes under the next number of the bucket's
// sequence, its URL first in the value, so a commit's records go onto the
// last leaf; a record that replaces one of an earlier pass (or of the same
// pass) deletes it in the same transaction, and in a pass that resolves
// URLs in about the order of the last one those deletes walk the bucket
// from its front. Commit, Enqueue, Get, Links and Quiet find a URL's record
// through an index in memory (records.go): one 64-bit hash of the URL ->
// the record's number, a hit checked against the URL stored in the entry,
// so two URLs of one hash cost a read, never a wrong record. The index is
// derived, never stored: Open's verify builds it in its walk of the
// records (which finds a URL with two records as damage), a writer adopts
// it when the file did not change since, and a file opened read-only
// builds it at its first read by URL. A write transaction changes it only
// once it has committed, and a failed one drops it, so that whatever a
// kill or a failure leaves, the index agrees with the file. Records,
// PageLinks and ResolvedIn, which give URL order (report.Merge relies on
// it), collect the pass's records in one scan and sort them in memory.
//
// At 100,000 generated pages (110,253 records) the index takes 2.5 MiB and
// ~20 ms of CPU to build, inside verify's walk, which costs no more than
// before. Against schema 5 (scripts/bench.sh's check, loaded): bytes
// written to the file 274-302 -> 76-77 MB, the file 84 -> 67 MB, the
// commit ~33 -> ~14 us a page in a CPU profile; the report's sorted reads
// cost ~2.5 us a page more.
//
// # The outbox
//
// A cluster worker's crawler fetches only the hosts it owns. The links it
// finds to other hosts are Result.Forward, and with Options.ForwardResults
// the results themselves go to the coordinator's merged database too. Commit
// writes both as one outbox entry in the transaction that stores the
// results, so a kill can lose neither, and the cluster publishes the entries
// in order and deletes each once the server has it (Outbox, DeleteOutbox).
// The other side queues what it receives with Enqueue, which adds only the
// tasks the pass has not queued or resolved yet. A worker or merged database
// begins the coordinator's pass under the coordinator's ID (BeginPass with
// Pass.ID set).
//
// # Links are stored one way
//
// DESIGN.md asks for "link edges in both directions". We store them forward
// only: each page's links are one value, replaced whole when the page is
// parsed again. A page costs one Put and no read-modify-write, and after a
// crash there is no second copy that could disagree with the first. The
// reverse direction, the referrers of a target, is derived at report time by
// PageLinks in one sequential scan of the records, which is cheap:
//
//	go test -run '^$' -bench PageLinks -benchtime=10x ./store/
//	10,000 pages x 20 links: scan alone ~45 ms (~4.5M links/s);
//	scan plus building the referrer map ~150 ms.
//
// # Links in the order they are written
//
// A commit of 32 results used to put 32 link lists under their page URLs:
// 32 random leaves of the largest bucket, each read (a page fault, once the
// mapped file is dropped), copied into memory and written again. At 100,000
// pages that was much of what a page cost more than at 10,000. A list is
// now put under the next number of the bucket's sequence, so a commit's
// lists go onto the last leaf or two, which bbolt fills whole, and the
// record says the number (linksAt, in record format 2). Replacing a list
// deletes the old one by its number: in a pass that parses the pages in
// about the order of the last one, that too walks the bucket from one end.
// PageLinks scans the records in URL order and reads the lists of 4,096
// pages at a time in key order, after a scan of the list keys (see
// PageLinks). At 100,000 generated pages (scripts/bench.sh, loaded, three
// alternated pairs against schema 3) the file went from 101 to 84 MB,
// minor faults from 327-348k to 266-272k, peak RSS from 128-130 to
// 119-120 MiB and CPU from 226-259 to 193-220 us a page.
//
// # Encoding
//
// Records, link lists and tasks use a small hand-written binary encoding
// (varints, length-prefixed strings, times in time's own binary form so they
// come back with the same zone, as JSON would) behind a leading format byte,
// so a later schema can tell old values from new. A link list stores each URL
// as the length of the prefix it shares with the previous link's URL plus the
// rest, then one code for the tag and attribute and the line as the step
// from the previous link's (format 2; see appendLinks). At 100,000 generated
// pages that made the links bucket 66 -> 45 MB of data and the file 134 ->
// 101 MB. The URL of a record or task is its key and is not stored again.
// Passes, few and rarely written, stay JSON. Chosen by numbers (ns per value,
// 2 shared CPUs):
//
//	go test -run '^$' -bench Codec -benchmem ./store/
//	              binary: encode  decode  bytes     JSON: encode  decode  bytes
//	20 links              540     3,600     571            4,200  25,000  1,783
//	100 links           2,530    11,700   2,848           19,800 137,000  9,013
//	record                 63       365     164            2,070   5,850    384
//
// Decoding never trusts the bytes: every length is checked, and anything that
// does not decode is an error wrapping ErrCorrupt (fuzzed by FuzzDecode*).
// TestRecordRoundTripKeepsEveryField fills every field of URLRecord by
// reflection, so a field added to the type without the codec fails it.
//
// # bbolt settings
//
// The freelist map type, and an fsync on every commit unless
// Options.SyncEvery. With SyncEvery (what linkpatrol check uses unless
// --fsync-commits) commits do not wait for fsync, and the file is fsynced
// at most that often, on a goroutine of its own so that the commits after
// it do not wait for the disk either. A killed process (even SIGKILL) loses
// nothing the OS has. A power cut or an OS crash may do worse than lose the
// commits since the last fsync: bbolt's NoSync writes a commit's meta page
// right after its data pages with no fsync between, so the disk may keep
// the meta page and not the pages it points to, and bbolt reuses pages
// freed by unsynced commits, so even the last synced meta page may point at
// pages written over since. The file may then be damaged: Open returns
// ErrCorrupt, check exits 2 saying so before its first request, and history
// starts afresh once the file is moved aside. SyncEvery zero (bbolt's default
// mode, check --fsync-commits) syncs the data before the meta page in
// every commit and survives a power cut with the last commit kept.
//
// The freelist is synced (NoFreelistSync false), against the original plan.
// Without it every read-write open makes bbolt rebuild the freelist by
// walking every page on a goroutine of its own, where a damaged page panics
// beyond any recover and kills the process (TestUnsyncedFreelistCrashesOnDamage
// shows it); with it the freelist is read from its page on the caller's
// goroutine, where guard turns the panic into ErrCorrupt. It also makes
// opening a big file fast, and costs Commit nothing measurable:
//
//	go test -run '^$' -bench 'Commit|Open' -benchtime=10x ./store/
//	Commit, 1,000 results x 20 links: ~40 ms synced, ~40-50 ms unsynced
//	(~25,000 results/s); one transaction per result instead: ~600 results/s.
//	Open of a 20,000-page file: ~1.5 ms synced, ~55 ms unsynced.
//
// # The mapped file and the resident set
//
// bbolt reads through a mapping of the whole file, and the kernel maps
// pages around each one read, so commits all over the file and scans of a
// bucket left all of it resident (130 of 230 MiB at 100,000 pages). Write
// transactions and the scans of Records, PageLinks, ResolvedIn and
// Frontier drop the mapping's pages once more than a budget of them has
// become resident, as the kernel counts it in /proc/self/statm
// (release.go): they stay in the page cache, and a page read again costs a
// minor fault. TestMappedFileStaysSmall measures the mapping in
// /proc/self/smaps.
//
// # Damaged and foreign files
//
// bbolt trusts the file: a damaged page makes it panic or read outside the
// mapping. Every transaction runs under guard, which sets
// debug.SetPanicOnFault and recovers, returning an error that wraps
// ErrCorrupt; a panic raised by a caller's callback is passed on unchanged.
// Open first opens an existing file read-only and checks it (its size against
// its page count, then our mark and schema) before opening it for writing, so
// someone else's bbolt file is never written to. It then reads the whole file
// (verify.go): every bucket walked under guard and the freelist page checked
// to fit its page, then bbolt's Tx.Check for pages both in use and free (on
// a goroutine of bbolt's, so only over pages already read: review8 F3,
// TestOpenFindsWhatTxCheckWouldCrashOn), then every value decoded. Damage is found there, before
// a check's first request, and not after thousands of them (qa7 Q10); at
// 100,000 pages it costs about 0.4 CPU-seconds a run, of ~16 for the crawl.
// TestDamagedPagesNeverCrash asserts that any damage a later read or write
// meets was found by Open. The walk also reads every page that bbolt's
// unguarded freelist rebuild would, so a file written without a synced
// freelist (which this package never does) no longer crashes it either.
//
// # Concurrency
//
// All methods are safe for concurrent use. Reads run in parallel with each
// other and with one writer; writes are serialised by bbolt. Callbacks of
// Records, PageLinks, ResolvedIn and ForEachHostState run inside a read
// transaction and must not write to the same DB. Compact holds everything
// off while it swaps the file.
package store
