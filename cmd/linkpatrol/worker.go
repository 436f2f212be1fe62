package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/pflag"

	"github.com/linkpatrol/linkpatrol/cluster"
	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
)

// passSettings is what check --nats stores in the pass record for the
// workers (cluster.PassRecord.Config): check's own arguments and the
// config file's bytes, so that every worker decides URLs by the pass's
// rules and settings, not by its own files. ${ENV} secrets of the file
// are expanded on each worker.
type passSettings struct {
	Args       []string `json:"args"`
	Config     []byte   `json:"config,omitempty"`
	ConfigName string   `json:"config_name,omitempty"`
}

// passCrawl is the crawl a worker runs for a pass, built from its settings
// exactly as check builds its own.
type passCrawl struct {
	o      checkOptions
	file   *rules.File
	engine *rules.Engine
	starts []string
}

func (ps passSettings) crawl() (*passCrawl, error) {
	var pc passCrawl
	fs, _ := newFlags("check", &pc.o)
	fs.SetOutput(io.Discard)
	if err := fs.Parse(ps.Args); err != nil {
		return nil, fmt.Errorf("the pass's settings: %w", err)
	}
	// The pass's config file is read as check read it, from its bytes:
	// never the worker's own ./linkpatrol.toml (an empty file stands for
	// none). Its warnings were shown by check.
	dir, err := os.MkdirTemp("", "linkpatrol-pass")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	name := rules.DefaultConfigFile
	if ps.ConfigName != "" {
		name = filepath.Base(ps.ConfigName)
	}
	pc.o.config = filepath.Join(dir, name)
	if err := os.WriteFile(pc.o.config, ps.Config, 0o600); err != nil {
		return nil, err
	}
	if pc.file, err = loadSettings(fs, &pc.o, io.Discard, "text"); err != nil {
		return nil, fmt.Errorf("the pass's settings: %w", err)
	}
	if err := crossCheck(fs, &pc.o, pc.file); err != nil {
		return nil, fmt.Errorf("the pass's settings: %w", err)
	}
	args := fs.Args()
	if len(args) == 0 {
		args = pc.o.start
	}
	targets, err := parseTargets(args, "")
	if err != nil {
		return nil, fmt.Errorf("the pass's start URLs: %w", err)
	}
	pc.starts = targets.starts
	if pc.engine, err = rules.New(rulesConfig(pc.file, &pc.o, pc.starts, pc.o.polite.hostRules(fs, pc.starts))); err != nil {
		return nil, fmt.Errorf("the pass's rules: %w", err)
	}
	return &pc, nil
}

