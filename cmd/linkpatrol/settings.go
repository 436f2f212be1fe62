package main

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/report"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// setting is one row of the table every setting of a run is defined by:
// its flag, its config key, its default, its help and its heading. The
// flags of each command, the keys of the config file, the merge (a flag
// beats the file, the file beats the default), the checks of a value
// (alike from either place), `config example` and the grouped --help are
// all made from settingsTable; nothing else lists them.
type setting struct {
	flag  string // without "--"; "" for a key with no flag
	short string
	key   string // "" for a flag with no key: see noKey
	// old are the key's former names, still read with a warning.
	old []string
	// hostKey names the [[host]] key a politeness flag sets for the start
	// hosts; it has no top-level key.
	hostKey string
	group   string
	usage   string
	// usageIn is the usage in one command's help where the shared one
	// says something untrue of it (report has no progress line).
	usageIn map[string]string
	// def is the default as it would be typed on the command line.
	def string
	// example is a value shown commented out in `config example`, for a
	// key whose default shows nothing useful.
	example string
	// cmds are the commands that have the flag; check when empty.
	cmds []string
	// field is where the value is kept: a pointer to a string, bool, int,
	// int64, uint64, []string or []int, or a pflag.Value (throttle.Duration,
	// throttle.Size, ...) that is also an encoding.TextUnmarshaler.
	field func(*checkOptions) any
	// check is the check the value gets from either place; its error
	// follows the name of the flag or key ("must be at least 1").
	check func(v any) error
	count bool // -v, -vv
}

// The headings of --help and of `config example`, in the order a user meets
// the questions: what is checked, how gently, what is reused, what is
// printed, where it is kept.
const (
	groupScope   = "Scope (what is checked)"
	groupPolite  = "Politeness (how hard the hosts are hit)"
	groupCaching = "Caching (what earlier passes save)"
	groupOutput  = "Output"
	groupDB      = "Database and passes"
	groupCluster = "Distributed passes (see linkpatrol serve-frontier)"
)

var groupOrder = []string{groupScope, groupPolite, groupCaching, groupOutput, groupDB, groupCluster}

// noKey are the flags without a config key, and why: each is about one run
// or one command line, not about the site.
var noKey = map[string]string{
	"config":        "names the file itself",
	"new-pass":      "a one-off: abandon the unfinished pass this time",
	"no-reuse":      "a one-off: fetch everything in full this time",
	"verbose":       "how much this run logs, as the person at the terminal wants",
	"log-format":    "read before the file, so a mistake in the file is logged as asked",
	"status-addr":   "a one-off: a live page for whoever is watching this run",
	"status-public": "goes with --status-addr",
	"pass":          "report only: which pass to render this time",
	"nats":          "where this run's cluster is, not a setting of the site",
	"token-file":    "goes with --nats",
	"nkey":          "goes with --nats",
	"tls-ca":        "goes with --nats",
	"owner-wait":    "how long this run follows a cluster short of a worker, not a setting of the site",
}

