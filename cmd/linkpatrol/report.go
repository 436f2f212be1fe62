package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/linkpatrol/linkpatrol/report"
	"github.com/linkpatrol/linkpatrol/store"
)

func runReport(args []string, stdout, stderr io.Writer) (int, error) {
	var o checkOptions
	fs, _ := newFlags("report", &o)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(helpWriter(args, stdout, stderr), "Usage: linkpatrol report [flags]\n\nThe config file's settings of these flags apply too (db, format, ...).\n\nFlags:\n%s", fs.FlagUsagesWrapped(helpWidth))
	}
	if err := parseFlags(fs, args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK, nil
		}
		return exitUsage, usageError{err}
	}
	if fs.NArg() > 0 {
		return exitUsage, usagef("report takes no arguments, got %q", fs.Args())
	}
	// The file check ran with applies here too: its db above all, or
	// report would read another database than check wrote.
	file, err := loadSettings(fs, &o, stderr, "text")
	if err != nil {
		return exitUsage, err
	}
	failOn, err := report.ParseFailOn(o.failOn)
	if err != nil {
		return exitUsage, usageError{err}
	}
	if err := checkOutputs(o.outputs, o.db); err != nil {
		return exitUsage, usageError{err}
	}
	// A check holding the file must not make report hang: fail fast.
	o.db = existingDatabase(fs.Changed("db") || file.IsSet("db"), o.db)
	d, err := store.Open(o.db, store.Options{ReadOnly: true, Timeout: 500 * time.Millisecond})
	if err != nil {
		return exitUsage, usageError{err}
	}
	defer d.Close()
	last, ok, err := d.LastPass()
	if err != nil {
		return exitUsage, usageError{err}
	}
	if !ok {
		return exitUsage, usagef("%s holds no pass yet; run linkpatrol check first", o.db)
	}
	id := last.ID
	if o.passID != 0 && o.passID != id {
		// Each URL keeps only its latest result, so an older pass would
		// render as the few URLs no later pass met: an empty, clean pass
		// that never was. Refuse rather than say that.
		return exitUsage, usagef("cannot report pass %d: %s keeps each URL's latest result only, and pass %d (the newest) has replaced what pass %d found; run report without --pass, or keep the -o files of each run",
			o.passID, o.db, id, o.passID)
	}
	rep, err := report.Build(d, id, report.Options{All: o.all, Now: time.Now(), ReportAfter: o.reportAfter, OnlyNew: o.onlyNew, CheckFragments: o.fragments, FailOn: failOn})
	if err != nil {
		return exitUsage, usageError{err}
	}
	if err := writeOutputs(stdout, rep, stdoutFormat(o.format, o.quiet, o.outputs), o.outputs); err != nil {
		return exitUsage, fmt.Errorf("write report: %w", err)
	}
	return exitCode(rep), nil // as check said
}
