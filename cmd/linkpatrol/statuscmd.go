package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/linkpatrol/linkpatrol/cluster"
	"github.com/linkpatrol/linkpatrol/store"
)

// runStatus is status --nats: the cluster as the server sees it now.
func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("status", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	var cf clusterFlags
	cf.register(fs)
	fs.Usage = func() {
		fmt.Fprintf(helpWriter(args, stdout, stderr), `Usage: linkpatrol status --nats URL [flags]

Shows the distributed pass: its state, each worker (its shards, whether it is
idle, busy, lost or refused the pass, its outbox, when it last reported, when
it last renewed its leases or since when they lapsed), the shards nobody owns,
the tasks queued per worker, the results not yet merged, and the shards that
keep the pass from ending for want of a live worker, with the command that
starts it.

Flags:
%s`, flagUsages(fs))
	}
	if help, err := parseNoArgs(fs, args); help || err != nil {
		return err
	}
	if cf.url == "" {
		return fmt.Errorf("status needs --nats URL, the frontier's address")
	}
	js, closeNC, err := cf.connect("status")
	if err != nil {
		return err
	}
	defer closeNC()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	rec, ok, err := cluster.CurrentPass(ctx, js)
	if err != nil {
		return err
	}
	holders, err := cluster.Holders(ctx, js)
	if err != nil {
		return err
	}
	workers, err := cluster.Workers(ctx, js)
	if err != nil {
		return err
	}
	backlog, err := cluster.Queued(ctx, js)
	if err != nil {
		return err
	}
	owners, err := cluster.Owners(ctx, js)
	if err != nil {
		return err
	}
	if ok {
		p := rec.Pass
		fmt.Fprintf(stdout, "pass %d, %s, of %s, begun %s\n", p.ID, p.State, strings.Join(p.StartURLs, " "), p.Started.Local().Format(time.DateTime))
		if p.Unfinished != "" {
			fmt.Fprintf(stdout, "unfinished: %s\n", p.Unfinished)
		}
	} else {
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
	fmt.Fprintln(tw, "WORKER\tSHARDS\tPASS\tSTATE\tQUEUED\tOUTBOX\tREPORTED\tLEASE\tERROR")
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
	seen := map[string]bool{}
	for _, w := range workers {
		seen[w.Name] = true
		shards := owned[w.Name]
		var queued uint64
		for _, s := range shards {
			queued += backlog.Pending[s] + backlog.Unacked[s]
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
		case len(shards) == 0:
			state = "gone (no lease)"
		case w.Idle:
			state = "idle"
		}
		errText := w.Error
		if state == "refused the pass" {
			errText = w.Refused
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%d\t%s ago\t%s\t%s\n", w.Name, orDash(cluster.FormatShards(shards)), w.Pass, state, queued, w.Outbox,
			ago(w.Updated), lease(o), errText)
	}
	for h, shards := range owned {
		if !seen[h] {
			fmt.Fprintf(tw, "%s\t%s\t-\tno report yet\t-\t-\t-\t%s\t\n", h, cluster.FormatShards(shards), lease(byName[h]))
		}
	}
	tw.Flush()
	var unowned uint64
	for _, s := range free {
		unowned += backlog.Pending[s] + backlog.Unacked[s]
	}
	if len(free) > 0 {
		fmt.Fprintf(stdout, "no owner: shards %s", cluster.FormatShards(free))
		if unowned > 0 {
			fmt.Fprintf(stdout, " (%d tasks wait for a worker)", unowned)
		}
		fmt.Fprintln(stdout)
	}
	fmt.Fprintf(stdout, "results not yet merged: %d messages\n", backlog.Results)
	if ok && rec.Pass.State == store.PassRunning {
		stalls, err := cluster.Stalled(ctx, js, rec.Pass.ID)
		if err != nil {
			return err
		}
		if len(stalls) > 0 {
			fmt.Fprintf(stdout, "pass %d cannot end until these shards have a live worker:\n", rec.Pass.ID)
			for _, st := range stalls {
				fmt.Fprint(stdout, stallAdvice(st, cf.url, "  "))
			}
		}
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
