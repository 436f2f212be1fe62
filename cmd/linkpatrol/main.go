// Command linkpatrol checks every link of a site, remembers everything in one
// bbolt file so an interrupted pass resumes where it stopped, and prints the
// problems worst-first.
//
// It wires the packages together — flags, config, signals, exit codes,
// progress — and holds no crawling logic of its own. Every setting of a run
// is one row of settingsTable (settings.go): its flag, config key, default,
// help and heading, from which the flags of each command, the file's keys,
// the merge (flag, then file, then default), the checks, `config example`
// and the grouped --help are made.
//
// main is run plus a process: it arms the stop signals and asks whether
// stderr is a terminal; run is everything else, so tests call it
// in-process. Commands return an error, and exitStatus alone turns it into
// the exit code.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/linkpatrol/linkpatrol/crawler"
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
	// exitNothing: a start URL could not be fetched and parsed (the site
	// is down, refuses us, or the start URL is wrong), so nothing behind
	// it was checked. Distinct from 1 so that cron can tell "the site is down"
	// from "some links are broken".
	exitNothing = 4
	// exitHeldBack: the pass is complete and found no problem, but a limit
	// of the crawler's (a suspected spider trap, a quota, a page cut
	// short) held part of it back unchecked, or pages of the site could not
	// be read, hiding the links behind them, so it cannot say "all clear".
	exitHeldBack = 5
)

// The outcomes of a command that are not failures of it: what they mean is
// on the screen already (the report, the usage), and they only choose the
// exit code.
var (
	errProblems       = errors.New("problems found")
	errUnfinished     = errors.New("the pass is not finished")
	errNothingChecked = errors.New("no start URL could be fetched and parsed")
	errHeldBack       = errors.New("part of the pass was held back by a limit, or pages of the site could not be read")
	errUsageShown     = errors.New("usage shown")
)

// verdictOf is what a finished report means for cron: an unfinished pass
// first (resumable), then a pass that checked nothing, then broken links,
// then what a limit held back. --fail-on never ("what the crawl finds never
// fails the run") covers that last one too: a limit is not a fault of the
// site, and the PARTLY CHECKED line stays; 3 and 4 say the run itself did
// not do its job, so they stay.
func verdictOf(rep *report.Report) error {
	switch {
	case rep.Pass.State != store.PassComplete:
		return errUnfinished
	case rep.StartFailure != "":
		return errNothingChecked
	case rep.HasBroken():
		return errProblems
	case rep.HeldBack() != "" && rep.Options.FailOn != report.FailNever:
		return errHeldBack
	}
	return nil
}

// passError is a pass that failed part way through: what was committed
// stays in the database.
type passError struct {
	pass uint64
	err  error
}

func (e passError) Error() string { return fmt.Sprintf("pass %d: %v", e.pass, e.err) }
func (e passError) Unwrap() error { return e.err }

// exitStatus is the one place where what a command returned becomes the
// exit code (README's table) and the line for standard error, with advice
// where the cause has one. Every error that is not an outcome is exit 2:
// usage, config or database.
func exitStatus(err error) (code int, msg string) {
	switch {
	case err == nil:
		return exitOK, ""
	case errors.Is(err, errProblems):
		return exitProblems, ""
	case errors.Is(err, errUnfinished):
		return exitStopped, ""
	case errors.Is(err, errNothingChecked):
		return exitNothing, ""
	case errors.Is(err, errHeldBack):
		return exitHeldBack, ""
	case errors.Is(err, errUsageShown):
		return exitUsage, ""
	case errors.Is(err, store.ErrCorrupt):
		// Running again would fail the same way; the store's message
		// says what to do instead.
		return exitUsage, err.Error()
	case errors.As(err, new(passError)):
		return exitUsage, err.Error() + " (what was committed is kept; run again to resume)"
	// The crawler's refusals to open a pass.
	case errors.Is(err, crawler.ErrOtherPassOpen):
		return exitUsage, err.Error() + "; run that again to resume it, add --new-pass to abandon it, or use another --db"
	case errors.Is(err, crawler.ErrSettingsChanged):
		return exitUsage, err.Error() + " (config file, --include/--exclude, --max-size, --ignore-robots, spider-trap limits); run it with the same ones to resume, or add --new-pass to start again"
	case errors.Is(err, crawler.ErrOtherSite):
		return exitUsage, err.Error() + "; use another --db for this site, or add --new-pass to start its history here"
	}
	return exitUsage, err.Error()
}