func runWorker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("worker", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	var cf clusterFlags
	cf.register(fs)
	dbPath := fs.String("db", "", "the worker's own database `file` (its history, resume and outbox)")
	shardsArg := fs.String("shards", "", "the shards this worker owns: ranges of 0-255, such as 0-127 or 0-9,200")
	name := fs.String("name", "", "the worker's name in the cluster, the same across restarts (default: the --db file's name)")
	concurrency := fs.IntP("concurrency", "c", 0, "requests in flight in total on this worker (default: the pass's --concurrency)")
	verbose := fs.CountP("verbose", "v", "log what the worker does (-vv: more)")
	fs.Usage = func() {
		fmt.Fprintf(helpWriter(args, stdout, stderr), `Usage: linkpatrol worker --nats URL --db FILE --shards RANGES [flags]

Owns the shards it is given (refusing any another worker holds) and crawls
their hosts in every pass that check --nats begins, with the pass's rules and
settings, on its own database. It runs until SIGINT or SIGTERM; restarted on
the same --db it resumes and takes its shards back. A name belongs to one
database file: a second live worker of the name is refused (exit 2), and one
started again on another file waits for the old leases to lapse, and the
pass running then ends unfinished (the old file's queued URLs were lost).

Flags:
%s`, flagUsages(fs))
	}
	if help, err := parseNoArgs(fs, args); help || err != nil {
		return err
	}
	switch {
	case cf.url == "":
		return fmt.Errorf("worker needs --nats URL, the frontier's address (serve-frontier prints it)")
	case *dbPath == "":
		return fmt.Errorf("worker needs --db FILE, its own database")
	case *shardsArg == "":
		return fmt.Errorf("worker needs --shards, such as --shards 0-127")
	case fs.Changed("concurrency") && *concurrency < 1:
		return fmt.Errorf("--concurrency %d: want 1 or more", *concurrency)
	}
	shards, err := cluster.ParseShards(*shardsArg)
	if err != nil {
		return err
	}
	if *name == "" {
		*name = strings.TrimSuffix(filepath.Base(*dbPath), filepath.Ext(*dbPath))
	}
	log, err := newLogger(stderr, *verbose, "text")
	if err != nil {
		return err
	}
	db, err := store.Open(*dbPath, store.Options{Timeout: 2 * time.Second, ForwardResults: true})
	if err != nil {
		return err
	}
	defer db.Close()
	js, closeNC, err := cf.connect("worker " + *name)
	if err != nil {
		return err
	}
	defer closeNC()

	stop, hard := ctx, hardStop(ctx) // the first and the second stop signal
	host, _ := os.Hostname()
	where, err := filepath.Abs(*dbPath)
	if err != nil {
		where = *dbPath
	}
	w, err := cluster.NewWorker(stop, js, cluster.WorkerConfig{
		Name: *name, Shards: shards, DB: db, Host: host, DBPath: where,
		Logf: func(format string, args ...any) { log.Warn(fmt.Sprintf(format, args...)) },
	})
	if err != nil {
		return workerStartErr(stop, *name, err)
	}
	defer w.Close()
	fmt.Fprintf(stderr, "worker %s: shards %s of %s, database %s; waiting for a pass\n", *name, cluster.FormatShards(shards), cf.url, *dbPath)

	// Stop crawling at a signal, and at once when a lease is lost: another
	// worker may own the shard from then on.
	run, cancelRun := context.WithCancelCause(stop)
	defer cancelRun(nil)
	context.AfterFunc(w.Context(), func() { cancelRun(context.Cause(w.Context())) })

	var after uint64
	if last, ok, err := db.LastPass(); err != nil {
		return err
	} else if ok && last.State == store.PassComplete {
		after = last.ID // resume an unfinished one, never redo a finished one
	}
	for {
		rec, err := w.WaitPass(run, after)
		if err != nil {
			return workerEnd(stop, run, stderr, *name, err)
		}
		ended, err := workerPass(run, hard, w, db, rec, *concurrency, log, stderr, *name)
		if err != nil {
			return workerEnd(stop, run, stderr, *name, err)
		}
		after = rec.Pass.ID
		if ended == store.PassStopped {
			after-- // wait for it to be resumed, or for a newer one
		}
	}
}

// workerStartErr is the exit of a worker that did not start: 0 when a
// signal stopped it (while it waited for a twin's leases to lapse), 2
// otherwise (see stoppedBySignal).
func workerStartErr(stop context.Context, name string, err error) error {
	if stoppedBySignal(stop, err) {
		return nil
	}
	return fmt.Errorf("worker %s: %w", name, err)
}

// stoppedBySignal says whether err is the cancellation a signal (stop)
// caused, the one failure that is a clean stop. A refusal (a
// *cluster.HeldError names the worker holding the shards), a pass whose
// settings it cannot take, a NATS or database error stays an error even
// when a signal came meanwhile: a supervisor stopping a refused or broken
// worker must not read a clean stop (review5 #4).
func stoppedBySignal(stop context.Context, err error) bool {
	return stop.Err() != nil && errors.Is(err, stop.Err())
}

