package rules

import (
	"net"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/throttle"
)

func intp(n int) *int       { return &n }
func boolp(b bool) *bool    { return &b }
func int64p(n int64) *int64 { return &n }

func TestHostSettings(t *testing.T) {
	e, err := New(Config{
		Start: []string{"https://example.com/", "http://127.0.0.1:8080/"},
		Hosts: []HostRule{
			{Source: "c.toml:1", Match: "static.example.com", Rate: "20/s", Burst: intp(20), PerHost: intp(6)},
			{Source: "c.toml:5", Match: "*.example.com", Window: "100/1m", Bandwidth: "1MiB", IgnoreRobots: boolp(true)},
			{Source: "c.toml:9", Match: "127.0.0.1:9090", QuotaRequests: int64p(10), QuotaBytes: "1MB", CrawlDelay: "2s", MaxPause: "1m", Retries: intp(0), Adaptive: boolp(false)},
			{Source: "c.toml:13", CIDR: "10.0.0.0/8", Rate: "unlimited", PerHost: intp(0)},
			{Source: "c.toml:16", CIDR: "2001:db8::/32", Rate: "2/s"},
			{Source: "c.toml:18", Match: "127.0.0.1:8080", CrawlDelay: "1s"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	start, other := throttle.StartHostDefaults(), throttle.OtherHostDefaults()
	with := func(s throttle.Settings, f func(*throttle.Settings)) throttle.Settings { f(&s); return s }
	tests := []struct {
		host string
		ip   net.IP
		want throttle.Settings
		from string
	}{
		{"example.com", nil, start, "default for start hosts"},
		{"example.com:443", nil, start, "default for start hosts"},
		{"EXAMPLE.com.", nil, start, "default for start hosts"},
		{"example.com:8443", nil, other, "default for third-party hosts"},
		// The owner's crawl delay for a host of the site takes the place
		// of its robots.txt's; another site's (9090, below) does not.
		{"127.0.0.1:8080", nil, with(start, func(s *throttle.Settings) { s.CrawlDelay, s.OwnCrawlDelay = time.Second, true }),
			"c.toml:18: host 6 (127.0.0.1:8080) over the start-host default"},
		{"other.org", nil, other, "default for third-party hosts"},
		{"static.example.com:443", nil, with(other, func(s *throttle.Settings) { s.Rate, s.Burst, s.MaxInFlight = 20, 20, 6 }),
			"c.toml:1: host 1 (static.example.com) over the third-party default"},
		{"a.b.example.com", nil, with(other, func(s *throttle.Settings) {
			s.WindowMax, s.Window, s.BytesPerSec, s.IgnoreRobots = 100, time.Minute, 1<<20, true
		}), "c.toml:5: host 2 (*.example.com) over the third-party default"},
		{"127.0.0.1:9090", nil, with(other, func(s *throttle.Settings) {
			s.QuotaRequests, s.QuotaBytes, s.CrawlDelay, s.MaxPause, s.MaxRetries, s.Adaptive = 10, 1e6, 2*time.Second, time.Minute, 0, false
		}), "c.toml:9: host 3 (127.0.0.1:9090) over the third-party default"},
		{"intranet.corp", net.ParseIP("10.1.2.3"), with(other, func(s *throttle.Settings) { s.Rate, s.MaxInFlight = 0, 0 }),
			"c.toml:13: host 4 (cidr 10.0.0.0/8) over the third-party default"},
		{"10.9.9.9:80", nil, with(other, func(s *throttle.Settings) { s.Rate, s.MaxInFlight = 0, 0 }),
			"c.toml:13: host 4 (cidr 10.0.0.0/8) over the third-party default"},
		{"[2001:db8::1]:443", nil, with(other, func(s *throttle.Settings) { s.Rate = 2 }),
			"c.toml:16: host 5 (cidr 2001:db8::/32) over the third-party default"},
		{"v4mapped.example", net.ParseIP("::ffff:10.0.0.1"), with(other, func(s *throttle.Settings) { s.Rate, s.MaxInFlight = 0, 0 }),
			"c.toml:13: host 4 (cidr 10.0.0.0/8) over the third-party default"},
		{"intranet.corp", net.ParseIP("192.168.1.1"), other, "default for third-party hosts"},
	}
	for _, tt := range tests {
		got, from := e.HostSettings(tt.host, tt.ip)
		if got != tt.want || from != tt.from {
			t.Errorf("HostSettings(%s, %v) =\n  %+v (%s)\nwant\n  %+v (%s)", tt.host, tt.ip, got, from, tt.want, tt.from)
		}
	}
}