// settingsTable is every setting. Politeness flags (hostKey) set the
// [[host]] key of the same name for the start hosts; the config file
// writes them in a [[host]] table, which rules reads.
var settingsTable = []setting{
	// Scope.
	{key: "start", flag: "start", cmds: []string{"explain"}, group: groupScope, example: `["https://example.com/"]`,
		usage: "start `URL` (repeatable) or directory of the site; its host is parsed, others checked (check takes them as arguments)",
		field: func(o *checkOptions) any { return &o.start }, check: each(checkStart)},
	{flag: "include", key: "include", cmds: []string{"check", "explain"}, group: groupScope,
		usage: "only follow URLs matching this `regex` (repeatable; the start URLs are exempt)",
		field: func(o *checkOptions) any { return &o.include }, check: each(checkRegex)},
	{flag: "exclude", key: "exclude", cmds: []string{"check", "explain"}, group: groupScope, example: `['\.(zip|tar\.gz|iso)$']`,
		usage: "skip URLs matching this `regex` (repeatable): never requested, not even through a redirect",
		field: func(o *checkOptions) any { return &o.exclude }, check: each(checkRegex)},
	{flag: "offline", key: "offline", cmds: []string{"check", "explain"}, group: groupScope,
		usage: "check only the site's own links: links to other hosts are listed as skipped, not fetched, and a redirect there is not followed",
		field: func(o *checkOptions) any { return &o.offline }},
	{flag: "accept", key: "accept", cmds: []string{"check", "explain"}, group: groupScope, example: "[429]",
		usage: "take these statuses as ok for every URL, e.g. 200,429 (a [[rule]]'s own accept wins for its URLs)",
		field: func(o *checkOptions) any { return &o.accept }, check: checkStatuses},
	{flag: "header", short: "H", key: "header", cmds: []string{"check", "explain"}, group: groupScope, example: `["Accept-Language: en"]`,
		usage: "send this header to the start URLs' origins (not the same host under the other scheme), \"Name: value\", or to another host over https, \"HOST=Name: value\", or over plain http too, \"http://HOST=Name: value\" (repeatable; ${NAME} reads the environment)",
		field: func(o *checkOptions) any { return &o.headers }, check: each(checkHeader)},
	{flag: "sitemap", key: "sitemap", old: []string{"sitemaps"}, group: groupScope,
		usage: "also start from the URLs of this sitemap `URL` (indexes and .gz too; repeatable)",
		field: func(o *checkOptions) any { return &o.sitemaps }, check: each(checkSitemap)},
	{flag: "robots-sitemaps", key: "robots_sitemaps", group: groupScope,
		usage: "also start from the sitemaps named in the start hosts' robots.txt",
		field: func(o *checkOptions) any { return &o.robotsMaps }},
	{flag: "sitemap-limit", key: "sitemap_limit", group: groupScope, def: strconv.Itoa(crawler.DefaultSitemapLimit),
		usage: "most URLs taken from sitemaps in a pass",
		field: func(o *checkOptions) any { return &o.sitemapMax }, check: atLeast(0)},
	{flag: "root", key: "root", group: groupScope,
		usage: "site root `DIR` for files given one by one: /x in their links is DIR/x (default: the directory holding them all)",
		field: func(o *checkOptions) any { return &o.root }},
	{flag: "base-url", key: "base_url", group: groupScope,
		usage: "`URL` where the checked directory is published: absolute links under it are checked against the directory's files",
		field: func(o *checkOptions) any { return &o.baseURL }},
	{flag: "check-fragments", key: "check_fragments", cmds: []string{"check", "report"}, group: groupScope,
		usage: "report links to page#frag where the page has no such id or <a name> (report: the check must have stored anchors)",
		field: func(o *checkOptions) any { return &o.fragments }},
	{flag: "max-redirects", key: "max_redirects", group: groupScope, def: strconv.Itoa(crawler.DefaultMaxRedirects),
		usage: "redirects followed, as browsers do; one more makes the link \"too many redirects\"",
		field: func(o *checkOptions) any { return &o.maxRedirects }, check: atLeast(1)},
	{flag: "max-size", key: "max_size", group: groupScope, def: throttle.Size(crawler.DefaultMaxSize).String(),
		usage: "largest HTML page read after decompression, in bytes or with a unit (10MiB); a page cut there is listed as cut short, its links past the cut unchecked",
		field: func(o *checkOptions) any { return (*throttle.Size)(&o.maxSize) }, check: positive},
	{flag: "max-depth", key: "max_depth", group: groupScope, def: "0",
		usage: "follow links only on pages at most this many links from the start URLs (0 = no limit); pages further out are still checked, not parsed (unlike --max-hops, which holds pages back unchecked as a suspected trap)",
		field: func(o *checkOptions) any { return &o.maxDepth }, check: atLeast(0)},
	trapSetting(rules.TrapHops, func(t *rules.Traps) *int { return &t.MaxHops },
		"hold back pages more than this many links from the start URLs as a suspected spider trap"),
	trapSetting(rules.TrapPathSegments, func(t *rules.Traps) *int { return &t.MaxPathSegments },
		"hold back pages whose path has more segments than this"),
	trapSetting(rules.TrapPathRepeats, func(t *rules.Traps) *int { return &t.MaxPathRepeats },
		"hold back pages whose path repeats a segment (or run of them) more often in a row: /a/a/a/"),
	trapSetting(rules.TrapQueryVariants, func(t *rules.Traps) *int { return &t.MaxQueryVariants },
		"hold back pages of a path that has this many distinct query strings already (faceted listings)"),
	trapSetting(rules.TrapTemplateRun, func(t *rules.Traps) *int { return &t.MaxTemplateRun },
		"hold back pages after this many of one template (/cal/#/#) in a row, each found on the one before (endless calendars)"),
	{flag: "keep-session-ids", key: "keep_session_ids", cmds: []string{"check", "explain"}, group: groupScope,
		usage: "keep query and ;path parameters that look like session ids (sid=<token>, jsessionid, ...) instead of dropping them before dedupe",
		field: func(o *checkOptions) any { return &o.keepSIDs }},

	// Politeness.
	{flag: "concurrency", short: "c", key: "concurrency", cmds: []string{"check", "explain"}, group: groupPolite, def: strconv.Itoa(crawler.DefaultConcurrency),
		usage: "requests in flight in total",
		field: func(o *checkOptions) any { return &o.concurrency }, check: atLeast(1)},
	{flag: "per-host", key: "per_host", cmds: []string{"check", "explain"}, group: groupPolite, def: strconv.Itoa(crawler.DefaultPerHost),
		usage: "requests in flight to one host (at most --concurrency; a [[host]] per_host may lower it)",
		field: func(o *checkOptions) any { return &o.perHost }, check: atLeast(1)},
	{flag: "rate", hostKey: "rate", cmds: []string{"check", "explain"}, group: groupPolite,
		usage: "requests per second to the site's hosts, e.g. 5/s or 300/m; 0 or \"unlimited\" for no limit (another host: rate in a [[host]] table)",
		field: func(o *checkOptions) any { return &o.polite.rate }},
	{flag: "burst", hostKey: "burst", cmds: []string{"check", "explain"}, group: groupPolite,
		usage: "requests allowed at once above --rate",
		field: func(o *checkOptions) any { return &o.polite.burst }, check: atLeast(0)},
	{flag: "window", hostKey: "window", cmds: []string{"check", "explain"}, group: groupPolite,
		usage: "at most N requests in any sliding window, e.g. 100/1m",
		field: func(o *checkOptions) any { return &o.polite.window }},
	{flag: "bandwidth", hostKey: "bandwidth", cmds: []string{"check", "explain"}, group: groupPolite,
		usage: "bytes per second read from one of the site's hosts, e.g. 512KiB",
		field: func(o *checkOptions) any { return (*throttle.Size)(&o.polite.bandwidth) }},
	{flag: "global-bandwidth", key: "global_bandwidth", cmds: []string{"check", "explain"}, group: groupPolite,
		usage: "bytes per second read from all hosts together, e.g. 2MiB (0 = no limit)",
		field: func(o *checkOptions) any { return (*throttle.Size)(&o.polite.globalBandwidth) }},
	{flag: "quota-requests", hostKey: "quota_requests", cmds: []string{"check", "explain"}, group: groupPolite,
		usage: "most requests to one of the site's hosts in a pass (0 = no quota)",
		field: func(o *checkOptions) any { return &o.polite.quotaRequests }, check: atLeast(0)},
	{flag: "quota-bytes", hostKey: "quota_bytes", cmds: []string{"check", "explain"}, group: groupPolite,
		usage: "most bytes read from one of the site's hosts in a pass, e.g. 2GB",
		field: func(o *checkOptions) any { return (*throttle.Size)(&o.polite.quotaBytes) }},
	{flag: "crawl-delay", hostKey: "crawl_delay", cmds: []string{"check", "explain"}, group: groupPolite,
		usage: "minimum gap between requests to one of the site's hosts, e.g. 200ms; it takes the place of their robots.txt's Crawl-delay (0s: none)",
		field: func(o *checkOptions) any { return (*throttle.Duration)(&o.polite.crawlDelay) }},
	{flag: "max-pause", hostKey: "max_pause", cmds: []string{"check", "explain"}, group: groupPolite,
		usage: "longest Retry-After pause waited for; a longer one holds back the URL that asked (the whole host when a second URL or robots.txt asks too) to a later run of the same command, which then exits 3; also the longest robots.txt Crawl-delay kept on the site's hosts (default 10m)",
		field: func(o *checkOptions) any { return (*throttle.Duration)(&o.polite.maxPause) }},
	{flag: "retries", hostKey: "retries", cmds: []string{"check", "explain"}, group: groupPolite,
		usage: "retries of a URL after 429, 503, timeouts or connection errors: at most 1+N requests per URL, the HTTP client's own resends included; a 429 or 503 whose Retry-After is waited for (see --max-pause) spends none: up to " + strconv.Itoa(throttle.MaxComebacks) + " per URL, --max-pause of waiting in all; a host refusing every request for longer than --max-pause is held back as for a longer pause; a host that answered earlier in the pass and then answers nothing through 1+N rounds (refused connections, or timeouts and resets of at least two URLs for a minute: one page failing alone is that page's trouble) stopped answering: its other URLs are not checked, kept for the next run (exit 3)",
		field: func(o *checkOptions) any { return &o.polite.retries }, check: atLeast(0)},
	{flag: "adaptive", hostKey: "adaptive", cmds: []string{"check", "explain"}, group: groupPolite,
		usage: "slow down on the site's own hosts when their response times climb (always on for third-party hosts)",
		field: func(o *checkOptions) any { return &o.polite.adaptive }},
	{flag: "group-hosts", key: "group_hosts", cmds: []string{"check", "explain"}, group: groupPolite, def: "host",
		usage: "what shares one set of limits: host (each host:port) or domain (all hosts of a registrable domain)",
		field: func(o *checkOptions) any { return &o.polite.groupHosts }, check: oneOf("host", "domain")},
	{flag: "ignore-robots", hostKey: "ignore_robots", cmds: []string{"check", "explain"}, group: groupPolite,
		usage: "ignore robots.txt on the site's own hosts (never on others)",
		field: func(o *checkOptions) any { return &o.polite.ignoreRobots }},
	{flag: "timeout", key: "timeout", group: groupPolite, def: crawler.DefaultTimeout.String(),
		usage: "soft timeout of one request; a whole task may take twice this",
		field: func(o *checkOptions) any { return (*throttle.Duration)(&o.timeout) }, check: checkTimeout},
	{flag: "user-agent", key: "user_agent", group: groupPolite,
		usage: "User-Agent header (default names linkpatrol and its version)",
		field: func(o *checkOptions) any { return &o.userAgent }},
	{flag: "insecure", key: "insecure", group: groupPolite,
		usage: "skip TLS certificate verification (a self-signed staging host); every report of the pass says so first",
		field: func(o *checkOptions) any { return &o.insecure }},

	// Caching. 20h rather than a full day for recheck-ok: a nightly cron
	// pass then refetches what the previous night fetched, while a second
	// run the same day reuses it. Only for targets that are only checked
	// (third-party links above all, where politeness makes reuse worth
	// it): the site's own pages are revalidated and problems checked
	// again, so a fix shows at once.
	{flag: "recheck-ok", key: "recheck.ok", group: groupCaching, def: "20h",
		usage: "reuse a good result of another site's link that is only checked (not parsed) younger than this (0 = always fetch); the site's own hosts are checked every run",
		field: func(o *checkOptions) any { return (*throttle.Duration)(&o.recheck.OK) }},
	{flag: "recheck-pages", key: "recheck.pages", group: groupCaching,
		usage: "reuse a good page of the site, or a good image or file of its hosts, younger than this, links included (0 = always revalidate, a 304 when unchanged)",
		field: func(o *checkOptions) any { return (*throttle.Duration)(&o.recheck.Pages) }},
	{flag: "recheck-broken", key: "recheck.broken", group: groupCaching,
		usage: "reuse a broken result younger than this (0 = always check again)",
		field: func(o *checkOptions) any { return (*throttle.Duration)(&o.recheck.Broken) }},
	{flag: "recheck-transient", key: "recheck.transient", group: groupCaching,
		usage: "reuse a transient result (a timeout, a 5xx) younger than this (0 = always try again)",
		field: func(o *checkOptions) any { return (*throttle.Duration)(&o.recheck.Transient) }},
	{flag: "recheck-unverifiable", key: "recheck.unverifiable", group: groupCaching,
		usage: "reuse an unverifiable result younger than this (0 = always check again)",
		field: func(o *checkOptions) any { return (*throttle.Duration)(&o.recheck.Unverifiable) }},
	{flag: "no-reuse", group: groupCaching,
		usage: "fetch and read every URL in full: no stored result is reused (whatever a recheck interval says) and no page is revalidated with a conditional request",
		field: func(o *checkOptions) any { return &o.noReuse }},
	{flag: "ghost", key: "ghost", group: groupCaching, def: "7d",
		usage: "follow the old links of a page that fails now but was good within this",
		field: func(o *checkOptions) any { return (*throttle.Duration)(&o.ghost) }},

	// Output.
	{flag: "format", short: "f", key: "format", cmds: []string{"check", "report"}, group: groupOutput, def: "text",
		usage: "report format: " + strings.Join(report.Formats(), ", "),
		field: func(o *checkOptions) any { return &o.format }, check: oneOf(report.Formats()...)},
	{flag: "output", short: "o", key: "output", cmds: []string{"check", "report"}, group: groupOutput, example: `["report.json"]`,
		usage: "also write the report to `FILE`, format from its extension, or FORMAT:FILE; a name whose extension says none (or only .txt) takes --format's (repeatable; never the database; one that cannot be written, such as in a missing directory, stops the run before it starts); standard output still gets it unless -q (the text report when an -o file has --format's format)",
		field: func(o *checkOptions) any { return &o.outputs }},
	{flag: "quiet", short: "q", key: "quiet", cmds: []string{"check", "report"}, group: groupOutput,
		usage:   "no progress line, and with -o no report on standard output",
		usageIn: map[string]string{"report": "with -o, write only the files: no report on standard output"},
		field:   func(o *checkOptions) any { return &o.quiet }},
	{flag: "all", key: "all", cmds: []string{"check", "report"}, group: groupOutput,
		usage: "list every URL seen, not only problems",
		field: func(o *checkOptions) any { return &o.all }},
	{flag: "fail-on", key: "fail_on", cmds: []string{"check", "report"}, group: groupOutput, def: "broken",
		usage: "which problems make the exit code 1: " + strings.Join(report.FailOnValues(), ", ") + " (broken: links that could not be verified make it 5; internal: only links to the site itself count, for 1 and for 5; any: links that could not be verified make it 1; never: also 0 instead of 5 when a limit held URLs back, pages of the site could not be read or links could not be verified)",
		field: func(o *checkOptions) any { return &o.failOn }, check: checkFailOn},
	{flag: "only-new", key: "only_new", cmds: []string{"check", "report"}, group: groupOutput,
		usage: "report only problems that are new since the last complete pass (the exit code follows)",
		field: func(o *checkOptions) any { return &o.onlyNew }},
	{flag: "report-after", key: "report_after", cmds: []string{"check", "report"}, group: groupOutput,
		usage: "keep a problem out of the report until it has lasted this long (36h, 2d) or this many passes (3), or both (3+2d); it is still recorded and counted",
		field: func(o *checkOptions) any { return (*threshold)(&o.reportAfter) }},
	{flag: "verbose", short: "v", count: true, group: groupOutput,
		usage: "log what the pass does (-vv: more); a summary per host at the end",
		field: func(o *checkOptions) any { return &o.verbose }},
	{flag: "log-format", group: groupOutput, def: "text",
		usage: "log format: text or json",
		field: func(o *checkOptions) any { return &o.logFormat }, check: oneOf("text", "json")},
	{flag: "status-addr", group: groupOutput,
		usage: "serve a live status page at `HOST:PORT` while the pass runs (loopback only)",
		field: func(o *checkOptions) any { return &o.statusAddr }},
	{flag: "status-public", group: groupOutput,
		usage: "allow --status-addr on a non-loopback address",
		field: func(o *checkOptions) any { return &o.statusPub }},

	// Database and passes.
	{flag: "config", cmds: []string{"check", "report", "explain"}, group: groupDB,
		usage: "config `file` with rules and settings (default ./linkpatrol.toml when it exists)",
		field: func(o *checkOptions) any { return &o.config }},
	{flag: "db", key: "db", cmds: []string{"check", "report", "explain"}, group: groupDB, def: defaultDB,
		usage: "database `file` that holds every pass (report: a pattern such as 'w*.db' reads the files of a distributed pass's workers as one)",
		field: func(o *checkOptions) any { return &o.db }},
	{flag: "pass", cmds: []string{"report"}, group: groupDB,
		usage: "render this pass; only the newest can be (the database keeps each URL's latest result)",
		field: func(o *checkOptions) any { return &o.passID }},
	{flag: "new-pass", group: groupDB,
		usage: "start a new pass: abandon an unfinished one, or start here though the database holds another site's passes",
		field: func(o *checkOptions) any { return &o.newPass }},
	{flag: "max-time", key: "max_time", group: groupDB,
		usage: "stop after this long and exit 3; run again to resume (0 = no limit)",
		field: func(o *checkOptions) any { return (*throttle.Duration)(&o.maxTime) }},
	{flag: "keep-passes", key: "keep_passes", group: groupDB, def: "10",
		usage: "complete passes kept in the database; older data is pruned",
		field: func(o *checkOptions) any { return &o.keepPasses }, check: atLeast(1)},
	{flag: "commit-batch", key: "commit_batch", group: groupDB, def: strconv.Itoa(crawler.DefaultBatchSize),
		usage: "results committed to the database in one transaction; a kill loses about this many (a page, its redirect hops and what it found are never split)",
		field: func(o *checkOptions) any { return &o.commitBatch }, check: atLeast(1)},
	{flag: "commit-every", key: "commit_every", group: groupDB, def: crawler.DefaultBatchInterval.String(),
		usage: "longest time between commits, and between fsyncs of the database unless --fsync-commits",
		field: func(o *checkOptions) any { return (*throttle.Duration)(&o.commitEvery) }, check: positive},
	{flag: "fsync-commits", key: "fsync_commits", group: groupDB,
		usage: "fsync the database at every commit, so that a power cut or OS crash during a check costs only the last batch; without it the file may be left damaged (a killed process is safe either way)",
		field: func(o *checkOptions) any { return &o.fsyncCommits }},
	// Distributed passes.
	{flag: "nats", cmds: []string{"check", "report"}, group: groupCluster,
		usage: usageNats,
		field: func(o *checkOptions) any { return &o.cluster.url }},
	{flag: "token-file", cmds: []string{"check", "report"}, group: groupCluster,
		usage: usageTokenFile,
		field: func(o *checkOptions) any { return &o.cluster.auth.tokenFile }},
	{flag: "nkey", cmds: []string{"check", "report"}, group: groupCluster,
		usage: usageNkey,
		field: func(o *checkOptions) any { return &o.cluster.auth.nkeyFile }},
	{flag: "tls-ca", cmds: []string{"check", "report"}, group: groupCluster,
		usage: usageTLSCA,
		field: func(o *checkOptions) any { return &o.cluster.caFile }},
	{flag: "owner-wait", group: groupCluster, def: defaultOwnerWait.String(),
		usage: "with --nats: when shards with work left have had no live worker this long (one was killed, or none owns them), stop following, print what was done and exit 3, naming the shards and the worker to start",
		field: func(o *checkOptions) any { return (*throttle.Duration)(&o.ownerWait) }, check: positive},
}

