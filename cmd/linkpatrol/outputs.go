package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/linkpatrol/linkpatrol/report"
)

// outputFile is one -o value: where a report goes and in which format.
type outputFile struct {
	path   string
	format string
}

// parseOutputs checks every -o value. Call it right after the flags are
// parsed, so a typo is reported before a pass, not after an hour of crawling.
//
// A value is a path whose extension names the format (report.html,
// links.junit.xml, results.sarif), or FORMAT:PATH for a name whose
// extension says nothing (github:annotations.txt).
func parseOutputs(outputs []string) ([]outputFile, error) {
	files := make([]outputFile, 0, len(outputs))
	seen := make(map[string]string, len(outputs))
	for _, o := range outputs {
		f, err := parseOutput(o)
		if err != nil {
			return nil, err
		}
		key := filepath.Clean(f.path)
		if prev, dup := seen[key]; dup {
			return nil, fmt.Errorf("-o %s: the same file as -o %s", o, prev)
		}
		seen[key] = o
		files = append(files, f)
	}
	return files, nil
}

// checkOutputs validates the -o values before anything runs: it refuses
// a report file that is the database itself (writing it would silently
// replace every pass with a report) and one that cannot be written.
func checkOutputs(outputs []string, db string) error {
	files, err := parseOutputs(outputs)
	if err != nil {
		return err
	}
	for i, f := range files {
		if sameFile(f.path, db) {
			return fmt.Errorf("-o %s: that is the database (--db %s); write the report to another file", outputs[i], db)
		}
		// The report is written when the pass is over: a file that
		// cannot be written must stop the run now, not after an hour of
		// crawling whose report would then be lost (qa5 F7).
		if err := canWrite(f.path); err != nil {
			return fmt.Errorf("-o %s: cannot write the report there: %w", outputs[i], err)
		}
	}
	return nil
}

// sameFile says whether a and b name one file: the same path, or (when
// both exist) the same file through a link.
func sameFile(a, b string) bool {
	if aa, err := filepath.Abs(a); err == nil {
		if bb, err := filepath.Abs(b); err == nil && aa == bb {
			return true
		}
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// withFormat names format (given with --format or the file's format key)
// in every bare -o FILE whose name picks no format (rep.junit) or only
// plain text (.txt, .text: a file any format can be), as FORMAT:FILE. A
// name that picks a format keeps it, so --format json -o report.html still
// writes JSON to standard output and HTML to the file.
func withFormat(outputs []string, format string) []string {
	out := slices.Clone(outputs)
	for i, o := range out {
		if o == "" || formatPrefix(o) {
			continue
		}
		if f, ok := report.FormatForPath(o); !ok || f == "text" {
			out[i] = format + ":" + o
		}
	}
	return out
}

// formatPrefix says whether o is FORMAT:PATH.
func formatPrefix(o string) bool {
	name, _, ok := strings.Cut(o, ":")
	return ok && slices.Contains(report.Formats(), name)
}

func parseOutput(o string) (outputFile, error) {
	if name, path, ok := strings.Cut(o, ":"); ok && slices.Contains(report.Formats(), name) {
		if path == "" {
			return outputFile{}, fmt.Errorf("-o %s: no file name after the format", o)
		}
		return outputFile{path: path, format: name}, nil
	}
	if o == "" {
		return outputFile{}, errors.New("-o needs a file name")
	}
	format, ok := report.FormatForPath(o)
	if !ok {
		return outputFile{}, fmt.Errorf("-o %s: cannot tell the format from the file name; use an extension (.txt .json .csv .xml .sarif .md .html), FORMAT:%s with FORMAT one of %s, or --format",
			o, o, strings.Join(report.Formats(), ", "))
	}
	return outputFile{path: o, format: format}, nil
}

// writeOutputs writes rep to every -o file, then to stdout in format.
//
// An -o file adds an output, as LinkChecker's -F does: standard output
// still gets the report (a cron job with -o still mails it), unless format
// is "" (see stdoutFormat).
//
// Each file is written to a temporary file beside it and renamed over it,
// so a reader (a web server, a CI step) never sees half a report and a
// failed run leaves the previous report in place. Every file is attempted;
// the errors name their files.
func writeOutputs(stdout io.Writer, rep *report.Report, format string, outputs []string) error {
	files, err := parseOutputs(outputs)
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range files {
		if err := writeAtomic(f.path, func(w io.Writer) error { return report.Write(w, rep.WrittenTo(f.path), f.format) }); err != nil {
			errs = append(errs, err)
		}
	}
	if format != "" {
		if err := report.Write(stdout, rep, format); err != nil {
			errs = append(errs, fmt.Errorf("standard output: %w", err))
		}
	}
	return errors.Join(errs...)
}

// stdoutFormat is the format of the report on standard output, or "" for
// none: -q with -o files leaves standard output silent (the report is in
// the files), and -q alone still prints it, since it would go nowhere.
//
// A --format that an -o file is written in already says which format the
// file has (--format junit -o rep.junit): standard output then gets the
// text report, as with any -o, not a second copy of the file for the
// cron mail or the CI log.
func stdoutFormat(format string, quiet bool, outputs []string) string {
	if quiet && len(outputs) > 0 {
		return ""
	}
	for _, o := range outputs {
		if f, err := parseOutput(o); err == nil && f.format == format {
			return "text"
		}
	}
	return format
}

// writeAtomic replaces path with what write produces, or leaves it alone.
// A symlink is followed, so a link into a web root updates its target. A
// file that is replaced keeps its permissions; a new one is world-readable
// like any file a user creates, since reports are meant to be published.
func writeAtomic(path string, write func(io.Writer) error) (err error) {
	target, mode, tmp, err := tempBeside(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriter(tmp)
	if err := write(bw); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	// Sync before rename: after a crash the name must not point at a file
	// whose data never reached the disk.
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// tempBeside opens the temporary file that writeAtomic writes path's new
// content to, beside the file path resolves to (target), and the mode
// that file is to have. Its errors say what a person can fix: a
// directory that does not exist or cannot be written, not the random
// name of the temporary file (qa5 F7).
func tempBeside(path string) (target string, mode fs.FileMode, tmp *os.File, err error) {
	target = path
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		target = resolved
	}
	mode = 0o644
	if st, err := os.Stat(target); err == nil {
		if !st.Mode().IsRegular() {
			return "", 0, nil, errors.New("not a regular file")
		}
		mode = st.Mode().Perm()
	}
	dir := filepath.Dir(target)
	tmp, err = os.CreateTemp(dir, "."+filepath.Base(target)+".*.tmp")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", 0, nil, fmt.Errorf("the directory %s does not exist", dir)
	case errors.Is(err, fs.ErrPermission):
		return "", 0, nil, fmt.Errorf("no permission to create a file in %s", dir)
	case err != nil:
		return "", 0, nil, fmt.Errorf("cannot create a file in %s: %w", dir, err)
	}
	return target, mode, tmp, nil
}

// canWrite says whether a report can be written to path later, by
// creating and removing the temporary file writeAtomic will create.
func canWrite(path string) error {
	_, _, tmp, err := tempBeside(path)
	if err != nil {
		return err
	}
	tmp.Close()
	return os.Remove(tmp.Name())
}
