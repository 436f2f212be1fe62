package crawler_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// A page linking many other sites has hundreds of hosts waiting at once
// (for a probe worker, for the third-party share of the workers, for
// their own pace). The dispatcher must look at a host again only when it
// can take a request: when it was put back for every slot that freed and
// every permit done, each host was looked at (its URL parsed, robots.txt
// and the throttle asked) about as many times as there were hosts (qa8
// S1). Each look asks the host's settings, so they are counted here. 200
// hosts: with the head of the ring looked at on every event, some host is
// asked 21-27 times (30 at 600 hosts, for three times the CPU).
func TestWaitingHostsLookedAtOnlyWhenReady(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const n = 200
		var links strings.Builder
		for i := range n {
			fmt.Fprintf(&links, "<a href=\"http://h%d.test/x\">%d</a>\n", i, i)
		}
		base, tr := pipeServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.URL.Path == "/robots.txt":
				http.NotFound(w, r)
			case r.URL.Path == "/":
				page(links.String())(w, r)
			default:
				fmt.Fprint(w, "ok")
			}
		}))
		start := base + "/"
		var mu sync.Mutex
		asked := map[string]int{}
		settings := func(host string) throttle.Settings {
			mu.Lock()
			asked[host]++
			mu.Unlock()
			if host == "127.0.0.1" {
				return throttle.StartHostDefaults()
			}
			return throttle.OtherHostDefaults()
		}
		engine, err := rules.New(rules.Config{Start: []string{start}})
		if err != nil {
			t.Fatal(err)
		}
		c := crawler.New(crawler.Config{Concurrency: 4, Timeout: 5 * time.Second, Transport: tr,
			Throttle: throttle.New(throttle.Config{Settings: settings}), HostSettings: settings}, engine, openDB(t))
		_, out, err := c.Run(context.Background(), context.Background(), passOf(start))
		if err != nil || !out.Complete {
			t.Fatalf("run: %v, complete %v", err, out.Complete)
		}
		if p := c.Progress(); p.Done != n+1 {
			t.Errorf("%d URLs done, want %d", p.Done, n+1)
		}
		most, total := 0, 0
		for host, k := range asked {
			if host != "127.0.0.1" {
				most, total = max(most, k), total+k
			}
		}
		// The throttle's limiter, the link's robots.txt gate on the worker
		// that parsed the page, then the dispatcher's looks: the probe (and
		// its slot), its pace, its request. Six each here; 26 for some when
		// the head of the ring was looked at on every event while the
		// workers were busy, and more when every waiting host was.
		if most > 8 {
			t.Errorf("a host's settings were asked %d times (%d for %d hosts): waiting hosts are looked at again and again", most, total, n)
		}
	})
}