// workerEnd is the exit of a worker: 0 when a signal stopped it, 3 when it
// lost a lease (a supervisor should start it again), 2 otherwise.
func workerEnd(stop, run context.Context, stderr io.Writer, name string, err error) error {
	if stoppedBySignal(stop, err) {
		return nil
	}
	if run.Err() != nil && !errors.Is(context.Cause(run), context.Canceled) {
		// Stopped by a lost lease, not by the signal.
		fmt.Fprintf(stderr, "linkpatrol: worker %s stopped: %v; start it again to take its shards back\n", name, context.Cause(run))
		return errUnfinished
	}
	return fmt.Errorf("worker %s: %w", name, err)
}

// workerPass runs this worker's part of one pass: begins it in the
// worker's database under the coordinator's ID (or resumes it there), and
// crawls the worker's shards until the coordinator ends or stops the
// pass. It returns how the pass ended here: stopped leaves it open in the
// worker's database, to be resumed when the coordinator runs it again.
func workerPass(ctx, hard context.Context, w *cluster.Worker, db *store.DB, rec cluster.PassRecord, concurrency int, log *slog.Logger, stderr io.Writer, name string) (store.PassState, error) {
	var ps passSettings
	pc, err := (*passCrawl)(nil), json.Unmarshal(rec.Config, &ps)
	if err != nil {
		err = fmt.Errorf("its settings: %w", err)
	} else {
		pc, err = ps.crawl()
	}
	if err != nil {
		// Said to the cluster, so that check --nats fails with the reason
		// at once instead of waiting for this worker's shards.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if rerr := w.Refuse(rctx, rec.Pass.ID, err.Error()); rerr != nil {
			log.Warn(fmt.Sprintf("tell the cluster this worker refuses pass %d: %v", rec.Pass.ID, rerr))
		}
		return "", fmt.Errorf("pass %d: %w", rec.Pass.ID, err)
	}
	if err := beginPass(db, rec); err != nil {
		return "", err
	}
	f, err := join(ctx, w, rec.Pass.ID, log)
	if err != nil {
		return "", err
	}
	defer f.Close()
	// The crawler sees the pass done only when the coordinator calls it
	// complete. One it stops (check --nats --max-time, or URLs deferred)
	// or abandons stops the crawler as a signal would: what is in flight
	// is finished and committed, and the rest stays open in this database
	// for a resume. (An idle crawler told "done" would close the pass
	// complete, and a complete pass cannot take the tasks a resume brings.)
	crawl, stopCrawl := context.WithCancel(ctx)
	defer stopCrawl()
	pf := passFrontier{Frontier: f, done: make(chan struct{})}
	go func() {
		select {
		case <-f.Done():
			if f.Ended() == store.PassComplete {
				close(pf.done)
			} else {
				stopCrawl()
			}
		case <-crawl.Done():
		}
	}()
	cfg := crawlerConfig(&pc.o, pc.file, pc.engine, nil, nil, pc.o.polite.globalBandwidth, log)
	if concurrency > 0 {
		cfg.Concurrency = concurrency
	}
	cfg.Frontier = pf
	c := crawler.New(cfg, pc.engine, db)
	spec := crawler.PassSpec{Pass: rec.Pass, Opened: func(op crawler.Opened) error {
		fmt.Fprintf(stderr, "worker %s: pass %d of %s (%d queued, %d done)\n", name, op.Pass.ID, strings.Join(op.Pass.StartURLs, " "), op.Queued, op.Done)
		// status --nats shows the worker's counts for the whole pass:
		// what earlier runs of it did here, and this run's.
		before := int64(op.Done)
		f.ReportProgress(func() crawler.Progress {
			p := c.Progress()
			p.Done += before
			return p
		})
		return nil
	}}
	pass, _, err := c.Run(crawl, hard, spec)
	if err != nil {
		return "", fmt.Errorf("pass %d: %w (what was committed is kept; start the worker again to resume)", rec.Pass.ID, err)
	}
	if ctx.Err() != nil {
		return "", context.Cause(ctx)
	}
	if ended := f.Ended(); ended != pass.State {
		// The coordinator's word on how the pass ended: complete, stopped
		// (by --max-time, or with URLs deferred), or abandoned for a
		// newer one.
		pass.State = ended
		if err := db.UpdatePass(pass); err != nil {
			return "", fmt.Errorf("save pass %d: %w", pass.ID, err)
		}
	}
	fmt.Fprintf(stderr, "worker %s: pass %d %s\n", name, pass.ID, pass.State)
	return pass.State, nil
}