// exitCode is the exit code of err alone, for the status page.
func exitCode(err error) int {
	code, _ := exitStatus(err)
	return code
}

const topUsage = `linkpatrol checks every link of a site and reports the broken ones, worst first.

Usage:
  linkpatrol check [flags] URL|DIR ...   run or resume a pass, print the problems
                                         (DIR: a built site on disk; files and globs too;
                                         -: read them from standard input, one a line)
  linkpatrol report [flags]              render the last pass again, in any format
  linkpatrol explain [flags] URL         which rule decides this URL, and why
  linkpatrol config check FILE           validate a config file without crawling
  linkpatrol config example              print a commented example with every key
  linkpatrol serve-frontier [flags]      run the NATS server of a distributed pass
  linkpatrol worker --nats URL --db FILE --shards RANGES
                                         crawl some shards of every distributed pass
  linkpatrol status [--db FILE]          the last pass: complete, stopped, running or
                                         interrupted (killed), and how to resume it
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
     to resume (a URL that asks for another long pause when asked again
     after the first one is then unverifiable, and the pass completes)
  4  a start URL could not be fetched and parsed (the site is down, or
     refuses us): nothing behind it was checked, even if other start URLs
     were
  5  no problems found, but part of the site was not checked: a limit held
     it back (suspected spider traps (--max-hops, --max-template-run, ...),
     a host's quota, pages cut at --max-size, sitemap entries past
     --sitemap-limit), or pages of the site could not be read (5xx, a
     timeout, 401/403, 429 past the retries), so the links behind them were
     not checked; they are listed in the report, a limit with the setting
     that lets it through (--fail-on never makes this 0)
`

func main() {
	go paceGC()
	ctx := context.Background()
	args := os.Args[1:]
	// net/http's Transport says what a server did wrong on a kept-alive
	// connection (bytes past a response's Content-Length) through package
	// log, whose one writer is the process's: set here, once, not in run.
	log.SetFlags(0)
	log.SetOutput(&libraryLog{w: os.Stderr, format: logFormatArg(args)})
	var stop context.CancelFunc
	if len(args) > 0 && stopsCleanly(args[0]) {
		ctx, stop = notifyStop(ctx)
	}
	code := run(ctx, args, os.Stdin, os.Stdout, os.Stderr, isTerminal(os.Stderr))
	if stop != nil {
		stop()
	}
	os.Exit(code)
}

// run is the program without its process: the command named by args runs
// with these streams, and what it returns becomes the exit code and the
// message on stderr. isTerminal says stderr is a terminal, where check
// draws its progress line. stdin is read by check - (start URLs, one a
// line).
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, isTerminal bool) int {
	err := runCommand(ctx, args, stdin, stdout, stderr, isTerminal)
	code, msg := exitStatus(err)
	switch {
	case msg == "":
	case errors.As(err, new(jsonError)):
		slog.New(slog.NewJSONHandler(stderr, nil)).Error(msg)
	default:
		fmt.Fprintf(stderr, "linkpatrol: %s\n", msg)
	}
	return code
}

func runCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, isTerminal bool) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, topUsage)
		return errUsageShown
	}
	switch args[0] {
	case "check":
		return runCheck(ctx, args[1:], stdin, stdout, stderr, isTerminal)
	case "report":
		return runReport(args[1:], stdout, stderr)
	case "explain":
		return runExplain(args[1:], stdout, stderr)
	case "config":
		return runConfig(args[1:], stdout, stderr)
	case "serve-frontier":
		return runServeFrontier(ctx, args[1:], stdout, stderr)
	case "worker":
		return runWorker(ctx, args[1:], stdout, stderr)
	case "status":
		return runStatus(ctx, args[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, "linkpatrol", version)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, topUsage)
		return nil
	}
	msg := fmt.Sprintf("unknown command %q", args[0])
	if near := rules.DidYouMean(args[0], commands); near != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", near)
	}
	// The usage follows the message, so run must not print it again.
	fmt.Fprintf(stderr, "linkpatrol: %s\n\n%s", msg, topUsage)
	return errUsageShown
}

