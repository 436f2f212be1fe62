package crawler_test

import (
	"context"
	"net"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkpatrol/linkpatrol/throttle"
)

// slowDial makes every new connection of dial take d on the bubble's
// clock, so a request on a new connection reaches the server d after its
// permit while one on a kept-alive connection arrives at once.
func slowDial(dial func(context.Context, string, string) (net.Conn, error), d time.Duration) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		time.Sleep(d) // the network's slowness, on the bubble's clock
		return dial(ctx, network, addr)
	}
}

// QA4 F1b: the window counted permits, and the requests that had to dial
// reached the server up to the dial time after theirs, so the requests
// let go when those permits left the window came too early: 14 within 5 s
// of a 10/5s window. The server counts here, every request included
// (robots.txt too), and the window must hold in every interval.
func TestWindowHoldsAtTheServerWhenArrivalsLag(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		base, tr := pipeServer(t, rec.wrap(linkSite(40, 0)))
		tr.DialContext = slowDial(tr.DialContext, 300*time.Millisecond)
		s := throttle.Settings{WindowMax: 10, Window: 3 * time.Second, MaxInFlight: 4}
		politeRunVia(t, openDB(t), base+"/", s, context.Background(), tr)
		if len(rec.paths) != 42 || rec.paths[0] != "/robots.txt" {
			t.Fatalf("%d requests (first %q), want 42 starting with robots.txt", len(rec.paths), rec.paths[0])
		}
		if n := rec.maxInWindow(s.Window); n > s.WindowMax {
			t.Errorf("the server got %d requests within %s; the window allows %d", n, s.Window, s.WindowMax)
		}
	})
}