// passFrontier is a worker's cluster.Frontier as its crawler sees it:
// Done closes only for a complete pass (see workerPass).
type passFrontier struct {
	*cluster.Frontier
	done chan struct{}
}

func (p passFrontier) Done() <-chan struct{} { return p.done }

// join joins the pass, again while the frontier is away (serve-frontier
// restarting on its store): the lease renewals give up after their own
// bound, and that ends ctx.
func join(ctx context.Context, w *cluster.Worker, pass uint64, log *slog.Logger) (*cluster.Frontier, error) {
	for {
		f, err := w.Join(ctx, pass)
		if err == nil || ctx.Err() != nil || !frontierAway(err) {
			return f, err
		}
		log.Warn("the frontier does not answer; joining again", "pass", pass, "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// beginPass opens the coordinator's pass in the worker's database under
// the coordinator's ID, with no seeds (they arrive as tasks), unless it is
// open there already (a restarted worker resumes it); another unfinished
// pass is abandoned.
func beginPass(db *store.DB, rec cluster.PassRecord) error {
	open, ok, err := db.OpenPass()
	if err != nil || (ok && open.ID == rec.Pass.ID) {
		return err
	}
	p := rec.Pass
	p.State, p.Finished, p.Elapsed, p.Deferred, p.ResumeAfter, p.Tally, p.RunStarted, p.Alive = "", time.Time{}, 0, 0, time.Time{}, nil, time.Time{}, time.Time{}
	if ok {
		open.State, open.Finished = store.PassAbandoned, time.Now()
		if err := db.UpdatePass(open); err != nil {
			return err
		}
		// A run of it that was killed may have requests out at hosts the
		// new pass shares: the crawler, resuming the new pass, must see
		// the kill (review10 R10).
		p.RunStarted, p.Alive = open.RunStarted, open.Alive
	}
	_, err = db.BeginPass(p, nil)
	return err
}

// clusterFlags are how a command reaches the frontier.
type clusterFlags struct {
	url    string
	auth   natsAuthFlags
	caFile string
	// own is the server this process embeds (serve-frontier's), reached
	// inside the process rather than at url; nil for every other command.
	own *cluster.Server
}

// The cluster flags' help, shared by the settings table (check, report)
// and the cluster's own commands.
const (
	usageNats      = "`URL` of the frontier (serve-frontier prints it): nats://HOST:PORT"
	usageTokenFile = "file holding the token serve-frontier requires"
	usageNkey      = "file holding the nkey user seed serve-frontier knows the public key of"
	usageTLSCA     = "PEM `file` of the authority that signed serve-frontier's TLS certificate (a self-signed certificate: the certificate file itself)"
)

func (c *clusterFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.url, "nats", "", usageNats)
	c.auth.register(fs, false)
	fs.StringVar(&c.caFile, "tls-ca", "", usageTLSCA)
}

func (c *clusterFlags) connect(name string) (jetstream.JetStream, func(), error) {
	opt := cluster.ClientOptions{Auth: c.auth.auth(), CAFile: c.caFile, Name: name}
	var nc *nats.Conn
	var err error
	if c.own != nil {
		nc, err = c.own.Connect(opt)
	} else {
		nc, err = cluster.Connect(c.url, opt)
	}
	if err != nil {
		return nil, nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return js, nc.Close, nil
}
