package main

import (
	"fmt"
	"html/template"
	"strings"
	"sync"
	"time"

	"github.com/linkpatrol/linkpatrol/report"
	"github.com/linkpatrol/linkpatrol/throttle"
)

const (
	// statusSampleEvery is how often the status page's meter samples the
	// counters; statusHistory how much of them it keeps for the graphs.
	statusSampleEvery = 2 * time.Second
	statusHistory     = 5 * time.Minute
	// statusRateWindow is what the headline rate is measured over.
	statusRateWindow = 10 * time.Second
)

// statusMeter keeps samples of the crawler's request count (every HTTP
// request sent: redirect hops and HEAD-then-GET included, so it is the rate
// a server sees) and of each host's request starts, for real rates and a
// graph per host.
type statusMeter struct {
	mu      sync.Mutex
	samples []statusSample // oldest first, covering at most statusHistory
}

type statusSample struct {
	at       time.Time
	requests int64
	hosts    map[string]int64 // request starts by throttle key
}

func (m *statusMeter) add(at time.Time, requests int64, hosts []throttle.HostStats) {
	s := statusSample{at: at, requests: requests, hosts: make(map[string]int64, len(hosts))}
	for _, h := range hosts {
		s.hosts[h.Key] = h.Requests
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.samples = append(m.samples, s)
	cut := 0
	for cut < len(m.samples)-1 && at.Sub(m.samples[cut].at) > statusHistory {
		cut++
	}
	m.samples = append(m.samples[:0], m.samples[cut:]...)
}

// rate is the requests per second between the newest sample and the
// oldest one within window of it, or false with fewer than two samples.
func (m *statusMeter) rate(window time.Duration) (float64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.samples) < 2 {
		return 0, false
	}
	last := m.samples[len(m.samples)-1]
	first := last
	for i := len(m.samples) - 2; i >= 0 && last.at.Sub(m.samples[i].at) <= window; i-- {
		first = m.samples[i]
	}
	if first.at.Equal(last.at) {
		first = m.samples[len(m.samples)-2]
	}
	secs := last.at.Sub(first.at).Seconds()
	if secs <= 0 {
		return 0, false
	}
	return float64(last.requests-first.requests) / secs, true
}

// hostRates is each host's request starts per second in every interval
// between two samples, oldest first.
func (m *statusMeter) hostRates() map[string][]float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string][]float64)
	for i := 1; i < len(m.samples); i++ {
		a, b := m.samples[i-1], m.samples[i]
		secs := b.at.Sub(a.at).Seconds()
		if secs <= 0 {
			continue
		}
		for key, n := range b.hosts {
			out[key] = append(out[key], float64(n-a.hosts[key])/secs)
		}
	}
	return out
}

// sample runs until stop is closed, sampling src every statusSampleEvery.
func (m *statusMeter) sample(src statusSource, stop <-chan struct{}) {
	tick := time.NewTicker(statusSampleEvery)
	defer tick.Stop()
	for {
		m.add(time.Now(), src.Progress().Requests, src.Hosts())
		select {
		case <-stop:
			return
		case <-tick.C:
		}
	}
}

// rateSVG draws a host's recent rates as a line against its limit (a
// dashed line), scaled to whichever is higher, so a host kept at its limit
// shows as a line along the dashes: politeness at a glance. Inline SVG with
// presentation attributes only, as the page's CSP allows.
func rateSVG(rates []float64, limit float64) template.HTML {
	if len(rates) < 2 {
		return ""
	}
	const w, h = 120, 28
	top := limit
	for _, r := range rates {
		top = max(top, r)
	}
	if top <= 0 {
		top = 1
	}
	y := func(v float64) float64 { return h - 2 - (h-4)*v/top }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img"><title>request starts per second over the last %s, %d samples`,
		w, h, w, h, report.RoundDuration(time.Duration(len(rates))*statusSampleEvery), len(rates))
	if limit > 0 {
		fmt.Fprintf(&b, `; the dashed line is the limit, %.3g/s`, limit)
	}
	b.WriteString(`</title>`)
	if limit > 0 {
		fmt.Fprintf(&b, `<line x1="0" y1="%.1f" x2="%d" y2="%.1f" stroke="#b9770e" stroke-width="1" stroke-dasharray="3 2"/>`, y(limit), w, y(limit))
	}
	b.WriteString(`<polyline fill="none" stroke="#2e86c1" stroke-width="1.5" points="`)
	step := float64(w) / float64(len(rates)-1)
	for i, r := range rates {
		fmt.Fprintf(&b, "%.1f,%.1f ", float64(i)*step, y(r))
	}
	b.WriteString(`"/></svg>`)
	return template.HTML(b.String()) // numbers only
}
