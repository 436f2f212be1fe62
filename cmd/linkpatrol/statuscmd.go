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
idle, its outbox, when it last reported), the shards nobody owns, the tasks
queued per worker and the results not yet merged.

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
	if ok {
		p := rec.Pass
		fmt.Fprintf(stdout, "pass %d, %s, of %s, begun %s\n", p.ID, p.State, strings.Join(p.StartURLs, " "), p.Started.Local().Format(time.DateTime))
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
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKER\tSHARDS\tPASS\tSTATE\tQUEUED\tOUTBOX\tREPORTED\tERROR")
	now := time.Now()
	seen := map[string]bool{}
	for _, w := range workers {
		seen[w.Name] = true
		shards := owned[w.Name]
		var queued uint64
		for _, s := range shards {
			queued += backlog.Pending[s] + backlog.Unacked[s]
		}
		state := "busy"
		switch {
		case len(shards) == 0:
			state = "gone (no lease)"
		case w.Idle:
			state = "idle"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%d\t%s ago\t%s\n", w.Name, orDash(cluster.FormatShards(shards)), w.Pass, state, queued, w.Outbox,
			now.Sub(w.Updated).Round(time.Second), w.Error)
	}
	for h, shards := range owned {
		if !seen[h] {
			fmt.Fprintf(tw, "%s\t%s\t-\tno report yet\t-\t-\t-\t\n", h, cluster.FormatShards(shards))
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
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
