package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/linkpatrol/linkpatrol/report"
	"github.com/linkpatrol/linkpatrol/store"
)

func runReport(args []string, stdout, stderr io.Writer) (int, error) {
	fs := pflag.NewFlagSet("report", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	db := fs.String("db", defaultDB, "database `file` written by linkpatrol check")
	format := fs.StringP("format", "f", "text", "report format: "+strings.Join(report.Formats(), ", "))
	all := fs.Bool("all", false, "list every URL seen, not only problems")
	passID := fs.Uint64("pass", 0, "render this pass (default: the newest)")
	var outputs []string
	var reportAfter report.Threshold
	fs.StringArrayVarP(&outputs, "output", "o", nil, "also write the report to `FILE`, format from its extension, or FORMAT:FILE (repeatable)")
	fs.Var(&reportAfter, "report-after", "leave out problems younger than this (36h, 2d) or seen in fewer passes (3)")
	fragments := fs.Bool("check-fragments", false, "report links to page#frag where the page has no such anchor (the check must have stored anchors: check --check-fragments)")
	onlyNew := fs.Bool("only-new", false, "only problems that are new since the previous complete pass (the exit code follows)")
	fs.Usage = func() {
		fmt.Fprintf(helpWriter(args, stdout, stderr), "Usage: linkpatrol report [flags]\n\nFlags:\n%s", fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK, nil
		}
		return exitUsage, usageError{err}
	}
	if fs.NArg() > 0 {
		return exitUsage, usagef("report takes no arguments, got %q", fs.Args())
	}
	if !slices.Contains(report.Formats(), *format) {
		return exitUsage, usagef("unknown format %q (choose from %s)", *format, strings.Join(report.Formats(), ", "))
	}
	if _, err := parseOutputs(outputs); err != nil {
		return exitUsage, usageError{err}
	}
	// A check holding the file must not make report hang: fail fast.
	d, err := store.Open(*db, store.Options{ReadOnly: true, Timeout: 500 * time.Millisecond})
	if err != nil {
		return exitUsage, usageError{err}
	}
	defer d.Close()
	id := *passID
	if id == 0 {
		last, ok, err := d.LastPass()
		if err != nil {
			return exitUsage, usageError{err}
		}
		if !ok {
			return exitUsage, usagef("%s holds no pass yet; run linkpatrol check first", *db)
		}
		id = last.ID
	}
	rep, err := report.Build(d, id, report.Options{All: *all, Now: time.Now(), ReportAfter: reportAfter, OnlyNew: *onlyNew, CheckFragments: *fragments})
	if err != nil {
		return exitUsage, usageError{err}
	}
	f := *format
	if !fs.Changed("format") {
		f = ""
	}
	if err := writeOutputs(stdout, rep, f, outputs); err != nil {
		return exitUsage, fmt.Errorf("write report: %w", err)
	}
	return exitCode(rep), nil // as check said
}
