package report

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// browser is one headless Chromium driven over the DevTools protocol on a
// pipe (--remote-debugging-pipe: JSON messages ending in a NUL byte, the
// browser reading fd 3 and writing fd 4). The pages of a test each get a
// tab of their own in it: one browser launch, about half a CPU-second,
// instead of one per page.
type browser struct {
	in     io.WriteCloser
	wmu    sync.Mutex // one message at a time on in
	stderr *lockedBuffer

	mu       sync.Mutex
	next     int
	calls    map[int]chan cdpMessage
	sessions map[string]chan cdpMessage // events, by session
	err      error                      // why the pipe closed
	closed   chan struct{}
}

type cdpMessage struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startBrowser launches chromium; the test's end stops it.
func startBrowser(t *testing.T, chromium string) *browser {
	t.Helper()
	toBrowser, in, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	out, fromBrowser, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	b := &browser{in: in, stderr: &lockedBuffer{}, calls: map[int]chan cdpMessage{}, sessions: map[string]chan cdpMessage{}, closed: make(chan struct{})}
	cmd := exec.Command(chromium, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--no-first-run", "--user-data-dir="+t.TempDir(), "--enable-logging=stderr", "--v=0",
		"--remote-debugging-pipe", "about:blank")
	cmd.ExtraFiles = []*os.File{toBrowser, fromBrowser} // fd 3, fd 4
	cmd.Stderr = b.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	toBrowser.Close()
	fromBrowser.Close()
	go b.read(out)
	t.Cleanup(func() {
		in.Close() // the browser exits when its pipe closes
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-b.closed:
			cmd.Process.Kill()
			<-done
		}
		out.Close()
	})
	return b
}

// read dispatches the browser's messages: answers to their calls, events
// to their sessions.
func (b *browser) read(r io.Reader) {
	br := bufio.NewReader(r)
	for {
		raw, err := br.ReadBytes(0)
		if err != nil {
			b.mu.Lock()
			b.err = fmt.Errorf("the browser's pipe closed: %w", err)
			b.mu.Unlock()
			close(b.closed)
			return
		}
		var m cdpMessage
		if err := json.Unmarshal(raw[:len(raw)-1], &m); err != nil {
			continue
		}
		b.mu.Lock()
		if m.ID != 0 {
			if c, ok := b.calls[m.ID]; ok {
				delete(b.calls, m.ID)
				c <- m
			}
		} else if c, ok := b.sessions[m.SessionID]; ok && m.SessionID != "" {
			select {
			case c <- m:
			default: // a page that floods events fails on what it kept
			}
		}
		b.mu.Unlock()
	}
}

// call sends a method, in session ("" for the browser), and returns its
// result.
func (b *browser) call(ctx context.Context, session, method string, params any, result any) error {
	b.mu.Lock()
	b.next++
	id := b.next
	c := make(chan cdpMessage, 1)
	b.calls[id] = c
	b.mu.Unlock()
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	msg, err := json.Marshal(cdpMessage{ID: id, Method: method, Params: p, SessionID: session})
	if err != nil {
		return err
	}
	b.wmu.Lock()
	_, err = b.in.Write(append(msg, 0))
	b.wmu.Unlock()
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m := <-c:
		if m.Error != nil {
			return fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		if result != nil {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	case <-b.closed:
		b.mu.Lock()
		defer b.mu.Unlock()
		return fmt.Errorf("%s: %w\n%s", method, b.err, b.stderr.String())
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// load opens url in a new tab, waits for its load event and returns the
// page's DOM then, and every console message, uncaught exception and
// browser log entry (a refused script, a failed load) it had until then.
func (b *browser) load(ctx context.Context, url string) (dom string, console []string, err error) {
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		return "", nil, err
	}
	defer b.call(context.WithoutCancel(ctx), "", "Target.closeTarget", map[string]any{"targetId": target.TargetID}, nil)
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached); err != nil {
		return "", nil, err
	}
	s := attached.SessionID
	events := make(chan cdpMessage, 1024)
	b.mu.Lock()
	b.sessions[s] = events
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.sessions, s)
		b.mu.Unlock()
	}()
	for _, domain := range []string{"Page", "Runtime", "Log"} {
		if err := b.call(ctx, s, domain+".enable", struct{}{}, nil); err != nil {
			return "", nil, err
		}
	}
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	if err := b.call(ctx, s, "Page.navigate", map[string]any{"url": url}, &nav); err != nil {
		return "", nil, err
	}
	if nav.ErrorText != "" {
		return "", nil, fmt.Errorf("navigate to %s: %s", url, nav.ErrorText)
	}
	for loaded := false; !loaded; {
		select {
		case m := <-events:
			switch m.Method {
			case "Page.loadEventFired":
				loaded = true
			case "Runtime.consoleAPICalled", "Runtime.exceptionThrown", "Log.entryAdded":
				console = append(console, m.Method+" "+string(m.Params))
			}
		case <-b.closed:
			return "", console, errors.New("the browser ended")
		case <-ctx.Done():
			return "", console, fmt.Errorf("%s: no load event: %w", url, ctx.Err())
		}
	}
	var eval struct {
		Result struct {
			Value string `json:"value"`
		} `json:"result"`
		ExceptionDetails json.RawMessage `json:"exceptionDetails"`
	}
	if err := b.call(ctx, s, "Runtime.evaluate", map[string]any{"expression": "document.documentElement.outerHTML", "returnByValue": true}, &eval); err != nil {
		return "", console, err
	}
	if len(eval.ExceptionDetails) > 0 {
		return "", console, fmt.Errorf("read the DOM: %s", eval.ExceptionDetails)
	}
	// What came in before the DOM was read.
	for {
		select {
		case m := <-events:
			switch m.Method {
			case "Runtime.consoleAPICalled", "Runtime.exceptionThrown", "Log.entryAdded":
				console = append(console, m.Method+" "+string(m.Params))
			}
		default:
			return eval.Result.Value, console, nil
		}
	}
}

// consoleLines are the console lines Chromium wrote to its stderr log.
func (b *browser) consoleLines() []string {
	var out []string
	for _, line := range strings.Split(b.stderr.String(), "\n") {
		if strings.Contains(line, ":CONSOLE") {
			out = append(out, line)
		}
	}
	return out
}
