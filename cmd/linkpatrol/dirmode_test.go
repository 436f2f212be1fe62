package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// These tests run the binary on small trees on disk, one per failure a new
// user met checking a built site (issue 14, and issue 13's local-file items).

// tree writes files below a new directory and returns it.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runWith runs the binary in dir with extra environment. The deadline is
// a guard against a hang (a named pipe read forever), not a timing check.
func runWith(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	r := runCmd(t, cmd)
	if ctx.Err() != nil {
		t.Fatalf("%v did not finish within a minute (hung?)\n%s", args, r.stderr)
	}
	return r
}

// dirURL is one URL of a directory report, with the fields a directory
// check adds.
type dirURL struct {
	URL       string `json:"url"`
	File      string `json:"file"`
	Status    int    `json:"status"`
	Error     string `json:"error"`
	Verdict   string `json:"verdict"`
	Note      string `json:"note"`
	Seed      bool   `json:"seed"`
	Referrers []struct {
		Page string `json:"page"`
		File string `json:"file"`
		Line int    `json:"line"`
	} `json:"referrers"`
}

type dirReport struct {
	Pass struct {
		Start []string `json:"start_urls"`
		Roots []string `json:"roots"`
	} `json:"pass"`
	Summary struct {
		Pages   int      `json:"pages"`
		Seeds   int      `json:"seeds"`
		Orphans []string `json:"orphans"`
	} `json:"summary"`
	URLs             []dirURL `json:"urls"`
	MissingFragments []struct {
		File     string `json:"file"`
		Fragment string `json:"fragment"`
	} `json:"missing_fragments"`
}

// checkDir runs check --format json --all in wd and decodes the report.
func checkDir(t *testing.T, wd string, want int, args ...string) (dirReport, result) {
	t.Helper()
	args = append([]string{"check", "--format", "json", "--all"}, args...)
	r := runWith(t, wd, nil, args...)
	if r.code != want {
		t.Fatalf("%v: exit %d, want %d\n%s%s", args, r.code, want, r.stderr, r.stdout)
	}
	var rep dirReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("decode: %v\n%s", err, r.stdout)
	}
	return rep, r
}

// byFile indexes a report's URLs by the file they name (the URL when none).
func byFile(rep dirReport) map[string]dirURL {
	m := make(map[string]dirURL)
	for _, u := range rep.URLs {
		k := u.File
		if k == "" {
			k = u.URL
		}
		m[k] = u
	}
	return m
}

// Debian's Python docs carry a canonical file: link on every page: it is
// outside the site, skipped with its reason, never mapped into the
// directory as a missing DIR/usr/share/doc/... file.
func TestDirFileURLsAreOutsideTheSite(t *testing.T) {
	t.Parallel()
	wd := tree(t, map[string]string{
		"site/index.html": `<link rel="canonical" href="file:///usr/share/doc/python3.11/html/index.html">` + "\n" +
			`<a href="FILE:///etc/hostname">host</a>`,
	})
	rep, _ := checkDir(t, wd, exitOK, "--db", filepath.Join(t.TempDir(), "db"), "site")
	got := byFile(rep)
	for _, u := range []string{"file:///usr/share/doc/python3.11/html/index.html", "file:///etc/hostname"} {
		rec, ok := got[u]
		if !ok {
			t.Errorf("%s: not listed (a link must not disappear)", u)
			continue
		}
		if rec.Verdict != "skipped" || !strings.Contains(rec.Note, "not part of the site") {
			t.Errorf("%s: %+v, want skipped as not part of the site", u, rec)
		}
	}
	for f := range got {
		if strings.Contains(f, "usr/share") && strings.HasPrefix(f, "site") {
			t.Errorf("the file: link was mapped into the directory: %s", f)
		}
	}
}

