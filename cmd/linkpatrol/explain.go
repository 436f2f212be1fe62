package main

import (
	"errors"
	"fmt"
	"io"
	"net/url"

	"github.com/spf13/pflag"

	"github.com/linkpatrol/linkpatrol/rules"
)

func runExplain(args []string, stdout, stderr io.Writer) (int, error) {
	fs := pflag.NewFlagSet("explain", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	var starts, include, exclude []string
	fs.StringArrayVar(&starts, "start", nil, "start `URL` of the site (repeatable); its host is parsed, others checked")
	fs.StringArrayVar(&include, "include", nil, "as for check")
	fs.StringArrayVar(&exclude, "exclude", nil, "as for check")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: linkpatrol explain [flags] URL\n\nFlags:\n%s", fs.FlagUsages())
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
	engine, err := rules.New(rules.Config{Start: starts, Include: include, Exclude: exclude})
	if err != nil {
		return exitUsage, usageError{err}
	}
	u, err := url.Parse(fs.Arg(0))
	if err != nil || !u.IsAbs() {
		return exitUsage, usagef("%q is not an absolute URL", fs.Arg(0))
	}
	d := engine.Decide(u)
	fmt.Fprintf(stdout, "url:       %s\ncanonical: %s\naction:    %s\nrule:      %s\n", fs.Arg(0), d.URL, d.Action, d.Rule)
	return exitOK, nil
}