// trapSetting is the row of a spider-trap limit: its flag and key are
// rules.TrapRule's, which its reasons name, and its default DefaultTraps'.
func trapSetting(r rules.TrapRule, limit func(*rules.Traps) *int, usage string) setting {
	def := rules.DefaultTraps()
	return setting{flag: strings.TrimPrefix(r.Flag, "--"), key: r.Key, cmds: []string{"check", "explain"}, group: groupScope,
		def: strconv.Itoa(*limit(&def)), usage: usage + "; 0 = no limit",
		field: func(o *checkOptions) any { return limit(&o.traps) }, check: atLeast(0)}
}

// has says whether the command has the setting's flag.
func (s *setting) has(cmd string) bool {
	if s.flag == "" {
		return false
	}
	if len(s.cmds) == 0 {
		return cmd == "check"
	}
	return slices.Contains(s.cmds, cmd)
}

// flagName is how a message names the setting given on the command line.
func (s *setting) flagName() string { return "--" + s.flag }

// bindName is the setting's name in a flag set: its flag, or for a key
// with no flag a name no command line can give.
func (s *setting) bindName() string {
	if s.flag == "" {
		return "key:" + s.key
	}
	return s.flag
}

// settingFor finds a row by config key.
func settingFor(key string) *setting {
	for i := range settingsTable {
		if settingsTable[i].key == key {
			return &settingsTable[i]
		}
	}
	return nil
}

