package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/linkpatrol/linkpatrol/cluster"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// natsAuthFlags are how every cluster command proves itself to the
// frontier, and how serve-frontier says what it requires.
type natsAuthFlags struct {
	tokenFile, nkeyFile string
}

func (a *natsAuthFlags) register(fs *pflag.FlagSet, server bool) {
	token, nkey := "file holding the token clients must present", "file holding the nkey user seed (nk -gen user) or public key clients must sign with"
	if !server {
		token, nkey = usageTokenFile, usageNkey
	}
	fs.StringVar(&a.tokenFile, "token-file", "", token)
	fs.StringVar(&a.nkeyFile, "nkey", "", nkey)
}

func (a natsAuthFlags) auth() cluster.Auth {
	return cluster.Auth{TokenFile: a.tokenFile, NkeyFile: a.nkeyFile}
}

// syncValue is --sync: "always" (an fsync after every JetStream write) or
// how often JetStream fsyncs in the background.
type syncValue struct{ every time.Duration }

func (s *syncValue) String() string {
	if s.every == 0 {
		return "always"
	}
	return throttle.FormatDuration(s.every)
}

func (s *syncValue) Set(v string) error {
	if v == "always" {
		s.every = 0
		return nil
	}
	var d throttle.Duration
	if err := d.Set(v); err != nil || d <= 0 {
		return fmt.Errorf("want always or an interval such as 1s")
	}
	s.every = time.Duration(d)
	return nil
}

func (s *syncValue) Type() string { return "always|interval" }

// runServeFrontier serves until ctx is cancelled: the first stop signal.
func runServeFrontier(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("serve-frontier", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", cluster.DefaultListen, "`HOST:PORT` to listen on; beyond loopback only with --token-file or --nkey, and --tls-cert and --tls-key")
	storeDir := fs.String("store", "linkpatrol-frontier", "`DIR` of JetStream's file store: the streams and KV of every pass, kept across restarts")
	var sync syncValue
	fs.Var(&sync, "sync", "fsync JetStream's store after every write (always), or in the background this often: acknowledged work may be lost on power loss")
	var auth natsAuthFlags
	auth.register(fs, true)
	tlsCert := fs.String("tls-cert", "", "PEM `file` of the server's TLS certificate; clients then must use TLS, and trust it with --tls-ca (a self-signed certificate is its own CA)")
	tlsKey := fs.String("tls-key", "", "PEM `file` of the certificate's private key")
	dbPath := fs.String("db", defaultDB, "the merged database `file`: every worker's results are committed here, so report works unchanged")
	natsURL := fs.String("nats", "", "use the NATS server at `URL` (JetStream enabled) instead of running one; --token-file, --nkey and --tls-ca are then how to log in")
	caFile := fs.String("tls-ca", "", "with --nats: PEM `file` of the authority that signed the server's TLS certificate")
	verbose := fs.CountP("verbose", "v", "log what the NATS server and the coordinator do")
	leaseTTL := fs.Duration("lease-ttl", 15*time.Second, "how long a worker's hold on its shards outlives its last renewal: a killed worker's shards are free at once for its restart on the same --db file, and after this for another worker or a restart on another file")
	fs.Usage = func() {
		fmt.Fprintf(helpWriter(args, stdout, stderr), `Usage: linkpatrol serve-frontier [flags]

Runs the NATS JetStream server that the workers of a distributed pass share
(see README, "Many sites, many machines"). It prints the URL workers and
check connect to with --nats, and runs until SIGINT or SIGTERM.

Flags:
%s`, flagUsages(fs))
	}
	if help, err := parseNoArgs(fs, args); help || err != nil {
		return err
	}
	if *leaseTTL < time.Second {
		return fmt.Errorf("--lease-ttl %s: want 1s or more (workers renew at a third of it)", *leaseTTL)
	}
	log, err := newLogger(stderr, *verbose, "text")
	if err != nil {
		return err
	}
	url := *natsURL
	var own *cluster.Server
	if url == "" {
		srv, err := cluster.Serve(cluster.ServerOptions{
			Listen:       *listen,
			StoreDir:     *storeDir,
			SyncInterval: sync.every,
			Auth:         auth.auth(),
			TLSCert:      *tlsCert,
			TLSKey:       *tlsKey,
			Logger:       log,
		})
		if err != nil {
			return fmt.Errorf("serve-frontier: %v", err)
		}
		defer srv.Shutdown()
		url, own = srv.ClientURL(), srv
	}
	db, err := store.Open(*dbPath, store.Options{Timeout: 2 * time.Second})
	if err != nil {
		return err
	}
	defer db.Close()
	cf := clusterFlags{url: url, auth: auth, caFile: *caFile, own: own}
	js, closeNC, err := cf.connect("serve-frontier")
	if err != nil {
		return err
	}
	defer closeNC()
	coord, err := cluster.NewCoordinator(ctx, js, cluster.Options{LeaseTTL: *leaseTTL}, cluster.CoordinatorConfig{
		DB:   db,
		Logf: func(format string, args ...any) { log.Info(fmt.Sprintf(format, args...)) },
	})
	if err != nil {
		return fmt.Errorf("serve-frontier: %w", err)
	}
	if err := serveReports(ctx, js.Conn(), js, db, log); err != nil {
		return fmt.Errorf("serve-frontier: %w", err)
	}
	durability := "an fsync after every write"
	if sync.every > 0 {
		durability = "fsync every " + throttle.FormatDuration(sync.every)
	}
	if *natsURL != "" {
		durability = "the server's own durability settings"
	}
	// The URL alone on its line on standard output, for scripts; what it
	// is on standard error, for people.
	fmt.Fprintln(stdout, url)
	fmt.Fprintf(stderr, "serve-frontier: workers and check connect with --nats %s (JetStream store %s, %s; results into %s); SIGINT or SIGTERM stops it\n",
		url, *storeDir, durability, *dbPath)
	if err := coord.Run(ctx); err != nil {
		return fmt.Errorf("serve-frontier: %w", err)
	}
	return nil
}
