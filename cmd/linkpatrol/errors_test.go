package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

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
		// --since is the flag of other checkers' reports (and of git log):
		// here "new since" is what --only-new means.
		{"--since", []string{"report", "--since", "2026-11-20"}, "unknown flag: --since (did you mean --only-new? It reports only the problems new since the last complete pass; there is no date to give)"},
		{"--since=", []string{"check", "--since=yesterday", "http://127.0.0.1:1/"}, "(did you mean --only-new?"},
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

// config check validates a file whose secrets are not in the environment
// (a pull-request job has none), warning rather than failing; a real
// mistake in the same file still fails.
func TestConfigCheckWithoutSecrets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const rule = "[[rule]]\nscheme = \"https\"\nhost = \"example.com\"\nheaders = { \"X-Token\" = \"${LINKPATROL_TEST_UNSET_SECRET}\" }\n"
	good := filepath.Join(dir, "good.toml")
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(good, []byte(rule), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("concurrency = 0\n"+rule), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runInProcess(t, "config", "check", good)
	if r.code != exitOK || !strings.Contains(r.stderr, "warning: "+good+": environment variable LINKPATROL_TEST_UNSET_SECRET is not set") {
		t.Errorf("exit %d, stderr %q; want 0 and a warning naming the variable", r.code, r.stderr)
	}
	r = runInProcess(t, "config", "check", bad)
	if r.code != exitUsage || !strings.Contains(r.stderr, "concurrency must be at least 1") {
		t.Errorf("exit %d, stderr %q; want 2 for concurrency = 0", r.code, r.stderr)
	}
}

// --help fits a terminal: grouped under headings, every flag listed,
// wrapped at 80 columns, with examples.
func TestHelpIsGroupedAndWrapped(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"check", "report", "explain"} {
		r := runInProcess(t, cmd, "--help")
		if r.code != exitOK {
			t.Fatalf("%s --help: exit %d", cmd, r.code)
		}
		for i, line := range strings.Split(r.stdout, "\n") {
			if len(line) > helpWidth {
				t.Errorf("%s --help line %d is %d columns: %q", cmd, i+1, len(line), line)
			}
		}
	}
	r := runInProcess(t, "check", "--help")
	for _, g := range checkGroups() {
		if !strings.Contains(r.stdout, "\n"+g.title+":\n") {
			t.Errorf("check --help has no heading %q", g.title)
		}
	}
	if !strings.Contains(r.stdout, "\nExamples:\n  linkpatrol check ") {
		t.Error("check --help has no examples")
	}
	var o checkOptions
	fs, _ := newFlags("check", &o)
	fs.VisitAll(func(f *pflag.Flag) {
		if !strings.Contains(r.stdout, "--"+f.Name+" ") {
			t.Errorf("check --help leaves out --%s", f.Name)
		}
	})
}

// explain with no start URL anywhere says what it needs, rather than
// "no page in : nothing to check".
func TestExplainWithoutStartURLs(t *testing.T) {
	t.Parallel()
	r := runInProcess(t, "explain", "--db", filepath.Join(t.TempDir(), "none.db"), "http://127.0.0.1:1/x")
	if r.code != exitUsage || !strings.Contains(r.stderr, "explain needs the site's start URLs") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// A flag that takes no value (a bool, or a count such as -v) is shown
// plainly in every command's --help: pflag writes --no-reuse[=true|false]
// and --verbose count, which read as if a value were wanted.
func TestHelpShowsNoValueForSwitches(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"check", "report", "explain", "status", "serve-frontier", "worker", "config check"} {
		r := runInProcess(t, append(strings.Fields(cmd), "--help")...)
		if r.code != exitOK {
			t.Fatalf("%s --help: exit %d\n%s", cmd, r.code, r.stderr)
		}
		for _, line := range strings.Split(r.stdout, "\n") {
			if strings.Contains(line, "[=true|false]") || regexp.MustCompile(`--[a-z-]+ count(\s|$)`).MatchString(line) {
				t.Errorf("%s --help: %q", cmd, strings.TrimSpace(line))
			}
		}
		if cmd == "status" || cmd == "serve-frontier" || cmd == "worker" || cmd == "config check" {
			continue
		}
		var o checkOptions
		fs, _ := newFlags(cmd, &o)
		fs.VisitAll(func(f *pflag.Flag) {
			if typ := f.Value.Type(); (typ == "bool" || typ == "count") && !regexp.MustCompile(`--`+f.Name+`  `).MatchString(r.stdout) {
				t.Errorf("%s --help does not show --%s plainly", cmd, f.Name)
			}
		})
	}
}

// report has no progress line: its -q says what it does there.
func TestReportHelpHasItsOwnQuiet(t *testing.T) {
	t.Parallel()
	quiet := func(cmd string) string {
		help := runInProcess(t, cmd, "--help").stdout
		i := strings.Index(help, "-q, --quiet")
		if i < 0 {
			t.Fatalf("%s --help has no -q", cmd)
		}
		lines := strings.Split(help[i:], "\n")
		out := lines[0]
		for _, l := range lines[1:] {
			if t := strings.TrimSpace(l); t == "" || strings.HasPrefix(t, "-") {
				break
			}
			out += " " + l
		}
		return strings.Join(strings.Fields(out), " ")
	}
	if got, want := quiet("report"), "-q, --quiet with -o, write only the files: no report on standard output"; got != want {
		t.Errorf("report --help: %q, want %q", got, want)
	}
	if got := quiet("check"); !strings.Contains(got, "no progress line") {
		t.Errorf("check --help lost its -q: %q", got)
	}
}
