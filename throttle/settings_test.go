package throttle_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/throttle"
)

func TestParseRate(t *testing.T) {
	tests := []struct {
		in      string
		want    float64
		wantErr bool
	}{
		{in: "5/s", want: 5},
		{in: "300/m", want: 5},
		{in: "0.5/s", want: 0.5},
		{in: "3600/h", want: 1},
		{in: "10/1m", want: 10.0 / 60},
		{in: "1/500ms", want: 2},
		{in: " 2 / s ", want: 2},
		{in: "unlimited", want: 0},
		{in: "Unlimited", want: 0},
		{in: "0", want: 0},
		{in: "0/s", want: 0},
		{in: "5", wantErr: true},
		{in: "", wantErr: true},
		{in: "/s", wantErr: true},
		{in: "5/", wantErr: true},
		{in: "5/x", wantErr: true},
		{in: "5/0s", wantErr: true},
		{in: "5/-1s", wantErr: true},
		{in: "-5/s", wantErr: true},
		{in: "1e3/s", wantErr: true},
		{in: "NaN/s", wantErr: true},
		{in: "Inf/s", wantErr: true},
		{in: "0x10/s", wantErr: true},
		{in: "1.2.3/s", wantErr: true},
		{in: "./s", wantErr: true},
	}
	for _, tt := range tests {
		got, err := throttle.ParseRate(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseRate(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if !tt.wantErr && math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("ParseRate(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestParseWindow(t *testing.T) {
	tests := []struct {
		in      string
		n       int
		d       time.Duration
		wantErr bool
	}{
		{in: "100/1m", n: 100, d: time.Minute},
		{in: "100/m", n: 100, d: time.Minute},
		{in: "10/30s", n: 10, d: 30 * time.Second},
		{in: "5/1h30m", n: 5, d: 90 * time.Minute},
		{in: "unlimited"},
		{in: "0"},
		{in: "0/1m"},
		{in: "1.5/1m", wantErr: true},
		{in: "-1/1m", wantErr: true},
		{in: "+1/1m", wantErr: true},
		{in: "100", wantErr: true},
		{in: "100/0s", wantErr: true},
		{in: "100/soon", wantErr: true},
		{in: "99999999999999999999/1m", wantErr: true},
	}
	for _, tt := range tests {
		n, d, err := throttle.ParseWindow(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseWindow(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if n != tt.n || d != tt.d {
			t.Errorf("ParseWindow(%q) = %d, %v; want %d, %v", tt.in, n, d, tt.n, tt.d)
		}
	}
}

// A negative size is refused as negative, the way durations are, not as a
// unit nobody wrote ("-5": size "-5": unknown unit "-5").
func TestParseBytesNegative(t *testing.T) {
	for _, in := range []string{"-5", "-5MB", " -1KiB"} {
		if _, err := throttle.ParseBytes(in); err == nil || !strings.Contains(err.Error(), "is negative") || strings.Contains(err.Error(), "unit") {
			t.Errorf("ParseBytes(%q) = %v; want it called negative", in, err)
		}
	}
}

func TestParseBytes(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{in: "512KiB", want: 512 << 10},
		{in: "2MB", want: 2_000_000},
		{in: "1.5M", want: 1_500_000},
		{in: "1.5MiB", want: 3 << 19},
		{in: "4096", want: 4096},
		{in: "10 kb", want: 10_000},
		{in: "1Gi", want: 1 << 30},
		{in: "3TB", want: 3e12},
		{in: "100b", want: 100},
		{in: "1.9", want: 1},
		{in: "unlimited", want: 0},
		{in: "0", want: 0},
		{in: "0KiB", want: 0},
		{in: "8388607TiB", want: 8388607 << 40},
		{in: "8388608TiB", wantErr: true},
		{in: "9223372036854775808", wantErr: true},
		{in: "0.1", wantErr: true},
		{in: "5XB", wantErr: true},
		{in: "-5MB", wantErr: true},
		{in: "MB", wantErr: true},
		{in: "", wantErr: true},
		{in: "1e6", wantErr: true},
		{in: "..KB", wantErr: true},
	}
	for _, tt := range tests {
		got, err := throttle.ParseBytes(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseBytes(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseBytes(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"5/s", "300/m", "0.5/s", "10/1m30s", "unlimited", "0", "1/0s", "1e9/1ns"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := throttle.ParseRate(s)
		if err != nil {
			return
		}
		if r < 0 || math.IsNaN(r) || math.IsInf(r, 0) {
			t.Fatalf("ParseRate(%q) = %v", s, r)
		}
	})
}

func FuzzParseWindow(f *testing.F) {
	for _, s := range []string{"100/1m", "1/s", "unlimited", "0", "5/-1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, d, err := throttle.ParseWindow(s)
		if err != nil {
			return
		}
		if n < 0 || d < 0 || (n == 0) != (d == 0) {
			t.Fatalf("ParseWindow(%q) = %d, %v", s, n, d)
		}
	})
}

func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"512KiB", "2MB", "1.5M", "0", "unlimited", "9223372036854775807", "8388608TiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := throttle.ParseBytes(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("ParseBytes(%q) = %d", s, n)
		}
	})
}
