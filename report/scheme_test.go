package report

import (
	"strings"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/store"
)

// On a site that serves both schemes, one absolute http:// link walks the
// whole site again under http:// (review9 R2): the report says how many
// pages were read under the other scheme and what reads each once. A
// site started under both schemes, or read under one only, has no such
// line.
func TestSchemeLineSaysTheSiteWasReadUnderBoth(t *testing.T) {
	t.Parallel()
	pass := func(starts ...string) store.Pass {
		return store.Pass{StartURLs: starts, State: store.PassComplete, Started: night2, Finished: night2.Add(time.Minute), Elapsed: time.Minute}
	}
	both := []store.Result{
		page("https://example.com/", link("https://example.com/a", 1), link("http://example.com/a", 2), link("https://example.com:8443/", 3)),
		page("https://example.com/a", link("https://example.com/", 1)),
		page("http://example.com/a", link("http://example.com/", 1)),
		page("http://example.com/", link("http://example.com/a", 1)),
		// Another port is another host; stylesheets are no pages.
		page("https://example.com:8443/"),
		func() store.Result {
			r := page("http://example.com/s.css")
			r.Record.ContentType = "text/css"
			return r
		}(),
	}
	tests := []struct {
		name string
		pass store.Pass
		want string
	}{
		{"read under both", pass("https://example.com/"),
			"2 pages were read under http://example.com as well as https://example.com (links written with http:// lead there, and the site serves them); if both schemes serve the same pages, alias_start_hosts = true in the config file reads each page once."},
		{"started under both", pass("https://example.com/", "http://example.com/"), ""},
		{"start on another port", pass("https://example.com:8443/"), ""},
	}
	for _, tt := range tests {
		r := build(t, fillStore(t, []fixturePass{{pass: tt.pass, results: both}}), 1, Options{})
		if got := r.SchemeLine(); got != tt.want {
			t.Errorf("%s: SchemeLine() = %q, want %q", tt.name, got, tt.want)
		}
		if tt.want == "" {
			continue
		}
		if !strings.Contains(render(t, r, "json"), `"other_scheme_pages": 2`) {
			t.Errorf("%s: the JSON summary has no other_scheme_pages", tt.name)
		}
		for _, format := range []string{"text", "markdown", "html"} {
			if flat := strings.Join(strings.Fields(render(t, r, format)), " "); !strings.Contains(flat, "2 pages were read under http://example.com as well as https://example.com") {
				t.Errorf("%s: the %s report does not say it:\n%s", tt.name, format, flat)
			}
		}
	}
}
