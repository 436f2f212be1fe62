package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/report"
	"github.com/linkpatrol/linkpatrol/store"
)

func runReport(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("report", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	db := fs.String("db", defaultDB, "database `file` written by linkpatrol check; a pattern ('w*.db') reads the files of a distributed pass's workers as one")
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
	var cf clusterFlags
	cf.register(fs)
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
	file, err := loadConfig(*config, stderr, "text")
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
	if cf.url != "" {
		// serve-frontier holds the merged database: it renders the report.
		js, closeNC, err := cf.connect("report")
		if err != nil {
			return err
		}
		defer closeNC()
		req := reportRequest{Pass: *passID, All: *all, OnlyNew: *onlyNew, CheckFragments: *fragments, ReportAfter: reportAfter, FailOn: *failOnFlag}
		return writeClusterReport(context.Background(), js, req, stdout, stdoutFormat(*format, *quiet, outputs), outputs)
	}
	src, last, closeDB, err := openReportSource(*db, fs.Changed("db") || file.IsSet("db"), outputs)
	if err != nil {
		return err
	}
	defer closeDB()
	id := last.ID
	if *passID != 0 && *passID != id {
		// Each URL keeps only its latest result, so an older pass would
		// render as the few URLs no later pass met: an empty, clean pass
		// that never was. Refuse rather than say that.
		return fmt.Errorf("cannot report pass %d: %s keeps each URL's latest result only, and pass %d (the newest) has replaced what pass %d found; run report without --pass, or keep the -o files of each run",
			*passID, *db, id, *passID)
	}
	rep, err := report.Build(src, id, report.Options{All: *all, Now: time.Now(), ReportAfter: reportAfter, OnlyNew: *onlyNew, CheckFragments: *fragments, FailOn: failOn})
	if err != nil {
		return err
	}
	if err := writeOutputs(stdout, rep, stdoutFormat(*format, *quiet, outputs), outputs); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return verdictOf(rep) // as check said
}

// openReportSource opens the database report reads, and its newest pass. A
// pattern (--db 'w*.db') opens every file it matches, the files of the
// workers of one distributed pass, and reads them as one: they must all
// hold that pass, begun with the same start URLs and settings, or the
// report would silently miss a worker's URLs or mix two passes.
func openReportSource(path string, given bool, outputs []string) (report.Source, store.Pass, func(), error) {
	paths := []string{path}
	if crawler.HasGlob(path) {
		var err error
		if paths, err = filepath.Glob(path); err != nil {
			return nil, store.Pass{}, nil, fmt.Errorf("--db %q: %v", path, err)
		}
		if len(paths) == 0 {
			return nil, store.Pass{}, nil, fmt.Errorf("--db %q matches no file", path)
		}
	} else {
		paths[0] = existingDatabase(given, path)
	}
	var dbs []*store.DB
	closeAll := func() {
		for _, d := range dbs {
			d.Close()
		}
	}
	fail := func(err error) (report.Source, store.Pass, func(), error) {
		closeAll()
		return nil, store.Pass{}, nil, err
	}
	var last store.Pass
	var lastIn string
	for _, p := range paths {
		if err := checkOutputs(outputs, p); err != nil {
			return fail(err)
		}
		// A check holding the file must not make report hang: fail fast.
		d, err := store.Open(p, store.Options{ReadOnly: true, Timeout: 500 * time.Millisecond})
		if err != nil {
			return fail(err)
		}
		dbs = append(dbs, d)
		pass, ok, err := d.LastPass()
		if err != nil {
			return fail(err)
		}
		if !ok {
			return fail(fmt.Errorf("%s holds no pass yet; run linkpatrol check first", p))
		}
		if pass.ID > last.ID {
			last, lastIn = pass, p
		}
	}
	if len(dbs) == 1 {
		return dbs[0], last, closeAll, nil
	}
	srcs := make([]report.Source, len(dbs))
	for i, d := range dbs {
		p, err := d.Pass(last.ID)
		if errors.Is(err, store.ErrNoPass) {
			return fail(fmt.Errorf("%s holds no pass %d, the newest in %s: give --db only the files of the workers of one pass", paths[i], last.ID, lastIn))
		}
		if err != nil {
			return fail(err)
		}
		if !slices.Equal(p.StartURLs, last.StartURLs) || p.SettingsHash != last.SettingsHash {
			return fail(fmt.Errorf("pass %d in %s and in %s began with other start URLs or settings: they are not one distributed pass", last.ID, paths[i], lastIn))
		}
		srcs[i] = d
	}
	src := report.Merge(srcs...)
	merged, err := src.Pass(last.ID)
	if err != nil {
		return fail(err)
	}
	return src, merged, closeAll, nil
}