// stopsCleanly says whether a command catches the stop signals to end
// cleanly: check saves its work and reports, serve-frontier shuts its server
// down, a worker saves its work and gives its shards up. The others keep the
// default, and a signal ends them at once.
func stopsCleanly(command string) bool {
	switch command {
	case "check", "serve-frontier", "worker":
		return true
	}
	return false
}

// notifyStop returns ctx, cancelled by the first SIGINT, SIGTERM or SIGHUP
// (a closed terminal or ssh session must not lose the last batch either),
// and carrying a hard stop (see hardStop) cancelled by the second. It is
// signal.NotifyContext with a second stage: the first signal asks for a
// clean stop, the second for one that does not wait. stop releases the
// signals.
func notifyStop(parent context.Context) (ctx context.Context, stop context.CancelFunc) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	ctx, cancel := stopOnSignals(parent, sigs)
	return ctx, func() {
		signal.Stop(sigs)
		cancel()
	}
}

// stopOnSignals cancels ctx at the first value from sigs and its hard stop
// at the second.
func stopOnSignals(parent context.Context, sigs <-chan os.Signal) (ctx context.Context, cancel context.CancelFunc) {
	soft, cancelSoft := context.WithCancel(parent)
	hard, cancelHard := context.WithCancel(context.WithoutCancel(parent))
	go func() {
		for n := 1; ; n++ {
			select {
			case <-sigs:
				cancelSoft()
				if n > 1 {
					cancelHard()
				}
			case <-hard.Done():
				return
			}
		}
	}()
	return context.WithValue(soft, hardStopKey{}, hard), func() {
		cancelSoft()
		cancelHard()
	}
}

type hardStopKey struct{}

// hardStop is the stop that does not wait for requests in flight: the
// second signal. Without notifyStop (a test, a command run in-process) it
// is never cancelled.
func hardStop(ctx context.Context) context.Context {
	if hard, ok := ctx.Value(hardStopKey{}).(context.Context); ok {
		return hard
	}
	return context.WithoutCancel(ctx)
}

// isTerminal says whether w is a terminal, where a person watches.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// commands are run's subcommands, for a suggestion after a typo.
var commands = []string{"check", "report", "explain", "config", "serve-frontier", "worker", "status", "version", "help"}

// parseFlags parses a command's flags; a misspelt flag gets the nearest
// one suggested ("unknown flag: --concurency (did you mean --concurrency?)").
// parseNoArgs parses the flags of a command that takes no arguments. help
// is true when --help was asked for: the usage is printed, and the command
// has nothing more to do.
func parseNoArgs(fs *pflag.FlagSet, args []string) (help bool, err error) {
	if err := parseFlags(fs, args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return true, nil
		}
		return false, err
	}
	if fs.NArg() > 0 {
		return false, fmt.Errorf("%s takes no arguments, got %q", fs.Name(), fs.Args())
	}
	return false, nil
}

func parseFlags(fs *pflag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if err == nil || errors.Is(err, pflag.ErrHelp) {
		return err
	}
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return err
	}
	var names []string
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	if meant, ok := otherToolsFlags[name]; ok && fs.Lookup(meant.flag) != nil {
		return fmt.Errorf("%v (did you mean --%s? %s)", err, meant.flag, meant.why)
	}
	if near := rules.DidYouMean(name, names); near != "" {
		return fmt.Errorf("%v (did you mean --%s?)", err, near)
	}
	return err
}

// otherToolsFlags are flags users bring from other tools whose meaning a
// flag of ours has under another name, too far from it in spelling for
// DidYouMean to find: "report --since DATE" met only "unknown flag".
var otherToolsFlags = map[string]struct{ flag, why string }{
	"since": {"only-new", "It reports only the problems new since the last complete pass; there is no date to give"},
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
