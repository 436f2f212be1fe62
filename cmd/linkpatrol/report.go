package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/report"
	"github.com/linkpatrol/linkpatrol/store"
)

func runReport(args []string, stdout, stderr io.Writer) error {
	var o checkOptions
	fs, _ := newFlags("report", &o)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(helpWriter(args, stdout, stderr), "Usage: linkpatrol report [flags]\n\nThe config file's settings of these flags apply too (db, format, ...).\n\nFlags:\n%s", flagUsages(fs))
	}
	if help, err := parseNoArgs(fs, args); help || err != nil {
		return err
	}
	// The file check ran with applies here too: its db above all, or
	// report would read another database than check wrote.
	file, err := loadSettings(fs, &o, stderr, "text")
	if err != nil {
		return err
	}
	failOn, err := report.ParseFailOn(o.failOn)
	if err != nil {
		return err
	}
	if o.cluster.url != "" {
		// serve-frontier holds the merged database: it renders the report.
		js, closeNC, err := o.cluster.connect("report")
		if err != nil {
			return err
		}
		defer closeNC()
		req := reportRequest{Pass: o.passID, All: o.all, OnlyNew: o.onlyNew, CheckFragments: o.fragments, ReportAfter: o.reportAfter, FailOn: o.failOn}
		return writeClusterReport(context.Background(), js, req, stdout, stdoutFormat(o.format, o.quiet, o.outputs), o.outputs)
	}
	src, last, closeDB, err := openReportSource(o.db, fs.Changed("db") || file.IsSet("db"), o.outputs)
	if err != nil {
		return err
	}
	defer closeDB()
	id := last.ID
	if o.passID != 0 && o.passID != id {
		// Each URL keeps only its latest result, so an older pass would
		// render as the few URLs no later pass met: an empty, clean pass
		// that never was. Refuse rather than say that.
		return fmt.Errorf("cannot report pass %d: %s keeps each URL's latest result only, and pass %d (the newest) has replaced what pass %d found; run report without --pass, or keep the -o files of each run",
			o.passID, o.db, id, o.passID)
	}
	rep, err := report.Build(src, id, report.Options{All: o.all, Now: time.Now(), ReportAfter: o.reportAfter, OnlyNew: o.onlyNew, CheckFragments: o.fragments, FailOn: failOn})
	if err != nil {
		return err
	}
	if err := writeOutputs(stdout, rep, stdoutFormat(o.format, o.quiet, o.outputs), o.outputs); err != nil {
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
		if errors.Is(err, store.ErrLocked) && len(paths) > 1 {
			// A worker never finishes: "wait for it" cannot be followed
			// (qa4 F9).
			err = fmt.Errorf("%w; a worker holds its file for as long as it runs: stop the worker to read the files, or read the pass from the coordinator with report --nats URL", err)
		}
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
	finished, err := finishChains(dbs, merged)
	if err != nil {
		return fail(err)
	}
	return finished(src), merged, closeAll, nil
}

// finishChains finishes, for a report of workers' files read as one, the
// records of pass p whose redirect chain went on at a URL another worker
// owns, from that URL's record in its worker's file, as the coordinator
// does in its merged database when the pass ends (crawler.FinishChains).
// The workers' files do not hold the pass's --max-redirects: the default
// limit applies to chains that cross them.
func finishChains(dbs []*store.DB, p store.Pass) (func(report.Source) report.Source, error) {
	awaiting := map[string]store.URLRecord{}
	for _, db := range dbs {
		err := db.Records(p.ID, func(r *store.URLRecord) error {
			if r.Awaits != "" {
				awaiting[r.URL] = *r
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if len(awaiting) == 0 {
		return func(src report.Source) report.Source { return src }, nil
	}
	finished, err := crawler.FinishChains(awaiting, func(u string) (store.URLRecord, bool, bool, error) {
		for _, db := range dbs {
			e, ok, err := db.Get(u)
			if err != nil {
				return e, false, false, err
			}
			if ok && e.Pass == p.ID && e.Awaits == "" && !(e.HeldOwn() && p.State != store.PassComplete) {
				return e, true, false, nil
			}
		}
		return store.URLRecord{}, false, p.State != store.PassComplete, nil
	}, 0)
	if err != nil {
		return nil, err
	}
	return func(src report.Source) report.Source { return finishedSource{src, finished} }, nil
}

// finishedSource reads a Source with some records replaced by their
// finished ones.
type finishedSource struct {
	report.Source
	finished map[string]store.URLRecord
}

// Get reads u's record as Records gives it: finished if it awaited one.
func (f finishedSource) Get(u string) (store.URLRecord, bool, error) {
	rec, ok, err := f.Source.Get(u)
	if done, fin := f.finished[u]; fin && ok && rec.Awaits != "" {
		rec = done
	}
	return rec, ok, err
}

func (f finishedSource) Records(passID uint64, fn func(*store.URLRecord) error) error {
	return f.Source.Records(passID, func(r *store.URLRecord) error {
		if done, ok := f.finished[r.URL]; ok && r.Awaits != "" {
			r = &done
		}
		return fn(r)
	})
}
