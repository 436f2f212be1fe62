// Package crawler owns the pass: its lifecycle, the frontier, the worker
// pool, fetching, turning pages into links and responses into results. It
// is the only package that makes HTTP requests.
//
// Run is the whole of a pass in one call (see pass.go): it resumes the
// store's unfinished pass when it is the one PassSpec describes, begins it
// otherwise, or refuses with a *RefusedError; it runs it; and it stores how
// it ended (complete or stopped, elapsed, deferred).
//
// One dispatcher goroutine owns the frontier and the pass's dedupe set: a
// worker following a redirect asks it to claim the target (see chain.go).
// Workers do everything that costs CPU or waits on the network (fetching,
// decoding, extracting, resolving, rule decisions) in parallel and hand
// finished results back to the dispatcher, which forwards them, together
// with the URLs they newly discovered, to a writer that commits them to the
// store in batches. A result and the frontier entries it
// adds are always committed in the same transaction, so a crash between
// batches loses nothing but work that is simply done again on resume.
//
// Where work comes from besides the pages' own links, and which hosts this
// crawler fetches, is its Frontier (Config.Frontier; nil is Local, today's
// one-process pass). A link to a host the frontier does not own is not
// queued but put on the Forward of the result that found it, committed with
// it, for the crawler that owns the host; tasks other crawlers found come
// in on Incoming, already in this crawler's stored frontier. Idle, with
// every result committed, the dispatcher tells the frontier so and waits
// until the frontier says the pass is done everywhere, or more work comes.
// A redirect to a host it does not own is not followed: the target is
// forwarded to its owner like a link, counted (ForeignHops), and the
// chain's records await its result (see awaits.go).
//
// Sitemaps (Config.Sitemaps, and with RobotsSitemaps the Sitemap: lines of
// the start hosts' robots.txt) are tasks of their own kind in the same
// frontier; see sitemap.go. With CheckFragments every parsed page's anchors
// are stored on its record for the report's fragment check.
//
// Each host is probed (its name looked up, its robots.txt read) by probe
// workers that hold no fetch slot, and third-party hosts hold at most a
// share of the workers; see hosts.go.
//
// A URL is decided by the rules once, when a page links to it, and the
// decision travels with its task: the request's headers, credentials and
// timeout (a rule's own, or Config.Timeout), the accepted statuses and
// whether the page is parsed all come from it. A task from the stored
// frontier is decided once by its worker; a redirect target is decided once
// per hop, as it is followed. robots.txt is asked in one place, robotsGate.
//
// The first request of a task is sent on a permit the dispatcher got from
// the host's throttle without blocking. A request after it (a redirect hop,
// the GET after a refused HEAD, the GET that parses a page a check found)
// asks the throttle itself, but never holds a worker through a long wait: the task goes back to the dispatcher, which
// holds it until the wait is over and then queues it ahead of its host's
// new URLs (see acquireNext, hopWithin and dispatcher.delay). A HEAD
// whose redirects end in a failure is asked again with GET from the task's
// own URL, not from where HEAD led, and the targets only HEAD went through
// are let go (see restartAsGet and headChain). Where a HEAD chain was led
// astray is remembered for the pass: a later HEAD chain that reaches it is
// asked again with GET at once, without requesting it (dispatcher.astray).
//
// A dispatch looks only at hosts that can take a request now: hosts the
// throttle asked to wait are held by when they are due, and woken early
// only by a permit done on their own limiter (throttle.Freed); hosts
// waiting for a probe worker or the third-party share go back one per
// slot that frees (see due.go and hosts.go). A page linking 10,000 other
// sites costs no more per request than one linking 1,000.
//
// One task's path through the files: dispatch.go stages it, process.go runs
// it, redirect.go follows its redirects (with the cookies its hops set, see
// cookies.go), request.go sends each request over the transport of
// transport.go, and result.go turns what came back into records.
package crawler
