package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runInProcess runs the command as main would, without the binary.
func runInProcess(t *testing.T, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// A mistake on the command line is told in the user's terms: what was
// meant, what is missing, what to type instead.
func TestMistakesAreExplained(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "typo.toml")
	if err := os.WriteFile(cfg, []byte("concurency = 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"misspelt flag", []string{"check", "--concurency", "3", "http://127.0.0.1:1/"}, "unknown flag: --concurency (did you mean --concurrency?)"},
		{"misspelt report flag", []string{"report", "--formt", "json"}, "(did you mean --format?)"},
		{"misspelt command", []string{"chek"}, `unknown command "chek" (did you mean check?)`},
		{"misspelt config subcommand", []string{"config", "chek", cfg}, `unknown config subcommand "chek" (did you mean check?)`},
		{"misspelt key", []string{"config", "check", cfg}, "unknown key concurency (did you mean concurrency?)"},
		{"missing directory", []string{"check", filepath.Join(dir, "no", "such", "dir")}, filepath.Join(dir, "no", "such", "dir") + ": no such directory"},
		{"missing page", []string{"check", filepath.Join(dir, "gone.html")}, "gone.html: no such file"},
		{"URL without scheme", []string{"check", "127.0.0.1:8080"}, "give its scheme: http://127.0.0.1:8080"},
		{"directory as database", []string{"check", "--db", dir, "http://127.0.0.1:1/"}, "open " + dir + ": is a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runInProcess(t, tc.args...)
			if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", r.code, r.stderr, tc.want)
			}
		})
	}
}

func TestConfigCheckHelp(t *testing.T) {
	t.Parallel()
	r := runInProcess(t, "config", "check", "--help")
	if r.code != exitOK || !strings.Contains(r.stdout, "linkpatrol config check FILE") || r.stderr != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want the usage on stdout", r.code, r.stdout, r.stderr)
	}
}
