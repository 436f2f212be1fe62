package cluster

import (
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
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
	opts, err := clientOptions(opt)
	if err != nil {
		return nil, err
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to the frontier at %s: %w%s", url, err, certAdvice(err, opt.CAFile))
	}
	return nc, nil
}

// Connect opens serve-frontier's own connection to the server it embeds,
// inside the process: no socket, and no TLS to verify. A certificate that
// workers must be given the authority of (a self-signed one, or one
// for a name other than the address serve-frontier listens on) is no
// reason for its own server to refuse it (qa5 N15). Auth is still
// given: the server asks every client for it.
func (s *Server) Connect(opt ClientOptions) (*nats.Conn, error) {
	opts, err := clientOptions(opt)
	if err != nil {
		return nil, err
	}
	// tls:// would make the client start TLS; the server lets an
	// in-process client choose.
	url := "nats://" + strings.TrimPrefix(strings.TrimPrefix(s.url, "tls://"), "nats://")
	nc, err := nats.Connect(url, append(opts, nats.InProcessServer(s.ns))...)
	if err != nil {
		return nil, fmt.Errorf("connect to the frontier in this process: %w", err)
	}
	return nc, nil
}

// clientOptions are the NATS options of every connection to the frontier.
func clientOptions(opt ClientOptions) ([]nats.Option, error) {
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
	return opts, nil
}

// certAdvice says what to do about a server certificate the client did
// not trust, after the error: the authority to give, or the name to use.
func certAdvice(err error, caFile string) string {
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	switch {
	case errors.As(err, &unknown) && caFile != "":
		return fmt.Sprintf("; --tls-ca %s is not the authority that signed the server's certificate (for a self-signed one, give the certificate file serve-frontier has as --tls-cert)", caFile)
	case errors.As(err, &unknown):
		return "; give --tls-ca with the CA of the server's certificate (for a self-signed one, the certificate file serve-frontier has as --tls-cert)"
	case errors.As(err, &host):
		return "; connect with a name the server's certificate is for, in --nats"
	}
	return ""
}
