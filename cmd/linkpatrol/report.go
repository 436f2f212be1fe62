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

func runReport(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("report", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	db := fs.String("db", defaultDB, "database `file` written by linkpatrol check")
	format := fs.StringP("format", "f", "text", "report format: "+strings.Join(report.Formats(), ", "))
	all := fs.Bool("all", false, "list every URL seen, not only problems")
	passID := fs.Uint64("pass", 0, "render this pass; only the newest can be (the database keeps each URL's latest result)")
	var outputs []string
	var reportAfter report.Threshold
	fs.StringArrayVarP(&outputs, "output", "o", nil, "also write the report to `FILE`, format from its extension, or FORMAT:FILE (repeatable); standard output still gets it unless -q")
	quiet := fs.BoolP("quiet", "q", false, "with -o, no report on standard output")
	fs.Var(&reportAfter, "report-after", "leave out problems younger than this (36h, 2d) or seen in fewer passes (3)")
	fragments := fs.Bool("check-fragments", false, "report links to page#frag where the page has no such anchor (the check must have stored anchors: check --check-fragments)")
	failOnFlag := fs.String("fail-on", "broken", "which problems make the exit code 1: "+strings.Join(report.FailOnValues(), ", "))
	onlyNew := fs.Bool("only-new", false, "only problems that are new since the previous complete pass (the exit code follows)")
	config := fs.String("config", "", "config `file` whose db, format, output, report_after, fail_on and check_fragments apply (default ./linkpatrol.toml when it exists)")
	fs.Usage = func() {
		fmt.Fprintf(helpWriter(args, stdout, stderr), "Usage: linkpatrol report [flags]\n\nFlags:\n%s", fs.FlagUsagesWrapped(helpWidth))
	}
	if err := parseFlags(fs, args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("report takes no arguments, got %q", fs.Args())
	}
	// The file check ran with applies here too: its db above all, or
	// report would read another database than check wrote.
	file, err := loadConfig(*config)
	if err != nil {
		return err
	}
	take := func(flag, key string, apply func()) {
		if !fs.Changed(flag) && file.IsSet(key) {
			apply()
		}
	}
	if file != nil {
		take("db", "db", func() { *db = file.DB })
		take("format", "format", func() { *format = file.Format })
		take("output", "output", func() { outputs = file.Output })
		take("all", "all", func() { *all = file.All })
		take("quiet", "quiet", func() { *quiet = file.Quiet })
		take("report-after", "report_after", func() {
			reportAfter = report.Threshold{Failures: file.ReportAfter.Passes, Age: file.ReportAfter.Duration}
		})
		take("fail-on", "fail_on", func() { *failOnFlag = file.FailOn })
		take("check-fragments", "check_fragments", func() { *fragments = file.CheckFragments })
	}
	failOn, err := report.ParseFailOn(*failOnFlag)
	if err != nil {
		return err
	}
	if !slices.Contains(report.Formats(), *format) {
		return fmt.Errorf("unknown format %q (choose from %s)", *format, strings.Join(report.Formats(), ", "))
	}
	if err := checkOutputs(outputs, *db); err != nil {
		return err
	}
	// A check holding the file must not make report hang: fail fast.
	*db = existingDatabase(fs.Changed("db") || file.IsSet("db"), *db)
	d, err := store.Open(*db, store.Options{ReadOnly: true, Timeout: 500 * time.Millisecond})
	if err != nil {
		return err
	}
	defer d.Close()
	last, ok, err := d.LastPass()
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s holds no pass yet; run linkpatrol check first", *db)
	}
	id := last.ID
	if *passID != 0 && *passID != id {
		// Each URL keeps only its latest result, so an older pass would
		// render as the few URLs no later pass met: an empty, clean pass
		// that never was. Refuse rather than say that.
		return fmt.Errorf("cannot report pass %d: %s keeps each URL's latest result only, and pass %d (the newest) has replaced what pass %d found; run report without --pass, or keep the -o files of each run",
			*passID, *db, id, *passID)
	}
	rep, err := report.Build(d, id, report.Options{All: *all, Now: time.Now(), ReportAfter: reportAfter, OnlyNew: *onlyNew, CheckFragments: *fragments, FailOn: failOn})
	if err != nil {
		return err
	}
	if err := writeOutputs(stdout, rep, stdoutFormat(*format, *quiet, outputs), outputs); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return verdictOf(rep) // as check said
}
