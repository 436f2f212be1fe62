package main

import (
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/report"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// statusSource is what the status page shows; *crawler.Crawler is one.
type statusSource interface {
	progressSource
	hostSource
}

const (
	// statusRefresh is how often the page reloads itself. The page uses a
	// meta refresh rather than script so that it can forbid all scripts.
	statusRefresh = 2 * time.Second
	// statusRows bounds the HTML table: a site linking to thousands of
	// other hosts would otherwise make a page too big to reload every two
	// seconds. /status.json has every host.
	statusRows = 100
)

//go:embed status.html
var statusHTML string

var statusPage = template.Must(template.New("status").Funcs(template.FuncMap{
	"bytes":   humanBytes,
	"seconds": func(s float64) string { return report.RoundDuration(time.Duration(s * float64(time.Second))).String() },
}).Parse(statusHTML))

// statusServer is the live page of one pass.
type statusServer struct {
	stop   func()
	srv    *http.Server
	h      *statusHandler
	linger time.Duration // how long Finish waits for a viewer; statusLinger
}

// Stop closes the page at once. It may be called more than once.
func (s *statusServer) Stop() { s.stop() }

// statusLinger is how long Finish waits for a viewer to load the final
// page: a little over one reload of the live page.
const statusLinger = statusRefresh + 2*time.Second

// Finish turns the page into the pass's final summary, which does not
// reload, waits until a viewer has loaded it (at most s.linger) so the
// browser ends on the summary rather than "refused to connect", and stops.
func (s *statusServer) Finish(f statusFinal) {
	s.h.final.Store(&f)
	t := time.NewTimer(s.linger)
	defer t.Stop()
	select {
	case <-s.h.finalServed:
	case <-t.C:
	}
	// Gracefully: the final page may still be on its way to the viewer,
	// and a connection cut under it would make the browser retry into
	// "refused to connect" after all.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	s.srv.Shutdown(ctx)
	s.stop()
}

// serveStatus serves a read-only page about the running pass at addr, "/"
// in HTML and "/status.json" in JSON, until Stop or Finish is called or ctx
// ends.
//
// Unless public is set (--status-public) the address must be a loopback
// one, and requests must name a loopback host, so that neither another
// machine nor a web page using DNS rebinding can read which hosts are being
// crawled.
func serveStatus(ctx context.Context, addr string, public bool, pass store.Pass, src statusSource) (pageURL string, server *statusServer, err error) {
	if !public {
		if err := checkLoopbackAddr(addr); err != nil {
			return "", nil, err
		}
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("status page: %w", err)
	}
	// A host name is checked after listening: what it resolved to is only
	// known then.
	if ip, _ := netip.AddrFromSlice(ln.Addr().(*net.TCPAddr).IP); !public && !ip.Unmap().IsLoopback() {
		ln.Close()
		return "", nil, fmt.Errorf("status page: %s is not a loopback address; add --status-public to serve it anyway", addr)
	}

	began := time.Now()
	meter := &statusMeter{}
	h := &statusHandler{public: public, finalServed: make(chan struct{})}
	h.state = func() statusDoc {
		now := time.Now()
		d := buildStatus(pass, pass.Elapsed+now.Sub(began), src.Progress(), src.Hosts(), now)
		d.measure(meter)
		d.Final = h.final.Load()
		return d
	}
	sampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		meter.sample(src, sampling)
	}()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	served := make(chan struct{})
	go func() {
		defer close(served)
		// Serve returns ErrServerClosed after Close; nothing else is
		// expected from a listener that is already open.
		srv.Serve(ln)
	}()
	var once sync.Once
	var unhook func() bool
	stop := func() {
		once.Do(func() {
			unhook()
			srv.Close()
			<-served
			close(sampling)
			<-sampled
		})
	}
	unhook = context.AfterFunc(ctx, stop)
	return "http://" + ln.Addr().String() + "/", &statusServer{stop: stop, srv: srv, h: h, linger: statusLinger}, nil
}