// A file that exists is ok with no HTTP status; dir/ is its index.html
// without a redirect; a directory without index.html says so; and
// dir/index.html#x, dir/#x share the page's anchors.
func TestDirIndexPagesAndFragments(t *testing.T) {
	t.Parallel()
	wd := tree(t, map[string]string{
		"site/index.html": "<a href=\"guide/index.html#setup\">1</a>\n<a href=\"guide/#setup\">2</a>\n" +
			"<a href=\"guide/index.html#missing\">3</a>\n<a href=\"guide/#gone\">4</a>\n" +
			"<a href=\"guide\">5</a>\n<a href=\"empty/\">6</a>\n<a href=\"/guide/\">7</a>\n<a href=\"guide#nope\">8</a>",
		"site/guide/index.html": `<h2 id="setup">Setup</h2><a href="../">up</a>`,
		"site/empty/notes.txt":  "no index here",
	})
	rep, _ := checkDir(t, wd, exitProblems, "--check-fragments", "--db", filepath.Join(t.TempDir(), "db"), "site")
	got := byFile(rep)
	if g := got[filepath.Join("site", "guide", "index.html")]; g.Verdict != "ok" || g.Status != 0 || g.Error != "" {
		t.Errorf("guide/: %+v, want ok with no status", g)
	}
	for f, u := range got {
		if u.Status != 0 {
			t.Errorf("%s: status %d; no server sent one", f, u.Status)
		}
		if strings.Contains(u.Error, "301") || u.Verdict == "transient" {
			t.Errorf("%s: %+v", f, u)
		}
	}
	if e := got[filepath.Join("site", "empty", "index.html")]; e.Verdict != "broken" || e.Error != "no index.html" {
		t.Errorf("empty/: %+v, want broken: no index.html", e)
	}
	var missing []string
	for _, m := range rep.MissingFragments {
		missing = append(missing, m.File+"#"+m.Fragment)
	}
	slices.Sort(missing)
	want := []string{filepath.Join("site", "guide", "index.html") + "#gone", filepath.Join("site", "guide", "index.html") + "#missing", filepath.Join("site", "guide", "index.html") + "#nope"}
	if !slices.Equal(missing, want) {
		t.Errorf("missing fragments %v, want %v", missing, want)
	}
}

// Every page is a seed, orphans and an entry page of another name
// included, and the report tells seeds from what links reached.
func TestDirSeedsEveryPage(t *testing.T) {
	t.Parallel()
	wd := tree(t, map[string]string{
		"site/start.html":       `<a href="a.html">a</a><img src="logo.png">`,
		"site/a.html":           `<a href="start.html">back</a>`,
		"site/logo.png":         "png",
		"site/old/orphan.html":  `<a href="../gone.html">gone</a>`,
		"site/deep/er/x.htm":    `<a href="/a.html">a</a>`,
		"site/notes/readme.txt": "not a page",
	})
	rep, r := checkDir(t, wd, exitProblems, "--db", filepath.Join(t.TempDir(), "db"), "site")
	got := byFile(rep)
	if g := got[filepath.Join("site", "gone.html")]; g.Verdict != "broken" || g.Error != "no such file" || len(g.Referrers) != 1 || g.Referrers[0].File != filepath.Join("site", "old", "orphan.html") {
		t.Errorf("the orphan's broken link: %+v", g)
	}
	for _, f := range []string{"start.html", "a.html", "old/orphan.html", "deep/er/x.htm"} {
		if u := got[filepath.Join("site", filepath.FromSlash(f))]; !u.Seed {
			t.Errorf("%s: not marked as a seed: %+v", f, u)
		}
	}
	for _, f := range []string{"logo.png", "gone.html"} {
		if u := got[filepath.Join("site", f)]; u.Seed {
			t.Errorf("%s: marked as a seed, but a link reached it", f)
		}
	}
	if rep.Summary.Seeds != 4 || rep.Summary.Pages != 4 {
		t.Errorf("summary: %d seeds, %d pages, want 4 and 4", rep.Summary.Seeds, rep.Summary.Pages)
	}
	wantOrphans := []string{filepath.Join("site", "deep", "er", "x.htm"), filepath.Join("site", "old", "orphan.html")}
	if !slices.Equal(rep.Summary.Orphans, wantOrphans) {
		t.Errorf("orphans %v, want %v", rep.Summary.Orphans, wantOrphans)
	}
	if !strings.Contains(r.stdout, `"seeds": 4`) {
		t.Errorf("JSON summary does not count the seeds:\n%s", r.stdout)
	}
}

