package store

import "time"

// SchemaVersion is the layout version written into every database file.
// Open refuses files with a newer version and migrates older ones: schema 2
// added the outbox bucket, which a schema-1 file gains, empty, when it is
// first opened for writing; schema 3 writes link lists in format 2 (see
// appendLinks), and reads the format-1 lists an older file holds as they
// are, so its migration only marks the file: a build of schema 2, which
// cannot read format 2, then refuses it (ErrTooNew) rather than call it
// damaged. Schema 4 keys each new link list by a number in the order the
// lists are written, and each record says where its page's list is
// (record format 2); the records and
// lists of an older file read as they are, a record of format 1 having its
// list under its URL, and a page's list moves when the page is stored again.
// Schema 5 keys the frontier by a number in the order tasks are queued, the
// URL in the value; migrating moves an older file's tasks under numbers in
// URL order, in the migration's one transaction. Schema 6 keys the records
// by a number in the order they are written, the URL in the value (see
// records.go); migrating moves an older file's records likewise, and a
// reader of an older file reads them under their URLs.
const SchemaVersion = 6

// RedirectNote starts the Note of a redirect target that a pass reached by
// a redirect rather than a link, followed by the URL redirected from: the
// report reads it to say why no page links to the target.
const RedirectNote = "reached by a redirect from "

// LinkedOutNote starts the Note of a file of a checked directory that is
// a symlink to a file outside it, followed by the target's real path: it
// is ok (a web server serves it), looked up but never read, and the
// report lists these files so that nobody takes them for checked pages.
const LinkedOutNote = "outside the checked directory, a symlink to "

// GhostNote starts the Note of a ghost, a page that failed this pass and
// had the links of its last good copy followed, followed by that copy's
// date (time.DateOnly): the report reads it to say which links behind the
// page were checked.
const GhostNote = "ghost: following its links from "

// SameContentNote starts the Note of a page not read for links because
// its body was the same as that of a page of its host already read in the
// pass (URLRecord.Digest), followed by that page's URL: a catch-all server
// (a single-page app's try_files) answers every made-up path with one
// page, whose relative links lead to more made-up paths for ever. The
// report reads it to say which pages were not read and after which.
const SameContentNote = "not read for links: the same content as "

// SameContentMoved follows the URL of a SameContentNote when the page is
// in another directory than the first and has links written relative to
// its path: they lead elsewhere from here, and were not checked. Without
// it, the page's links are the first page's: nothing was lost.
const SameContentMoved = " (in another directory: its relative links were not checked)"

// Verdict classifies the outcome for one URL. Only VerdictBroken makes the
// exit code 1 by default; the others are reported in their own sections.
type Verdict string

const (
	VerdictOK           Verdict = "ok"
	VerdictBroken       Verdict = "broken"       // 4xx (but see unverifiable), 410, DNS failure, refused, invalid URL, redirect loop
	VerdictTransient    Verdict = "transient"    // 5xx, timeout, connection reset
	VerdictUnverifiable Verdict = "unverifiable" // 401/403/429/999, bot challenge: a robot was not let in
	VerdictSkipped      Verdict = "skipped"      // not fetched on purpose (rule, robots, quota, spider trap)
)

// Problem reports whether the verdict is worth a line in the report.
func (v Verdict) Problem() bool {
	return v == VerdictBroken || v == VerdictTransient || v == VerdictUnverifiable
}

// PassState is where a pass is in its life.
type PassState string

const (
	PassRunning  PassState = "running"  // a check is (or was, until it crashed) working on it
	PassStopped  PassState = "stopped"  // interrupted cleanly; resumable
	PassComplete PassState = "complete" // the frontier ran dry
	// PassAbandoned is a pass given up by --new-pass; it is no longer open.
	PassAbandoned PassState = "abandoned"
)

