package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/linkpatrol/linkpatrol/cluster"
	"github.com/linkpatrol/linkpatrol/crawler/crawltest"
)

// proc is a long-running command of the program (serve-frontier, a
// worker, check --nats), with its standard error kept for failure
// messages. It runs in-process through run (inProc) unless the test needs
// what only a process has (newProc): a signal, SIGKILL, its own working
// directory or environment. In-process, the test's stop is the
// cancellation the first SIGINT or SIGTERM causes in main, and its exit
// code is what run returns, what main exits with.
type proc struct {
	args    []string
	cmd     *exec.Cmd // nil in-process
	stdout  io.Writer // set before start; nil discards it
	mu      sync.Mutex
	stderr  bytes.Buffer
	changed chan struct{} // closed and replaced at every write to stderr
	done    chan struct{}
	code    int
	cancel  context.CancelFunc // in-process: stops it as a signal would
}

// newProc is the command as a child process of the binary.
func newProc(args ...string) *proc {
	p := &proc{args: args, cmd: exec.Command(binary, args...), done: make(chan struct{}), changed: make(chan struct{})}
	p.cmd.Stderr = p
	dieWithParent(p.cmd)
	return p
}

// inProc is the command run in this process.
func inProc(args ...string) *proc {
	return &proc{args: args, done: make(chan struct{}), changed: make(chan struct{})}
}

func (p *proc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	close(p.changed)
	p.changed = make(chan struct{})
	return p.stderr.Write(b)
}

// name is the command and its subcommand's first word, for messages.
func (p *proc) name() []string { return p.args[:min(2, len(p.args))] }

// start runs the command; the test's end stops it (if it still runs) and
// waits for it.
func (p *proc) start(t *testing.T) {
	t.Helper()
	if p.cmd == nil {
		// Not the test's context: a cleanup stops it, after the test.
		ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
		p.cancel = cancel
		stdout := p.stdout
		if stdout == nil {
			stdout = io.Discard
		}
		go func() {
			p.code = run(ctx, p.args, strings.NewReader(""), stdout, p, false)
			close(p.done)
		}()
		t.Cleanup(func() { p.stop(t) })
		return
	}
	if p.stdout != nil {
		p.cmd.Stdout = p.stdout
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := p.cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			p.code = ee.ExitCode()
		}
		close(p.done)
	}()
	t.Cleanup(func() { p.stop(t) })
}

// interrupt asks the command to stop cleanly: SIGTERM to a process, the
// same cancellation in-process.
func (p *proc) interrupt() {
	if p.cmd == nil {
		p.cancel()
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
}

// stop stops the command as interrupt does, if it still runs, and waits
// for it.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	p.interrupt()
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		// A command that does not stop is a bug to see, not a hang.
		if p.cmd == nil {
			t.Errorf("%v did not stop within 30s of its stop:\n%s", p.args, p.errors())
			return
		}
		p.cmd.Process.Kill()
		<-p.done
		t.Errorf("%v did not stop within 30s of SIGTERM:\n%s", p.cmd.Args[1:], p.errors())
	}
}

// waitFor waits until the command has written want to standard error.
func (p *proc) waitFor(t *testing.T, want string) {
	t.Helper()
	timeout := time.After(2 * time.Minute)
	for {
		p.mu.Lock()
		has, changed := strings.Contains(p.stderr.String(), want), p.changed
		p.mu.Unlock()
		if has {
			return
		}
		select {
		case <-changed:
		case <-p.done:
			t.Fatalf("%v ended (exit %d) before saying %q:\n%s", p.args, p.code, want, p.errors())
		case <-timeout:
			t.Fatalf("%v did not say %q:\n%s", p.args, want, p.errors())
		}
	}
}

func (p *proc) errors() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// wait waits for the command to end and returns its exit code.
func (p *proc) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		t.Fatalf("%v did not end\n%s", p.args, p.errors())
	}
	return p.code
}