// Single files, several paths and globs are accepted; loose files belong
// to the directory that holds them all, or to --root.
func TestDirFilesAndGlobs(t *testing.T) {
	t.Parallel()
	wd := tree(t, map[string]string{
		"public/index.html":      `<a href="/docs/a.html">a</a>`,
		"public/docs/a.html":     `<a href="/missing-a.html">x</a>`,
		"public/docs/sub/b.html": `<a href="/docs/a.html">a</a><a href="../nope.png">x</a>`,
		"other/page.html":        `<a href="there.html">x</a>`,
	})
	seeds := func(rep dirReport) []string {
		var s []string
		for _, u := range rep.URLs {
			if u.Seed {
				s = append(s, filepath.ToSlash(u.File))
			}
		}
		slices.Sort(s)
		return s
	}
	db := func() string { return filepath.Join(t.TempDir(), "db") }

	rep, _ := checkDir(t, wd, exitProblems, "--db", db(), "public/docs/a.html")
	if s := seeds(rep); !slices.Equal(s, []string{"public/docs/a.html"}) {
		t.Errorf("one file: seeds %v", s)
	}
	// /missing-a.html resolves in the file's own directory without --root,
	rep, _ = checkDir(t, wd, exitProblems, "--db", db(), "--root", "public", "public/docs/a.html")
	if _, ok := byFile(rep)["public/missing-a.html"]; !ok {
		t.Errorf("--root public: /missing-a.html not resolved under public: %v", byFile(rep))
	}
	// The shell may leave ** to us (quoted, or no globstar).
	rep, _ = checkDir(t, wd, exitProblems, "--db", db(), "public/**/*.html")
	if s := seeds(rep); !slices.Equal(s, []string{"public/docs/a.html", "public/docs/sub/b.html", "public/index.html"}) {
		t.Errorf("glob: seeds %v", s)
	}
	if _, ok := byFile(rep)["public/missing-a.html"]; !ok {
		t.Error("glob: the site root is the part before the wildcard, so /missing-a.html is public/missing-a.html")
	}
	rep, _ = checkDir(t, wd, exitProblems, "--db", db(), "public", "other")
	if len(rep.Pass.Roots) != 2 {
		t.Errorf("two directories: roots %v", rep.Pass.Roots)
	}
	if _, ok := byFile(rep)["other/there.html"]; !ok {
		t.Error("two directories: the second one was not checked")
	}
	if r := runWith(t, wd, nil, "check", "--db", db(), "public", "https://example.com/"); r.code != exitUsage {
		t.Errorf("a directory and a URL together: exit %d, want 2", r.code)
	}
	if r := runWith(t, wd, nil, "check", "--db", db(), "public/*.nothing"); r.code != exitUsage || !strings.Contains(r.stderr, "matches no file") {
		t.Errorf("a pattern matching nothing: exit %d: %s", r.code, r.stderr)
	}
}

