package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/linkpatrol/linkpatrol/cluster"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
)

// checkOverNATS is check --nats: it begins the distributed pass (or
// resumes the one running with the same settings) with the coordinator,
// follows it until the coordinator ends it, and prints its report, with
// check's exit codes. raw are check's arguments as given: the workers
// parse them again, with the config file's bytes, to run the pass's own
// rules and settings.
func checkOverNATS(ctx context.Context, raw []string, o *checkOptions, file *rules.File, engine *rules.Engine, targets checkTargets, stdout, stderr io.Writer, isTerminal bool) error {
	switch {
	case len(targets.roots) > 0:
		return fmt.Errorf("--nats: a built site on disk is checked by one process; give http(s) URLs")
	case o.statusAddr != "":
		return fmt.Errorf("--nats: the status page is not built for distributed passes yet; use linkpatrol status --nats")
	}
	// The pass record carries check's arguments to every worker, in the
	// clear on the NATS server: a header's value given as a flag is
	// readable there by anyone who may connect. The config file's
	// ${ENV} values travel unexpanded and are read on each worker.
	for _, h := range o.headerFlags {
		fmt.Fprintf(stderr, "linkpatrol: warning: the value of -H %s is stored in the pass record on the NATS server, readable by every client of it; for a secret, use a rule's headers with ${ENV} in the config file, which each worker expands from its own environment\n", h.Name)
	}
	ps := passSettings{Args: raw}
	pass := store.Pass{StartURLs: targets.starts, SettingsHash: settingsHash(file, o), Started: time.Now(),
		CheckFragments: o.fragments, Insecure: o.insecure}
	if file != nil {
		b, err := os.ReadFile(file.Path)
		if err != nil {
			return err
		}
		ps.Config, ps.ConfigName, pass.Config = b, file.Path, file.Path
	}
	settings, err := json.Marshal(ps)
	if err != nil {
		return err
	}
	var seeds []store.Task
	for _, s := range targets.starts {
		u, _ := url.Parse(s)
		d := engine.Decide(u)
		if d.Action != rules.Parse && d.Action != rules.Check {
			return fmt.Errorf("start URL %s is excluded by %s", s, d.Rule)
		}
		seeds = append(seeds, store.Task{URL: d.URL, Action: d.Action.String()})
	}
	js, closeNC, err := o.cluster.connect("check")
	if err != nil {
		return err
	}
	defer closeNC()
	stop := ctx // cancelled by the first stop signal
	rec, err := cluster.Begin(stop, js.Conn(), cluster.BeginRequest{Pass: pass, Config: settings, Seeds: seeds, New: o.newPass, MaxRedirects: o.maxRedirects})
	if err != nil {
		return err
	}
	id := rec.Pass.ID
	// --max-time is the pass's budget for this run: at its end the
	// coordinator stops the pass, the workers commit what they hold, and
	// the same command resumes it.
	var budget <-chan time.Time
	if o.maxTime > 0 {
		t := time.NewTimer(o.maxTime)
		defer t.Stop()
		budget = t.C
	}
	var tty io.Writer // the progress line, on a terminal only
	if isTerminal && !o.quiet && o.verbose == 0 && o.logFormat != "json" {
		tty = stderr
	}
	if tty != nil {
		fmt.Fprintf(tty, "pass %d over %s\n", id, o.cluster.url)
	}
	// Follow the pass through a watch of its record and the workers'
	// reports, which wakes this loop when they change: the coordinator
	// ends the pass by the termination rule, never this process. Once a
	// second, look for what would make the wait endless: a worker refusing
	// the pass, or shards with work and no live owner (a lease lapses
	// without a word to a watch).
	state, err := cluster.WatchState(stop, js)
	if err != nil {
		if stop.Err() != nil {
			fmt.Fprintf(stderr, "stopped following pass %d; it goes on in the workers: run the same command again to follow it and print its report\n", id)
			return errUnfinished
		}
		return err
	}
	defer state.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	watch := stallWatch{wait: o.ownerWait, began: time.Now()}
	var looked time.Time
	away := false
	for {
		changed := state.Changed()
		cur, ok, err := state.Pass()
		if stop.Err() != nil {
			if tty != nil {
				fmt.Fprint(tty, "\r\033[K")
			}
			fmt.Fprintf(stderr, "stopped following pass %d; it goes on in the workers: run the same command again to follow it and print its report\n", id)
			return errUnfinished
		}
		if err != nil {
			return err
		}
		if err := state.Err(); err != nil {
			// serve-frontier restarted on its store continues the pass:
			// wait for it, as the workers do. (The watch is made again
			// once it answers; until then it holds the record as it was.)
			if !away {
				fmt.Fprintf(stderr, "linkpatrol: the frontier at %s does not answer (%v); waiting for it\n", o.cluster.url, err)
			}
			away = true
		} else if away {
			fmt.Fprintf(stderr, "linkpatrol: the frontier at %s answers again; following pass %d\n", o.cluster.url, id)
			away = false
		}
		if ok && cur.Pass.ID != id {
			return fmt.Errorf("pass %d was replaced by pass %d (begun with --new-pass elsewhere)", id, cur.Pass.ID)
		}
		if ok && cur.Pass.State != store.PassRunning {
			break
		}
		if now := time.Now(); !away && now.Sub(looked) >= time.Second {
			looked = now
			if err := refusal(stop, js, state, id); err != nil {
				if tty != nil {
					fmt.Fprint(tty, "\r\033[K")
				}
				return err
			}
			stalls, err := state.Stalled(stop, id)
			if err != nil {
				stalls = watch.stalls // only a look: the next one may get through
			}
			over, begun := watch.update(stalls, now)
			for _, st := range begun {
				// Said once, on a terminal or not: a job's log shows why
				// it waits, and until when.
				if tty != nil {
					fmt.Fprint(tty, "\r\033[K")
				}
				fmt.Fprintf(stderr, "linkpatrol: pass %d waits for a worker (giving up at %s, --owner-wait):\n%s", id, watch.deadline(st).Local().Format(time.TimeOnly), stallAdvice(st, o.cluster.url, "  "))
			}
			if over {
				if tty != nil {
					fmt.Fprint(tty, "\r\033[K")
				}
				fmt.Fprintf(stderr, "linkpatrol: pass %d is unfinished: shards with work left have had no live worker for --owner-wait %s:\n", id, o.ownerWait)
				for _, st := range watch.stalls {
					fmt.Fprint(stderr, stallAdvice(st, o.cluster.url, "  "))
				}
				fmt.Fprintf(stderr, "The pass goes on once they run: run this command again to follow it and print its full report. The report below is what was done so far.\n")
				req := reportRequest{Pass: id, All: o.all, OnlyNew: o.onlyNew, CheckFragments: o.fragments, ReportAfter: o.reportAfter, FailOn: o.failOn}
				if err := writeClusterReport(context.WithoutCancel(ctx), js, req, stdout, stdoutFormat(o.format, o.quiet, o.outputs), o.outputs); err != nil && !errors.Is(err, errUnfinished) {
					return err
				}
				return errUnfinished
			}
		}
		if tty != nil && !away {
			if line, err := clusterProgress(state, id); err == nil {
				fmt.Fprintf(tty, "\r\033[K%s%s", line, watch.summary())
			}
		}
		select {
		case <-changed:
		case <-tick.C:
		case <-stop.Done():
		case <-budget:
			budget = nil
			if _, err := cluster.Stop(stop, js.Conn(), id); err != nil {
				return err
			}
		}
	}
	if tty != nil {
		fmt.Fprint(tty, "\r\033[K")
	}
	req := reportRequest{Pass: id, All: o.all, OnlyNew: o.onlyNew, CheckFragments: o.fragments, ReportAfter: o.reportAfter, FailOn: o.failOn}
	return writeClusterReport(context.WithoutCancel(ctx), js, req, stdout, stdoutFormat(o.format, o.quiet, o.outputs), o.outputs)
}

