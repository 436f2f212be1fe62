package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/report"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
)

// defaultDB is in the working directory, where a cron job (which runs in
// $HOME) or a CI step will find it again without being told.
const defaultDB = "linkpatrol.db"

type checkOptions struct {
	db           string
	concurrency  int
	perHost      int
	timeout      time.Duration
	maxSize      int64
	maxRedirects int
	maxTime      time.Duration
	userAgent    string
	format       string
	all          bool
	newPass      bool
	include      []string
	exclude      []string
	quiet        bool
	recheck      rules.Recheck
	ghost        time.Duration
	commitBatch  int
	commitEvery  time.Duration
	polite       politeFlags
	noReuse      bool
	reportAfter  report.Threshold
	onlyNew      bool
	failOn       string
	keepPasses   int
	config       string
	outputs      []string
	verbose      int
	logFormat    string
	statusAddr   string
	statusPub    bool
	sitemaps     []string
	robotsMaps   bool
	sitemapMax   int
	fragments    bool
	traps        rules.Traps
	keepSIDs     bool
}

func checkFlags(o *checkOptions) *pflag.FlagSet {
	fs := pflag.NewFlagSet("check", pflag.ContinueOnError)
	fs.StringVar(&o.config, "config", "", "config `file` with rules and settings (default ./linkpatrol.toml when it exists)")
	fs.StringVar(&o.db, "db", defaultDB, "database `file` that holds every pass")
	fs.StringArrayVarP(&o.outputs, "output", "o", nil, "also write the report to `FILE`, format from its extension, or FORMAT:FILE (repeatable; never the database); standard output still gets it unless -q")
	fs.CountVarP(&o.verbose, "verbose", "v", "log what the pass does (-vv: more); a summary per host at the end")
	fs.StringVar(&o.logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&o.statusAddr, "status-addr", "", "serve a live status page at `HOST:PORT` while the pass runs (loopback only)")
	fs.BoolVar(&o.statusPub, "status-public", false, "allow --status-addr on a non-loopback address")
	fs.IntVarP(&o.concurrency, "concurrency", "c", 16, "requests in flight in total")
	fs.IntVar(&o.perHost, "per-host", 8, "requests in flight to one host")
	fs.DurationVar(&o.timeout, "timeout", 20*time.Second, "soft timeout of one request; a whole task may take twice this")
	fs.Int64Var(&o.maxSize, "max-size", 10<<20, "largest HTML page read, in bytes after decompression")
	fs.IntVar(&o.maxRedirects, "max-redirects", crawler.DefaultMaxRedirects, "redirects followed, as browsers do; one more makes the link \"too many redirects\"")
	fs.DurationVar(&o.maxTime, "max-time", 0, "stop after this long and exit 3; run again to resume (0 = no limit)")
	fs.StringVar(&o.userAgent, "user-agent", "", "User-Agent header (default names linkpatrol and its version)")
	fs.StringVarP(&o.format, "format", "f", "text", "report format: "+strings.Join(report.Formats(), ", "))
	fs.BoolVar(&o.all, "all", false, "list every URL seen, not only problems")
	fs.BoolVar(&o.newPass, "new-pass", false, "start a new pass: abandon an unfinished one, or start here though the database holds another site's passes")
	fs.StringArrayVar(&o.include, "include", nil, "only follow URLs matching this `regex` (repeatable)")
	fs.StringArrayVar(&o.exclude, "exclude", nil, "skip URLs matching this `regex` (repeatable)")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "no progress line, and with -o no report on standard output")
	// 20h rather than a full day: a nightly cron pass then refetches what
	// the previous night fetched, while a second run the same day reuses it.
	// Only for targets that are only checked (third-party links above all,
	// where politeness makes reuse worth it): the site's own pages are
	// revalidated and problems checked again, so a fix shows at once.
	fs.DurationVar(&o.recheck.OK, "recheck-ok", 20*time.Hour, "reuse a good result of a link that is only checked (another site, an image) younger than this (0 = always fetch)")
	fs.DurationVar(&o.recheck.Pages, "recheck-pages", 0, "reuse a good page of the site younger than this, links included (0 = always revalidate, a 304 when unchanged)")
	fs.DurationVar(&o.recheck.Broken, "recheck-broken", 0, "reuse a broken result younger than this (0 = always check again)")
	fs.DurationVar(&o.recheck.Unverifiable, "recheck-unverifiable", 0, "reuse an unverifiable result younger than this (0 = always check again)")
	fs.BoolVar(&o.noReuse, "no-reuse", false, "fetch everything again, ignoring the recheck intervals (conditional requests are still used)")
	fs.Var(&o.reportAfter, "report-after", "keep a problem out of the report until it has lasted this long (36h, 2d) or this many passes (3); it is still recorded and counted")
	fs.StringVar(&o.failOn, "fail-on", "broken", "which problems make the exit code 1: "+strings.Join(report.FailOnValues(), ", ")+" (internal: only links to the site itself)")
	fs.BoolVar(&o.onlyNew, "only-new", false, "report only problems that are new since the last complete pass (the exit code follows)")
	fs.IntVar(&o.keepPasses, "keep-passes", 10, "complete passes kept in the database; older data is pruned")
	fs.DurationVar(&o.ghost, "ghost", 7*24*time.Hour, "follow the old links of a page that fails now but was good within this")
	o.polite.register(fs)
	fs.StringArrayVar(&o.sitemaps, "sitemap", nil, "also start from the URLs of this sitemap `URL` (indexes and .gz too; repeatable)")
	fs.BoolVar(&o.robotsMaps, "robots-sitemaps", false, "also start from the sitemaps named in the start hosts' robots.txt")
	fs.IntVar(&o.sitemapMax, "sitemap-limit", crawler.DefaultSitemapLimit, "most URLs taken from sitemaps in a pass")
	fs.BoolVar(&o.fragments, "check-fragments", false, "report links to page#frag where the page has no such id or <a name>")
	registerTrapFlags(fs, o)
	fs.IntVar(&o.commitBatch, "commit-batch", 32, "results committed to the database in one transaction, at most; a kill loses at most this many")
	fs.DurationVar(&o.commitEvery, "commit-every", time.Second, "longest time between commits, and between fsyncs of the database (what a power loss may cost)")
	return fs
}

