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

	"github.com/linkpatrol/linkpatrol/rules"
)

// loadConfig reads --config, or linkpatrol.toml in the working directory
// when it exists and no --config was given. It returns nil when there is
// no file to read. The file's warnings (a key under its former name) are
// written to w, as JSON with --log-format json.
func loadConfig(path string, settings rules.Settings, w io.Writer, logFormat string) (*rules.File, error) {
	if path == "" {
		if _, err := os.Stat(rules.DefaultConfigFile); errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		path = rules.DefaultConfigFile
	}
	f, err := rules.LoadConfig(path, settings)
	if err != nil {
		return nil, err
	}
	for _, msg := range f.Warnings {
		notice(w, logFormat, "warning", "detail", msg)
	}
	return f, nil
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
	if o.maxDepth > 0 {
		// Only when set, so the hash of a pass begun without it is unchanged.
		fmt.Fprintf(h, "\x00max-depth %d", o.maxDepth)
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
		fmt.Fprint(stdout, exampleConfig())
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
		var o checkOptions
		flags, _ := newFlags("check", &o)
		f, err := rules.ParseConfig(args[1], data, lookup, configSettings(&o))
		if err != nil {
			return err
		}
		if err := crossCheck(flags, &o, f); err != nil {
			return err
		}
		for _, w := range f.Warnings {
			fmt.Fprintln(stderr, "warning:", w)
		}
		for _, name := range unset {
			fmt.Fprintf(stderr, "warning: %s: environment variable %s is not set or empty; check will refuse to run until it is\n", args[1], name)
		}
		e, err := rules.New(rulesConfig(f, &o, o.start, nil))
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