// Pass is one complete walk of a site from its start URLs.
type Pass struct {
	ID           uint64        `json:"id"`
	StartURLs    []string      `json:"start_urls"`
	SettingsHash string        `json:"settings_hash,omitempty"` // hash of the settings that change results
	State        PassState     `json:"state"`
	Started      time.Time     `json:"started"`
	Finished     time.Time     `json:"finished,omitzero"` // zero until the pass ends (complete or stopped)
	Elapsed      time.Duration `json:"elapsed,omitempty"` // working time summed over every run of the pass
	Root         string        `json:"root,omitempty"`    // directory on disk when checking a built site (file:// URLs map below it)
	// RunStarted is when the run working on the pass began, kept until
	// that run ends (stopped or complete): found set by the next run,
	// it says the one before died (killed, crashed) without saving its
	// last requests. Zero on a pass no run has worked on yet.
	RunStarted time.Time `json:"run_started,omitzero"`
	// Alive is when the run working on the pass was last known alive: it
	// is stored every few seconds while the run works, idle or not (the
	// crawler's heartbeat), so that after a kill the next run knows how
	// long ago the dead run could still have started a request.
	Alive time.Time `json:"alive,omitzero"`
	// Deferred counts the URLs of the site's own hosts that a server's
	// pause (a Retry-After longer than the run may wait) held back to a
	// later run of this pass; while any are, the pass is not complete.
	// ResumeAfter is when the last of those pauses ends.
	Deferred    int       `json:"deferred,omitempty"`
	ResumeAfter time.Time `json:"resume_after,omitzero"`
	// Unfinished, set on a pass that was stopped although nothing is left
	// to run, says why it cannot be complete (a cluster pass whose shards
	// were worked from two databases, one of which held URLs the other
	// never checked) and what to do; empty otherwise.
	Unfinished string `json:"unfinished,omitempty"`
	// Config is the config file the pass was run with, as named (or found
	// in the working directory); empty for none.
	Config string `json:"config,omitempty"`
	// CheckFragments says the pass stored anchors, so that every report of
	// it checks fragments, with or without the flag.
	CheckFragments bool `json:"check_fragments,omitempty"`
	// Insecure says TLS certificates were not verified (--insecure):
	// every report of the pass says so first.
	Insecure bool `json:"insecure,omitempty"`
	// Roots are every directory of a check of built sites, absolute; a
	// file: URL names the file below the one whose path it starts with
	// (see LocalFile).
	Roots []string `json:"roots,omitempty"`
	// RelativePaths says the directories were given as relative paths, so
	// files are shown relative to the working directory, not absolute.
	RelativePaths bool `json:"relative_paths,omitempty"`
	// Tally is what the pass found, kept when it completes: each URL keeps
	// only its latest result, so a trend over passes needs the counts.
	Tally *Tally `json:"tally,omitempty"`
	// Base is the pass this one's history is relative to: the newest
	// complete pass of the same site before it, the one its report
	// compares with; 0 for none (or a pass begun before Base was kept).
	// Passes between the two were never finished (stopped, abandoned), so
	// a URL's PrevVerdict passes over them (see Skips). Set when the pass
	// begins; a cluster's workers keep the coordinator's.
	Base uint64 `json:"base,omitempty"`
	// SiteOrigins are the origins ("scheme://host[:port]") a start URL's
	// redirects led to, which the pass checks as the site's own, as it does
	// the start URLs' (see rules.Engine.FollowStart): kept so that a
	// resumed run decides as the run before did, and so that the report
	// counts them as the site. Only ever added to while the pass runs (see
	// AddSiteOrigins and UpdatePass).
	SiteOrigins []string `json:"site_origins,omitempty"`
}

// Skips says whether a record last resolved in pass id, which is not p,
// was resolved in a pass that p's history passes over: one begun after p's
// Base and never finished. What such a record says it had before (its
// PrevVerdict) is what the Base pass recorded, and so the past p compares
// with; its own verdict was never part of a complete pass (qa6 Q3).
func (p Pass) Skips(id uint64) bool {
	return p.Base != 0 && id > p.Base && id < p.ID
}

// Tally counts the problems of a finished pass and how they compare with
// the complete pass before it.
type Tally struct {
	Broken       int `json:"broken"`
	Transient    int `json:"transient"`
	Unverifiable int `json:"unverifiable"`
	New          int `json:"new"`   // problems not there in the previous complete pass
	Still        int `json:"still"` // problems that were
	Fixed        int `json:"fixed"` // problems of the previous pass that are ok now
	// FragmentsChecked says the pass checked fragments, and Fragments
	// are then the links it found missing theirs ("page#fragment",
	// sorted): a missing anchor has no record of its own to keep its
	// history, so the next pass tells new from still there, fixed and no
	// longer linked by this list.
	FragmentsChecked bool     `json:"fragments_checked,omitempty"`
	Fragments        []string `json:"fragments,omitempty"`
	// Unchecked are the problems of the pass before that this pass did
	// not reach because a page it could not read was the only way to
	// them, sorted: listed as not checked, so the next pass that checks
	// one tells it still there, not new.
	Unchecked []string `json:"unchecked,omitempty"`
	// StartsWithLinks are the start URLs the pass read as pages with
	// links, sorted: a start page that has none the next pass lost them
	// (an empty deploy), where one that never had any is a plain page.
	StartsWithLinks []string `json:"starts_with_links,omitempty"`
}