func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	var o checkOptions
	fs := checkFlags(&o)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(helpWriter(args, stdout, stderr), "Usage: linkpatrol check [flags] URL|DIR ...\n\nFlags:\n%s\n%s", fs.FlagUsages(), exitCodesHelp)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK, nil
		}
		return exitUsage, usageError{err}
	}
	file, err := loadConfig(o.config)
	if err != nil {
		return exitUsage, err
	}
	if err := mergeConfig(fs, &o, file); err != nil {
		return exitUsage, err
	}
	args = fs.Args()
	if len(args) == 0 && file != nil {
		args = file.Start
	}
	if len(args) == 0 {
		fs.Usage()
		return exitUsage, usagef("check needs at least one start URL or a directory")
	}
	failOn, err := report.ParseFailOn(o.failOn)
	if err != nil {
		return exitUsage, usageError{err}
	}
	if !slices.Contains(report.Formats(), o.format) {
		return exitUsage, usagef("unknown format %q (choose from %s)", o.format, strings.Join(report.Formats(), ", "))
	}
	if err := checkOutputs(o.outputs, o.db); err != nil {
		return exitUsage, usageError{err}
	}
	if o.polite.groupHosts != "host" && o.polite.groupHosts != "domain" {
		return exitUsage, usagef("--group-hosts %q: want host or domain", o.polite.groupHosts)
	}

	log, err := newLogger(stderr, o.verbose, o.logFormat)
	if err != nil {
		return exitUsage, usageError{err}
	}
	starts, root, err := startURLs(args)
	if err != nil {
		return exitUsage, usageError{err}
	}
	for _, sm := range o.sitemaps {
		if u, err := url.Parse(sm); err != nil {
			return exitUsage, usagef("--sitemap %q is not a URL", redact(sm))
		} else if err := noUserinfo("--sitemap", u); err != nil {
			return exitUsage, usageError{err}
		}
	}
	engine, err := rules.New(rulesConfig(file, &o, starts, o.polite.hostRules(fs, starts)))
	if err != nil {
		return exitUsage, usageError{err}
	}
	globalBPS, err := parseBytesFlag("global-bandwidth", o.polite.globalBandwidth)
	if err != nil {
		return exitUsage, err
	}
	// Commits do not wait for fsync (a killed process cannot undo one the
	// OS has), so they can be small and frequent; the file is fsynced at
	// most every --commit-every.
	db, err := store.Open(o.db, store.Options{Timeout: 2 * time.Second, SyncEvery: o.commitEvery})
	if err != nil {
		return exitUsage, usageError{err}
	}
	defer db.Close()

	pass, queue, done, err := openPass(db, engine, starts, root, settingsHash(file, &o), o.newPass)
	if err != nil {
		return exitUsage, err
	}
	if file != nil {
		pass.Config = file.Path
	}
	// A pass that stores anchors is reported with its fragment checks, by
	// check and by every later report.
	pass.CheckFragments = pass.CheckFragments || o.fragments
	if err := db.UpdatePass(pass); err != nil {
		return exitUsage, fmt.Errorf("save pass %d: %w", pass.ID, err)
	}

	stop, hard, cleanup := stopContexts(ctx, o.maxTime)
	defer cleanup()

	ua := o.userAgent
	if ua == "" {
		ua = "linkpatrol/" + version + " (+https://github.com/linkpatrol/linkpatrol)"
	}
	if o.noReuse {
		o.recheck = rules.Recheck{}
	}
	cidr := file != nil && hasCIDRRules(file.Config.Hosts)
	th, hostSettings := newThrottle(engine, ua, globalBPS, cidr, o.polite.groupHosts == "domain")
	c := crawler.New(crawler.Config{
		Throttle:       th,
		HostSettings:   hostSettings,
		Concurrency:    o.concurrency,
		PerHost:        o.perHost,
		Timeout:        o.timeout,
		MaxSize:        o.maxSize,
		MaxRedirects:   o.maxRedirects,
		UserAgent:      ua,
		Recheck:        o.recheck,
		Ghost:          o.ghost,
		Root:           root,
		BatchSize:      o.commitBatch,
		BatchInterval:  o.commitEvery,
		RulesRecheck:   file != nil && rulesSetRecheck(file),
		Sitemaps:       o.sitemaps,
		RobotsSitemaps: o.robotsMaps,
		SitemapLimit:   o.sitemapMax,
		CheckFragments: o.fragments,
		Logger:         log,
	}, engine, db)
	log.Info("pass", "id", pass.ID, "start", starts, "queued", len(queue), "resumed", len(done) > 0)

	if o.statusAddr != "" {
		u, stopStatus, err := serveStatus(ctx, o.statusAddr, o.statusPub, pass, c)
		if err != nil {
			return exitUsage, usageError{err}
		}
		defer stopStatus()
		fmt.Fprintln(stderr, "status page:", u)
	}
	began := time.Now()
	// The bar would redraw over log lines on the same stream.
	noBar := o.quiet || o.verbose > 0
	if tty := terminal(stderr, noBar); tty != nil && len(done) > 0 {
		fmt.Fprintf(tty, "resuming pass %d: %s URLs already done\n", pass.ID, thousands(len(done)))
	}
	progressDone := startProgress(stderr, c, noBar, stop.Done())
	outcome, runErr := c.Run(stop, hard, pass, queue, done)
	progressDone()

	pass.Elapsed += time.Since(began)
	pass.Deferred, pass.ResumeAfter = 0, time.Time{}
	if stop.Err() == nil {
		// Finished but for URLs held back by a pause: the report says to
		// come back after it. A stopped run says it was stopped instead.
		pass.Deferred, pass.ResumeAfter = outcome.Deferred, outcome.ResumeAfter
	}
	if outcome.Complete {
		pass.State = store.PassComplete
	} else {
		pass.State = store.PassStopped
	}
	pass.Finished = time.Now()
	if err := db.UpdatePass(pass); err != nil {
		return exitUsage, fmt.Errorf("save pass %d: %w", pass.ID, err)
	}
	if runErr != nil {
		if errors.Is(runErr, store.ErrCorrupt) {
			return exitUsage, fmt.Errorf("pass %d: %w", pass.ID, runErr) // the store says what to do
		}
		return exitUsage, fmt.Errorf("pass %d: %w (what was committed is kept; run again to resume)", pass.ID, runErr)
	}
	if outcome.Complete {
		if err := housekeeping(stop, db, o.keepPasses); err != nil {
			return exitUsage, err
		}
	}

	rep, err := report.Build(db, pass.ID, report.Options{All: o.all, Now: time.Now(), ReportAfter: o.reportAfter, OnlyNew: o.onlyNew, CheckFragments: o.fragments, FailOn: failOn})
	if err != nil {
		return exitUsage, err
	}
	if outcome.Complete {
		// The counts stay with the pass for the trend of later reports:
		// the URL records keep only their latest result.
		t := rep.Tally()
		pass.Tally = &t
		if err := db.UpdatePass(pass); err != nil {
			return exitUsage, fmt.Errorf("save pass %d: %w", pass.ID, err)
		}
	}
	if err := writeOutputs(stdout, rep, stdoutFormat(o.format, o.quiet, o.outputs), o.outputs); err != nil {
		return exitUsage, fmt.Errorf("write report: %w", err)
	}
	if o.verbose > 0 {
		writeSummaryStats(stderr, rep, c.Hosts())
	}
	return exitCode(rep), nil
}

