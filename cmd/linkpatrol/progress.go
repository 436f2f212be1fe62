package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/linkpatrol/linkpatrol/crawler"
)

// startProgress draws one live line on a terminal and nothing elsewhere, so
// cron mail holds only the report. The returned func clears the line.
func startProgress(w io.Writer, c *crawler.Crawler, quiet bool) func() {
	f, ok := w.(*os.File)
	if quiet || !ok || !term.IsTerminal(int(f.Fd())) {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		start := time.Now()
		for {
			select {
			case <-done:
				fmt.Fprint(f, "\r\033[K")
				return
			case <-tick.C:
				p := c.Progress()
				rate := float64(p.Requests) / time.Since(start).Seconds()
				fmt.Fprintf(f, "\r\033[K%d done, %d pages, %d queued, %d in flight, %d problems, %.0f req/s",
					p.Done, p.Pages, p.Queued, p.InFlight, p.Problems, rate)
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
