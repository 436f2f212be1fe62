package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/linkpatrol/linkpatrol/report"
	"github.com/linkpatrol/linkpatrol/rules"
)

// loadConfig reads --config, or linkpatrol.toml in the working directory
// when it exists and no --config was given. It returns nil when there is
// no file to read. The file's warnings (a key under its former name) are
// written to w, as JSON with --log-format json.
func loadConfig(path string, w io.Writer, logFormat string) (*rules.File, error) {
	if path == "" {
		if _, err := os.Stat(rules.DefaultConfigFile); errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		path = rules.DefaultConfigFile
	}
	f, err := rules.LoadConfig(path)
	if err != nil {
		return nil, err
	}
	for _, msg := range f.Warnings {
		notice(w, logFormat, "warning", "msg", msg)
	}
	return f, nil
}

// mergeConfig fills every option the user did not give as a flag from the
// config file, so flags win over the file and the file over the defaults.
func mergeConfig(flags *pflag.FlagSet, o *checkOptions, f *rules.File) error {
	if f == nil {
		return nil
	}
	take := func(flag, key string, apply func()) {
		if !flags.Changed(flag) && f.IsSet(key) {
			apply()
		}
	}
	take("db", "db", func() { o.db = f.DB })
	take("concurrency", "concurrency", func() { o.concurrency = f.Concurrency })
	take("per-host", "per_host", func() { o.perHost = f.PerHost })
	take("timeout", "timeout", func() { o.timeout = f.Timeout })
	take("max-size", "max_size", func() { o.maxSize = f.MaxSize })
	take("max-redirects", "max_redirects", func() { o.maxRedirects = f.MaxRedirects })
	take("max-time", "max_time", func() { o.maxTime = f.MaxTime })
	take("user-agent", "user_agent", func() { o.userAgent = f.UserAgent })
	take("format", "format", func() { o.format = f.Format })
	take("output", "output", func() { o.outputs = f.Output })
	take("all", "all", func() { o.all = f.All })
	take("quiet", "quiet", func() { o.quiet = f.Quiet })
	take("recheck-ok", "recheck.ok", func() { o.recheck.OK = f.Recheck.OK })
	take("recheck-pages", "recheck.pages", func() { o.recheck.Pages = f.Recheck.Pages })
	take("recheck-broken", "recheck.broken", func() { o.recheck.Broken = f.Recheck.Broken })
	take("recheck-unverifiable", "recheck.unverifiable", func() { o.recheck.Unverifiable = f.Recheck.Unverifiable })
	take("recheck-transient", "recheck.transient", func() { o.recheck.Transient = f.Recheck.Transient })
	take("ghost", "ghost", func() { o.ghost = f.Ghost })
	take("report-after", "report_after", func() {
		o.reportAfter = report.Threshold{Failures: f.ReportAfter.Passes, Age: f.ReportAfter.Duration}
	})
	take("fail-on", "fail_on", func() { o.failOn = f.FailOn })
	take("keep-passes", "keep_passes", func() { o.keepPasses = f.KeepPasses })
	take("commit-batch", "commit_batch", func() { o.commitBatch = f.CommitBatch })
	take("commit-every", "commit_every", func() { o.commitEvery = f.CommitEvery })
	take("sitemap", "sitemaps", func() { o.sitemaps = f.Sitemaps })
	take("robots-sitemaps", "robots_sitemaps", func() { o.robotsMaps = f.RobotsSitemaps })
	take("sitemap-limit", "sitemap_limit", func() { o.sitemapMax = f.SitemapLimit })
	take("check-fragments", "check_fragments", func() { o.fragments = f.CheckFragments })
	take("root", "root", func() { o.root = f.Root })
	take("base-url", "base_url", func() { o.baseURL = f.BaseURL })
	take(rules.TrapHops.Flag[2:], rules.TrapHops.Key, func() { o.traps.MaxHops = f.Config.Traps.MaxHops })
	take(rules.TrapPathSegments.Flag[2:], rules.TrapPathSegments.Key, func() { o.traps.MaxPathSegments = f.Config.Traps.MaxPathSegments })
	take(rules.TrapPathRepeats.Flag[2:], rules.TrapPathRepeats.Key, func() { o.traps.MaxPathRepeats = f.Config.Traps.MaxPathRepeats })
	take(rules.TrapQueryVariants.Flag[2:], rules.TrapQueryVariants.Key, func() { o.traps.MaxQueryVariants = f.Config.Traps.MaxQueryVariants })
	take(rules.TrapTemplateRun.Flag[2:], rules.TrapTemplateRun.Key, func() { o.traps.MaxTemplateRun = f.Config.Traps.MaxTemplateRun })
	take("keep-session-ids", "keep_session_ids", func() { o.keepSIDs = f.Config.KeepSessionIDs })
	take("include", "include", func() { o.include = f.Config.Include })
	take("exclude", "exclude", func() { o.exclude = f.Config.Exclude })
	take("accept", "accept", func() { o.accept = f.Config.Accept })
	take("offline", "offline", func() { o.offline = f.Config.Offline })
	take("insecure", "insecure", func() { o.insecure = f.Insecure })
	if f.IsSet("format") && !flags.Changed("format") && !slices.Contains(report.Formats(), f.Format) {
		return f.Errorf("format", "unknown format %q (choose from %s)", f.Format, strings.Join(report.Formats(), ", "))
	}
	return nil
}