// bind declares s as a flag of fs, kept in o. Every row is declared, a
// flag the command has not too (hidden), so the defaults and the file's
// values go through the flag's parser.
func (s *setting) bind(fs *pflag.FlagSet, o *checkOptions) *pflag.Flag {
	name := s.bindName()
	switch p := s.field(o).(type) {
	case *string:
		fs.StringVarP(p, name, s.short, "", s.usage)
	case *bool:
		fs.BoolVarP(p, name, s.short, false, s.usage)
	case *int:
		if s.count {
			fs.CountVarP(p, name, s.short, s.usage)
		} else {
			fs.IntVarP(p, name, s.short, 0, s.usage)
		}
	case *int64:
		fs.Int64VarP(p, name, s.short, 0, s.usage)
	case *uint64:
		fs.Uint64VarP(p, name, s.short, 0, s.usage)
	case *[]string:
		fs.StringArrayVarP(p, name, s.short, nil, s.usage)
	case *[]int:
		fs.IntSliceVarP(p, name, s.short, nil, s.usage)
	case pflag.Value:
		fs.VarP(p, name, s.short, s.usage)
	default:
		panic(fmt.Sprintf("setting %s: no flag for %T", name, p)) // a row of the table is wrong: caught by its tests
	}
	f := fs.Lookup(name)
	if s.def != "" {
		if err := f.Value.Set(s.def); err != nil {
			panic(fmt.Sprintf("setting %s: default %q: %v", name, s.def, err)) // caught by the table's tests
		}
		f.DefValue = f.Value.String()
	}
	return f
}

