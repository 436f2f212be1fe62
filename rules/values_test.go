package rules

import (
	"testing"
	"time"
)

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

func TestCheckSetting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		key  string
		v    any
		want string
	}{
		{"concurrency", 0, "--x must be at least 1"},
		{"per_host", 0, "--x must be at least 1"},
		{"keep_passes", 0, "--x must be at least 1"},
		{"commit_batch", 0, "--x must be at least 1"},
		{"timeout", -5 * time.Second, "--x must be more than 0: a timeout of -5s would fail every request"},
		{"max_size", int64(0), "--x must be more than 0"},
		{"concurrency", 1, ""},
		{"sitemap_limit", 0, ""},
	} {
		err := CheckSetting("--x", tc.key, tc.v)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("CheckSetting(%s, %v) = %q, want %q", tc.key, tc.v, got, tc.want)
		}
	}
}

// report_after reads what --report-after reads, "3+2d" included.
func TestReportAfterLikeTheFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want ReportAfter
	}{
		{"3", ReportAfter{Passes: 3}},
		{"36h", ReportAfter{Duration: 36 * time.Hour}},
		{"3+2d", ReportAfter{Passes: 3, Duration: 48 * time.Hour}},
		{" 2d + 4 ", ReportAfter{Passes: 4, Duration: 48 * time.Hour}},
	} {
		f, err := ParseConfig("t.toml", []byte("report_after = \""+tc.in+"\"\n"), nil)
		if err != nil || f.ReportAfter != tc.want {
			t.Errorf("report_after = %q: %+v, %v; want %+v", tc.in, f, err, tc.want)
		}
	}
	for _, bad := range []string{"soon", "3++", "-1"} {
		if _, err := ParseReportAfter(bad); err == nil {
			t.Errorf("ParseReportAfter(%q): no error", bad)
		}
	}
}
