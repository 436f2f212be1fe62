package crawltest

import (
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Stats is what a Site has been asked for since it was created or last reset.
type Stats struct {
	Requests int64            `json:"requests"`
	ByMethod map[string]int64 `json:"by_method"`
	Bytes    int64            `json:"bytes"` // response body bytes written
	// MaxInFlight is the peak number of requests being served at once.
	MaxInFlight int64 `json:"max_in_flight"`
	// MeanInFlight is the mean number of requests being served at once,
	// from the first request's arrival to the last one's end: how well a
	// crawler kept its connections busy, however slow each answer was.
	MeanInFlight float64 `json:"mean_in_flight"`
	// DistinctURLs counts the distinct request URIs, whatever the method.
	DistinctURLs int `json:"distinct_urls"`
	// RepeatedURLs counts the URIs requested more than once with the same
	// method.
	RepeatedURLs int `json:"repeated_urls"`
	// MaxPerURL is the most requests any one URI received, all methods
	// together.
	MaxPerURL int64 `json:"max_per_url"`
	// NotModified counts the 304 answers to conditional requests (ETags).
	NotModified int64 `json:"not_modified"`
}

// Stats returns a snapshot of the counters. Taken while requests are being
// served it is consistent per counter, not across counters.
func (s *Site) Stats() Stats { return s.counts.snapshot() }

// Requests is Stats().Requests without the snapshot: one atomic load, for
// a test that polls the count while a crawl runs (a snapshot ranges over
// every URI the site has served).
func (s *Site) Requests() int64 { return s.counts.requests.Load() }

// Reset zeroes the counters, so one Site can measure several crawls in a
// row. Requests in flight during a Reset may be counted on either side of it;
// MaxInFlight restarts from the number still in flight.
func (s *Site) Reset() { s.counts.reset() }

// counters are updated on every request, by many goroutines at once, so they
// are atomics; the maps only take a lock the first time they see a key.
//
// The URIs the site serves by design (its pages and images) are counted in
// known, a slice with no pointers, so that the harness's own bookkeeping
// costs the same per request on a 100,000-page site as on a 10,000-page one:
// in a map, each of those URIs was a string and a pointer for the garbage
// collector to mark on every cycle, and the site's CPU per page grew with the
// site (73 µs at 10,000 pages, 86 at 100,000), on the cores the checker
// being measured runs on. Every other URI, as the crawler spelled it, goes to
// uris.
type counters struct {
	requests    atomic.Int64
	bytes       atomic.Int64
	inFlight    atomic.Int64
	maxInFlight atomic.Int64
	notModified atomic.Int64
	busy        atomic.Int64         // nanoseconds spent serving requests, all of them added up
	lastEnd     atomic.Int64         // when the last request ended, as an offset from epoch
	methods     sync.Map             // method → *atomic.Int64
	known       []uriHits            // by slot
	slot        func(uri string) int // uri's index in known, or -1
	knownURI    func(slot int) string
	uris        sync.Map // any other request URI → *uriHits

	// starts are the arrival times of the requests, as offsets from epoch
	// (monotonic), in the order they arrived: what a per-host window or
	// rate is proven against.
	epoch    time.Time
	startsMu sync.Mutex
	starts   []time.Duration
}

// MaxStartsIn is the most requests that arrived within any span shorter
// than window since the site was created or last reset: what a limit of N
// requests per window must keep at or below N.
func (s *Site) MaxStartsIn(window time.Duration) int {
	c := &s.counts
	c.startsMu.Lock()
	defer c.startsMu.Unlock()
	best, lo := 0, 0
	for hi, t := range c.starts {
		for t-c.starts[lo] >= window {
			lo++
		}
		best = max(best, hi-lo+1)
	}
	return best
}

// InFlight is the number of requests being served now.
func (s *Site) InFlight() int64 { return s.counts.inFlight.Load() }

// uriHits counts the requests for one URI. GET and HEAD are what crawlers
// send; every other method shares one counter.
type uriHits struct {
	get, head, other atomic.Int64
}

// begin counts r, and returns when it arrived for end.
func (c *counters) begin(r *http.Request) time.Duration {
	c.startsMu.Lock()
	start := time.Since(c.epoch)
	c.starts = append(c.starts, start)
	c.startsMu.Unlock()
	c.requests.Add(1)
	n := c.inFlight.Add(1)
	for {
		peak := c.maxInFlight.Load()
		if n <= peak || c.maxInFlight.CompareAndSwap(peak, n) {
			break
		}
	}
	counter(&c.methods, r.Method, func() *atomic.Int64 { return new(atomic.Int64) }).Add(1)

	uri := r.RequestURI
	if uri == "" { // a request built by hand rather than read from the wire
		uri = r.URL.RequestURI()
	}
	var h *uriHits
	if i := c.slot(uri); i >= 0 {
		h = &c.known[i]
	} else {
		h = counter(&c.uris, uri, func() *uriHits { return new(uriHits) })
	}
	switch r.Method {
	case http.MethodGet:
		h.get.Add(1)
	case http.MethodHead:
		h.head.Add(1)
	default:
		h.other.Add(1)
	}
	return start
}

// end counts the end of the request that arrived at start.
func (c *counters) end(start time.Duration) {
	now := time.Since(c.epoch)
	c.busy.Add(int64(now - start))
	for {
		last := c.lastEnd.Load()
		if int64(now) <= last || c.lastEnd.CompareAndSwap(last, int64(now)) {
			break
		}
	}
	c.inFlight.Add(-1)
}

// counter returns m[key], storing a fresh one first if there is none. The
// Load comes first so the common case allocates nothing.
func counter[T any](m *sync.Map, key string, fresh func() *T) *T {
	if v, ok := m.Load(key); ok {
		return v.(*T)
	}
	v, _ := m.LoadOrStore(key, fresh())
	return v.(*T)
}

func (c *counters) snapshot() Stats {
	st := Stats{
		Requests:    c.requests.Load(),
		Bytes:       c.bytes.Load(),
		MaxInFlight: c.maxInFlight.Load(),
		NotModified: c.notModified.Load(),
		ByMethod:    map[string]int64{},
	}
	c.startsMu.Lock()
	if len(c.starts) > 0 {
		if span := c.lastEnd.Load() - int64(c.starts[0]); span > 0 {
			st.MeanInFlight = float64(c.busy.Load()) / float64(span)
		}
	}
	c.startsMu.Unlock()
	c.methods.Range(func(k, v any) bool {
		st.ByMethod[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	c.eachURI(func(_ func() string, h *uriHits) {
		get, head, other := h.get.Load(), h.head.Load(), h.other.Load()
		st.DistinctURLs++
		if get > 1 || head > 1 || other > 1 {
			st.RepeatedURLs++
		}
		st.MaxPerURL = max(st.MaxPerURL, get+head+other)
	})
	return st
}

// eachURI calls f for every URI requested since the last reset, with a
// function that spells it (known URIs are spelled only when asked).
func (c *counters) eachURI(f func(uri func() string, h *uriHits)) {
	for i := range c.known {
		h := &c.known[i]
		if h.get.Load() == 0 && h.head.Load() == 0 && h.other.Load() == 0 {
			continue
		}
		f(func() string { return c.knownURI(i) }, h)
	}
	c.uris.Range(func(k, v any) bool {
		f(func() string { return k.(string) }, v.(*uriHits))
		return true
	})
}

func (c *counters) reset() {
	c.requests.Store(0)
	c.bytes.Store(0)
	c.notModified.Store(0)
	c.busy.Store(0)
	c.lastEnd.Store(0)
	c.maxInFlight.Store(c.inFlight.Load())
	c.methods.Clear()
	for i := range c.known {
		h := &c.known[i]
		h.get.Store(0)
		h.head.Store(0)
		h.other.Store(0)
	}
	c.uris.Clear()
	c.startsMu.Lock()
	c.starts = nil
	c.startsMu.Unlock()
}

// Repeated lists, sorted, the request URIs asked for more than once with
// the same method: what a test that allows a few repeats names when it
// fails.
func (s *Site) Repeated() []string {
	var out []string
	s.counts.eachURI(func(uri func() string, h *uriHits) {
		if h.get.Load() > 1 || h.head.Load() > 1 || h.other.Load() > 1 {
			out = append(out, uri())
		}
	})
	slices.Sort(out)
	return out
}
