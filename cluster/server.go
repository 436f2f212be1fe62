package cluster

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// DefaultListen is where serve-frontier listens unless told otherwise:
// loopback, NATS's own port.
const DefaultListen = "127.0.0.1:4222"

// ServerOptions configure the NATS server serve-frontier embeds.
type ServerOptions struct {
	// Listen is host:port for clients; port 0 picks a free one. "" is
	// DefaultListen.
	Listen string
	// StoreDir holds JetStream's file store: the streams and KV buckets
	// of every pass, so a restarted server continues where it stopped.
	StoreDir string
	// SyncInterval is how often JetStream fsyncs in the background. 0 is
	// "always": an fsync after every write, so a message the server has
	// acknowledged survives a power loss (JetStream's own default, every
	// 2 minutes, can lose acknowledged tasks).
	SyncInterval time.Duration
	// Auth, when set, is required of every client.
	Auth Auth
	// TLSCert and TLSKey are PEM files; with them clients must use TLS.
	TLSCert, TLSKey string
	// Logger gets the server's notices and errors; nil discards them.
	Logger *slog.Logger
}

// Auth is how clients prove who they are: a shared token or an nkey.
// Each is read from a file, never from the command line, where ps would
// show it to every user of the machine.
type Auth struct {
	TokenFile string
	// NkeyFile holds an nkey user seed (SU…), as `nk -gen user` writes
	// it; the server needs only its public key, so it may hold just that
	// (U…).
	NkeyFile string
}

func (a Auth) set() bool { return a.TokenFile != "" || a.NkeyFile != "" }

// Server is a running embedded NATS server with JetStream.
type Server struct {
	ns  *server.Server
	url string
}

// Serve starts the server and waits until it accepts connections. It
// refuses to listen beyond loopback without both auth and TLS: the
// frontier carries every URL of a pass and accepts work from anyone who
// can reach it.
func Serve(opt ServerOptions) (*Server, error) {
	if opt.Listen == "" {
		opt.Listen = DefaultListen
	}
	host, portStr, err := net.SplitHostPort(opt.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen address %q: want HOST:PORT, such as %s", opt.Listen, DefaultListen)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("listen address %q: bad port", opt.Listen)
	}
	if err := CheckExposure(host, opt.Auth, opt.TLSCert != "" && opt.TLSKey != ""); err != nil {
		return nil, err
	}
	if opt.StoreDir == "" {
		return nil, errors.New("no JetStream store directory")
	}
	if (opt.TLSCert == "") != (opt.TLSKey == "") {
		return nil, errors.New("TLS needs both a certificate and its key")
	}
	if port == 0 {
		port = server.RANDOM_PORT // NATS reads 0 as its default port
	}
	so := &server.Options{
		ServerName: "linkpatrol",
		Host:       host,
		Port:       port,
		JetStream:  true,
		StoreDir:   opt.StoreDir,
		// The embedding process owns signals: serve-frontier shuts the
		// server down itself on SIGINT and SIGTERM.
		NoSigs:       true,
		SyncAlways:   opt.SyncInterval == 0,
		SyncInterval: opt.SyncInterval,
	}
	if opt.Auth.TokenFile != "" {
		tok, err := readSecret(opt.Auth.TokenFile)
		if err != nil {
			return nil, err
		}
		so.Authorization = tok
	}
	if opt.Auth.NkeyFile != "" {
		pub, err := publicNkey(opt.Auth.NkeyFile)
		if err != nil {
			return nil, err
		}
		so.Nkeys = []*server.NkeyUser{{Nkey: pub}}
	}
	if opt.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(opt.TLSCert, opt.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("TLS certificate: %w", err)
		}
		so.TLS = true
		so.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		so.TLSTimeout = 5
	}
	ns, err := server.NewServer(so)
	if err != nil {
		return nil, fmt.Errorf("NATS server: %w", err)
	}
	if opt.Logger != nil {
		ns.SetLoggerV2(natsLogger{opt.Logger}, false, false, false)
	}
	ns.Start()
	// JetStream recovers its streams from disk before it accepts
	// connections; a big store takes a while.
	if !ns.ReadyForConnections(time.Minute) {
		ns.Shutdown()
		return nil, fmt.Errorf("NATS server on %s did not start (is the port taken, or the store %s locked by another server?)", opt.Listen, opt.StoreDir)
	}
	if !ns.JetStreamEnabled() {
		ns.Shutdown()
		return nil, fmt.Errorf("NATS server on %s started without JetStream (store %s)", opt.Listen, opt.StoreDir)
	}
	return &Server{ns: ns, url: ns.ClientURL()}, nil
}

// CheckExposure refuses a listen host beyond loopback unless clients must
// authenticate and use TLS. host is as in HOST:PORT; "" and "0.0.0.0"
// are every interface.
func CheckExposure(host string, auth Auth, withTLS bool) error {
	if isLoopback(host) {
		return nil
	}
	var missing []string
	if !auth.set() {
		missing = append(missing, "auth (--token-file FILE or --nkey FILE)")
	}
	if !withTLS {
		missing = append(missing, "TLS (--tls-cert FILE and --tls-key FILE)")
	}
	if len(missing) == 0 {
		return nil
	}
	where := host
	if where == "" {
		where = "every interface"
	}
	return fmt.Errorf("refusing to listen on %s without %s: anyone who reaches the port could read every URL of a pass and queue work for the workers; listen on 127.0.0.1, or give %s",
		where, strings.Join(missing, " and "), strings.Join(missing, " and "))
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// ClientURL is the URL clients connect to: nats://HOST:PORT (tls:// is
// not needed, the server asks for TLS itself).
func (s *Server) ClientURL() string { return s.url }

// Shutdown stops the server and waits until JetStream has written what it
// holds.
func (s *Server) Shutdown() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
}

// readSecret reads a token file: its first line, which must not be empty.
func readSecret(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	tok, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	tok = strings.TrimSpace(tok)
	if tok == "" {
		return "", fmt.Errorf("token file %s is empty", path)
	}
	return tok, nil
}

// publicNkey reads an nkey file holding a user seed (or only the user's
// public key) and returns the public key the server checks signatures
// against.
func publicNkey(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("nkey file: %w", err)
	}
	s := strings.TrimSpace(string(b))
	if nkeys.IsValidPublicUserKey(s) {
		return s, nil
	}
	kp, err := nkeys.ParseDecoratedNKey(b)
	if err != nil {
		return "", fmt.Errorf("nkey file %s holds no user nkey: %w", path, err)
	}
	pub, err := kp.PublicKey()
	if err != nil || !nkeys.IsValidPublicUserKey(pub) {
		return "", fmt.Errorf("nkey file %s holds no user nkey (generate one with: nk -gen user)", path)
	}
	return pub, nil
}

// natsLogger passes the server's log to slog: notices at Info, so they
// show with -v only.
type natsLogger struct{ l *slog.Logger }

func (n natsLogger) Noticef(format string, v ...any) { n.l.Info("nats: " + fmt.Sprintf(format, v...)) }
func (n natsLogger) Warnf(format string, v ...any)   { n.l.Warn("nats: " + fmt.Sprintf(format, v...)) }
func (n natsLogger) Fatalf(format string, v ...any)  { n.l.Error("nats: " + fmt.Sprintf(format, v...)) }
func (n natsLogger) Errorf(format string, v ...any)  { n.l.Error("nats: " + fmt.Sprintf(format, v...)) }
func (n natsLogger) Debugf(format string, v ...any)  { n.l.Debug("nats: " + fmt.Sprintf(format, v...)) }
func (n natsLogger) Tracef(string, ...any)           {}