// checkLoopbackAddr refuses, before anything listens, an address that is
// plainly not loopback: no host (every interface) or a non-loopback IP.
func checkLoopbackAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("status address %q: %w", addr, err)
	}
	if host == "" {
		return fmt.Errorf("status address %q listens on every interface; use 127.0.0.1:PORT, or add --status-public", addr)
	}
	if ip, err := netip.ParseAddr(host); err == nil && !ip.Unmap().IsLoopback() {
		return fmt.Errorf("status address %q is not a loopback address; use 127.0.0.1:PORT, or add --status-public", addr)
	}
	return nil
}

// loopbackHost reports whether a request's Host header names this machine.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

type statusHandler struct {
	public bool
	state  func() statusDoc
	// final, once set, is the pass's end: the page stops reloading.
	final       atomic.Pointer[statusFinal]
	finalServed chan struct{} // closed when a final page was served
	servedOnce  sync.Once
}

func (h *statusHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "the status page is read-only", http.StatusMethodNotAllowed)
		return
	}
	if !h.public && !loopbackHost(r.Host) {
		http.Error(w, "the status page answers only to a loopback host name", http.StatusForbidden)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	switch r.URL.Path {
	case "/":
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		d := h.state()
		if err := statusPage.Execute(w, newStatusView(d)); err != nil {
			// The header is gone; all that is left is to cut the page short.
			fmt.Fprintf(w, "\n<p>error: %s</p>", template.HTMLEscapeString(err.Error()))
		}
		if d.Final != nil {
			h.servedOnce.Do(func() { close(h.finalServed) })
		}
	case "/status.json":
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(h.state()); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	default:
		http.NotFound(w, r)
	}
}

// statusDoc is /status.json. Fields may be added, never renamed. Durations
// are in seconds; a time that does not apply is null.
type statusDoc struct {
	Time time.Time `json:"time"`
	// Final is set once the pass has ended: the page's last state.
	Final    *statusFinal   `json:"final,omitempty"`
	Pass     statusPass     `json:"pass"`
	Progress statusProgress `json:"progress"`
	Totals   statusTotals   `json:"totals"`
	Hosts    []statusHost   `json:"hosts"`
}

// statusFinal is how the pass ended, for the page's last state.
type statusFinal struct {
	State    string `json:"state"`     // complete or stopped
	Summary  string `json:"summary"`   // the report's count line
	Changes  string `json:"changes"`   // what changed since the previous pass, or ""
	ExitCode int    `json:"exit_code"` // what the command exits with
}

type statusPass struct {
	ID             uint64    `json:"id"`
	StartURLs      []string  `json:"start_urls"`
	Started        time.Time `json:"started"`
	RunningSeconds float64   `json:"running_seconds"` // working time, every run of the pass
}

type statusProgress struct {
	Done     int64 `json:"done"`
	Pages    int64 `json:"pages"`
	Queued   int64 `json:"queued"`
	InFlight int64 `json:"in_flight"`
	Problems int64 `json:"problems"`
	Requests int64 `json:"requests"`
	Reused   int64 `json:"reused"`
}

type statusTotals struct {
	Hosts    int     `json:"hosts"`
	Requests int64   `json:"requests"`
	Bytes    int64   `json:"bytes"`
	Rate     float64 `json:"rate"`
	InFlight int     `json:"in_flight"`
	Paused   int     `json:"paused"` // hosts paused by the server or backing off
	Deferred int     `json:"deferred"`
}

