package cluster

import (
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// ClientOptions are how a command (worker, check, status, report) reaches
// the frontier.
type ClientOptions struct {
	// Auth is what serve-frontier requires: the same token file, or the
	// nkey seed file whose public key it was given.
	Auth Auth
	// CAFile is a PEM file of the certificate authority to trust for the
	// server's TLS certificate, for one not signed by a system root.
	CAFile string
	// Name shows in the server's connection list ("worker w1.db").
	Name string
}

// Connect opens a connection to the NATS server at url. A server that
// goes away later is reconnected to for as long as the process runs: a
// restarted serve-frontier continues the pass from its store.
func Connect(url string, opt ClientOptions) (*nats.Conn, error) {
	opts := []nats.Option{
		nats.Name(opt.Name),
		nats.Timeout(5 * time.Second),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
	}
	if opt.Auth.TokenFile != "" {
		tok, err := readSecret(opt.Auth.TokenFile)
		if err != nil {
			return nil, err
		}
		opts = append(opts, nats.Token(tok))
	}
	if opt.Auth.NkeyFile != "" {
		o, err := nats.NkeyOptionFromSeed(opt.Auth.NkeyFile)
		if err != nil {
			return nil, fmt.Errorf("nkey file %s: %w (a client needs the user seed, SU…)", opt.Auth.NkeyFile, err)
		}
		opts = append(opts, o)
	}
	if opt.CAFile != "" {
		opts = append(opts, nats.RootCAs(opt.CAFile))
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to the frontier at %s: %w", url, err)
	}
	return nc, nil
}