// housekeeping keeps the database from growing night after night: old
// passes and the URLs only they saw are pruned, and the file is compacted
// when enough of it has become free space. A stop (a signal, --max-time)
// cuts it short and is no error: the pass is complete, and the next one
// finishes the work.
func housekeeping(stop context.Context, db *store.DB, keep int) error {
	if keep <= 0 {
		return nil
	}
	if _, err := db.Prune(stop, keep); err != nil {
		if stop.Err() != nil {
			return nil
		}
		return fmt.Errorf("prune %s: %w", db.Path(), err)
	}
	if _, _, err := db.Compact(stop); err != nil && stop.Err() == nil {
		return fmt.Errorf("compact %s: %w", db.Path(), err)
	}
	return nil
}

// startURLs turns the arguments into canonical start URLs. A directory is
// checked as a built site served under file:///.
func startURLs(args []string) (starts []string, root string, err error) {
	for _, a := range args {
		if st, statErr := os.Stat(a); statErr == nil && st.IsDir() {
			if root != "" || len(args) > 1 {
				return nil, "", fmt.Errorf("check takes one directory, or URLs, not both")
			}
			abs, err := filepath.Abs(a)
			if err != nil {
				return nil, "", fmt.Errorf("directory %s: %w", a, err)
			}
			return []string{"file:///"}, abs, nil
		}
		u, err := url.Parse(a)
		if err != nil {
			return nil, "", fmt.Errorf("%q is neither a directory nor an http(s) URL", redact(a))
		}
		if err := noUserinfo("start URL", u); err != nil {
			return nil, "", err
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, "", fmt.Errorf("%q is neither a directory nor an http(s) URL", a)
		}
		starts = append(starts, rules.Canonicalize(u).String())
	}
	return starts, "", nil
}