// newFlags declares cmd's flags, with their defaults set in o. The
// returned set has every row of the table, the other commands' flags
// hidden, for the file's values and their checks.
func newFlags(cmd string, o *checkOptions) (visible, all *pflag.FlagSet) {
	visible = pflag.NewFlagSet(cmd, pflag.ContinueOnError)
	visible.SortFlags = false
	all = pflag.NewFlagSet(cmd+" settings", pflag.ContinueOnError)
	for i := range settingsTable {
		s := &settingsTable[i]
		f := s.bind(all, o)
		if u, ok := s.usageIn[cmd]; ok {
			f.Usage = u // a flag of this call's sets alone
		}
		if s.has(cmd) {
			visible.AddFlag(f)
		}
	}
	return visible, all
}

// checkGroups sorts check's flags for --help under the table's headings.
func checkGroups() []flagGroup {
	groups := make([]flagGroup, len(groupOrder))
	for i, g := range groupOrder {
		groups[i].title = g
		for _, s := range settingsTable {
			if s.group == g && s.has("check") {
				groups[i].flags = append(groups[i].flags, s.flag)
			}
		}
	}
	return groups
}

// configSettings is what the config file hands the command: every key of
// the table, read into file (a second set of options, so that the file's
// values are read and checked even where a flag overrides them).
func configSettings(file *checkOptions) rules.Settings {
	rs := rules.Settings{Renamed: map[string]string{}, Elsewhere: map[string]string{}}
	_, all := newFlags("config", file)
	for _, s := range settingsTable {
		if s.hostKey != "" {
			// rate = "0" at the top level, where one who knows --rate
			// tries it first, to free or slow down one host.
			rs.Elsewhere[s.hostKey] = fmt.Sprintf(`it is set per host, in a [[host]] table whose match names the host (a glob: "*.example.com"); --%s sets it for the site's own hosts`, s.flag)
		}
		if s.key == "" {
			continue
		}
		rs.Keys = append(rs.Keys, s.key)
		for _, old := range s.old {
			rs.Renamed[old] = s.key
		}
	}
	rs.Set = func(key string, v any) error {
		s := settingFor(key)
		value := all.Lookup(s.bindName()).Value
		texts, err := fileText(value, v)
		if ie := (*rules.ItemError)(nil); errors.As(err, &ie) {
			return &rules.ItemError{Index: ie.Index, Err: fmt.Errorf("%s: %w", key, ie.Err)}
		} else if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		for i, t := range texts {
			if err := value.Set(t); err != nil {
				err = fmt.Errorf("%s: %w", key, err)
				if _, list := v.([]any); list {
					return &rules.ItemError{Index: i, Err: err}
				}
				return err
			}
		}
		return checkValue(s, key, s.field(file))
	}
	return rs
}