// Hop is one step of a redirect chain the crawler followed itself.
type Hop struct {
	URL    string `json:"url"`
	Status int    `json:"status"`
}

// URLRecord is everything linkpatrol knows about one canonical URL: the
// latest result and the history across passes.
type URLRecord struct {
	URL          string    `json:"url"`    // canonical, without fragment; the raw text for an invalid URL
	Pass         uint64    `json:"pass"`   // the pass that last resolved this URL
	Action       string    `json:"action"` // parse | check | skip
	Verdict      Verdict   `json:"verdict"`
	Status       int       `json:"status,omitempty"` // final HTTP status; 0 when no response
	Error        string    `json:"error,omitempty"`  // short error class: "timeout", "dns", "refused", "invalid URL", "redirect loop", ...
	Note         string    `json:"note,omitempty"`   // extra context for a person: "skipped: robots", GhostNote+"2026-11-20", ...
	ContentType  string    `json:"content_type,omitempty"`
	Size         int64     `json:"size,omitempty"` // body bytes read (after decompression)
	FinalURL     string    `json:"final_url,omitempty"`
	Redirects    []Hop     `json:"redirects,omitempty"`
	FetchedAt    time.Time `json:"fetched_at,omitzero"`
	ETag         string    `json:"etag,omitempty"`
	LastModified string    `json:"last_modified,omitempty"`
	FirstSeen    time.Time `json:"first_seen,omitzero"`
	LastGood     time.Time `json:"last_good,omitzero"`
	FirstBroken  time.Time `json:"first_broken,omitzero"` // start of the current run of failures; zero while good
	Failures     int       `json:"failures,omitempty"`    // consecutive passes that ended in a problem
	Parsed       bool      `json:"parsed,omitempty"`      // the body was HTML and its links are stored
	// PrevVerdict and PrevPass are the verdict this URL had when an earlier pass
	// last resolved it, so a report can say what changed since then.
	PrevVerdict Verdict `json:"prev_verdict,omitempty"`
	PrevPass    uint64  `json:"prev_pass,omitempty"`
	// PrevFailures and PrevFirstBroken are the run of failures the URL
	// had in PrevPass when PrevVerdict was a problem (Failures,
	// FirstBroken then): whether that problem was old enough to be
	// reported then (--report-after), so that one never reported is not
	// reported fixed, nor "still there". Zero when PrevVerdict is not a
	// problem, or unknown: written before they were, or (before qa6 Q3)
	// on a record that is a problem itself.
	PrevFailures    int       `json:"prev_failures,omitempty"`
	PrevFirstBroken time.Time `json:"prev_first_broken,omitzero"`
	// IDs are the fragments a parsed page can be linked to (its id and
	// <a name> values), sorted, for the report's fragment check. Nil when
	// they were not collected (fragment checks off, not a page, a page cut
	// off at the size cap); empty, not nil, for a page that has none.
	IDs []string `json:"ids,omitempty"`
	// ReusedFrom is the pass whose fetch this record carries over without
	// a request (a result young enough for its recheck interval); zero when
	// this pass fetched or revalidated the URL itself. FetchedAt stays the
	// time of that fetch.
	ReusedFrom uint64 `json:"reused_from,omitempty"`
	// Unchanged: the page answered 304 to this pass's conditional request,
	// so its stored links were followed, not read again.
	Unchanged bool `json:"unchanged,omitempty"`
	// checked directory) rather than reaching it by a link.
	Seed bool `json:"seed,omitempty"`
	// Awaits is set while the redirect chain of this URL goes on at a URL
	// another worker of a distributed pass owns (and fetches): Redirects
	// and FinalURL go as far as that URL, the verdict is a placeholder
	// (skipped) and the history is the one before this pass. The merged
	// database finishes the record from that URL's own once the pass's
	// results are all in (crawler.FinishChain), and clears Awaits.
	Awaits string `json:"awaits,omitempty"`
	// Cut says a parsed page was read only in part, so its links past the
	// cut were never checked; zero for a page read whole. The report counts
	// and lists these pages, as it does quota skips.
	Cut Cut `json:"cut,omitempty"`
	// Carried counts the links at the end of a cut page's stored list that
	// were not in the part read but in its last full copy, read at
	// CarriedFrom: they may be past the cut, so they are kept and checked
	// as a ghost page's are, rather than called no longer linked.
	// CarriedFrom stays set on a cut page that carried nothing, so that the
	// next cut still carries from that full copy.
	Carried     int       `json:"carried,omitempty"`
	CarriedFrom time.Time `json:"carried_from,omitzero"`
	// NotTaken counts, on a sitemap's record, the entries it listed that
	// the pass did not take because the sitemap limit (--sitemap-limit)
	// was reached: past the limit in the file itself (never stored) or
	// over the pass's total. The report counts them as held back.
	NotTaken int `json:"not_taken,omitempty"`
	// DownSince and DownAfter are set on a record of class ErrorHostDown:
	// its host answered DownAfter requests of the pass, then nothing from
	// DownSince on, so the URL was not checked (the
	// report's first line names the host, the time and the count).
	DownSince time.Time `json:"down_since,omitzero"`
	DownAfter int       `json:"down_after,omitempty"`
	// Digest is a hash of an HTML page's host, body and Refresh header,
	// set when the pass read one with GET to parse it (never 0 then): a
	// later page of the pass with the same digest is not read for links
	// (SameContentNote). Stored so that a resumed pass knows the pages
	// read before it.
	Digest uint64 `json:"digest,omitempty"`
}