// noUserinfo refuses a URL given with user:password@: it would be printed
// in the log, the status page and every report, stored in the database,
// and inherited by every relative link. A rule scoped to the origin carries
// credentials instead, with the password from the environment. The error
// never shows the password.
func noUserinfo(what string, u *url.URL) error {
	if u.User == nil {
		return nil
	}
	host := u.Host
	if host == "" {
		host = "HOST"
	}
	user := u.User.Username()
	if user == "" {
		user = "USER"
	}
	clean := *u
	clean.User = nil
	return fmt.Errorf("%s %s: credentials in a URL would be printed and stored everywhere; give it without them and put them in a rule of linkpatrol.toml, the password in the environment:\n  [[rule]]\n  scheme = %q\n  host = %q\n  user = %q\n  password = \"${LINKPATROL_PASSWORD}\"",
		what, &clean, u.Scheme, host, user)
}

// redact hides the password of something that may or may not parse as a
// URL, for an error message.
func redact(s string) string {
	at := strings.LastIndexByte(s, '@')
	scheme := strings.Index(s, "://")
	if at < 0 || scheme < 0 || at < scheme {
		return s
	}
	userinfo := s[scheme+3 : at]
	if user, _, ok := strings.Cut(userinfo, ":"); ok {
		return s[:scheme+3] + user + ":xxxxx" + s[at:]
	}
	return s
}

