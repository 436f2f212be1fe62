package main

import (
	"cmp"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/linkpatrol/linkpatrol/report"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// writeSummaryStats ends a pass run with -v: the hosts that took the most
// requests, what they cost (bytes, time held back by politeness, average
// time to first byte) and how many of the report's problems are theirs,
// then the slowest hosts. It writes nothing when no request was made.
func writeSummaryStats(w io.Writer, rep *report.Report, hosts []throttle.HostStats) {
	if len(hosts) == 0 {
		return
	}
	problems := problemsByKey(rep, hosts)
	if rep != nil {
		// A checked directory's row is keyed by its absolute path: show
		// it the way the report shows its files.
		hosts = slices.Clone(hosts)
		for i, h := range hosts {
			if shown := rep.Path(h.Key); shown != h.Key && slices.Contains(rep.Pass.Dirs(), h.Key) {
				problems[shown] = problems[h.Key]
				hosts[i].Key = shown
			}
		}
	}
	var total throttle.HostStats
	for _, h := range hosts {
		total.Requests += h.Requests
		total.Bytes += h.Bytes
		total.Waited += h.Waited
		total.ReadWait += h.ReadWait
	}
	fmt.Fprintf(w, "\n%d hosts, %d requests, %s read, %s waiting for politeness (%s of it reading bodies slowly)\n",
		len(hosts), total.Requests, humanBytes(total.Bytes),
		report.RoundDuration(total.Waited+total.ReadWait), report.RoundDuration(total.ReadWait))

	busiest := slices.Clone(hosts)
	slices.SortStableFunc(busiest, func(a, b throttle.HostStats) int {
		return cmp.Or(cmp.Compare(b.Requests, a.Requests), strings.Compare(a.Key, b.Key))
	})
	const rows = 20
	shown, rest := busiest[:min(rows, len(busiest))], busiest[min(rows, len(busiest)):]
	width := len("HOST")
	for _, h := range shown {
		width = max(width, len(h.Key))
	}
	const row = "%-*s  %8s  %8s  %7s  %7s  %8s\n"
	fmt.Fprintf(w, row, width, "HOST", "REQUESTS", "BYTES", "WAITED", "LATENCY", "PROBLEMS")
	for _, h := range shown {
		fmt.Fprintf(w, row, width, h.Key, strconv.FormatInt(h.Requests, 10), humanBytes(h.Bytes),
			report.RoundDuration(h.Waited+h.ReadWait), report.RoundDuration(h.Latency), strconv.Itoa(problems[h.Key]))
	}
	if len(rest) > 0 {
		var n int64
		for _, h := range rest {
			n += h.Requests
		}
		fmt.Fprintf(w, "... and %d more hosts with %d requests\n", len(rest), n)
	}

	slowest := slices.Clone(hosts)
	slices.SortStableFunc(slowest, func(a, b throttle.HostStats) int {
		return cmp.Or(cmp.Compare(b.Latency, a.Latency), strings.Compare(a.Key, b.Key))
	})
	slowest = slices.DeleteFunc(slowest, func(h throttle.HostStats) bool { return h.Latency <= 0 })
	if len(slowest) > 0 {
		fmt.Fprintln(w, "Slowest hosts (average time to first byte):")
		for _, h := range slowest[:min(5, len(slowest))] {
			fmt.Fprintf(w, "  %-8s %s\n", report.RoundDuration(h.Latency), h.Key)
		}
	}
}

// problemsByKey counts the report's problems per throttle key, matching a
// URL's host against the hosts that share each key.
func problemsByKey(rep *report.Report, hosts []throttle.HostStats) map[string]int {
	keyOf := make(map[string]string)
	for _, h := range hosts {
		for _, host := range h.Hosts {
			keyOf[strings.ToLower(host)] = h.Key
		}
	}
	counts := make(map[string]int)
	if rep == nil {
		return counts
	}
	for _, e := range rep.Entries {
		if !e.Record.Verdict.Problem() {
			continue
		}
		if root, _, ok := store.LocalFile(rep.Pass.Dirs(), e.Record.URL); ok {
			counts[root]++
		} else if key, ok := keyOf[hostOf(e.Record.URL)]; ok {
			counts[key]++
		}
	}
	return counts
}

func hostOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	// The crawler asks the throttle by the URL's host as written, port
	// included, so that is what HostStats.Hosts holds.
	return strings.ToLower(u.Host)
}

// logSummaryStats is writeSummaryStats for --log-format json: one record
// for the run and one per host.
func logSummaryStats(log *slog.Logger, rep *report.Report, hosts []throttle.HostStats) {
	problems := problemsByKey(rep, hosts)
	var requests, bytes int64
	for _, h := range hosts {
		requests += h.Requests
		bytes += h.Bytes
		log.Info("host", "host", h.Key, "requests", h.Requests, "bytes", h.Bytes,
			"waited_seconds", (h.Waited + h.ReadWait).Seconds(), "latency_seconds", h.Latency.Seconds(), "problems", problems[h.Key])
	}
	log.Info("hosts", "hosts", len(hosts), "requests", requests, "bytes", bytes)
}
