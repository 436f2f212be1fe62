package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/linkpatrol/linkpatrol/store"
)

func TestFormatForPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path, want string
		ok         bool
	}{
		{"report.txt", "text", true},
		{"out/links.json", "json", true},
		{"links.sarif.json", "sarif", true},
		{"links.SARIF", "sarif", true},
		{"links.csv", "csv", true},
		{"TEST-links.xml", "junit", true},
		{"links.junit.xml", "junit", true},
		{"README.md", "markdown", true},
		{"report.markdown", "markdown", true},
		{"/var/www/status/index.html", "html", true},
		{"page.htm", "html", true},
		{"report", "", false},
		{"report.pdf", "", false},
		{".json", "", false},
	}
	for _, tt := range tests {
		got, ok := FormatForPath(tt.path)
		if got != tt.want || ok != tt.ok {
			t.Errorf("FormatForPath(%q) = %q, %v; want %q, %v", tt.path, got, ok, tt.want, tt.ok)
		}
	}
	want := []string{"text", "json", "csv", "junit", "sarif", "github", "markdown", "html"}
	if !slices.Equal(Formats(), want) {
		t.Errorf("Formats() = %v, want %v", Formats(), want)
	}
}

func TestWriteUnknownFormat(t *testing.T) {
	t.Parallel()
	r := build(t, fillStore(t, webHistory()), 2, Options{})
	err := Write(&bytes.Buffer{}, r, "pdf")
	if err == nil || !strings.Contains(err.Error(), `"pdf"`) || !strings.Contains(err.Error(), "markdown") {
		t.Errorf("Write pdf: err = %v, want one naming the format and the choices", err)
	}
}

// TestJSONSchema checks DESIGN.md's contract field by field: names, types,
// null for unknown times.
func TestJSONSchema(t *testing.T) {
	t.Parallel()
	src := fillStore(t, webHistory())
	var doc map[string]any
	if err := json.Unmarshal([]byte(render(t, build(t, src, 2, Options{}), "json")), &doc); err != nil {
		t.Fatal(err)
	}
	pass := doc["pass"].(map[string]any)
	for key, kind := range map[string]string{"id": "number", "started": "string", "finished": "string", "complete": "bool", "start_urls": "array"} {
		if got := jsonKind(pass[key]); got != kind {
			t.Errorf("pass.%s is %s, want %s", key, got, kind)
		}
	}
	summary := doc["summary"].(map[string]any)
	for _, key := range []string{"pages", "links", "urls", "broken", "skipped", "transient", "unverifiable", "elapsed_seconds"} {
		if jsonKind(summary[key]) != "number" {
			t.Errorf("summary.%s = %v, want a number", key, summary[key])
		}
	}
	list := doc["urls"].([]any)
	if len(list) != 10 {
		t.Fatalf("%d urls, want the 10 problems", len(list))
	}
	first := list[0].(map[string]any)
	for key, kind := range map[string]string{
		"url": "string", "final_url": "string", "status": "number", "error": "string", "verdict": "string",
		"broken": "bool", "action": "string", "first_broken": "string", "last_good": "null", "referrers": "array",
	} {
		if got := jsonKind(first[key]); got != kind {
			t.Errorf("urls[0].%s is %s, want %s", key, got, kind)
		}
	}
	ref := first["referrers"].([]any)[0].(map[string]any)
	if ref["page"] != "https://example.com/" || ref["line"] != 12.0 {
		t.Errorf("urls[0].referrers[0] = %v", ref)
	}
	changes := doc["changes"].(map[string]any)
	if changes["previous_pass"] != 1.0 || len(changes["fixed"].([]any)) != 1 || len(changes["no_longer_linked"].([]any)) != 2 {
		t.Errorf("changes = %v", changes)
	}

	// An unfinished first pass: finished is null, complete false, no changes.
	h := dirHistory()
	doc = nil
	if err := json.Unmarshal([]byte(render(t, build(t, fillStore(t, h), 1, Options{BaseDir: "/work"}), "json")), &doc); err != nil {
		t.Fatal(err)
	}
	pass = doc["pass"].(map[string]any)
	if pass["finished"] != nil || pass["complete"] != false || doc["changes"] != nil {
		t.Errorf("unfinished pass: %v, changes %v", pass, doc["changes"])
	}
	ref = doc["urls"].([]any)[0].(map[string]any)["referrers"].([]any)[0].(map[string]any)
	if ref["file"] != "site/index.html" || ref["page"] != "file:///work/site/" {
		t.Errorf("directory referrer = %v, want page file:///work/site/ and file site/index.html", ref)
	}
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "bool"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "?"
}

