package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
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
// in the run's log format, each cut to a line a person reads. Go's
// "Unsolicited response received on idle HTTP channel starting with …"
// quotes every byte a server sent past a response (7 KB of a page, qa9
// T4), for each such response, and names no host: it is said once, in
// words, without the bytes (qa11 §7).
type libraryLog struct {
	w      io.Writer
	format string
	// unsolicited is whether that message was said.
	unsolicited atomic.Bool
}

// maxLibraryLine bounds one such message.
const maxLibraryLine = 300

// unsolicitedPrefix starts net/http's message about bytes a server sent
// on a kept-alive connection after its response ended.
const unsolicitedPrefix = "Unsolicited response received on idle HTTP channel"

// unsolicitedSaid is what is said of it instead: the connection is closed
// and the bytes dropped, and the response was read up to its
// Content-Length, as a browser reads it.
const unsolicitedSaid = "a server sent more bytes than its response's Content-Length said " +
	"(or answered a request twice): they were dropped with the connection, as a browser drops them, " +
	"and no verdict depends on them; said once, for all servers"

func (l *libraryLog) Write(p []byte) (int, error) {
	msg := strings.TrimSpace(string(p))
	if strings.HasPrefix(msg, unsolicitedPrefix) {
		if l.unsolicited.Swap(true) {
			return len(p), nil
		}
		msg = unsolicitedSaid
	}
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