// checkFlagValues gives the values given on the command line the checks
// the file's values get (rules.CheckSetting), so --concurrency=0 is
// refused as concurrency = 0 is rather than run.
func checkFlagValues(flags *pflag.FlagSet, o *checkOptions) error {
	for _, v := range []struct {
		flag, key string
		value     any
	}{
		{"concurrency", "concurrency", o.concurrency}, {"per-host", "per_host", o.perHost},
		{"timeout", "timeout", o.timeout}, {"max-size", "max_size", o.maxSize},
		{"keep-passes", "keep_passes", o.keepPasses}, {"commit-batch", "commit_batch", o.commitBatch},
		{"commit-every", "commit_every", o.commitEvery}, {"max-redirects", "max_redirects", o.maxRedirects},
		{"sitemap-limit", "sitemap_limit", o.sitemapMax},
	} {
		if !flags.Changed(v.flag) {
			continue // the file's value was checked with the file
		}
		if err := rules.CheckSetting("--"+v.flag, v.key, v.value); err != nil {
			return err
		}
	}
	for _, raw := range o.headers {
		h, err := rules.ParseHeaderFlag(raw)
		if err != nil {
			return fmt.Errorf("--header %v", err)
		}
		o.headerFlags = append(o.headerFlags, h)
	}
	if flags.Changed("per-host") && flags.Changed("concurrency") && o.perHost > o.concurrency {
		return fmt.Errorf("--per-host %d is more than --concurrency %d, which bounds it", o.perHost, o.concurrency)
	}
	return nil
}

// rulesConfig is the rules part of the run: the file's rules with the
// command line's quick rules, spider-trap limits and politeness flags on
// top (o has the file's settings merged already).
func rulesConfig(f *rules.File, o *checkOptions, starts []string, hosts []rules.HostRule) rules.Config {
	var cfg rules.Config
	if f != nil {
		cfg = f.Config
	}
	cfg.Start = starts
	cfg.Include = o.include
	cfg.Exclude = o.exclude
	cfg.Accept = o.accept
	cfg.Offline = o.offline
	if o.headerFlags != nil {
		cfg.Headers = o.headerFlags // flags replace the file's, as for every list
	}
	cfg.Traps = o.traps
	cfg.KeepSessionIDs = o.keepSIDs
	cfg.Hosts = append(hosts, cfg.Hosts...)
	return cfg
}

// registerTrapFlags declares the spider-trap flags, one per rules.TrapRule,
// with DefaultTraps as their defaults.
func registerTrapFlags(fs *pflag.FlagSet, o *checkOptions) {
	o.traps = rules.DefaultTraps()
	for _, f := range []struct {
		rule  rules.TrapRule
		v     *int
		usage string
	}{
		{rules.TrapHops, &o.traps.MaxHops, "hold back pages more than this many links from the start URLs as a suspected spider trap"},
		{rules.TrapPathSegments, &o.traps.MaxPathSegments, "hold back pages whose path has more segments than this"},
		{rules.TrapPathRepeats, &o.traps.MaxPathRepeats, "hold back pages whose path repeats a segment (or run of them) more often in a row: /a/a/a/"},
		{rules.TrapQueryVariants, &o.traps.MaxQueryVariants, "hold back pages of a path that has this many distinct query strings already (faceted listings)"},
		{rules.TrapTemplateRun, &o.traps.MaxTemplateRun, "hold back pages after this many of one template (/cal/#/#) in a row, each found on the one before (endless calendars)"},
	} {
		fs.IntVar(f.v, f.rule.Flag[2:], *f.v, f.usage+"; 0 = no limit")
	}
	fs.BoolVar(&o.keepSIDs, "keep-session-ids", false, "keep query and ;path parameters that look like session ids (sid=<token>, jsessionid, ...) instead of dropping them before dedupe")
}