// ErrorHostDown is the error class of a URL of the site's own hosts not
// checked because its host stopped answering part way through the pass
// (it answered, then left every request unanswered through a URL's
// retries): a
// provisional, transient record whose URL stays queued, done again when
// the pass resumes. Not a dead link.
const ErrorHostDown = "host down"

// ErrorRateLimited is the Error of a URL not checked because its host
// asked for a longer wait than the run may make (a Retry-After, or
// another site's robots.txt Crawl-delay, past the host's max pause): on
// the site's own hosts a provisional, transient record whose URL stays
// queued; on another site's, unverifiable.
const ErrorRateLimited = "rate-limited"

// Error classes the crawler writes and the report reads to decide how a
// record is counted and what it is told: each has this one definition.
const (
	ErrorTrap   = "trap"   // skipped: held back as a suspected spider trap
	ErrorQuota  = "quota"  // skipped: its host's quota for the pass was used up
	ErrorRobots = "robots" // skipped: robots.txt disallows it
	// ErrorTLS: the server's certificate is not one to trust (self-signed,
	// expired, for another name).
	ErrorTLS              = "tls"
	ErrorRedirectLoop     = "redirect loop"      // a redirect chain came back to a URL of its own
	ErrorTooManyRedirects = "too many redirects" // a redirect chain longer than --max-redirects
	// ErrorUnsupportedScheme: a link in a scheme linkpatrol cannot check
	// (ftp:, news:, irc:, ...), never requested: unverifiable, since
	// nothing says it works, and no one chose to leave it out.
	ErrorUnsupportedScheme = "unsupported scheme"
	// ErrorUnsupportedEncoding and ErrorMalformedHeader: an answer came
	// that could not be read (a Content-Encoding that cannot be undone, a
	// header line that is not "Name: value"), which a browser may still
	// show: unverifiable, not broken.
	ErrorUnsupportedEncoding = "unsupported encoding"
	ErrorMalformedHeader     = "malformed response header"
)

// Held says whether rec is that of a URL its host held back rather than
// let be checked: it asked for a longer pause than the run may wait
// (ErrorRateLimited), or, one of the site's own hosts, it stopped
// answering part way through the pass (ErrorHostDown). Such a record says
// nothing of the link: on the site's own hosts it is provisional
// (HeldOwn); on another site's it is unverifiable.
func (rec *URLRecord) Held() bool {
	return rec.Error == ErrorRateLimited || rec.Error == ErrorHostDown
}

// HeldOwn says whether rec is that of a URL of the site's own hosts held
// back to a later run, kept queued: provisional, done again when the pass
// resumes, so the pass is not complete.
func (rec *URLRecord) HeldOwn() bool {
	return rec.Held() && rec.Verdict == VerdictTransient
}

