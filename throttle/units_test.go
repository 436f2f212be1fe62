package throttle

import (
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"30s", 30 * time.Second, true},
		{"1h30m", 90 * time.Minute, true},
		{"7d", 7 * 24 * time.Hour, true},
		{"2w", 14 * 24 * time.Hour, true},
		{"1d12h", 36 * time.Hour, true},
		{"0.5d", 12 * time.Hour, true},
		{"0", 0, true},
		{"-1h", 0, false},
		{"7 days", 0, false},
		{"d", 0, false},
		{"", 0, false},
		{"99999999999999w", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
	for d, want := range map[time.Duration]string{
		7 * 24 * time.Hour: "7d", 36 * time.Hour: "1d12h", 10 * time.Minute: "10m",
		90 * time.Second: "1m30s", 2 * time.Hour: "2h", 0: "0s",
	} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// A flag and a key read a value with one parser: what the file accepts,
// the command line accepts.
func TestValuesReadLikeTheFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want time.Duration
		str  string
	}{
		{"7d", 7 * 24 * time.Hour, "7d"},
		{"1w", 7 * 24 * time.Hour, "7d"},
		{"1d12h", 36 * time.Hour, "1d12h"},
		{"20h", 20 * time.Hour, "20h"},
		{"0s", 0, "0"},
	} {
		var d Duration
		if err := d.Set(tc.in); err != nil || time.Duration(d) != tc.want || d.String() != tc.str {
			t.Errorf("Set(%q) = %v (%q), %v; want %v (%q)", tc.in, time.Duration(d), d.String(), err, tc.want, tc.str)
		}
		var u Duration
		if err := u.UnmarshalText([]byte(tc.in)); err != nil || u != d {
			t.Errorf("UnmarshalText(%q) = %v, %v; want %v", tc.in, u, err, d)
		}
	}
	var d Duration
	if err := d.Set("-5s"); err == nil {
		t.Error("Set(-5s): no error")
	}
	var z Size
	if err := z.Set("10MiB"); err != nil || z != 10<<20 || z.String() != "10MiB" {
		t.Errorf("Size.Set(10MiB) = %d (%q), %v", z, z.String(), err)
	}
	if err := z.Set("10 parsecs"); err == nil {
		t.Error("Size.Set(10 parsecs): no error")
	}
}

func TestFormatSettings(t *testing.T) {
	got := Settings{
		Rate: 0.5, Burst: 0, WindowMax: 100, Window: time.Minute, MaxInFlight: 2, BytesPerSec: 1024,
		QuotaRequests: 5, QuotaBytes: 10, CrawlDelay: time.Second, MaxPause: 10 * time.Minute,
		MaxRetries: 1, Adaptive: true, IgnoreRobots: true,
	}.String()
	want := "rate 0.5/s burst 1, window 100/1m, in flight 2, 1KiB/s, quota 5 requests, quota 10 bytes, crawl delay 1s, max pause 10m, retries 1, adaptive, robots.txt ignored"
	if got != want {
		t.Errorf("Settings.String =\n%s\nwant\n%s", got, want)
	}
	if got := (Settings{}).String(); got != "rate unlimited, in flight per --per-host" {
		t.Errorf("zero settings: %s", got)
	}
}

// Every value type reads back what its String writes, from the command
// line (Set) and from the file (UnmarshalText) alike.
func TestValueTypesRoundTrip(t *testing.T) {
	t.Parallel()
	type value interface {
		Set(string) error
		UnmarshalText([]byte) error
		String() string
	}
	for _, tc := range []struct {
		new      func() value
		in, want string
	}{
		{func() value { return new(Rate) }, "5/s", "5/s"},
		{func() value { return new(Rate) }, "300/m", "5/s"},
		{func() value { return new(Rate) }, "unlimited", "unlimited"},
		{func() value { return new(Rate) }, "1/3s", "20/m"},
		{func() value { return new(Rate) }, "0.5/s", "30/m"},
		{func() value { return new(Rate) }, "1/7s", "0.14285714285714285/s"},
		{func() value { return new(Window) }, "100/1m", "100/1m"},
		{func() value { return new(Window) }, "0", "unlimited"},
		{func() value { return new(Size) }, "1500", "1500 bytes"},
		{func() value { return new(Size) }, "2GB", "2GB"},
		{func() value { return new(Duration) }, "36h", "1d12h"},
	} {
		v := tc.new()
		if err := v.Set(tc.in); err != nil || v.String() != tc.want {
			t.Errorf("Set(%q) = %q, %v; want %q", tc.in, v.String(), err, tc.want)
			continue
		}
		back := tc.new()
		if err := back.UnmarshalText([]byte(v.String())); err != nil || back.String() != tc.want {
			t.Errorf("%q reads back as %q, %v", tc.want, back.String(), err)
		}
	}
	for _, bad := range []string{"fast", "5", "-1/s"} {
		if err := new(Rate).Set(bad); err == nil {
			t.Errorf("Rate.Set(%q): no error", bad)
		}
	}
	if err := new(Window).Set("1.5/1m"); err == nil {
		t.Error("Window.Set(1.5/1m): no error")
	}
}