// clusterProgress is the one line check --nats shows while a pass runs:
// what the workers last reported about it.
func clusterProgress(state *cluster.StateWatch, id uint64) (string, error) {
	ws, err := state.Workers()
	if err != nil {
		return "", err
	}
	workers, idle, outbox := 0, 0, 0
	for _, w := range ws {
		if w.Pass != id {
			continue
		}
		workers++
		if w.Idle {
			idle++
		}
		outbox += w.Outbox
	}
	return fmt.Sprintf("pass %d: %d workers, %d busy, %d outbox entries waiting", id, workers, workers-idle, outbox), nil
}

// defaultOwnerWait is --owner-wait's default: long enough for a supervisor
// (systemd, Kubernetes) to start a killed worker again, which then takes
// its shards back at once; short enough that a nightly job does not hang.
const defaultOwnerWait = 5 * time.Minute

// stallWatch follows the stalls of a pass (cluster.Stalled) for check
// --nats: a stall counts from when its shards lost their owner, or from
// when this run began following, whichever is later.
type stallWatch struct {
	wait   time.Duration
	began  time.Time
	seen   map[string]time.Time // stall -> when this run first saw it
	stalls []cluster.Stall      // the current ones
}

func stallKey(st cluster.Stall) string { return st.Worker + " " + cluster.FormatShards(st.Shards) }