// --base-url maps absolute links of the production site to the directory.
func TestDirBaseURL(t *testing.T) {
	t.Parallel()
	wd := tree(t, map[string]string{
		"site/index.html": "<a href=\"https://example.com/docs/guide/\">1</a>\n" +
			"<a href=\"https://example.com/docs/missing.html\">2</a>\n" +
			"<a href=\"/docs/guide/\">3</a>\n<a href=\"https://example.com/docs\">4</a>",
		"site/guide/index.html": `ok`,
	})
	rep, _ := checkDir(t, wd, exitProblems, "--db", filepath.Join(t.TempDir(), "db"), "--base-url", "https://example.com/docs/", "--include", "^file:", "site")
	got := byFile(rep)
	if g := got[filepath.Join("site", "guide", "index.html")]; g.Verdict != "ok" || len(g.Referrers) != 2 {
		t.Errorf("guide/: %+v, want ok, linked twice (absolute and root-relative)", g)
	}
	if m := got[filepath.Join("site", "missing.html")]; m.Verdict != "broken" || m.Error != "no such file" {
		t.Errorf("missing.html: %+v, want broken: no such file", m)
	}
	for f := range got {
		if strings.HasPrefix(f, "https://example.com/docs") {
			t.Errorf("%s was not mapped to the directory", f)
		}
	}
}

// A directory's history is its own: another directory with the same files
// is another site.
func TestDirHistoryKeyedByPath(t *testing.T) {
	t.Parallel()
	wd := tree(t, map[string]string{
		"a/index.html":     `<a href="only-in-a.html">x</a>`,
		"a/only-in-a.html": `ok`,
		"b/index.html":     `<a href="x.html">x</a>`,
	})
	db := filepath.Join(t.TempDir(), "db")
	checkDir(t, wd, exitOK, "--db", db, "a")
	if r := runWith(t, wd, nil, "check", "--db", db, "b"); r.code != exitUsage || !strings.Contains(r.stderr, filepath.Join(wd, "a")) {
		t.Errorf("another directory on the same database: exit %d, want 2 naming %s: %s", r.code, filepath.Join(wd, "a"), r.stderr)
	}
	rep, _ := checkDir(t, wd, exitProblems, "--db", db, "--new-pass", "b")
	for _, u := range rep.URLs {
		if !strings.HasPrefix(u.File, "b"+string(filepath.Separator)) {
			t.Errorf("pass of b lists %s (%s)", u.File, u.URL)
		}
	}
}

