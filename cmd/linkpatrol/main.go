// Command linkpatrol checks every link of a site, remembers everything in one
// bbolt file so an interrupted pass resumes where it stopped, and prints the
// problems worst-first.
//
// It wires the packages together — flags, config, signals, exit codes,
// progress — and holds no crawling logic of its own.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/linkpatrol/linkpatrol/report"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
)

// version is stamped by the build (-ldflags "-X main.version=...").
var version = "0.1.0-dev"

// Exit codes are a contract with cron and CI users (DESIGN.md).
const (
	exitOK       = 0
	exitProblems = 1
	exitUsage    = 2
	exitStopped  = 3
	// exitNothing: no start URL could be fetched and parsed (the site is
	// down, refuses us, or the start URL is wrong), so nothing was
	// checked. Distinct from 1 so that cron can tell "the site is down"
	// from "some links are broken".
	exitNothing = 4
)

// exitCode is what a finished report means for cron: an unfinished pass
// first (resumable), then a pass that checked nothing, then broken links.
func exitCode(rep *report.Report) int {
	switch {
	case rep.Pass.State != store.PassComplete:
		return exitStopped
	case rep.StartFailure != "":
		return exitNothing
	case rep.HasBroken():
		return exitProblems
	}
	return exitOK
}

// usageError is an error that is the user's to fix: wrong flags, a bad
// config, a database that cannot be used. It ends in exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

const topUsage = `linkpatrol checks every link of a site and reports the broken ones, worst first.

Usage:
  linkpatrol check [flags] URL|DIR ...   run or resume a pass, print the problems
                                         (DIR: a built site on disk; files and globs too)
  linkpatrol report [flags]              render the last pass again, in any format
  linkpatrol explain [flags] URL         which rule decides this URL, and why
  linkpatrol config check FILE           validate a config file without crawling
  linkpatrol config example              print a commented example with every key
  linkpatrol serve-frontier [flags]      run the NATS server of a distributed pass
  linkpatrol worker --nats URL --db FILE --shards RANGES
                                         crawl some shards of every distributed pass
  linkpatrol status --nats URL           the distributed pass: workers, shards, backlog
  linkpatrol version

Run 'linkpatrol COMMAND --help' for a command's flags.
` + exitCodesHelp

// exitCodesHelp is the exit code table of the help texts.
const exitCodesHelp = `Exit codes:
  0  no problems
  1  problems found (broken links; --fail-on says which count)
  2  usage, config or database error
  3  stopped before the pass finished (signal, --max-time), or URLs of the
     site held back by the server's Retry-After: run the same command again
     to resume
  4  no start URL could be fetched and parsed (the site is down, or refuses
     us): nothing was checked
Pages held back as suspected spider traps (--max-hops, --max-template-run,
...) are listed in the report with the setting that lets them through; they
do not change the exit code.
`

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, topUsage)
		return exitUsage
	}
	var code int
	var err error
	switch args[0] {
	case "check":
		code, err = runCheck(ctx, args[1:], stdout, stderr)
	case "report":
		code, err = runReport(args[1:], stdout, stderr)
	case "explain":
		code, err = runExplain(args[1:], stdout, stderr)
	case "config":
		code, err = runConfig(args[1:], stdout, stderr)
	case "serve-frontier":
		code, err = runServeFrontier(ctx, args[1:], stdout, stderr)
	case "worker":
		code, err = runWorker(ctx, args[1:], stdout, stderr)
	case "status":
		code, err = runStatus(ctx, args[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, "linkpatrol", version)
		return exitOK
	case "help", "-h", "--help":
		fmt.Fprint(stdout, topUsage)
		return exitOK
	default:
		msg := fmt.Sprintf("unknown command %q", args[0])
		if near := rules.DidYouMean(args[0], commands); near != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", near)
		}
		fmt.Fprintf(stderr, "linkpatrol: %s\n\n%s", msg, topUsage)
		return exitUsage
	}
	if err != nil {
		if !errors.As(err, new(reportedError)) {
			fmt.Fprintf(stderr, "linkpatrol: %v\n", err)
		}
		var ue usageError
		if errors.As(err, &ue) {
			return exitUsage
		}
		if code == exitOK {
			code = exitUsage
		}
	}
	return code
}

// commands are run's subcommands, for a suggestion after a typo.
var commands = []string{"check", "report", "explain", "config", "serve-frontier", "worker", "status", "version", "help"}

// parseFlags parses a command's flags; a misspelt flag gets the nearest
// one suggested ("unknown flag: --concurency (did you mean --concurrency?)").
func parseFlags(fs *pflag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if err == nil || errors.Is(err, pflag.ErrHelp) {
		return err
	}
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return usageError{err}
	}
	var names []string
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	if near := rules.DidYouMean(name, names); near != "" {
		return usagef("%v (did you mean --%s?)", err, near)
	}
	return usageError{err}
}

// helpWriter is where a command's usage goes: stdout when it was asked for
// (so it can be paged), stderr when it explains a mistake.
func helpWriter(args []string, stdout, stderr io.Writer) io.Writer {
	for _, a := range args {
		if a == "-h" || a == "--help" {
			return stdout
		}
	}
	return stderr
}