// checkValue runs s's check on the value at p; name is how the user wrote
// the setting (--per-host, per_host).
func checkValue(s *setting, name string, p any) error {
	if s.check == nil {
		return nil
	}
	err := s.check(p)
	if err == nil {
		return nil
	}
	var ie *rules.ItemError
	if errors.As(err, &ie) {
		return &rules.ItemError{Index: ie.Index, Err: fmt.Errorf("%s %w", name, ie.Err)}
	}
	return fmt.Errorf("%s %w", name, err)
}

// fileText turns a value of the file, as go-toml decoded it, into what the
// flag's parser reads: one text, or one per item of a list. A value of the
// wrong kind is refused here, with what the key wants.
func fileText(value pflag.Value, v any) ([]string, error) {
	typ := value.Type()
	want := map[string]string{
		"string": "a string in quotes", "bool": "true or false", "int": "a whole number", "int64": "a whole number",
		"uint64": "a whole number", "count": "a whole number", "stringArray": "a list of strings", "intSlice": "a list of whole numbers",
		"duration": `a duration in quotes, such as "30s", "2h" or "7d"`, "size": `a size such as "10MiB" or a number of bytes`,
		"rate": `a rate in quotes, such as "5/s"`, "window": `a window in quotes, such as "100/1m"`,
		"count|duration": `a count of failed passes (3), a duration ("36h") or both ("3+2d")`,
	}[typ]
	wrong := fmt.Errorf("want %s, not %s", want, tomlKind(v))
	switch v := v.(type) {
	case string:
		switch typ {
		case "string", "duration", "size", "rate", "window", "count|duration":
			return []string{v}, nil
		}
	case bool:
		if typ == "bool" {
			return []string{strconv.FormatBool(v)}, nil
		}
	case int64:
		switch typ {
		case "int", "int64", "uint64", "count", "size", "count|duration":
			if v < 0 && (typ == "size" || typ == "count|duration" || typ == "uint64") {
				return nil, fmt.Errorf("%d is negative", v)
			}
			return []string{strconv.FormatInt(v, 10)}, nil
		}
	case []any:
		item := map[string]string{"stringArray": "string", "intSlice": "integer"}[typ]
		if item == "" {
			break
		}
		texts := make([]string, len(v))
		for i, x := range v {
			switch x := x.(type) {
			case string:
				if item == "string" {
					texts[i] = x
					continue
				}
			case int64:
				if item == "integer" {
					texts[i] = strconv.FormatInt(x, 10)
					continue
				}
			}
			return nil, &rules.ItemError{Index: i, Err: fmt.Errorf("want %s, not a list with %s", want, tomlKind(x))}
		}
		return texts, nil
	}
	return nil, wrong
}