// check . does not write its database into the site it checks: it goes to
// the cache directory, where report run from the same place finds it.
func TestDirDatabaseStaysOutOfTheSite(t *testing.T) {
	t.Parallel()
	site := tree(t, map[string]string{"index.html": `<a href="x.html">x</a>`})
	cache := t.TempDir()
	env := []string{"XDG_CACHE_HOME=" + cache, "HOME=" + cache}
	if r := runWith(t, site, env, "check", "."); r.code != exitProblems {
		t.Fatalf("check .: exit %d\n%s", r.code, r.stderr)
	}
	entries, _ := os.ReadDir(site)
	for _, e := range entries {
		if e.Name() != "index.html" {
			t.Errorf("check . wrote %s into the checked directory", e.Name())
		}
	}
	r := runWith(t, site, env, "report")
	if r.code != exitProblems || !strings.Contains(r.stdout, "x.html") {
		t.Errorf("report from the same directory: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// --db says otherwise: then it is where it is told.
	if r := runWith(t, site, env, "check", "--db", "here.db", "."); r.code != exitProblems {
		t.Fatalf("check --db here.db .: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(site, "here.db")); err != nil {
		t.Errorf("--db here.db: %v", err)
	}
}

// Paths are relative to the working directory when the argument was, and
// absolute when it was; -v's host table names the directory.
func TestDirPathsAsGiven(t *testing.T) {
	t.Parallel()
	wd := tree(t, map[string]string{"site/index.html": `<a href="sub/x.html">x</a>`})
	db := filepath.Join(t.TempDir(), "db")
	rel := runWith(t, wd, nil, "check", "-v", "--db", db, "site")
	if !strings.Contains(rel.stdout, filepath.Join("site", "sub", "x.html")) || strings.Contains(rel.stdout, wd) {
		t.Errorf("relative argument, want relative paths:\n%s", rel.stdout)
	}
	if !hostRow(rel.stderr, "site") {
		t.Errorf("-v host table does not name the directory site:\n%s", rel.stderr)
	}
	abs := runWith(t, wd, nil, "check", "-v", "--db", db, "--new-pass", filepath.Join(wd, "site"))
	if !strings.Contains(abs.stdout, filepath.Join(wd, "site", "sub", "x.html")) {
		t.Errorf("absolute argument, want absolute paths:\n%s", abs.stdout)
	}
	if !hostRow(abs.stderr, filepath.Join(wd, "site")) {
		t.Errorf("-v host table does not name the directory:\n%s", abs.stderr)
	}
}

// hostRow says whether -v's host table has a row for key that waited
// for nothing.
func hostRow(stderr, key string) bool {
	for _, line := range strings.Split(stderr, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && f[0] == key && slices.Contains(f, "0s") {
			return true
		}
	}
	return false
}

// Nothing outside the root is read, yet what a web server would serve is
// not broken (qa11 §10: Debian's docs link _static/jquery.js to
// /usr/share/javascript): a symlink out of the root to a file that exists
// is ok, looked up and never opened, and the report lists it; a symlink to
// nothing is a dangling symlink; ..%2F and a .. above the root name the
// file inside the root they resolve to; a named pipe is never opened.
func TestDirStaysInsideTheRoot(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("symlinks and named pipes")
	}
	outside := tree(t, map[string]string{
		"secret.html": `<a href="/leak-target.html">x</a>`, "docs/index.html": `<a href="/leak-docs.html">x</a>`,
		"lib/jquery.js": "leak()",
	})
	wd := tree(t, map[string]string{
		"site/index.html": "<a href=\"passwd.html\">1</a>\n<a href=\"docs/\">2</a>\n" +
			"<a href=\"a/..%2F..%2F..%2Fsecret.html\">3</a>\n<a href=\"pipe.html\">4</a>\n" +
			"<a href=\"inside.html\">5</a>\n<a href=\"dev\">6</a>\n<a href=\"%2E%2E/%2e%2e/%2E%2E/secret.html\">7</a>\n" +
			"<script src=\"_static/jquery.js\"></script>\n<a href=\"gone.html\">9</a>\n<a href=\"gone-out.js\">10</a>\n" +
			"<a href=\"../../../real.html\">11</a>\n<a href=\"docs/missing.html\">12</a>",
		"site/real.html": `ok`,
	})
	site := filepath.Join(wd, "site")
	lib, err := filepath.Rel(site, filepath.Join(outside, "lib")) // ../../001/lib, as Debian links them
	if err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"passwd.html": filepath.Join(outside, "secret.html"), "docs": filepath.Join(outside, "docs"),
		"inside.html": filepath.Join(site, "real.html"), "dev": "/dev/zero", "_static": lib,
		"gone.html": "nothing.html", "gone-out.js": filepath.Join(outside, "nothing.js"),
	} {
		if err := os.Symlink(target, filepath.Join(site, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(site, "pipe.html"), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "db")
	r := runInProcess(t, "check", "--format", "json", "--all", "--db", db, site)
	if r.code != exitProblems {
		t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stderr, r.stdout)
	}
	var rep struct {
		dirReport
		Summary struct {
			LinkedOut []string `json:"linked_out"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("decode: %v\n%s", err, r.stdout)
	}
	got := byFile(rep.dirReport)
	for f, want := range map[string]struct{ err, note string }{
		"passwd.html":       {"", "outside the checked directory, a symlink to " + filepath.Join(outside, "secret.html") + ": it exists, and is not read, so links in it are not checked"},
		"docs/index.html":   {"", "outside the checked directory, a symlink to " + filepath.Join(outside, "docs", "index.html") + ": it exists, and is not read, so links in it are not checked"},
		"_static/jquery.js": {"", "outside the checked directory, a symlink to " + filepath.Join(outside, "lib", "jquery.js") + ": it exists, and is not read"},
		"docs/missing.html": {"no such file", ""},
		"gone.html":         {"dangling symlink", "a symlink to nothing.html, which does not exist"},
		"gone-out.js":       {"dangling symlink", "a symlink to " + filepath.Join(outside, "nothing.js") + ", which does not exist"},
		"secret.html":       {"no such file", ""},
		"pipe.html":         {"not a regular file (named pipe)", ""},
		"dev":               {"not a regular file (device)", ""},
		"inside.html":       {"", ""},
		"real.html":         {"", ""},
	} {
		u, ok := got[filepath.Join(site, f)]
		if !ok {
			t.Errorf("%s: not listed", f)
			continue
		}
		if u.Error != want.err || u.Note != want.note {
			t.Errorf("%s: %q (%s, note %q), want %q (note %q)", f, u.Error, u.Verdict, u.Note, want.err, want.note)
		}
	}
	wantOut := []string{filepath.Join(site, "_static/jquery.js"), filepath.Join(site, "docs/index.html"), filepath.Join(site, "passwd.html")}
	if !slices.Equal(rep.Summary.LinkedOut, wantOut) {
		t.Errorf("summary.linked_out %q, want %q", rep.Summary.LinkedOut, wantOut)
	}
	for f, u := range got {
		if strings.HasPrefix(u.URL, "file:") && u.File == "" {
			t.Errorf("%s names no file of the site: resolved outside the root", u.URL)
		}
		if strings.Contains(f, "leak") || strings.HasPrefix(f, outside) || strings.Contains(u.URL, "leak") {
			t.Errorf("something outside the root was read or named: %s %s", f, u.URL)
		}
	}
	text := runInProcess(t, "report", "--db", db)
	if want := "3 files are symlinks out of the directory, to files that exist (ok, as a web server serves them; not read): "; !strings.Contains(strings.Join(strings.Fields(text.stdout), " "), want) {
		t.Errorf("the text report does not say %q:\n%s", want, text.stdout)
	}
}

// A missing file is one stat: no HEAD then GET, no politeness permit (40
// missing images took 38 s when each asked a third-party throttle).
func TestDirMissingFileIsOneStat(t *testing.T) {
	t.Parallel()
	var page strings.Builder
	for i := range 40 {
		fmt.Fprintf(&page, "<img src=\"img/%d.png\">\n", i)
	}
	wd := tree(t, map[string]string{"site/index.html": page.String()})
	r := runWith(t, wd, nil, "check", "-v", "--db", filepath.Join(t.TempDir(), "db"), "site")
	if r.code != exitProblems || !strings.Contains(r.stdout, "Broken (40)") {
		t.Fatalf("exit %d, want 40 broken\n%s", r.code, r.stdout)
	}
	if !strings.Contains(r.stderr, "1 hosts, 41 requests") || !hostRow(r.stderr, "site") {
		t.Errorf("want 41 reads (the page and one per image), none waiting:\n%s", r.stderr)
	}
}

// A query names no other file in a directory check (QA4 F13): a static host
// serves index.html for ./?q=1 and style.css for style.css?v=3, so the page
// is parsed once and each of its broken links has one referrer line, not two
// under one name.
func TestDirectoryQueryIsTheSameFile(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{
		"index.html": "<html><head>\n<link rel=\"icon\" href=\"fav.ico\">\n<link rel=\"stylesheet\" href=\"style.css?v=3\">\n</head><body>\n<a href=\"./?q=1\">q</a>\n</body></html>\n",
		"style.css":  "body{}",
	})
	r := runInProcess(t, "check", "--db", filepath.Join(t.TempDir(), "lp.db"), dir)
	if r.code != exitProblems {
		t.Fatalf("exit %d, want 1 (fav.ico is missing)\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "1 page parsed") {
		t.Errorf("want the one page parsed once:\n%s", r.stdout)
	}
	if n := strings.Count(r.stdout, "index.html:2"); n != 1 {
		t.Errorf("fav.ico's referrer index.html:2 listed %d times, want once:\n%s", n, r.stdout)
	}
	if strings.Contains(r.stdout, "style.css") {
		t.Errorf("style.css?v=3 is style.css, which exists:\n%s", r.stdout)
	}
}
