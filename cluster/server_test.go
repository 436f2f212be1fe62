package cluster

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
)

func serve(t *testing.T, opt ServerOptions) *Server {
	t.Helper()
	if opt.Listen == "" {
		opt.Listen = "127.0.0.1:0"
	}
	if opt.StoreDir == "" {
		opt.StoreDir = t.TempDir()
	}
	s, err := Serve(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	return s
}

// A message JetStream acknowledged is still there after the server is shut
// down and started again on the same store, and by default every write is
// fsynced before the acknowledgement.
func TestServerKeepsItsStore(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	ctx := context.Background()
	s, err := Serve(ServerOptions{Listen: "127.0.0.1:0", StoreDir: store})
	if err != nil {
		t.Fatal(err)
	}
	if cfg := s.ns.JetStreamConfig(); cfg == nil || !cfg.SyncAlways {
		t.Errorf("JetStream config %+v: want SyncAlways by default", cfg)
	}
	if !strings.HasPrefix(s.ClientURL(), "nats://127.0.0.1:") || strings.HasSuffix(s.ClientURL(), ":4222") {
		t.Errorf("client URL %q: want loopback on a free port", s.ClientURL())
	}
	nc, err := Connect(s.ClientURL(), ClientOptions{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	js, _ := jetstream.New(nc)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "t.1", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	s.Shutdown()

	s2 := serve(t, ServerOptions{StoreDir: store})
	nc2, err := Connect(s2.ClientURL(), ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer nc2.Close()
	js2, _ := jetstream.New(nc2)
	st, err := js2.Stream(ctx, "T")
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.GetLastMsgForSubject(ctx, "t.1")
	if err != nil || string(m.Data) != "kept" {
		t.Fatalf("after a restart: %v %q, want the message", err, m.Data)
	}

	lazy := serve(t, ServerOptions{SyncInterval: time.Second})
	if cfg := lazy.ns.JetStreamConfig(); cfg.SyncAlways || cfg.SyncInterval != time.Second {
		t.Errorf("SyncInterval 1s: config %+v", cfg)
	}
}

func TestExposureNeedsAuthAndTLS(t *testing.T) {
	t.Parallel()
	token := Auth{TokenFile: "t"}
	for _, c := range []struct {
		host    string
		auth    Auth
		tls     bool
		refused string
	}{
		{"127.0.0.1", Auth{}, false, ""},
		{"127.9.9.9", Auth{}, false, ""},
		{"::1", Auth{}, false, ""},
		{"[::1]", Auth{}, false, ""},
		{"localhost", Auth{}, false, ""},
		{"0.0.0.0", Auth{}, false, "auth (--token-file FILE or --nkey FILE) and TLS"},
		{"", Auth{}, false, "every interface"},
		{"192.168.1.5", token, false, "without TLS"},
		{"192.168.1.5", Auth{}, true, "without auth"},
		{"10.0.0.1", Auth{NkeyFile: "k"}, true, ""},
		{"example.com", token, true, ""},
		{"example.com", token, false, "without TLS"},
	} {
		err := CheckExposure(c.host, c.auth, c.tls)
		switch {
		case c.refused == "" && err != nil:
			t.Errorf("%q: refused: %v", c.host, err)
		case c.refused != "" && (err == nil || !strings.Contains(err.Error(), c.refused)):
			t.Errorf("%q auth %+v tls %v: %v, want a refusal naming %q", c.host, c.auth, c.tls, err, c.refused)
		}
	}
	// Serve refuses before it listens.
	if _, err := Serve(ServerOptions{Listen: "0.0.0.0:0", StoreDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Errorf("Serve on 0.0.0.0 without auth: %v", err)
	}
	for _, bad := range []string{"4222", "127.0.0.1:x", "127.0.0.1:70000"} {
		if _, err := Serve(ServerOptions{Listen: bad, StoreDir: t.TempDir()}); err == nil {
			t.Errorf("Serve on %q: no error", bad)
		}
	}
}

// With a token and TLS, a client needs both the token and trust in the
// certificate; without them it is turned away.
func TestTokenAndTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cert, key, ca := selfSigned(t, dir)
	tokenFile := filepath.Join(dir, "token")
	os.WriteFile(tokenFile, []byte("s3cret-token\n"), 0o600)
	wrongFile := filepath.Join(dir, "wrong")
	os.WriteFile(wrongFile, []byte("guess\n"), 0o600)
	s := serve(t, ServerOptions{Auth: Auth{TokenFile: tokenFile}, TLSCert: cert, TLSKey: key})

	nc, err := Connect(s.ClientURL(), ClientOptions{Auth: Auth{TokenFile: tokenFile}, CAFile: ca})
	if err != nil {
		t.Fatalf("with the token and the CA: %v", err)
	}
	if !nc.TLSRequired() {
		t.Error("the connection is not TLS")
	}
	nc.Close()
	for name, opt := range map[string]ClientOptions{
		"no token":    {CAFile: ca},
		"wrong token": {Auth: Auth{TokenFile: wrongFile}, CAFile: ca},
		"no CA":       {Auth: Auth{TokenFile: tokenFile}},
	} {
		if nc, err := Connect(s.ClientURL(), opt); err == nil {
			nc.Close()
			t.Errorf("%s: connected", name)
		}
	}
}

func TestNkey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	user, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := user.Seed()
	pub, _ := user.PublicKey()
	seedFile, pubFile := filepath.Join(dir, "user.nk"), filepath.Join(dir, "user.pub")
	os.WriteFile(seedFile, seed, 0o600)
	os.WriteFile(pubFile, []byte(pub+"\n"), 0o644)
	other, _ := nkeys.CreateUser()
	otherSeed, _ := other.Seed()
	otherFile := filepath.Join(dir, "other.nk")
	os.WriteFile(otherFile, otherSeed, 0o600)

	// The server takes the seed or only the public key.
	for _, serverFile := range []string{seedFile, pubFile} {
		s := serve(t, ServerOptions{Auth: Auth{NkeyFile: serverFile}})
		nc, err := Connect(s.ClientURL(), ClientOptions{Auth: Auth{NkeyFile: seedFile}})
		if err != nil {
			t.Fatalf("server given %s: %v", filepath.Base(serverFile), err)
		}
		nc.Close()
		if nc, err := Connect(s.ClientURL(), ClientOptions{Auth: Auth{NkeyFile: otherFile}}); err == nil {
			nc.Close()
			t.Error("another user's nkey connected")
		}
		if nc, err := Connect(s.ClientURL(), ClientOptions{}); err == nil {
			nc.Close()
			t.Error("a client without an nkey connected")
		}
	}
	garbage := filepath.Join(dir, "garbage")
	os.WriteFile(garbage, []byte("not a key"), 0o600)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	for _, opt := range []ServerOptions{
		{Auth: Auth{NkeyFile: garbage}},
		{Auth: Auth{TokenFile: empty}},
		{Auth: Auth{TokenFile: filepath.Join(dir, "missing")}},
		{TLSCert: pubFile},
	} {
		opt.Listen, opt.StoreDir = "127.0.0.1:0", t.TempDir()
		if s, err := Serve(opt); err == nil {
			s.Shutdown()
			t.Errorf("Serve(%+v): no error", opt)
		}
	}
}

// selfSigned writes a certificate for 127.0.0.1 signed by its own CA and
// returns the certificate, key and CA files.
func selfSigned(t *testing.T, dir string) (certFile, keyFile, caFile string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile, caFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"), filepath.Join(dir, "ca.pem")
	write := func(name, typ string, b []byte) {
		if err := os.WriteFile(name, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(certFile, "CERTIFICATE", der)
	write(keyFile, "EC PRIVATE KEY", keyDER)
	write(caFile, "CERTIFICATE", caDER)
	return certFile, keyFile, caFile
}
