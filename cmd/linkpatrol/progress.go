package main

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// progressSource is what the progress line reads; *crawler.Crawler is one.
// When it also has Hosts (see hostSource) the line counts the hosts held
// back by politeness.
type progressSource interface {
	Progress() crawler.Progress
}

// hostSource reports the throttle's view of every host.
type hostSource interface {
	Hosts() []throttle.HostStats
}

const (
	progressEvery = 200 * time.Millisecond
	// rateWindow is long enough to smooth bursts of one host's window
	// opening, short enough that a stall shows within seconds.
	rateWindow = 5 * time.Second
	barWidth   = 20
)

// stoppingLine replaces the progress line once a stop was asked for, so the
// terminal shows a clean line (not the last frame drawn over the "^C" echo)
// while the requests in flight finish.
const stoppingLine = "\r\x1b[Kstopping: the requests in flight finish and everything done is saved (Ctrl-C again: at once)\n"

// startProgress draws one live line on w when draw is set (w is a
// terminal, and nothing else is written to it) and nothing otherwise. When
// stopping is closed the line gives way to stoppingLine. The returned func
// erases the line (it may be called more than once); call it before
// writing anything else to w.
func startProgress(w io.Writer, src progressSource, draw bool, stopping <-chan struct{}) (stop func()) {
	if !draw {
		return func() {}
	}
	return drawProgress(w, src, stopping)
}

// drawProgress renders with mpb, which sizes the bar to the terminal,
// truncates the text rather than wrapping it (a wrapped line could not be
// redrawn in place) and erases it when the bar is dropped.
func drawProgress(out io.Writer, src progressSource, stopping <-chan struct{}) func() {
	var line atomic.Pointer[progressLine]
	line.Store(&progressLine{})

	p := mpb.New(mpb.WithOutput(out), mpb.WithRefreshRate(progressEvery))
	// The decorators carry their own spaces (BarFillerTrim drops mpb's), so
	// that on a terminal too narrow for the bar the words stay apart.
	bar := p.New(0, mpb.BarStyle(), mpb.BarWidth(barWidth), mpb.BarFillerTrim(),
		mpb.PrependDecorators(decor.Any(func(decor.Statistics) string { return line.Load().count() })),
		mpb.AppendDecorators(decor.Any(func(decor.Statistics) string { return line.Load().details() })),
	)

	done := make(chan struct{})
	sampled := make(chan struct{})
	erase := sync.OnceFunc(func() {
		bar.Abort(true)
		p.Wait()
	})
	go func() {
		defer close(sampled)
		var m progressMeter
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		for {
			l := m.sample(src, time.Now())
			line.Store(&l)
			// The bar was made with total 0, so mpb lets the total grow
			// with the frontier and never completes it on its own.
			bar.SetTotal(l.total(), false)
			bar.SetCurrent(l.Done)
			select {
			case <-done:
				return
			case <-stopping:
				erase()
				io.WriteString(out, stoppingLine)
				return
			case <-tick.C:
			}
		}
	}()
	return sync.OnceFunc(func() {
		close(done)
		<-sampled
		erase()
	})
}

// progressLine is what one frame of the progress line says.
type progressLine struct {
	crawler.Progress
	Rate        float64 // requests per second over the last rateWindow
	Waiting     int     // hosts held back by politeness
	HostsKnown  bool    // the source reports hosts, so Waiting means something
	HostsActive int
}

func (l *progressLine) total() int64 { return l.Done + l.Queued + l.InFlight }

func (l *progressLine) count() string {
	return fmt.Sprintf("%d/%d URLs ", l.Done, l.total())
}

func (l *progressLine) details() string {
	s := fmt.Sprintf(" %d pages · %d queued · %d problems · %.0f req/s", l.Pages, l.Queued, l.Problems, l.Rate)
	if l.HostsKnown {
		s += fmt.Sprintf(" · %d of %d hosts waiting", l.Waiting, l.HostsActive)
	}
	return s
}

// progressMeter turns successive snapshots into rates. The zero value is
// ready to use.
type progressMeter struct {
	samples []requestSample
	waited  map[string]time.Duration
}

type requestSample struct {
	at       time.Time
	requests int64
}

func (m *progressMeter) sample(src progressSource, now time.Time) progressLine {
	l := progressLine{Progress: src.Progress()}
	l.Rate = m.rate(l.Requests, now)
	if hs, ok := src.(hostSource); ok {
		l.HostsKnown = true
		l.Waiting, l.HostsActive = m.waiting(hs.Hosts(), now)
	}
	return l
}

// rate is requests per second between now and the oldest sample still
// inside rateWindow.
func (m *progressMeter) rate(requests int64, now time.Time) float64 {
	m.samples = append(m.samples, requestSample{now, requests})
	cut := 0
	for cut < len(m.samples)-1 && now.Sub(m.samples[cut+1].at) >= rateWindow {
		cut++
	}
	m.samples = m.samples[cut:]
	first := m.samples[0]
	secs := now.Sub(first.at).Seconds()
	if secs <= 0 {
		return 0
	}
	return float64(requests-first.requests) / secs
}

// waiting counts the hosts that politeness is holding back: paused by the
// server, backing off after failures, or with a request that waited for its
// turn since the previous sample (the throttle's Waited grows only while a
// request waits; the first sample has nothing to compare with). active
// counts the hosts with work in flight or waiting.
func (m *progressMeter) waiting(hosts []throttle.HostStats, now time.Time) (waiting, active int) {
	prev := m.waited
	m.waited = make(map[string]time.Duration, len(hosts))
	for _, h := range hosts {
		m.waited[h.Key] = h.Waited
		grew := prev != nil && h.Waited > prev[h.Key]
		held := h.PausedUntil.After(now) || h.BackoffUntil.After(now) || grew
		if held {
			waiting++
		}
		if held || h.InFlight > 0 {
			active++
		}
	}
	return waiting, active
}