// Cut says where a page was cut short; the reasons combine.
type Cut uint8

const (
	CutSize  Cut = 1 << iota // the body was larger than the crawler's MaxSize (--max-size)
	CutLinks                 // the page had more links than the crawler takes from one page
)

// Link is one reference from a page to a target, with the line of the
// attribute (or srcset candidate, or CSS url( token) that carries it.
type Link struct {
	URL      string `json:"url"`                // canonical target without fragment; raw text when invalid
	Fragment string `json:"fragment,omitempty"` // kept for the report, never fetched
	Line     int    `json:"line"`
	Tag      string `json:"tag,omitempty"`  // element name: a, img, link, ..., or "style" for CSS
	Attr     string `json:"attr,omitempty"` // href, src, srcset, content, style, ...
}

// Task is one frontier entry: a URL queued (or in flight) in the open pass.
type Task struct {
	URL    string `json:"url"`
	Action string `json:"action"`          // parse | check
	Depth  int    `json:"depth,omitempty"` // hops from a start URL
	// Run counts the pages of the same template before this one, each found
	// on the one before (rules.Template): the crawler's spider-trap state
	// that belongs to a URL, kept with it so a resumed pass goes on counting.
	Run int `json:"run,omitempty"`
	// Public says the URL is requested as a redirect from another origin
	// is: without the headers and credentials its rule gives it (as curl
	// does since CVE-2022-27776). A redirect target requested by a task of
	// its own, because the chain that reached it was handed back or goes
	// on in another worker's shard, keeps the mark, so the same target
	// never gets credentials or not depending on timing.
	Public bool `json:"public,omitempty"`
	// From is the content digest (URLRecord.Digest) of the page whose link
	// found the URL, 0 when none: a page with the content of its referrer
	// is a catch-all's copy, not read for links (crawler's sameAs). Kept
	// with the task so a resumed pass, or the cluster worker the URL is
	// forwarded to, decides the same.
	From uint64 `json:"from,omitempty"`
	// Tries, Comebacks and ComebacksWaited are what the URL's requests in
	// earlier runs of the pass used of its retries: failed tries, which
	// count against --retries, and the comebacks a server asked for with
	// a Retry-After (and those waits added up), which count against
	// none. Kept with the queued task (Result.Tried), so that a run
	// resumed after a stop or a kill gives it only what is left (qa10 Q6:
	// a URL timing out was asked 1+N times by every run of its pass).
	Tries           int           `json:"tries,omitempty"`
	Comebacks       int           `json:"comebacks,omitempty"`
	ComebacksWaited time.Duration `json:"comebacks_waited,omitempty"`
}

// Result is what one finished task adds to the store: its record, its
// links when it is a page that was parsed (or whose old links are replaced),
// and the URLs it discovered that were new to the pass.
type Result struct {
	Record URLRecord
	// SetLinks replaces the page's stored links with Links (empty deletes
	// them). When false the stored links are left as they are, which is what
	// a ghost page or a 304 needs.
	SetLinks bool
	Links    []Link
	Enqueue  []Task
	// Forward are tasks found by this result for hosts another worker owns
	// (see OutboxEntry): Commit puts them in the outbox, in the same
	// transaction as the result, never on this database's frontier.
	Forward []Task
	// Requeue, when set, keeps the URL on the frontier as this task
	// although its record is written: the record is provisional (held back
	// by a server's pause) and the URL is done again when the pass resumes.
	Requeue *Task
	// Tried, when set, is all the result is: a try of the URL failed and
	// it is asked again, so its queued task, when it has one, is replaced
	// by *Tried, which holds the tries used so far. Nothing else of the
	// result is written: no record, no links, no tasks, no outbox entry.
	Tried *Task
}

// OutboxEntry is what one Commit left for other processes: the tasks its
// results forwarded to hosts this database's crawler does not own, and, with
// Options.ForwardResults, the results themselves for a merged database.
// A cluster publishes entries in order and deletes each once it is
// delivered (see DB.Outbox).
type OutboxEntry struct {
	Pass  uint64
	Tasks []Task
	// Results carry Record (with Pass set), SetLinks, Links and Requeue;
	// never Enqueue or Forward, which belong to the worker's own frontier
	// and outbox.
	Results []Result
}
