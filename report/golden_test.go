package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenCases are the reports every format is rendered from.
func goldenCases(t *testing.T) []struct {
	name string
	r    *Report
} {
	web := fillStore(t, webHistory())
	dir := fillStore(t, dirHistory())
	frag := fillStore(t, fragHistory())
	loop := fillStore(t, loopHistory())
	cut := fillStore(t, cutHistory())
	carried := fillStore(t, carriedHistory())
	robots := fillStore(t, robotsHistory())
	quota := fillStore(t, quotaHistory())
	down := fillStore(t, downHistory())
	sitemap := fillStore(t, sitemapHistory())
	unread := fillStore(t, unreadHistory())
	after := fillStore(t, reportAfterHistory())
	return []struct {
		name string
		r    *Report
	}{
		{"web", build(t, web, 2, Options{})},
		{"dir", build(t, dir, 1, Options{BaseDir: "/work"})},
		{"fragments", build(t, frag, 1, Options{CheckFragments: true})},
		{"redirects", build(t, loop, 1, Options{})},
		{"cut", build(t, cut, 1, Options{BaseDir: "/work"})},
		{"carried", build(t, carried, 1, Options{BaseDir: "/work"})},
		{"robots", build(t, robots, 1, Options{})},
		{"quota", build(t, quota, 2, Options{})},
		{"down", build(t, down, 1, Options{})},
		{"sitemap", build(t, sitemap, 1, Options{})},
		{"unread", build(t, unread, 1, Options{})},
		{"reportafter", build(t, after, 2, Options{ReportAfter: Threshold{Failures: 2}})},
		{"ghost", build(t, after, 2, Options{})}, // the same nights, everything reported
		{"behind", build(t, fillTallied(t, behindHistory()), 2, Options{})},
	}
}

var goldenExt = map[string]string{
	"text": "txt", "json": "json", "csv": "csv", "junit": "junit.xml", "sarif": "sarif",
	"github": "github.txt", "markdown": "md", "html": "html",
}

func TestGolden(t *testing.T) {
	t.Parallel()
	for _, c := range goldenCases(t) {
		for _, format := range Formats() {
			t.Run(c.name+"/"+format, func(t *testing.T) {
				var buf bytes.Buffer
				if err := Write(&buf, c.r, format); err != nil {
					t.Fatal(err)
				}
				checkGolden(t, filepath.Join("testdata", "golden", c.name+"."+goldenExt[format]), buf.Bytes())
			})
		}
	}
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; run with -update if the change is intended\n--- got:\n%s", path, got)
	}
}
