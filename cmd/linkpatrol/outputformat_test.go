package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --format says the format of a bare -o FILE whose name says none (or only
// .txt), in check and report alike; a name that picks a format keeps it,
// and only when neither says one is -o refused (qa4 F5).
func TestOutputTakesFormatWhenNameSaysNone(t *testing.T) {
	t.Parallel()
	site := tree(t, map[string]string{"index.html": `<a href="gone.html">gone</a>`})
	db := filepath.Join(t.TempDir(), "lp.db")
	if r := runInProcess(t, "check", "--db", db, site); r.code != exitProblems {
		t.Fatalf("check: exit %d, want 1\n%s", r.code, r.stderr)
	}
	conf := filepath.Join(t.TempDir(), "linkpatrol.toml")
	if err := os.WriteFile(conf, []byte("format = \"junit\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const (
		junit  = "<?xml"
		github = "::error"
		html   = "<!DOCTYPE html>"
		text   = "linkpatrol pass"
	)
	for _, c := range []struct {
		name  string
		flags []string
		file  string // -o value, relative to a new directory
		want  string // what the file starts with, "" when -o is refused
	}{
		{"--format junit, unknown extension", []string{"--format", "junit"}, "rep.junit", junit},
		{"-f junit, no extension", []string{"-f", "junit"}, "rep", junit},
		{"--format github, .txt", []string{"--format", "github"}, "annotations.txt", github},
		{"config format junit", []string{"--config", conf}, "rep.junit", junit},
		{"--format beats the config file", []string{"--config", conf, "--format", "github"}, "rep.log", github},
		{"the extension names a format", []string{"--format", "json"}, "report.html", html},
		{"FORMAT: names it", []string{"--format", "junit"}, "html:rep.junit", html},
		{".txt without --format", nil, "rep.txt", text},
		{"neither says it", nil, "rep.junit", ""},
	} {
		for _, cmd := range []string{"check", "report"} {
			t.Run(cmd+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				out := c.file
				if name, path, ok := strings.Cut(out, ":"); ok {
					out = name + ":" + filepath.Join(dir, path)
				} else {
					out = filepath.Join(dir, out)
				}
				args := append([]string{cmd, "-q", "-o", out}, c.flags...)
				if cmd == "check" {
					args = append(args, "--db", filepath.Join(dir, "lp.db"), site)
				} else {
					args = append(args, "--db", db)
				}
				r := runInProcess(t, args...)
				if c.want == "" {
					if r.code != exitUsage || !strings.Contains(r.stderr, "cannot tell the format from the file name") || !strings.Contains(r.stderr, "--format") {
						t.Errorf("exit %d, stderr %q; want 2 and the advice to use --format", r.code, r.stderr)
					}
					return
				}
				if r.code != exitProblems {
					t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
				}
				path := out
				if _, p, ok := strings.Cut(out, ":"); ok {
					path = p
				}
				b, err := os.ReadFile(path)
				if err != nil || !strings.HasPrefix(string(b), c.want) {
					t.Errorf("%s: %v, starts %.40q; want %q", path, err, b, c.want)
				}
			})
		}
	}
}
