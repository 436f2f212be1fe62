package cluster

import (
	"fmt"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/crawler/crawltest"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// Politeness holds at the servers (DISTRIBUTED.md, test 5): per-host 1,
// rate 5/s and window 20/5s over three workers, each with its own throttle,
// on a web whose pages link across hosts and redirect to other sites,
// some owned by other workers. Every assertion is on the sites' own
// counters, none on wall time.
//
// A host's limits are kept by the one worker that owns its shard. The one
// way another worker asks that host for anything is a redirect hop into it
// (FRONTIER.md v1: followed where it is found, counted as a foreign hop,
// and the target forwarded to its owner, which asks for it too). So every
// request a site gets beyond one per URL is the only slack its limits may
// show: a site asked for no URL twice holds them exactly, and the others
// exceed them by at most their repeated requests. One worker owning every
// host (no foreign hop) is the control: there every site holds exactly.
func TestPolitenessHeldAtTheServers(t *testing.T) {
	t.Parallel()
	for _, workers := range []int{1, 3} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			t.Parallel()
			politeness(t, workers)
		})
	}
}

func politeness(t *testing.T, workers int) {
	const (
		perHost   = 1
		windowMax = 20
		window    = 5 * time.Second
		// jitter is how much closer together two requests may arrive at
		// a server than the crawler started them (loopback, a loaded
		// machine): starts are counted within window-jitter.
		jitter = 250 * time.Millisecond
	)
	web := crawltest.NewWeb(crawltest.WebOptions{Sites: 6, Site: crawltest.SiteOptions{
		Pages: 24, LinksPerPage: 4, Images: 1, BrokenEvery: 6, PeerRedirectEvery: 3, PageBytes: 400,
	}})
	t.Cleanup(web.Close)
	run := crawlWeb(t, web, webCrawl{
		workers: workers,
		crawler: crawler.Config{Concurrency: 4, PerHost: perHost},
		settings: &throttle.Settings{Rate: 5, Burst: 1, WindowMax: windowMax, Window: window,
			MaxInFlight: perHost, IgnoreRobots: true, MaxPause: time.Minute, MaxRetries: 1},
	})
	hops := run.foreignHops()
	if workers > 1 && hops == 0 {
		t.Fatal("no redirect crossed to a host another worker owns: the test proves nothing about them")
	}

	var extra int64
	strict := 0
	for i, s := range web.Sites {
		st := s.Stats()
		repeats := st.Requests - int64(st.DistinctURLs)
		extra += repeats
		starts := s.MaxStartsIn(window - jitter)
		t.Logf("%s: %d requests (%d repeated), max in flight %d, max starts in %s %d (in %s %d)",
			web.URL(i), st.Requests, repeats, st.MaxInFlight, window-jitter, starts, window, s.MaxStartsIn(window))
		if st.Requests <= windowMax {
			t.Errorf("%s: only %d requests, the window never binds: make the sites larger", web.URL(i), st.Requests)
		}
		if st.MaxInFlight > perHost+repeats {
			t.Errorf("%s: %d requests in flight at once, limit %d (+%d repeated requests)", web.URL(i), st.MaxInFlight, perHost, repeats)
		}
		if int64(starts) > windowMax+repeats {
			t.Errorf("%s: %d requests within %s, limit %d per %s (+%d repeated requests)", web.URL(i), starts, window-jitter, windowMax, window, repeats)
		}
		if st.MaxInFlight <= perHost && starts <= windowMax {
			strict++
		}
	}
	// Every repeated request is a foreign hop or its owner's own request
	// for the forwarded target, never a URL one worker asked for twice.
	if extra > hops {
		t.Errorf("%d repeated requests, more than the %d foreign hops: %q", extra, hops, web.Repeated())
	}
	t.Logf("%d workers: %d foreign hops, %d repeated requests; %d of %d sites held every limit exactly",
		workers, hops, extra, strict, len(web.Sites))
}
