package crawler_test

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
)

// pipeServer serves h over in-memory connections (net.Pipe) for tests that
// run in a testing/synctest bubble: the crawler's transport dials it, and
// everything, timers included, lives in the bubble, so time is the bubble's
// fake clock. A limit on time (a rate, a window, bytes per second) is then
// measured at the server exactly, free of the scheduling noise of a busy
// machine, and the test costs no real waiting.
//
// Every URL's host reaches the same handler; the returned URL names
// 127.0.0.1 so that nothing asks a resolver.
func pipeServer(t *testing.T, h http.Handler) (base string, tr *http.Transport) {
	t.Helper()
	l := &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
	srv := &http.Server{Handler: h}
	served := make(chan struct{})
	go func() {
		defer close(served)
		srv.Serve(l) // returns once Close closes the listener
	}()
	tr = &http.Transport{DialContext: l.dial}
	// Cleanups run inside the bubble; nothing may be left blocked on a pipe
	// when it ends, or the bubble counts it as a deadlock.
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		srv.Close()
		<-served
	})
	return "http://127.0.0.1", tr
}

// pipeListener hands the server side of each dialled net.Pipe to Accept.
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80} }