type statusHost struct {
	Key               string         `json:"key"`
	Hosts             []string       `json:"hosts"`
	Requests          int64          `json:"requests"`
	Bytes             int64          `json:"bytes"`
	Rate              float64        `json:"rate"`           // request starts per second over the last 10 s
	Limit             float64        `json:"limit"`          // the most per second the settings allow, 0 = none
	RecentRates       []float64      `json:"recent_rates"`   // request starts per second per sample, the last minutes, oldest first
	QuotaRequests     int64          `json:"quota_requests"` // per pass, 0 = none
	QuotaBytes        int64          `json:"quota_bytes"`
	InFlight          int            `json:"in_flight"`
	MaxInFlight       int            `json:"max_in_flight"` // 0 = no cap
	GapSeconds        float64        `json:"gap_seconds"`
	LatencySeconds    float64        `json:"latency_seconds"`
	PausedUntil       *time.Time     `json:"paused_until"`
	BackoffLevel      int            `json:"backoff_level"`
	BackoffUntil      *time.Time     `json:"backoff_until"`
	Deferred          bool           `json:"deferred"`
	QuotaRequestsUsed int64          `json:"quota_requests_used"`
	QuotaBytesUsed    int64          `json:"quota_bytes_used"`
	WaitedSeconds     float64        `json:"waited_seconds"`
	ReadWaitSeconds   float64        `json:"read_wait_seconds"`
	IgnoresRobots     bool           `json:"ignores_robots"`
	Robots            []statusRobots `json:"robots"`
}

type statusRobots struct {
	Host              string     `json:"host"`
	State             string     `json:"state"` // rules, allow all, disallow all
	Status            int        `json:"status"`
	Fetched           *time.Time `json:"fetched"`
	Fresh             bool       `json:"fresh"`
	CrawlDelaySeconds float64    `json:"crawl_delay_seconds"`
}

func buildStatus(pass store.Pass, running time.Duration, p crawler.Progress, hosts []throttle.HostStats, now time.Time) statusDoc {
	d := statusDoc{
		Time: now,
		Pass: statusPass{ID: pass.ID, StartURLs: pass.StartURLs, Started: pass.Started, RunningSeconds: running.Seconds()},
		Progress: statusProgress{
			Done: p.Done, Pages: p.Pages, Queued: p.Queued, InFlight: p.InFlight,
			Problems: p.Problems, Requests: p.Requests, Reused: p.Reused,
		},
		Hosts: make([]statusHost, 0, len(hosts)),
	}
	if d.Pass.StartURLs == nil {
		d.Pass.StartURLs = []string{}
	}
	for _, h := range hosts {
		sh := statusHost{
			Key: h.Key, Hosts: h.Hosts, Requests: h.Requests, Bytes: h.Bytes, Rate: h.Rate,
			Limit: h.Limit, QuotaRequests: h.QuotaRequests, QuotaBytes: h.QuotaBytes, RecentRates: []float64{},
			InFlight: h.InFlight, MaxInFlight: h.MaxInFlight,
			GapSeconds: h.Gap.Seconds(), LatencySeconds: h.Latency.Seconds(),
			PausedUntil: future(h.PausedUntil, now), BackoffLevel: h.BackoffLevel,
			BackoffUntil: future(h.BackoffUntil, now), Deferred: h.Deferred,
			QuotaRequestsUsed: h.UsedRequests, QuotaBytesUsed: h.UsedBytes,
			WaitedSeconds: h.Waited.Seconds(), ReadWaitSeconds: h.ReadWait.Seconds(),
			IgnoresRobots: h.IgnoresRobots, Robots: make([]statusRobots, 0, len(h.Robots)),
		}
		if sh.Hosts == nil {
			sh.Hosts = []string{}
		}
		for _, r := range h.Robots {
			sr := statusRobots{
				Host: r.Host, State: string(r.Kind), Status: r.Status, Fresh: r.Fresh,
				CrawlDelaySeconds: r.CrawlDelay.Seconds(),
			}
			if !r.Fetched.IsZero() {
				sr.Fetched = &r.Fetched
			}
			sh.Robots = append(sh.Robots, sr)
		}
		d.Hosts = append(d.Hosts, sh)

		t := &d.Totals
		t.Hosts++
		t.Requests += h.Requests
		t.Bytes += h.Bytes
		t.Rate += h.Rate
		t.InFlight += h.InFlight
		if sh.PausedUntil != nil || sh.BackoffUntil != nil {
			t.Paused++
		}
		if h.Deferred {
			t.Deferred++
		}
	}
	return d
}

