package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/report"
	"github.com/linkpatrol/linkpatrol/store"
)

// brokenLinkReport builds a report the way check does: a finished pass in a real
// database, with a page that links to a missing page.
func brokenLinkReport(t *testing.T) *report.Report {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "linkpatrol.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := "http://127.0.0.1:8080/"
	missing := "http://127.0.0.1:8080/<script>alert(1)</script>"
	began := time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC)
	pass, err := db.BeginPass(store.Pass{StartURLs: []string{start}, Started: began}, []store.Task{{URL: start, Action: "parse"}})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Commit(pass.ID, []store.Result{
		{
			Record: store.URLRecord{URL: start, Pass: pass.ID, Action: "parse", Verdict: store.VerdictOK, Status: 200,
				FetchedAt: began, FirstSeen: began, LastGood: began, Parsed: true},
			SetLinks: true,
			Links:    []store.Link{{URL: missing, Line: 3, Tag: "a", Attr: "href"}},
		},
		{Record: store.URLRecord{URL: missing, Pass: pass.ID, Action: "check", Verdict: store.VerdictBroken, Status: 404,
			FetchedAt: began, FirstSeen: began, FirstBroken: began, Failures: 1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	pass.State, pass.Finished = store.PassComplete, began.Add(time.Minute)
	if err := db.UpdatePass(pass); err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(db, pass.ID, report.Options{Now: began.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.HasBroken() {
		t.Fatal("the fixture has no broken link")
	}
	return rep
}

func renderFormat(t *testing.T, rep *report.Report, format string) string {
	t.Helper()
	var b bytes.Buffer
	if err := report.Write(&b, rep, format); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestParseOutputs(t *testing.T) {
	for _, c := range []struct {
		in      []string
		want    []outputFile
		wantErr string
	}{
		{in: nil, want: []outputFile{}},
		{
			in: []string{"r.txt", "r.json", "r.csv", "r.junit.xml", "r.sarif", "r.sarif.json", "r.md", "R.HTML", "github:ann.log"},
			want: []outputFile{
				{"r.txt", "text"}, {"r.json", "json"}, {"r.csv", "csv"}, {"r.junit.xml", "junit"},
				{"r.sarif", "sarif"}, {"r.sarif.json", "sarif"}, {"r.md", "markdown"}, {"R.HTML", "html"},
				{"ann.log", "github"},
			},
		},
		{in: []string{"json:out/report.data"}, want: []outputFile{{"out/report.data", "json"}}},
		// A colon that does not follow a format name is part of the path.
		{in: []string{"build:2026/report.html"}, want: []outputFile{{"build:2026/report.html", "html"}}},
		{in: []string{"report.pdf"}, wantErr: "-o report.pdf: cannot tell the format"},
		{in: []string{"report"}, wantErr: "-o report: cannot tell the format"},
		{in: []string{"github:"}, wantErr: "-o github:: no file name"},
		{in: []string{""}, wantErr: "-o needs a file name"},
		{in: []string{"a/r.json", "a/./r.json"}, wantErr: "-o a/./r.json: the same file as -o a/r.json"},
	} {
		got, err := parseOutputs(c.in)
		switch {
		case c.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("parseOutputs(%q) error = %v, want one containing %q", c.in, err, c.wantErr)
			}
		case err != nil:
			t.Errorf("parseOutputs(%q): %v", c.in, err)
		case len(got) != len(c.want):
			t.Errorf("parseOutputs(%q) = %v, want %v", c.in, got, c.want)
		default:
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("parseOutputs(%q)[%d] = %v, want %v", c.in, i, got[i], c.want[i])
				}
			}
		}
	}
}

func TestWriteOutputsEveryFormat(t *testing.T) {
	rep := brokenLinkReport(t)
	dir := t.TempDir()
	names := map[string]string{
		"report.txt":       "text",
		"report.json":      "json",
		"report.csv":       "csv",
		"report.junit.xml": "junit",
		"report.sarif":     "sarif",
		"report.md":        "markdown",
		"report.html":      "html",
		"annotations.log":  "github",
	}
	var outputs []string
	for name, format := range names {
		p := filepath.Join(dir, name)
		if format == "github" {
			p = "github:" + p
		}
		outputs = append(outputs, p)
	}
	var stdout bytes.Buffer
	if err := writeOutputs(&stdout, rep, "", outputs); err != nil {
		t.Fatal(err)
	}
	if stdout.Len() != 0 {
		t.Errorf("with -o files and no --format, stdout got %q", stdout.String())
	}
	for name, format := range names {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if want := renderFormat(t, rep, format); string(got) != want {
			t.Errorf("%s differs from the %s report:\n%s", name, format, got)
		}
	}
	var js struct {
		URLs []struct {
			URL string `json:"url"`
		} `json:"urls"`
	}
	if err := json.Unmarshal(mustReadFile(t, filepath.Join(dir, "report.json")), &js); err != nil || len(js.URLs) != 1 {
		t.Errorf("report.json: %v, %+v", err, js)
	}
	if err := xml.Unmarshal(mustReadFile(t, filepath.Join(dir, "report.junit.xml")), new(struct{})); err != nil {
		t.Errorf("report.junit.xml is not XML: %v", err)
	}
	if html := string(mustReadFile(t, filepath.Join(dir, "report.html"))); strings.Contains(html, "<script>alert(1)") {
		t.Error("report.html carries the URL's <script> unescaped")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != len(names) {
		t.Errorf("%d files in the directory, want %d: temporary files left behind?", len(entries), len(names))
	}
}

// -o adds an output (LinkChecker's -F convention): a cron job with -o still
// mails the report, and only -q with -o makes standard output silent.
func TestOutputFilesAddToStdout(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<a href="/gone">gone</a>`)
	}))
	t.Cleanup(srv.Close) // after the parallel subtests, not before them
	for _, c := range []struct {
		name  string
		flags []string
		file  bool
		want  string // what stdout starts with, "" for nothing
	}{
		{"no flags", nil, false, "linkpatrol pass"},
		{"-o only", nil, true, "linkpatrol pass"},
		{"-o and --format json", []string{"--format", "json"}, true, "{"},
		{"-o and -q", []string{"-q"}, true, ""},
		{"-q alone", []string{"-q"}, false, "linkpatrol pass"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			args := append([]string{"check", "--db", filepath.Join(dir, "lp.db"), "--ignore-robots"}, c.flags...)
			html := filepath.Join(dir, "report.html")
			if c.file {
				args = append(args, "-o", html)
			}
			r := runInProcess(t, append(args, srv.URL+"/")...)
			if r.code != exitProblems {
				t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
			}
			switch {
			case c.want == "" && r.stdout != "":
				t.Errorf("stdout = %q, want nothing", r.stdout)
			case c.want != "" && !strings.HasPrefix(r.stdout, c.want):
				t.Errorf("stdout = %q, want it to start with %q", r.stdout, c.want)
			case c.want == "linkpatrol pass" && !strings.Contains(r.stdout, "/gone"):
				t.Errorf("the report on stdout lacks the broken link:\n%s", r.stdout)
			}
			if c.file {
				if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), "<!DOCTYPE html>") {
					t.Errorf("-o %s: %v, %.60q", html, err, b)
				}
			}
		})
	}
}

func TestWriteOutputsErrorsNameTheFile(t *testing.T) {
	rep := brokenLinkReport(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "ok.json")
	bad := filepath.Join(dir, "missing-dir", "r.html")
	var stdout bytes.Buffer
	err := writeOutputs(&stdout, rep, "text", []string{bad, good})
	if err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("error %v does not name %s", err, bad)
	}
	// One bad output does not cost the others.
	if got := string(mustReadFile(t, good)); got != renderFormat(t, rep, "json") {
		t.Errorf("%s = %q", good, got)
	}
	if stdout.String() != renderFormat(t, rep, "text") {
		t.Error("stdout did not get the text report")
	}

	if err := writeOutputs(&stdout, rep, "", []string{good, "r.pdf"}); err == nil || !strings.Contains(err.Error(), "r.pdf") {
		t.Errorf("an unknown extension gave %v", err)
	}
}

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	if err := os.WriteFile(path, []byte("yesterday"), 0o600); err != nil {
		t.Fatal(err)
	}

	// A failed render leaves the old report and no temporary file.
	boom := errors.New("boom")
	err := writeAtomic(path, func(w io.Writer) error {
		io.WriteString(w, "half a rep")
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), path) {
		t.Errorf("error = %v", err)
	}
	if got := string(mustReadFile(t, path)); got != "yesterday" {
		t.Errorf("after a failed write the file holds %q", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}

	// A replaced file keeps its permissions.
	if err := writeAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, "today"); return err }); err != nil {
		t.Fatal(err)
	}
	if got := string(mustReadFile(t, path)); got != "today" {
		t.Errorf("file holds %q", got)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the old 0600", st.Mode().Perm())
	}

	// A new file is readable by others, for publishing.
	fresh := filepath.Join(dir, "new.json")
	if err := writeAtomic(fresh, func(w io.Writer) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(fresh); st.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v, want 0644", st.Mode().Perm())
	}

	// A symlink into a web root updates its target and stays a link.
	target := filepath.Join(t.TempDir(), "published.html")
	if err := os.WriteFile(target, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.html")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := writeAtomic(link, func(w io.Writer) error { _, err := io.WriteString(w, "linked"); return err }); err != nil {
		t.Fatal(err)
	}
	if got := string(mustReadFile(t, target)); got != "linked" {
		t.Errorf("symlink target holds %q", got)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", st, err)
	}

	// A directory is not a report.
	if err := writeAtomic(dir, func(io.Writer) error { return nil }); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("writing over a directory gave %v", err)
	}
}

func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// An -o file that cannot be written stops check before its first request
// and report before it renders: the report is written when the pass is
// over, and an hour of crawling must not be lost to a typo in a directory
// name (qa5 F7: rc 2 after the crawl, naming a temporary file).
func TestOutputThatCannotBeWrittenFailsAtOnce(t *testing.T) {
	t.Parallel()
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<p>ok</p>")
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	missing := filepath.Join(dir, "nodir", "report.html")
	tests := []struct {
		name, output, want string
	}{
		{"missing directory", missing, "the directory " + filepath.Join(dir, "nodir") + " does not exist"},
		{"a directory", "json:" + dir, "not a regular file"},
		{"missing directory, format prefix", "junit:" + missing, "does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "lp.db")
			before := requests.Load()
			r := runInProcess(t, "check", "--db", db, "-o", tt.output, srv.URL+"/")
			if r.code != exitUsage || !strings.Contains(r.stderr, "-o "+tt.output+": cannot write the report there: ") || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("check: exit %d, want 2 and %q:\n%s%s", r.code, tt.want, r.stdout, r.stderr)
			}
			if n := requests.Load() - before; n != 0 {
				t.Errorf("check made %d requests before failing", n)
			}
			if _, err := os.Stat(db); err == nil {
				t.Errorf("check created the database before failing")
			}
		})
	}
	db := filepath.Join(t.TempDir(), "lp.db")
	if r := runInProcess(t, "check", "--db", db, srv.URL+"/"); r.code != exitOK {
		t.Fatalf("check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runInProcess(t, "report", "--db", db, "-o", missing); r.code != exitUsage || !strings.Contains(r.stderr, "does not exist") || r.stdout != "" {
		t.Errorf("report -o into a missing directory: exit %d, want 2 and no report:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("probing left files behind: %v", entries)
	}
}