// settingsHash fingerprints what changes a pass's results, so a resumed pass
// is not silently finished under different rules than it began with.
func settingsHash(f *rules.File, o *checkOptions) string {
	h := sha256.New()
	if f != nil {
		if b, err := os.ReadFile(f.Path); err == nil {
			h.Write(b)
		}
	}
	fmt.Fprintf(h, "\x00%q\x00%q\x00%d\x00%t\x00%t\x00%+v\x00%t", o.include, o.exclude, o.maxSize, o.polite.ignoreRobots, o.fragments, o.traps, o.keepSIDs)
	if o.insecure {
		fmt.Fprint(h, "\x00insecure")
	}
	if o.offline {
		fmt.Fprint(h, "\x00offline")
	}
	if len(o.accept) > 0 {
		fmt.Fprintf(h, "\x00accept %v", o.accept)
	}
	if o.baseURL != "" {
		// Only when set, so the hash of a pass begun without it is unchanged.
		fmt.Fprintf(h, "\x00base-url %q", o.baseURL)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

func runConfig(args []string, stdout, stderr io.Writer) error {
	const usage = "Usage:\n  linkpatrol config check FILE   validate a config file without crawling\n  linkpatrol config example      print a commented example with every key\n"
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("config needs a subcommand")
	}
	switch args[0] {
	case "example":
		fmt.Fprint(stdout, rules.ExampleConfig())
		return nil
	case "check":
		if len(args) == 2 && (args[1] == "-h" || args[1] == "--help") {
			fmt.Fprint(stdout, usage)
			return nil
		}
		if len(args) != 2 {
			return errors.New("config check takes one file")
		}
		data, err := os.ReadFile(args[1])
		if err != nil {
			return err
		}
		// A pull-request job has no secrets: an unset ${NAME} is a
		// warning here, with a stand-in value so the rest of the file is
		// still checked; check itself refuses to run without it.
		var unset []string
		lookup := func(name string) (string, bool) {
			if v, ok := os.LookupEnv(name); ok && v != "" {
				return v, true
			}
			if !slices.Contains(unset, name) {
				unset = append(unset, name)
			}
			return "unset-" + name, true
		}
		f, err := rules.ParseConfig(args[1], data, lookup)
		if err != nil {
			return err
		}
		for _, w := range f.Warnings {
			fmt.Fprintln(stderr, "warning:", w)
		}
		for _, name := range unset {
			fmt.Fprintf(stderr, "warning: %s: environment variable %s is not set or empty; check will refuse to run until it is\n", args[1], name)
		}
		var o checkOptions
		fs := checkFlags(&o)
		if err := mergeConfig(fs, &o, f); err != nil {
			return err
		}
		e, err := rules.New(rulesConfig(f, &o, f.Start, nil))
		if err != nil {
			return err
		}
		for _, w := range e.Warnings() {
			fmt.Fprintln(stderr, "warning:", w)
		}
		fmt.Fprintf(stdout, "%s: ok (%d rules, %d rewrites, %d host settings)\n", args[1], len(f.Config.Rules), len(f.Config.Rewrites), len(f.Config.Hosts))
		return nil
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	if near := rules.DidYouMean(args[0], []string{"check", "example"}); near != "" {
		return fmt.Errorf("unknown config subcommand %q (did you mean %s?)", args[0], near)
	}
	return fmt.Errorf("unknown config subcommand %q", args[0])
}

// rulesSetRecheck says whether a rule of the file sets its own recheck
// interval, which makes stored results reusable even when the run's own
// intervals are all zero.
func rulesSetRecheck(f *rules.File) bool {
	for _, r := range f.Config.Rules {
		if len(r.Recheck) > 0 {
			return true
		}
	}
	return false
}