// tomlKind names the kind of a decoded TOML value as the file's author
// knows it.
func tomlKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case []any:
		return "a list"
	case map[string]any:
		return "a table"
	case time.Time, interface{ String() string }:
		return "a date"
	}
	return "another kind of value"
}

// The checks of the table. Each gets a pointer to the value and says what
// is wrong after the setting's name.

func atLeast(min int64) func(any) error {
	return func(p any) error {
		if n := reflect.ValueOf(p).Elem().Int(); n < min {
			return fmt.Errorf("must be at least %d", min)
		}
		return nil
	}
}

func positive(p any) error {
	if reflect.ValueOf(p).Elem().Int() <= 0 {
		return errors.New("must be more than 0")
	}
	return nil
}

func checkTimeout(p any) error {
	if d := time.Duration(*p.(*throttle.Duration)); d <= 0 {
		return fmt.Errorf("must be more than 0: a timeout of %v would fail every request", d)
	}
	return nil
}

func oneOf(values ...string) func(any) error {
	return func(p any) error {
		if v := *p.(*string); !slices.Contains(values, v) {
			return fmt.Errorf("%q: want %s", v, strings.Join(values, ", "))
		}
		return nil
	}
}

func checkFailOn(p any) error {
	_, err := report.ParseFailOn(*p.(*string))
	return err
}

// each checks every item of a list, and says which one is wrong.
func each(check func(string) error) func(any) error {
	return func(p any) error {
		for i, item := range *p.(*[]string) {
			if err := check(item); err != nil {
				return &rules.ItemError{Index: i, Err: err}
			}
		}
		return nil
	}
}

func checkRegex(s string) error {
	if _, err := regexp.Compile(s); err != nil {
		return fmt.Errorf("%q: %w", s, err)
	}
	return nil
}

func checkHeader(s string) error {
	if _, err := rules.ParseHeaderFlag(s); err != nil {
		return err
	}
	return nil
}

func checkSitemap(s string) error {
	if u, err := url.Parse(s); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q: want an http(s) URL", redact(s))
	}
	return nil
}

// checkStart refuses what is plainly no start: a URL of another scheme. A
// path is looked at when the command uses it.
func checkStart(s string) error {
	if scheme, _, ok := strings.Cut(s, "://"); ok && scheme != "http" && scheme != "https" {
		return fmt.Errorf("%q: want an http(s) URL or a directory", redact(s))
	} else if ok {
		if _, err := rules.Resolve(nil, s); err != nil {
			return fmt.Errorf("%q: %w", redact(s), err)
		}
	}
	return nil
}

func checkStatuses(p any) error {
	for i, code := range *p.(*[]int) {
		if code < 100 || code > 599 {
			return &rules.ItemError{Index: i, Err: fmt.Errorf("%d: not an HTTP status code (100-599)", code)}
		}
	}
	return nil
}

// threshold is --report-after and report_after: "3" (failed passes), a
// duration ("36h", "2d", "1.5d", "1w") or both ("3+2d"). It is the one
// parser of the setting; report.Threshold is what it yields.
type threshold report.Threshold

// Set reads s; "" and "0" mean no threshold.
func (t *threshold) Set(s string) error {
	var v threshold
	if strings.TrimSpace(s) == "" {
		*t = v
		return nil
	}
	for part := range strings.SplitSeq(s, "+") {
		part = strings.TrimSpace(part)
		if part != "" && strings.Trim(part, "0123456789") == "" {
			n, err := strconv.Atoi(part)
			if err != nil {
				return fmt.Errorf("%q: %w", s, err)
			}
			v.Failures = n
			continue
		}
		d, err := throttle.ParseDuration(part)
		if err != nil {
			return fmt.Errorf("want a count of failed passes (3), a duration (36h, 2d) or both (3+2d): %w", err)
		}
		v.Age = d
	}
	*t = v
	return nil
}

// UnmarshalText reads the file's value as Set reads the flag's.
func (t *threshold) UnmarshalText(b []byte) error { return t.Set(string(b)) }

