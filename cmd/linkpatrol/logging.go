package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// newLogger makes the logger handed to the crawler. verbosity is how often
// -v was given: without it only warnings reach w (a person must act on them,
// and cron mail stays empty otherwise), -v lets Info records through, -vv
// Debug ones as well. format is "text" (logfmt-style
// key=value, for a terminal or a mail) or "json" (one object a line, for a
// log collector); "" means text.
func newLogger(w io.Writer, verbosity int, format string) (*slog.Logger, error) {
	level := slog.LevelWarn
	switch {
	case verbosity >= 2:
		level = slog.LevelDebug
	case verbosity == 1:
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	switch format {
	case "", "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("unknown log format %q (want text or json)", format)
}

// notice writes what a person must see whatever -v says (the status page's
// address): "msg: value ..." on a line, or with format json one record, so
// that everything on standard error is JSON.
func notice(w io.Writer, format, msg string, args ...any) {
	if format == "json" {
		slog.New(slog.NewJSONHandler(w, nil)).Info(msg, args...)
		return
	}
	line := msg + ":"
	for i := 1; i < len(args); i += 2 {
		line += fmt.Sprint(" ", args[i])
	}
	fmt.Fprintln(w, line)
}

// jsonError marks the error of a run whose standard error is JSON (--log-format
// json): run writes it as one record rather than as a line of text.
type jsonError struct{ err error }

func (e jsonError) Error() string { return e.err.Error() }
func (e jsonError) Unwrap() error { return e.err }

// logFormatArg finds --log-format in raw arguments, for when they could not
// all be parsed; "" when it is not there.
func logFormatArg(args []string) string {
	for i, a := range args {
		if a == "--" {
			break
		}
		if v, ok := strings.CutPrefix(a, "--log-format="); ok {
			return v
		}
		if a == "--log-format" && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// libraryLog writes what libraries print through package log as warnings
// in the run's log format, each cut to a line a person reads: Go's
// "Unsolicited response received on idle HTTP channel starting with …"
// quotes every byte the server sent too many (7 KB of a page, qa9 T4),
// raw on standard error, outside the format.
type libraryLog struct {
	w      io.Writer
	format string
}

// maxLibraryLine bounds one such message.
const maxLibraryLine = 300

func (l libraryLog) Write(p []byte) (int, error) {
	msg := strings.TrimSpace(string(p))
	if len(msg) > maxLibraryLine {
		msg = strings.ToValidUTF8(msg[:maxLibraryLine], "") + "…"
	}
	var h slog.Handler = slog.NewTextHandler(l.w, nil)
	if l.format == "json" {
		h = slog.NewJSONHandler(l.w, nil)
	}
	slog.New(h).Warn(msg)
	return len(p), nil
}
