package main

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// repoRoot is where action.yml, the Dockerfile and scripts/ live.
const repoRoot = "../.."

type actionFile struct {
	Name   string `yaml:"name"`
	Inputs map[string]struct {
		Description string `yaml:"description"`
		Required    bool   `yaml:"required"`
		Default     string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Description string `yaml:"description"`
		Value       string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string       `yaml:"using"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"runs"`
	Branding map[string]string `yaml:"branding"`
	Author   string            `yaml:"author"`
	Desc     string            `yaml:"description"`
}

type actionStep struct {
	ID    string            `yaml:"id"`
	Name  string            `yaml:"name"`
	Uses  string            `yaml:"uses"`
	Run   string            `yaml:"run"`
	Shell string            `yaml:"shell"`
	If    string            `yaml:"if"`
	Env   map[string]string `yaml:"env"`
	With  map[string]string `yaml:"with"`
}

// There is no GitHub runner here, so the action is checked as far as this
// machine can: its YAML has the shape GitHub requires of a composite action,
// every expression names an input or a step that exists, and its entry
// script (run below) exists and is executable.
func TestActionYAML(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a actionFile
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if a.Name == "" || a.Runs.Using != "composite" || len(a.Runs.Steps) == 0 {
		t.Fatalf("action.yml is not a composite action with a name and steps: %+v", a)
	}
	if d, ok := a.Inputs["directory"]; !ok || !d.Required {
		t.Error("the directory input is missing or optional")
	}
	ids := map[string]bool{}
	for i, s := range a.Runs.Steps {
		if (s.Run == "") == (s.Uses == "") {
			t.Errorf("step %d (%s) needs exactly one of run and uses", i+1, s.Name)
		}
		if s.Run != "" && s.Shell == "" {
			t.Errorf("step %d (%s): a composite action's run step needs a shell", i+1, s.Name)
		}
		if s.ID != "" {
			ids[s.ID] = true
		}
	}
	for _, m := range regexp.MustCompile(`\$\{\{[^}]*\}\}`).FindAllString(string(raw), -1) {
		for _, ref := range regexp.MustCompile(`(inputs|steps)\.([A-Za-z0-9_-]+)`).FindAllStringSubmatch(m, -1) {
			if ref[1] == "inputs" {
				if _, ok := a.Inputs[ref[2]]; !ok {
					t.Errorf("%s names input %q, which action.yml does not declare", m, ref[2])
				}
			} else if !ids[ref[2]] {
				t.Errorf("%s names step %q, which has no such id", m, ref[2])
			}
		}
	}
	if !strings.Contains(string(raw), "scripts/action.sh") {
		t.Error("action.yml does not run scripts/action.sh")
	}
	if st, err := os.Stat(filepath.Join(repoRoot, "scripts", "action.sh")); err != nil || st.Mode()&0o111 == 0 {
		t.Errorf("scripts/action.sh is missing or not executable: %v", err)
	}
	if !slices.ContainsFunc(a.Runs.Steps, func(s actionStep) bool {
		return strings.HasPrefix(s.Uses, "github/codeql-action/upload-sarif@")
	}) {
		t.Error("the action does not upload its SARIF")
	}
}

// The action's entry script, run as the runner runs it, on the example
// site with its planted broken links.
func TestActionEntryScript(t *testing.T) {
	t.Parallel()
	site, err := filepath.Abs(filepath.Join(repoRoot, "examples", "site"))
	if err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join(repoRoot, "scripts", "action.sh"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(env ...string) (result, string, string, string) {
		t.Helper()
		dir := t.TempDir()
		out, summary := filepath.Join(dir, "output"), filepath.Join(dir, "summary.md")
		cmd := exec.Command(script)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LINKPATROL="+binary, "RUNNER_TEMP="+dir, "GITHUB_OUTPUT="+out, "GITHUB_STEP_SUMMARY="+summary)
		cmd.Env = append(cmd.Env, env...)
		r := runCmd(t, cmd)
		o, _ := os.ReadFile(out)
		s, _ := os.ReadFile(summary)
		return r, string(o), string(s), dir
	}

	r, outputs, summary, dir := run("INPUT_DIRECTORY=" + site)
	if r.code != exitProblems {
		t.Fatalf("exit %d, want 1 for the broken links\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !regexp.MustCompile(`(?m)^::error file=[^,]+,line=\d+`).MatchString(r.stdout) {
		t.Errorf("no GitHub annotation on a file and line:\n%s", r.stdout)
	}
	if !strings.Contains(outputs, "exit-code=1\n") || !strings.Contains(outputs, "sarif=linkpatrol.sarif\n") {
		t.Errorf("GITHUB_OUTPUT = %q", outputs)
	}
	if !strings.Contains(summary, "## linkpatrol") {
		t.Errorf("the step summary is not the Markdown report:\n%s", summary)
	}
	var sarif struct {
		Version string `json:"version"`
		Runs    []struct {
			Results []json.RawMessage `json:"results"`
		} `json:"runs"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, "linkpatrol.sarif"))
	if err != nil || json.Unmarshal(raw, &sarif) != nil || sarif.Version != "2.1.0" || len(sarif.Runs) != 1 || len(sarif.Runs[0].Results) == 0 {
		t.Errorf("linkpatrol.sarif: %v, %.200s", err, raw)
	}

	if r, outputs, _, _ := run("INPUT_DIRECTORY="+site, "INPUT_FAIL_ON=never"); r.code != exitOK || !strings.Contains(outputs, "exit-code=0") {
		t.Errorf("fail-on never: exit %d, outputs %q\n%s", r.code, outputs, r.stderr)
	}
	// args are split as a shell splits words (QA4 F15): the quotes around
	// a value are not part of it, and a value may hold a space.
	if r, _, _, _ := run("INPUT_DIRECTORY="+site, `INPUT_ARGS=--fail-on 'never' -H "X-Checked-By: linkpatrol action"`); r.code != exitOK {
		t.Errorf("args with quotes: exit %d, want 0\n%s", r.code, r.stderr)
	}
	if r, _, _, _ := run("INPUT_DIRECTORY="+site, "INPUT_ARGS=--fail-on 'never"); r.code != exitUsage || !strings.Contains(r.stderr, "::error::") {
		t.Errorf("args with an unbalanced quote: exit %d, stderr %q", r.code, r.stderr)
	}
	if r, _, _, _ := run("INPUT_DIRECTORY=" + filepath.Join(site, "no-such-dir")); r.code != exitUsage || !strings.Contains(r.stderr, "::error::") {
		t.Errorf("a missing directory: exit %d, stderr %q", r.code, r.stderr)
	}
}

// No container engine runs here, so the Dockerfile is exercised as far as
// it can be: its final stage is a distroless static image running the
// binary, and its build command, run here as written, makes a static
// binary that works.
func TestDockerfileBuildsAStaticBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping a full build")
	}
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	froms := regexp.MustCompile(`(?m)^FROM\s+(\S+)`).FindAllStringSubmatch(text, -1)
	if len(froms) != 2 || !strings.HasPrefix(froms[1][1], "gcr.io/distroless/static") {
		t.Errorf("want a build stage and a distroless static final stage, got %q", froms)
	}
	if !strings.Contains(text, `ENTRYPOINT ["/linkpatrol"]`) {
		t.Error("the image's entry point is not the binary")
	}
	m := regexp.MustCompile(`(?m)^RUN (CGO_ENABLED=0 go build .*)$`).FindStringSubmatch(text)
	if m == nil {
		t.Fatal("no static go build in the Dockerfile")
	}
	out := filepath.Join(t.TempDir(), "linkpatrol")
	line := strings.ReplaceAll(m[1], "/out/linkpatrol", out)
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "VERSION=docker-test")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, b)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatalf("not an ELF binary (%s): %v", runtime.GOOS, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary needs a dynamic loader; distroless/static has none")
		}
	}
	if b, err := exec.Command(out, "version").Output(); err != nil || strings.TrimSpace(string(b)) != "linkpatrol docker-test" {
		t.Errorf("version: %q, %v", b, err)
	}
}
