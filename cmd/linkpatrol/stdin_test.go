package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// check - reads its start URLs (or directories) from standard input, one a
// line, as linkchecker's --stdin and lychee's - do: a list from a sitemap
// or from find, a path with a space in it included.
func TestCheckReadsStartsFromStdin(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<a href="/">home</a>`)
	}))
	t.Cleanup(srv.Close)
	dir := tree(t, map[string]string{"my site/index.html": `<a href="gone.html">gone</a>`})
	checkStdin := func(in string, args ...string) result {
		var stdout, stderr bytes.Buffer
		args = append([]string{"check", "--db", filepath.Join(t.TempDir(), "lp.db"), "--format", "json"}, args...)
		code := run(t.Context(), args, strings.NewReader(in), &stdout, &stderr, false)
		return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
	}
	starts := func(r result) []string {
		var rep struct {
			Pass struct {
				Start []string `json:"start_urls"`
			} `json:"pass"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("decode: %v\n%s%s", err, r.stdout, r.stderr)
		}
		return rep.Pass.Start
	}

	r := checkStdin("# the site\n"+srv.URL+"/\n\n", "-")
	if r.code != exitOK || !slices.Equal(starts(r), []string{srv.URL + "/"}) {
		t.Errorf("URL on stdin: exit %d, starts %q\n%s", r.code, starts(r), r.stderr)
	}
	r = checkStdin("  "+filepath.Join(dir, "my site")+"  \n", "-")
	if r.code != exitProblems || !strings.Contains(r.stdout, "gone.html") {
		t.Errorf("directory on stdin: exit %d, want 1 and gone.html broken\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = checkStdin("\n# nothing\n", "-")
	if r.code != exitUsage || !strings.Contains(r.stderr, "check -: standard input named no start URL or directory") {
		t.Errorf("empty stdin: exit %d, stderr %q", r.code, r.stderr)
	}
}