// measure replaces the total rate, a sum of the throttle's per-host
// estimates, with the rate of every request the crawler sent (what the
// servers see), and adds each host's recent rates.
func (d *statusDoc) measure(m *statusMeter) {
	if r, ok := m.rate(statusRateWindow); ok {
		d.Totals.Rate = r
	}
	rates := m.hostRates()
	for i := range d.Hosts {
		if r := rates[d.Hosts[i].Key]; r != nil {
			d.Hosts[i].RecentRates = r
		}
	}
}

// future returns t when it is still ahead of now, so a pause that ran out
// shows as none.
func future(t, now time.Time) *time.Time {
	if !t.After(now) {
		return nil
	}
	return &t
}

// statusView is what status.html is executed with.
type statusView struct {
	statusDoc
	Refresh  int // seconds; 0 once the pass has ended
	Rows     []statusRow
	Hidden   int  // hosts not in Rows
	HasQuota bool // some host has a quota: only then is there a quota column
}

type statusRow struct {
	statusHost
	Pause  string // why the host is held back now, "" when it is not
	Robots string
	Graph  template.HTML
}

func newStatusView(d statusDoc) statusView {
	v := statusView{statusDoc: d, Refresh: int(statusRefresh / time.Second)}
	if d.Final != nil {
		v.Refresh = 0
	}
	hosts := slices.Clone(d.Hosts)
	// Busiest first, like top: what is happening now matters more on a
	// page that reloads every two seconds than a stable order.
	slices.SortStableFunc(hosts, func(a, b statusHost) int {
		return cmp.Or(
			cmp.Compare(b.InFlight, a.InFlight),
			cmp.Compare(b.Rate, a.Rate),
			cmp.Compare(b.Requests, a.Requests),
			strings.Compare(a.Key, b.Key),
		)
	})
	if len(hosts) > statusRows {
		v.Hidden = len(hosts) - statusRows
		hosts = hosts[:statusRows]
	}
	for _, h := range hosts {
		v.Rows = append(v.Rows, statusRow{statusHost: h, Pause: pauseText(h, d.Time), Robots: robotsText(h), Graph: rateSVG(h.RecentRates, h.Limit)})
		v.HasQuota = v.HasQuota || h.QuotaRequests > 0 || h.QuotaBytes > 0
	}
	return v
}

func pauseText(h statusHost, now time.Time) string {
	var parts []string
	if h.PausedUntil != nil {
		parts = append(parts, "paused by the server for "+report.RoundDuration(h.PausedUntil.Sub(now)).String())
	}
	if h.BackoffUntil != nil {
		parts = append(parts, fmt.Sprintf("backing off (%d failures) for %s", h.BackoffLevel, report.RoundDuration(h.BackoffUntil.Sub(now))))
	}
	if h.Deferred {
		parts = append(parts, "deferred to the next pass")
	}
	return strings.Join(parts, "; ")
}

func robotsText(h statusHost) string {
	if h.IgnoresRobots {
		return "ignored by configuration"
	}
	if len(h.Robots) == 0 {
		return "not fetched yet"
	}
	parts := make([]string, 0, len(h.Robots))
	for _, r := range h.Robots {
		s := r.State
		if r.Status != 0 {
			s += fmt.Sprintf(" (%d)", r.Status)
		}
		if !r.Fresh {
			s += ", stale"
		}
		if r.CrawlDelaySeconds > 0 {
			s += ", crawl-delay " + report.RoundDuration(time.Duration(r.CrawlDelaySeconds*float64(time.Second))).String()
		}
		if len(h.Robots) > 1 {
			s = r.Host + ": " + s
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// humanBytes prints a measured amount of bytes, to two significant digits
// ("1.5 MB"); a setting's size is printed as it is written
// (throttle.FormatBytes), which this is not.
func humanBytes(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	// Divide until the value rounds below 1000, so 999,950 bytes read
	// "1.0 MB", not "1000.0 kB".
	v, exp := float64(n)/unit, 0
	for v >= 999.95 && exp < len("kMGTPE")-1 {
		v /= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", v, "kMGTPE"[exp])
}
