package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
)

func runExplain(args []string, stdout, stderr io.Writer) (int, error) {
	fs := pflag.NewFlagSet("explain", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	var o checkOptions
	var starts []string
	fs.StringVar(&o.config, "config", "", "config `file` (default ./linkpatrol.toml when it exists)")
	fs.StringVar(&o.db, "db", defaultDB, "database whose last pass supplies the start URLs when neither --start nor the config does")
	fs.StringArrayVar(&starts, "start", nil, "start `URL` (repeatable) or directory of the site; its host is parsed, others checked")
	fs.StringArrayVar(&o.include, "include", nil, "as for check")
	fs.StringArrayVar(&o.exclude, "exclude", nil, "as for check")
	o.polite.register(fs)
	registerTrapFlags(fs, &o)
	fs.Usage = func() {
		fmt.Fprintf(helpWriter(args, stdout, stderr), "Usage: linkpatrol explain [flags] URL\n\nShows each rewriting step, the canonical URL, the rule that decides it\n(with its file:line), the action, and the politeness settings of its host.\n\nFlags:\n%s", fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK, nil
		}
		return exitUsage, usageError{err}
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage, usagef("explain takes one URL")
	}
	file, err := loadConfig(o.config)
	if err != nil {
		return exitUsage, err
	}
	if err := mergeConfig(fs, &o, file); err != nil {
		return exitUsage, err
	}
	if len(starts) == 0 && file != nil {
		starts = file.Start
	}
	if len(starts) == 0 {
		starts = lastStartURLs(o.db)
	}
	canonical, root, err := startURLs(starts)
	if err != nil {
		return exitUsage, usageError{err}
	}
	engine, err := rules.New(rulesConfig(file, &o, canonical, o.polite.hostRules(fs, canonical)))
	if err != nil {
		return exitUsage, usageError{err}
	}
	target := fs.Arg(0)
	if root != "" {
		// A file of the site on disk stands for its URL under file:///.
		if rel, ok := fileUnder(root, target); ok {
			target = "file:///" + rel
		}
	}
	ex := engine.Explain(target)
	if err := ex.Write(stdout); err != nil {
		return exitUsage, fmt.Errorf("write explanation: %w", err)
	}
	if ex.Err != "" {
		return exitUsage, usagef("%q: %s", fs.Arg(0), ex.Err)
	}
	return exitOK, nil
}

// fileUnder turns a path to a file of the site at root into its path
// relative to the root, slash-separated.
func fileUnder(root, path string) (string, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", false
	}
	if _, err := os.Stat(abs); err != nil {
		return "", false
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// lastStartURLs reads the start URLs of the newest pass, if the database
// exists and is free; explain is a question, so it never waits or fails here.
func lastStartURLs(path string) []string {
	db, err := store.Open(path, store.Options{ReadOnly: true, Timeout: 200 * time.Millisecond})
	if err != nil {
		return nil
	}
	defer db.Close()
	p, ok, err := db.LastPass()
	if err != nil || !ok {
		return nil
	}
	if p.Root != "" {
		return []string{p.Root}
	}
	return p.StartURLs
}
