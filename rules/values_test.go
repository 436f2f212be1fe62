package rules

import (
	"testing"
	"time"
)

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