// startFrontier runs serve-frontier on a free loopback port and returns
// it and the URL it printed. The test's end stops it. args come after the
// defaults, so they may override them.
//
// It is a process, as the workers are (startWorker): in-process, a pass
// over the tests' webs took about a third longer (the frontier, the
// workers, the sites and check then share one process's threads) for
// 10-30% less CPU.
//
// JetStream fsyncs in the background here (--sync 1m), not after every
// write: an fsync per write and per consumer file is about half of what a
// pass costs serve-frontier under the race detector, and what it protects
// is a machine stopping, which no test does. A killed process loses
// nothing more without it: JetStream writes every message to the kernel
// before it acknowledges it either way. TestServeFrontier runs the
// default.
func startFrontier(t *testing.T, args ...string) (*proc, string) {
	t.Helper()
	return serveFrontier(t, append([]string{"--sync", "1m"}, args...)...)
}

// serveFrontier is startFrontier with serve-frontier's own defaults.
func serveFrontier(t *testing.T, args ...string) (*proc, string) {
	t.Helper()
	dir := t.TempDir()
	return launchFrontier(t, newProc(append([]string{"serve-frontier", "--listen", "127.0.0.1:0", "--store", filepath.Join(dir, "js"), "--db", filepath.Join(dir, "merged.db")}, args...)...))
}

// launchFrontier starts p, a serve-frontier, and returns the URL it
// printed.
func launchFrontier(t *testing.T, p *proc) (*proc, string) {
	t.Helper()
	out, w := io.Pipe()
	p.stdout = w
	p.start(t)
	go func() { <-p.done; w.Close() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("serve-frontier printed no URL: %v\n%s", err, p.errors())
	}
	go io.Copy(io.Discard, out)
	return p, strings.TrimSpace(line)
}

// serve-frontier is a real JetStream server on loopback, fsyncing every
// write by default, and stops cleanly on SIGTERM.
func TestServeFrontier(t *testing.T) {
	t.Parallel()
	p, url := serveFrontier(t)
	if !strings.HasPrefix(url, "nats://127.0.0.1:") {
		t.Fatalf("printed %q, want a nats:// URL on loopback", url)
	}
	nc, err := cluster.Connect(url, cluster.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "t", []byte("x")); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	if e := p.errors(); !strings.Contains(e, "an fsync after every write") {
		t.Errorf("stderr does not say every write is fsynced:\n%s", e)
	}
	p.interrupt() // SIGTERM: a process
	if code := p.wait(t); code != exitOK {
		t.Errorf("SIGTERM: exit %d, want 0\n%s", code, p.errors())
	}
}

func TestServeFrontierRefuses(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "js")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "0.0.0.0:0"}, "refusing to listen on 0.0.0.0 without auth (--token-file FILE or --nkey FILE) and TLS"},
		{[]string{"--listen", ":0", "--token-file", "x"}, "refusing to listen on every interface without TLS"},
		{[]string{"--sync", "sometimes"}, "want always or an interval"},
		{[]string{"--sync", "0s"}, "want always or an interval"},
		{[]string{"--listn", "127.0.0.1:0"}, "did you mean --listen?"},
		{[]string{"extra"}, "takes no arguments"},
	} {
		r := runInProcess(t, append([]string{"serve-frontier", "--store", store}, c.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("serve-frontier %v: exit %d, want 2 saying %q\n%s", c.args, r.code, c.want, r.stderr)
		}
	}
}

// README's "Several machines" sketch with a self-signed certificate:
// serve-frontier starts (its own connection does not verify the
// certificate it serves), a client without --tls-ca is told to give it,
// and one with it connects (qa5 N15: exit 2, "certificate signed by
// unknown authority", from serve-frontier itself).
func TestServeFrontierSelfSignedTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cert, err := crawltest.NewCert([]string{"127.0.0.1"}, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, token := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem"), filepath.Join(dir, "token")
	for name, b := range map[string][]byte{certFile: cert.CertPEM, keyFile: cert.KeyPEM, token: []byte("s3cret\n")} {
		if err := os.WriteFile(name, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	_, url := startFrontier(t, "--token-file", token, "--tls-cert", certFile, "--tls-key", keyFile)

	r := runInProcess(t, "status", "--nats", url, "--token-file", token)
	if r.code != exitUsage || !strings.Contains(r.stderr, "certificate signed by unknown authority; give --tls-ca with the CA of the server's certificate") {
		t.Errorf("status without --tls-ca: exit %d, want 2 and what to give:\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runInProcess(t, "status", "--nats", url, "--token-file", token, "--tls-ca", certFile)
	if r.code != exitOK {
		t.Errorf("status --tls-ca %s: exit %d, want 0:\n%s%s", certFile, r.code, r.stdout, r.stderr)
	}
}