func (t threshold) String() string { return report.Threshold(t).String() }

// Type names the value in --help.
func (t *threshold) Type() string { return "count|duration" }

// loadSettings reads the config file (--config, or ./linkpatrol.toml)
// into o under the flags the user gave: a flag beats the file, the file
// beats the default. Every value is checked the same way from either
// place; a value from the file is named file:line:col. It returns nil when
// there is no file. The file's warnings (a key under its former name) go
// to w, as JSON with --log-format json.
func loadSettings(flags *pflag.FlagSet, o *checkOptions, w io.Writer, logFormat string) (*rules.File, error) {
	for i := range settingsTable {
		s := &settingsTable[i]
		if f := flags.Lookup(s.flag); f != nil && f.Changed {
			if err := checkValue(s, s.flagName(), s.field(o)); err != nil {
				return nil, err
			}
		}
	}
	var fromFile checkOptions
	file, err := loadConfig(o.config, configSettings(&fromFile), w, logFormat)
	if err != nil {
		return nil, err
	}
	for i := range settingsTable {
		s := &settingsTable[i]
		if file == nil || s.key == "" || !file.IsSet(s.key) && !slices.ContainsFunc(s.old, file.IsSet) {
			continue
		}
		if f := flags.Lookup(s.flag); f != nil && f.Changed {
			continue
		}
		reflect.ValueOf(s.field(o)).Elem().Set(reflect.ValueOf(s.field(&fromFile)).Elem())
	}
	// Once both are merged: either may give the format, either the files.
	if flags.Changed("format") || file.IsSet("format") {
		o.outputs = withFormat(o.outputs, o.format)
	}
	return file, nil
}

// crossCheck checks settings against each other once they are merged,
// naming each as the user gave it.
func crossCheck(flags *pflag.FlagSet, o *checkOptions, file *rules.File) error {
	name := func(flag, key string) (string, bool) {
		if flags.Changed(flag) {
			return "--" + flag, true
		}
		return key, file.IsSet(key)
	}
	// Only a per-host cap the user gave can be wrong: the default one is
	// simply bounded by a lower --concurrency.
	perHost, givenPH := name("per-host", "per_host")
	conc, _ := name("concurrency", "concurrency")
	if givenPH && o.perHost > o.concurrency {
		msg := fmt.Sprintf("%s %d is more than %s %d, which bounds it", perHost, o.perHost, conc, o.concurrency)
		if !flags.Changed("per-host") {
			return file.Errorf("per_host", "%s", msg)
		}
		return errors.New(msg)
	}
	o.headerFlags = nil
	for _, raw := range o.headers {
		h, err := rules.ParseHeaderFlag(raw)
		if err != nil {
			return fmt.Errorf("--header %v", err)
		}
		o.headerFlags = append(o.headerFlags, h)
	}
	return nil
}

const exampleHeader = `# linkpatrol.toml: settings and rules for linkpatrol.
#
# Every key is optional; command-line flags override what is set here.
# linkpatrol reads ./linkpatrol.toml when it exists, or the file given with
# --config. To check a file without crawling: linkpatrol config check FILE
#
# Every setting is also a flag of the same name (max_size is --max-size,
# recheck.ok is --recheck-ok), read and checked alike. Durations are written
# "90s", "30m", "12h", "7d" or "2w"; sizes "512KiB", "10MiB", "2GB" or a
# number of bytes.
#
# Settings show their defaults. Lines like "#key = value" are examples for
# example.com, off until you adapt them and remove the "#".
`

// exampleConfig is what `config example` prints: every key of the table
// at its default, with its help, under the headings of --help, then the
// rules part. It loads as it is and changes nothing.
func exampleConfig() string {
	var b strings.Builder
	b.WriteString(exampleHeader)
	var o checkOptions
	_, all := newFlags("config", &o)
	for _, g := range groupOrder {
		b.WriteString("\n" + heading(g) + "\n")
		for _, s := range settingsTable {
			if s.group != g || s.key == "" {
				continue
			}
			b.WriteString("\n")
			_, usage := pflag.UnquoteUsage(all.Lookup(s.bindName()))
			for _, line := range wrapWords(usage, 78-2) {
				b.WriteString("# " + line + "\n")
			}
			if s.example != "" {
				fmt.Fprintf(&b, "#%s = %s\n", s.key, s.example)
				continue
			}
			fmt.Fprintf(&b, "%s = %s\n", s.key, tomlValue(all.Lookup(s.bindName()).Value))
		}
	}
	b.WriteString("\n")
	b.WriteString(rules.ExampleRules())
	return b.String()
}

// heading is a heading of the example: "# ---- Output -----...".
func heading(title string) string {
	h := "# ---- " + title + " "
	return h + strings.Repeat("-", max(78-len(h), 4))
}

// tomlValue writes a flag's value as the file writes it.
func tomlValue(v pflag.Value) string {
	switch v.Type() {
	case "bool", "int", "int64", "uint64", "count":
		return v.String()
	case "stringArray", "intSlice":
		return strings.ReplaceAll(v.String(), ",", ", ") // "[]" or "[a, b]": only empty lists are defaults
	}
	return strconv.Quote(v.String())
}

// wrapWords breaks s into lines of at most width, between words.
func wrapWords(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}