func TestCSV(t *testing.T) {
	t.Parallel()
	r := build(t, fillStore(t, webHistory()), 2, Options{})
	rows, err := csv.NewReader(strings.NewReader(render(t, r, "csv"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := 1 // header
	for _, e := range r.Entries {
		want += max(len(e.Referrers), 1)
	}
	if len(rows) != want {
		t.Errorf("%d rows, want %d (a header and one per referrer)", len(rows), want)
	}
	if !slices.Equal(rows[0], csvHeader) {
		t.Errorf("header = %v", rows[0])
	}
	if got := rows[1]; got[1] != "https://example.com/missing.html" || got[3] != "404" || got[10] != "https://example.com/" || got[11] != "12" {
		t.Errorf("first row = %v", got)
	}
	for _, in := range []string{"=HYPERLINK(\"x\")", "+1", "-1", "@SUM(A1)"} {
		if got := cell(in); got != "'"+in {
			t.Errorf("cell(%q) = %q, want it defused", in, got)
		}
	}
}

func TestGitHubAnnotations(t *testing.T) {
	t.Parallel()
	r := build(t, fillStore(t, dirHistory()), 1, Options{BaseDir: "/work"})
	out := render(t, r, "github")
	want := "::error file=site/about/index.html,line=12,title=Broken link::Broken link site/about/team.html: 404 Not Found; never worked\n"
	if !strings.Contains(out, want) {
		t.Errorf("no %q in\n%s", want, out)
	}
	if n := strings.Count(out, "::error file="); n != 4 {
		t.Errorf("%d error annotations on files, want one per referrer (4)", n)
	}
	if got := escapeProperty("a,b:c%\nd"); got != "a%2Cb%3Ac%25%0Ad" {
		t.Errorf("escapeProperty = %q", got)
	}
	if got := escapeData("50%\r\nok"); got != "50%25%0D%0Aok" {
		t.Errorf("escapeData = %q", got)
	}
	// A hostile URL cannot start a second command on its own line.
	h := webHistory()
	h[1].results = append(h[1].results, target(store.URLRecord{URL: "https://x.example/\n::error::fake", Verdict: store.VerdictBroken, Status: 404}))
	h[1].results[0].Links = append(h[1].results[0].Links, link("https://x.example/\n::error::fake", 60))
	for _, line := range strings.Split(render(t, build(t, fillStore(t, h), 2, Options{}), "github"), "\n") {
		if strings.Contains(line, "fake") && !strings.HasPrefix(line, "::error title=Broken link::Broken link https://x.example/%0A::error::fake") {
			t.Errorf("injected line: %q", line)
		}
	}
}

// mdCell splits a Markdown table row the way GFM does: on pipes that are not
// escaped.
var mdCell = regexp.MustCompile(`(?:^|[^\\])\|`)

func TestMarkdown(t *testing.T) {
	t.Parallel()
	r := build(t, fillStore(t, webHistory()), 2, Options{})
	out := render(t, r, "markdown")
	if prose := stripCodeSpans(out); strings.Contains(prose, "<script") || strings.Contains(prose, "<b>") {
		t.Errorf("raw HTML from a URL or note reached the Markdown outside a code span:\n%s", prose)
	}
	rows := 0
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		rows++
		if n := len(mdCell.FindAllString(line, -1)); n != 6 {
			t.Errorf("row has %d cell borders, want 6: %s", n, line)
		}
	}
	if rows != 3*2+10 {
		t.Errorf("%d table rows, want 3 headers, 3 rules and 10 problems", rows)
	}
	tests := []struct{ in, want string }{
		{"plain", "`plain`"},
		{"a`b", "``a`b``"},
		{"`x", "`` `x ``"},
		{"a|b", "`a\\|b`"},
		{"a\nb", "`a b`"},
	}
	for _, tt := range tests {
		if got := mdCode(tt.in); got != tt.want {
			t.Errorf("mdCode(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSARIF(t *testing.T) {
	t.Parallel()
	r := build(t, fillStore(t, dirHistory()), 1, Options{BaseDir: "/work"})
	var log sarifLog
	if err := json.Unmarshal([]byte(render(t, r, "sarif")), &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || log.Schema != sarifSchema || len(log.Runs) != 1 {
		t.Fatalf("version %q schema %q runs %d", log.Version, log.Schema, len(log.Runs))
	}
	run := log.Runs[0]
	if len(run.Results) != 4 {
		t.Errorf("%d results, want one per referrer (4)", len(run.Results))
	}
	for _, res := range run.Results {
		if res.RuleIndex < 0 || res.RuleIndex >= len(run.Tool.Driver.Rules) || run.Tool.Driver.Rules[res.RuleIndex].ID != res.RuleID {
			t.Errorf("result rule %q/%d does not match the driver's rules", res.RuleID, res.RuleIndex)
		}
		loc := res.Locations[0].PhysicalLocation
		if strings.HasPrefix(loc.ArtifactLocation.URI, "/") || loc.ArtifactLocation.URIBaseID != "%SRCROOT%" || loc.Region == nil || loc.Region.StartLine < 1 {
			t.Errorf("location %+v, want a relative file with a line", loc)
		}
	}
	if got := run.Results[0].Locations[0].PhysicalLocation; got.ArtifactLocation.URI != "site/index.html" || got.Region.StartLine != 6 {
		t.Errorf("first result at %+v, want site/index.html:6", got)
	}
	if run.Invocations[0].ExecutionSuccessful {
		t.Error("a stopped pass reported as a successful execution")
	}
}

// stripCodeSpans removes CommonMark code spans (a run of backticks up to the
// next run of the same length), whose content is shown as text.
func stripCodeSpans(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			return b.String() + s
		}
		b.WriteString(s[:i])
		n := len(s[i:]) - len(strings.TrimLeft(s[i:], "`"))
		fence, rest := s[i:i+n], s[i+n:]
		end := -1
		for j := 0; j < len(rest); {
			k := strings.Index(rest[j:], fence)
			if k < 0 {
				break
			}
			k += j
			if m := len(rest[k:]) - len(strings.TrimLeft(rest[k:], "`")); m == n {
				end = k
				break
			} else {
				j = k + m
			}
		}
		if end < 0 {
			b.WriteString(fence)
			s = rest
			continue
		}
		s = rest[end+n:]
	}
}