// openPass resumes the unfinished pass when it has the same start URLs, or
// begins a new one.
func openPass(db *store.DB, engine *rules.Engine, starts []string, root, settings string, fresh bool) (store.Pass, []store.Task, map[string]struct{}, error) {
	open, ok, err := db.OpenPass()
	if err != nil {
		return store.Pass{}, nil, nil, usageError{err}
	}
	if ok && !fresh {
		if !slices.Equal(open.StartURLs, starts) || open.Root != root {
			return store.Pass{}, nil, nil, usagef("%s holds an unfinished pass %d of %s; run that again to resume it, add --new-pass to abandon it, or use another --db",
				db.Path(), open.ID, strings.Join(open.StartURLs, " "))
		}
		if open.SettingsHash != "" && open.SettingsHash != settings {
			return store.Pass{}, nil, nil, usagef("pass %d in %s began with other rules or settings (config file, --include/--exclude, --max-size, --ignore-robots, spider-trap limits); run it with the same ones to resume, or add --new-pass to start again",
				open.ID, db.Path())
		}
		queue, err := db.Frontier()
		if err != nil {
			return store.Pass{}, nil, nil, usageError{err}
		}
		done := make(map[string]struct{})
		err = db.ResolvedIn(open.ID, func(u string) error {
			done[u] = struct{}{}
			return nil
		})
		if err != nil {
			return store.Pass{}, nil, nil, usageError{err}
		}
		open.State = store.PassRunning
		if err := db.UpdatePass(open); err != nil {
			return store.Pass{}, nil, nil, usageError{err}
		}
		return open, queue, done, nil
	}
	if !ok && !fresh {
		// Another site's history would be read as this one's: its results
		// reused, its problems "fixed". Say so rather than mix them.
		last, had, err := db.LastPass()
		if err != nil {
			return store.Pass{}, nil, nil, usageError{err}
		}
		if had && (!slices.Equal(last.StartURLs, starts) || last.Root != root) {
			what := strings.Join(last.StartURLs, " ")
			if last.Root != "" {
				what = last.Root
			}
			return store.Pass{}, nil, nil, usagef("%s holds the passes of %s; use another --db for this site, or add --new-pass to start its history here",
				db.Path(), what)
		}
	}
	if ok {
		open.State = store.PassAbandoned
		open.Finished = time.Now()
		if err := db.UpdatePass(open); err != nil {
			return store.Pass{}, nil, nil, usageError{err}
		}
	}
	seeds := make([]store.Task, 0, len(starts))
	for _, s := range starts {
		u, _ := url.Parse(s)
		d := engine.Decide(u)
		action := d.Action
		if action != rules.Parse && action != rules.Check {
			return store.Pass{}, nil, nil, usagef("start URL %s is excluded by %s", s, d.Rule)
		}
		seeds = append(seeds, store.Task{URL: d.URL, Action: action.String()})
	}
	pass, err := db.BeginPass(store.Pass{StartURLs: starts, Root: root, Started: time.Now(), SettingsHash: settings}, seeds)
	if err != nil {
		return store.Pass{}, nil, nil, usageError{err}
	}
	return pass, seeds, nil, nil
}

// stopContexts returns stop, cancelled by the first SIGINT, SIGTERM or
// SIGHUP (a closed terminal or ssh session must not lose the last batch)
// or when maxTime runs out, and hard, cancelled by a second signal.
func stopContexts(ctx context.Context, maxTime time.Duration) (stop, hard context.Context, cleanup func()) {
	stop, cancelStop := context.WithCancel(ctx)
	hard, cancelHard := context.WithCancel(context.WithoutCancel(ctx))
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	var timer *time.Timer
	if maxTime > 0 {
		timer = time.AfterFunc(maxTime, cancelStop)
	}
	quit := make(chan struct{})
	go func() {
		n := 0
		for {
			select {
			case <-sigs:
				n++
				cancelStop()
				if n > 1 {
					cancelHard()
				}
			case <-quit:
				return
			}
		}
	}()
	return stop, hard, func() {
		signal.Stop(sigs)
		close(quit)
		if timer != nil {
			timer.Stop()
		}
		cancelStop()
		cancelHard()
	}
}

// thousands writes n with a comma every three digits: 1,902.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