// update takes the stalls seen at now: over says one has lasted past the
// wait, begun are those not seen before.
func (w *stallWatch) update(stalls []cluster.Stall, now time.Time) (over bool, begun []cluster.Stall) {
	seen := make(map[string]time.Time, len(stalls))
	for _, st := range stalls {
		k := stallKey(st)
		first, ok := w.seen[k]
		if !ok {
			first = now
			begun = append(begun, st)
		}
		seen[k] = first
	}
	w.seen, w.stalls = seen, stalls
	for _, st := range stalls {
		over = over || !now.Before(w.deadline(st))
	}
	return over, begun
}

// deadline is when check gives up on a stall: the wait after its shards
// lost their owner (or after this run first saw it, when that is not
// known), but never before the wait after this run began following.
func (w *stallWatch) deadline(st cluster.Stall) time.Time {
	from := w.seen[stallKey(st)]
	if !st.Since.IsZero() {
		from = st.Since
	}
	if from.Before(w.began) {
		from = w.began
	}
	return from.Add(w.wait)
}

// summary is the stalls for the progress line.
func (w *stallWatch) summary() string {
	if len(w.stalls) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("; no live worker for shards")
	for i, st := range w.stalls {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " %s (%s)", cluster.FormatShards(st.Shards), orDash(st.Worker))
	}
	return b.String()
}

// refusal is the error of a worker that refused pass id (its settings do
// not apply there), unless a newer process of that worker runs now.
func refusal(ctx context.Context, js jetstream.JetStream, state *cluster.StateWatch, id uint64) error {
	ws, err := state.Workers()
	if err != nil {
		return nil // only a look: the next one may get through
	}
	var refused []cluster.WorkerStatus
	for _, w := range ws {
		if w.Pass == id && w.Refused != "" {
			refused = append(refused, w)
		}
	}
	if len(refused) == 0 {
		return nil
	}
	owners, err := cluster.Owners(ctx, js)
	if err != nil {
		return nil
	}
	for _, w := range refused {
		i := slices.IndexFunc(owners, func(o cluster.Owner) bool { return o.Name == w.Name })
		if i >= 0 && owners[i].Token != w.Token && !owners[i].Released {
			continue // started again since it refused
		}
		return fmt.Errorf("worker %s cannot run pass %d: %s\nFix that worker and start it again (the pass waits for it; run this command again to follow it), or begin another pass with --new-pass", w.Name, id, w.Refused)
	}
	return nil
}

// stallAdvice says what a stall is and the command that ends it.
func stallAdvice(st cluster.Stall, natsURL, indent string) string {
	var b strings.Builder
	noun := "shards"
	if len(st.Shards) == 1 {
		noun = "shard"
	}
	fmt.Fprintf(&b, "%s%s %s", indent, noun, cluster.FormatShards(st.Shards))
	switch {
	case st.Worker == "":
		b.WriteString(": no worker owns them")
	case st.Since.IsZero():
		fmt.Fprintf(&b, ": worker %s holds no lease", st.Worker)
	default:
		fmt.Fprintf(&b, ": worker %s has had no lease since %s", st.Worker, st.Since.Local().Format(time.TimeOnly))
	}
	if st.Host != "" {
		fmt.Fprintf(&b, " (it ran on %s)", st.Host)
	}
	if st.Tasks > 0 {
		fmt.Fprintf(&b, "; %d messages of tasks wait for it", st.Tasks)
	}
	db, name := "FILE", ""
	if st.DBPath != "" {
		db = st.DBPath
	}
	if st.Worker != "" {
		name = " --name " + st.Worker
	}
	fmt.Fprintf(&b, "\n%s  start it: linkpatrol worker --nats %s --db %s --shards %s%s\n", indent, natsURL, db, cluster.FormatShards(st.Range), name)
	return b.String()
}

// frontierAway says whether err, from a request to the frontier, means it
// is away for now (killed, restarting, or JetStream not yet recovered from
// its store) rather than refusing for good.
func frontierAway(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, nats.ErrConnectionReconnecting) ||
		errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, jetstream.ErrJetStreamNotEnabled) ||
		errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount)
}
