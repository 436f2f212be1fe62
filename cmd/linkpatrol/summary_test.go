package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/throttle"
)

func TestWriteSummaryStats(t *testing.T) {
	rep := brokenLinkReport(t) // one broken URL on 127.0.0.1:8080
	hosts := []throttle.HostStats{
		{Key: "127.0.0.1:8080", Hosts: []string{"127.0.0.1:8080"}, Requests: 40, Bytes: 1_500_000,
			Waited: 90 * time.Second, ReadWait: 3 * time.Second, Latency: 12 * time.Millisecond},
		{Key: "slow.example", Hosts: []string{"slow.example", "www.slow.example"}, Requests: 3, Bytes: 900,
			Latency: 2300 * time.Millisecond},
		{Key: "idle.example", Hosts: []string{"idle.example"}},
	}
	var buf bytes.Buffer
	writeSummaryStats(&buf, rep, hosts)
	want := `
3 hosts, 43 requests, 1.5 MB read, 1m33s waiting for politeness (3s of it reading bodies slowly)
HOST            REQUESTS     BYTES   WAITED  LATENCY  PROBLEMS
127.0.0.1:8080        40    1.5 MB    1m33s     12ms         1
slow.example           3     900 B       0s     2.3s         0
idle.example           0       0 B       0s       0s         0
Slowest hosts (average time to first byte):
  2.3s     slow.example
  12ms     127.0.0.1:8080
`
	if got := buf.String(); got != want {
		t.Errorf("summary:\n%s\nwant:\n%s", got, want)
	}

	buf.Reset()
	writeSummaryStats(&buf, rep, nil)
	if buf.Len() != 0 {
		t.Errorf("with no hosts contacted (a directory check) the summary is %q", buf.String())
	}
}

func TestWriteSummaryStatsCapsRows(t *testing.T) {
	var hosts []throttle.HostStats
	for i := range 25 {
		hosts = append(hosts, throttle.HostStats{Key: fmt.Sprintf("h%02d.example", i), Requests: int64(100 + i)})
	}
	var buf bytes.Buffer
	writeSummaryStats(&buf, nil, hosts)
	out := buf.String()
	if !strings.Contains(out, "... and 5 more hosts with 510 requests\n") {
		t.Errorf("no tail line for the 5 quietest hosts:\n%s", out)
	}
	if !strings.Contains(out, "h24.example") || strings.Contains(out, "h04.example") {
		t.Errorf("the table should hold the 20 busiest hosts:\n%s", out)
	}
}
