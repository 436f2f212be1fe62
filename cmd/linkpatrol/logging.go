package main

import (
	"fmt"
	"io"
	"log/slog"
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
