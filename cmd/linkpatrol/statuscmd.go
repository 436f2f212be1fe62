package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/linkpatrol/linkpatrol/cluster"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
)

// runStatus is status --nats: the cluster as the server sees it now.
func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("status", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	var cf clusterFlags
	cf.register(fs)
	db := fs.String("db", "linkpatrol.db", "without --nats: the database file whose last pass to show")
	fs.Usage = func() {
		fmt.Fprintf(helpWriter(args, stdout, stderr), `Usage: linkpatrol status [--db FILE]
       linkpatrol status --nats URL [flags]

Without --nats, shows the last pass in the database: complete, stopped,
running, or interrupted (its run was killed or crashed: no sign of life for
15 seconds), with when it was last seen alive and the command that resumes
it.

With --nats, shows the distributed pass: its state, each worker (its shards, whether it is
idle, busy, lost or refused the pass, the URLs it has queued (in the stream
and on its own frontier) and done, its outbox, when it last reported, when it
last renewed its leases or since when they lapsed), the shards nobody owns, the
results not yet merged, the pass's progress, and the shards that keep the pass
from ending for want of a live worker, with the command that starts it. A read
the server does not answer is tried again; what still cannot be read is listed
under "partial status" and the rest shown.

Flags:
%s`, flagUsages(fs))
	}
	if help, err := parseNoArgs(fs, args); help || err != nil {
		return err
	}
	if cf.url == "" {
		return localStatus(existingDatabase(fs.Changed("db"), *db), fs.Changed("db"), time.Now(), stdout)
	}
	js, closeNC, err := cf.connect("status")
	if err != nil {
		return err
	}
	defer closeNC()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	// Each read is tried again when it fails: a starved server answers
	// late, not never. What still cannot be read is named, and the rest
	// shown: a partial status beats none (qa4 F19).
	var missing []string
	read := func(what string, f func(ctx context.Context) error) bool {
		var err error
		for range statusTries {
			rctx, cancel := context.WithTimeout(ctx, statusReadTimeout)
			err = f(rctx)
			cancel()
			if err == nil || ctx.Err() != nil {
				break
			}
		}
		if err != nil {
			missing = append(missing, fmt.Sprintf("%s: %v", what, err))
			return false
		}
		return true
	}
	var (
		rec     cluster.PassRecord
		ok      bool
		holders [cluster.Shards]string
		workers []cluster.WorkerStatus
		backlog cluster.Backlog
		owners  []cluster.Owner
	)
	passRead := read("the pass", func(ctx context.Context) (err error) { rec, ok, err = cluster.CurrentPass(ctx, js); return err })
	leasesRead := read("the leases", func(ctx context.Context) (err error) { holders, err = cluster.Holders(ctx, js); return err })
	read("the workers' reports", func(ctx context.Context) (err error) { workers, err = cluster.Workers(ctx, js); return err })
	backlogRead := read("the streams' backlog", func(ctx context.Context) (err error) { backlog, err = cluster.Queued(ctx, js); return err })
	read("the owner reports", func(ctx context.Context) (err error) { owners, err = cluster.Owners(ctx, js); return err })
	switch {
	case !passRead:
		fmt.Fprintln(stdout, "pass unknown (could not be read)")
	case ok:
		p := rec.Pass
		fmt.Fprintf(stdout, "pass %d, %s, of %s, begun %s\n", p.ID, p.State, strings.Join(p.StartURLs, " "), p.Started.Local().Format(time.DateTime))
		if p.Unfinished != "" {
			fmt.Fprintf(stdout, "unfinished: %s\n", p.Unfinished)
		}
	default:
		fmt.Fprintln(stdout, "no pass begun yet")
	}
	owned := map[string][]int{}
	var free []int
	for s, h := range holders {
		if h == "" {
			free = append(free, s)
			continue
		}
		owned[h] = append(owned[h], s)
	}
	byName := map[string]*cluster.Owner{}
	for i := range owners {
		byName[owners[i].Name] = &owners[i]
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKER\tSHARDS\tPASS\tSTATE\tQUEUED\tDONE\tOUTBOX\tREPORTED\tLEASE\tERROR")
	now := time.Now()
	ago := func(t time.Time) string { return now.Sub(t).Round(time.Second).String() }
	// lease says how the worker's leases stand, from its owner report: the
	// server's time of its last renewal.
	lease := func(o *cluster.Owner) string {
		switch {
		case o == nil:
			return "-"
		case o.Released:
			return "given up " + ago(o.Written) + " ago"
		case o.Lost():
			return "lapsed " + ago(o.Gone()) + " ago (last renewed " + ago(o.Written) + " ago)"
		}
		return "renewed " + ago(o.Written) + " ago, expires in " + o.Gone().Sub(now).Round(time.Second).String()
	}
	// A figure not read is "?", never a 0 that reads as nothing there.
	count := func(n uint64, known bool) string {
		if !known {
			return "?"
		}
		return strconv.FormatUint(n, 10)
	}
	var passDone, passQueued uint64
	seen := map[string]bool{}
	for _, w := range workers {
		seen[w.Name] = true
		shards := owned[w.Name]
		// Queued: the tasks for its shards still in the stream, and those
		// it took into its own database and has not done yet, as its last
		// report of this pass said.
		var queued, done uint64
		for _, s := range shards {
			queued += backlog.Pending[s] + backlog.Unacked[s]
		}
		current := ok && w.Pass == rec.Pass.ID
		if current {
			queued += uint64(w.Queued)
			done = uint64(w.Done)
			passDone += done
			passQueued += queued
		}
		o := byName[w.Name]
		state := "busy"
		switch {
		case w.Refused != "" && (o == nil || o.Token == w.Token):
			state = "refused the pass"
		case o != nil && o.Lost():
			// Killed, or cut off from the server, and not started again:
			// its report is as old as its last renewal.
			state = "lost (lease lapsed)"
		case leasesRead && len(shards) == 0:
			state = "gone (no lease)"
		case w.Idle:
			state = "idle"
		}
		errText := w.Error
		if state == "refused the pass" {
			errText = w.Refused
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%d\t%s ago\t%s\t%s\n", w.Name, orDash(cluster.FormatShards(shards)), w.Pass, state,
			count(queued, backlogRead && leasesRead), count(done, current), w.Outbox, ago(w.Updated), lease(o), errText)
	}
	for h, shards := range owned {
		if !seen[h] {
			fmt.Fprintf(tw, "%s\t%s\t-\tno report yet\t-\t-\t-\t-\t%s\t\n", h, cluster.FormatShards(shards), lease(byName[h]))
		}
	}
	tw.Flush()
	var unowned uint64
	for _, s := range free {
		unowned += backlog.Pending[s] + backlog.Unacked[s]
	}
	if leasesRead && len(free) > 0 {
		fmt.Fprintf(stdout, "no owner: shards %s", cluster.FormatShards(free))
		if unowned > 0 {
			fmt.Fprintf(stdout, " (%d tasks wait for a worker)", unowned)
		}
		fmt.Fprintln(stdout)
	}
	if backlogRead {
		fmt.Fprintf(stdout, "results not yet merged: %d messages\n", backlog.Results)
	}
	// Counted before the stalls read, which can fail too: a pass read
	// with the other four lost still printed something.
	nothingAnswered := len(missing) >= statusReads
	if ok && rec.Pass.State == store.PassRunning {
		if total := passDone + passQueued + unowned; backlogRead && leasesRead && total > 0 {
			// Done among what is known so far: the web a pass crawls
			// grows as it goes, so this is no forecast.
			fmt.Fprintf(stdout, "progress: %d URLs done, %d queued (%.0f%% of those known so far)\n", passDone, passQueued+unowned, 100*float64(passDone)/float64(total))
		}
		var stalls []cluster.Stall
		if read("the stalled shards", func(ctx context.Context) (err error) { stalls, err = cluster.Stalled(ctx, js, rec.Pass.ID); return err }) && len(stalls) > 0 {
			fmt.Fprintf(stdout, "pass %d cannot end until these shards have a live worker:\n", rec.Pass.ID)
			for _, st := range stalls {
				fmt.Fprint(stdout, stallAdvice(st, cf.url, "  "))
			}
		}
	}
	if len(missing) > 0 {
		fmt.Fprintln(stdout, "partial status: could not read")
		for _, m := range missing {
			fmt.Fprintln(stdout, "  "+m)
		}
		if nothingAnswered {
			return fmt.Errorf("status: the server answered nothing: %s", missing[0])
		}
	}
	return nil
}

// statusTries and statusReadTimeout bound each read of status: a server
// at load 30 answered some reads after seconds, not never.
const (
	statusTries       = 3
	statusReadTimeout = 15 * time.Second
	statusReads       = 5 // the reads before the stalls: all failed is an error
)

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// localStatus prints the state of the last pass in the database at path,
// as of now. A running check holds the file (a write lock), so a pass read
// as running is one whose run died, unless its heartbeat is fresh (a run
// on another machine sharing the file, or one that died seconds ago): the
// heartbeat tells them apart (store.Pass.Interrupted), never the stored state
// alone, which a SIGKILL leaves at "running".
func localStatus(path string, dbGiven bool, now time.Time, stdout io.Writer) error {
	d, err := store.Open(path, store.Options{ReadOnly: true, Timeout: 200 * time.Millisecond})
	if errors.Is(err, store.ErrLocked) {
		fmt.Fprintf(stdout, "%s is in use by another linkpatrol process: a check (or worker) is running on it\n", path)
		return nil
	}
	if err != nil {
		return err
	}
	defer d.Close()
	p, ok, err := d.LastPass()
	if err != nil {
		return err
	}
	if !ok {
		fmt.Fprintf(stdout, "no pass in %s yet\n", path)
		return nil
	}
	state := string(p.State)
	switch seen := p.LastSeen(); {
	case p.Interrupted(now):
		state = fmt.Sprintf("interrupted (last seen %s, resume with `%s`)", seen.Local().Format(time.DateTime), resumeCommand(p, path, dbGiven))
	case p.State == store.PassStopped:
		state = fmt.Sprintf("stopped (resume with `%s`)", resumeCommand(p, path, dbGiven))
	case p.State == store.PassRunning && !seen.IsZero():
		state = fmt.Sprintf("running (last seen %s ago)", max(now.Sub(seen), 0).Round(time.Second))
	}
	what := p.StartURLs
	if dirs := p.Dirs(); len(dirs) > 0 {
		what = dirs
	}
	fmt.Fprintf(stdout, "pass %d, %s, of %s, begun %s\n", p.ID, state, strings.Join(what, " "), p.Started.Local().Format(time.DateTime))
	if p.Unfinished != "" {
		fmt.Fprintf(stdout, "unfinished: %s\n", p.Unfinished)
	}
	return nil
}

// resumeCommand is the check that resumes p, stored at path: its start
// URLs (or directories), with the database and config file named when
// they are not the ones check finds by itself.
func resumeCommand(p store.Pass, path string, dbGiven bool) string {
	words := []string{"linkpatrol", "check"}
	if dbGiven {
		words = append(words, "--db", path)
	}
	if p.Config != "" && p.Config != rules.DefaultConfigFile {
		words = append(words, "--config", p.Config)
	}
	what := p.StartURLs
	if dirs := p.Dirs(); len(dirs) > 0 {
		what = dirs
	}
	words = append(words, what...)
	for i, w := range words {
		if strings.ContainsFunc(w, func(r rune) bool { return !strings.ContainsRune(shellSafe, r) }) {
			words[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
	}
	return strings.Join(words, " ")
}

// shellSafe are the characters a word of a command line may hold unquoted.
const shellSafe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,"
