package crawler_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// robotsSite disallows /private/ and links two private pages and a public
// one from /.
func robotsSite(rec *recorder) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<a href="/private/a">a</a><a href="/private/b">b</a><a href="/public">c</a>`)
	})
	return rec.wrap(mux)
}

// startOnFirstRefusal is a transport for a server that is not up yet when
// the crawl starts: the first request is refused by the kernel (nothing
// listens on the port), and the server comes up right after, before the
// next request is sent: a server restarting at deploy time.
type startOnFirstRefusal struct {
	inner http.RoundTripper
	once  sync.Once
	start func()
}

func (s *startOnFirstRefusal) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.inner.RoundTrip(r)
	s.once.Do(s.start)
	return resp, err
}

// resetFirst resets the first connection it accepts without a word (a
// server restarting that took the connection and died), then serves.
type resetFirst struct {
	net.Listener
	once sync.Once
}

func (l *resetFirst) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		first := false
		l.once.Do(func() { first = true })
		if !first {
			return c, nil
		}
		c.(*net.TCPConn).SetLinger(0)
		c.Close()
	}
}

// qa8 B2: a robots.txt connection refused once (the server restarting)
// was cached as "no rules" for a day, and every disallowed path was
// fetched, that pass and the next. Refused or reset, the host's robots.txt
// must be read and obeyed once the host answers, in both passes.
func TestRobotsRefusedOnceIsAskedAgain(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"refused", "reset"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			var rec recorder
			srv := httptest.NewUnstartedServer(robotsSite(&rec))
			defer srv.Close()
			start := "http://" + srv.Listener.Addr().String() + "/"
			var tr http.RoundTripper
			switch how {
			case "refused":
				addr := srv.Listener.Addr().String()
				srv.Listener.Close() // nothing listens: connections are refused
				tr = &startOnFirstRefusal{inner: http.DefaultTransport.(*http.Transport).Clone(), start: func() {
					l, err := net.Listen("tcp", addr)
					if err != nil {
						t.Errorf("listen again on %s: %v", addr, err)
						return
					}
					srv.Listener = l
					srv.Start()
				}}
			case "reset":
				srv.Listener = &resetFirst{Listener: srv.Listener}
				srv.Start()
			}
			db := openDB(t)
			for pass := 1; pass <= 2; pass++ {
				_, recs, _ := politeRunVia(t, db, start, throttle.Settings{MaxRetries: 2}, context.Background(), tr)
				rec.mu.Lock()
				paths := slices.Clone(rec.paths)
				rec.paths = nil
				rec.mu.Unlock()
				for _, p := range paths {
					if strings.HasPrefix(p, "/private/") {
						t.Errorf("pass %d: requested disallowed %s (requests %v)", pass, p, paths)
					}
				}
				if i := slices.Index(paths, "/robots.txt"); pass == 1 && (i < 0 || i > 1) {
					// At most the start page, the request that found the
					// host answering, comes before it.
					t.Errorf("pass 1: robots.txt not asked as soon as the host answered: %v", paths)
				}
				if r := recs[start+"private/a"]; r.Verdict != store.VerdictSkipped || r.Error != store.ErrorRobots {
					t.Errorf("pass %d: disallowed URL recorded as %+v, want skipped: robots", pass, r)
				}
				if r := recs[start+"public"]; r.Verdict != store.VerdictOK {
					t.Errorf("pass %d: /public recorded as %+v, want ok", pass, r)
				}
			}
		})
	}
}

// A host that refuses every connection all along has no server to
// protect: its URLs are each reported broken (refused), and its refused
// robots.txt is not kept as its rules: the next pass asks it again.
func TestRobotsOfAHostThatNeverAnswers(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String() + "/"
	l.Close()
	srv := httptest.NewServer(page(`<a href="` + dead + `x">x</a><a href="` + dead + `y">y</a>`))
	defer srv.Close()
	var robotsAsked atomic.Int64
	tr := countRobots{inner: http.DefaultTransport.(*http.Transport).Clone(), host: l.Addr().String(), n: &robotsAsked}
	db := openDB(t)
	for pass := 1; pass <= 2; pass++ {
		before := robotsAsked.Load()
		_, recs, _ := politeRunVia(t, db, srv.URL+"/", throttle.Settings{}, context.Background(), tr)
		if robotsAsked.Load() == before {
			t.Errorf("pass %d: the dead host's robots.txt was not asked (a refusal kept as its rules?)", pass)
		}
		for _, u := range []string{dead + "x", dead + "y"} {
			if r := recs[u]; r.Verdict != store.VerdictBroken || r.Error != "refused" {
				t.Errorf("pass %d: %s recorded as %+v, want broken: refused", pass, u, r)
			}
		}
	}
}

// countRobots counts the robots.txt requests tried on host.
type countRobots struct {
	inner http.RoundTripper
	host  string
	n     *atomic.Int64
}

func (c countRobots) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host == c.host && r.URL.Path == "/robots.txt" {
		c.n.Add(1)
	}
	return c.inner.RoundTrip(r)
}
