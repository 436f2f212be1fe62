package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/report"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// rulesOnly are the keys of the config file with no flag: the rules, which
// live in the file (they are tables, or rewrites that only make sense
// with them).
var rulesOnly = []string{"rule", "rewrite", "host", "aliases", "unwrap", "drop_params", "alias_start_hosts", "strip_index", "collapse_slashes"}

// hostKeys are the keys of a [[host]] table, from the example.
func hostKeys(t *testing.T) []string {
	t.Helper()
	ex := rules.ExampleRules()
	i := strings.Index(ex, "#[[host]]")
	if i < 0 {
		t.Fatal("the example has no [[host]]")
	}
	var keys []string
	for _, m := range regexp.MustCompile(`(?m)^#(\w+) = `).FindAllStringSubmatch(ex[i:], -1) {
		if !slices.Contains(keys, m[1]) {
			keys = append(keys, m[1])
		}
	}
	return keys
}

// Every flag has a key and every key a flag, of the same name, with the
// exceptions listed (noKey, rulesOnly); a politeness flag is the [[host]]
// key of its name.
func TestEveryFlagHasAKeyAndEveryKeyAFlag(t *testing.T) {
	t.Parallel()
	hosts := hostKeys(t)
	flags := map[string]bool{}
	for _, s := range settingsTable {
		name := strings.NewReplacer("_", "-", ".", "-").Replace(s.key + s.hostKey)
		switch {
		case s.flag == "":
			t.Errorf("key %s has no flag", s.key)
		case s.key != "" && s.hostKey != "":
			t.Errorf("--%s has a key and a [[host]] key", s.flag)
		case s.key == "" && s.hostKey == "":
			if noKey[s.flag] == "" {
				t.Errorf("--%s has no key, and noKey does not say why", s.flag)
			}
		case s.flag != name:
			t.Errorf("--%s and %s%s disagree", s.flag, s.key, s.hostKey)
		case s.hostKey != "" && !slices.Contains(hosts, s.hostKey):
			t.Errorf("--%s sets [[host]] %s, which the example's [[host]] does not show", s.flag, s.hostKey)
		}
		if (s.key != "" || s.hostKey != "") && noKey[s.flag] != "" {
			t.Errorf("--%s has a key, and noKey says it has none", s.flag)
		}
		flags[s.flag] = true
	}
	for flag := range noKey {
		if !flags[flag] {
			t.Errorf("noKey lists --%s, which is no flag", flag)
		}
	}
	for _, h := range hosts {
		if h != "match" && h != "cidr" && !slices.ContainsFunc(settingsTable, func(s setting) bool { return s.hostKey == h || s.key == h }) {
			t.Errorf("[[host]] %s has no flag", h)
		}
	}
	// Every key of the example is a setting's or a rule's.
	for _, m := range regexp.MustCompile(`(?m)^#?\[*([a-z_.]+)\]*( = |$)`).FindAllStringSubmatch(exampleConfig(), -1) {
		k := m[1]
		if settingFor(k) == nil && !slices.Contains(rulesOnly, k) && !slices.Contains(hosts, k) && !isRuleKey(k) {
			t.Errorf("the example's key %s is neither a setting nor a rule", k)
		}
	}
}

// isRuleKey is a key of a [[rule]] or [[rewrite]] table.
func isRuleKey(k string) bool {
	return slices.Contains([]string{"scheme", "host", "path_prefix", "path", "regex", "action", "timeout", "recheck", "accept",
		"headers", "cookies", "user", "password", "replace", "max_hops", "max_path_segments", "max_path_repeats",
		"max_query_variants", "max_template_run", "keep_session_ids"}, k)
}

// Every row's default passes its own check, and reads back from its text.
func TestSettingDefaults(t *testing.T) {
	t.Parallel()
	var o checkOptions
	_, all := newFlags("check", &o)
	for i := range settingsTable {
		s := &settingsTable[i]
		if err := checkValue(s, s.bindName(), s.field(&o)); err != nil {
			t.Errorf("the default of %s fails its check: %v", s.bindName(), err)
		}
		f := all.Lookup(s.bindName())
		if s.def != "" && f.DefValue != s.def && !(f.Value.Type() == "size" || f.Value.Type() == "duration") {
			t.Errorf("%s: default %q reads back as %q", s.bindName(), s.def, f.DefValue)
		}
	}
	if o.concurrency != 16 || o.timeout != 20*time.Second || o.maxSize != 10<<20 || o.recheck.OK != 20*time.Hour ||
		o.ghost != 7*24*time.Hour || o.keepPasses != 10 || o.commitBatch != 32 || o.traps != rules.DefaultTraps() || o.db != defaultDB {
		t.Errorf("defaults: %+v", o)
	}
}

// `config example` loads as it is and changes nothing: every setting has
// its key there, at its default; uncommented, its examples load too.
func TestConfigExampleLoadsAndCoversEverySetting(t *testing.T) {
	t.Parallel()
	example := exampleConfig()
	var fromFile, defaults checkOptions
	newFlags("check", &defaults)
	f, err := rules.ParseConfig("example.toml", []byte(example), nil, configSettings(&fromFile))
	if err != nil {
		t.Fatalf("the example does not load:\n%v", err)
	}
	if len(f.Warnings) > 0 {
		t.Errorf("the example loads with warnings: %q", f.Warnings)
	}
	for i := range settingsTable {
		s := &settingsTable[i]
		if s.key == "" {
			continue
		}
		if !regexp.MustCompile(`(?m)^#?` + regexp.QuoteMeta(s.key) + ` = `).MatchString(example) {
			t.Errorf("key %s is not in the example", s.key)
			continue
		}
		got, want := reflect.ValueOf(s.field(&fromFile)).Elem().Interface(), reflect.ValueOf(s.field(&defaults)).Elem().Interface()
		if f.IsSet(s.key) && !reflect.DeepEqual(got, want) {
			t.Errorf("the example sets %s = %v, not its default %v", s.key, got, want)
		}
	}
	on := regexp.MustCompile(`(?m)^#([^\s#-])`).ReplaceAllString(example, "$1")
	var uncommented checkOptions
	if _, err := rules.ParseConfig("example.toml", []byte(on), func(string) (string, bool) { return "x", true }, configSettings(&uncommented)); err != nil {
		t.Errorf("the example does not load uncommented:\n%v", err)
	}
	if len(uncommented.start) != 1 || len(uncommented.exclude) != 1 || !slices.Equal(uncommented.accept, []int{429}) {
		t.Errorf("the uncommented examples: start %q, exclude %q, accept %v", uncommented.start, uncommented.exclude, uncommented.accept)
	}
}

// settingsFrom is the settings check starts with, from args and a config
// file holding doc ("" for none).
func settingsFrom(t *testing.T, doc string, args ...string) (checkOptions, string, error) {
	t.Helper()
	var o checkOptions
	fs, _ := newFlags("check", &o)
	fs.SetOutput(io.Discard)
	if doc != "" {
		path := filepath.Join(t.TempDir(), "lp.toml")
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--config", path)
	}
	if err := parseFlags(fs, args); err != nil {
		return o, "", err
	}
	var warnings strings.Builder
	file, err := loadSettings(fs, &o, &warnings, "text")
	if err == nil {
		err = crossCheck(fs, &o, file)
	}
	return o, warnings.String(), err
}

// A value reads the same from a flag and from the file: one parser.
func TestFlagAndKeyReadAlike(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		flag []string
		doc  string
		got  func(o checkOptions) any
		want any
	}{
		{[]string{"--ghost", "7d"}, `ghost = "7d"`, func(o checkOptions) any { return o.ghost }, 7 * 24 * time.Hour},
		{[]string{"--recheck-ok", "1d"}, "[recheck]\nok = \"1d\"", func(o checkOptions) any { return o.recheck.OK }, 24 * time.Hour},
		{[]string{"--recheck-transient", "2w"}, `recheck.transient = "2w"`, func(o checkOptions) any { return o.recheck.Transient }, 14 * 24 * time.Hour},
		{[]string{"--max-size", "10MiB"}, `max_size = "10MiB"`, func(o checkOptions) any { return o.maxSize }, int64(10 << 20)},
		{[]string{"--max-size", "4096"}, `max_size = 4096`, func(o checkOptions) any { return o.maxSize }, int64(4096)},
		{[]string{"--report-after", "3+2d"}, `report_after = "3+2d"`, func(o checkOptions) any { return o.reportAfter }, report.Threshold{Failures: 3, Age: 48 * time.Hour}},
		{[]string{"--report-after", "1.5d"}, `report_after = "1.5d"`, func(o checkOptions) any { return o.reportAfter }, report.Threshold{Age: 36 * time.Hour}},
		{[]string{"--report-after", "3"}, `report_after = 3`, func(o checkOptions) any { return o.reportAfter }, report.Threshold{Failures: 3}},
		{[]string{"--global-bandwidth", "2MiB"}, `global_bandwidth = "2MiB"`, func(o checkOptions) any { return o.polite.globalBandwidth }, int64(2 << 20)},
		{[]string{"--group-hosts", "domain"}, `group_hosts = "domain"`, func(o checkOptions) any { return o.polite.groupHosts }, "domain"},
		{[]string{"--only-new"}, `only_new = true`, func(o checkOptions) any { return o.onlyNew }, true},
		{[]string{"--sitemap", "https://a.example/s.xml"}, `sitemap = ["https://a.example/s.xml"]`, func(o checkOptions) any { return o.sitemaps }, []string{"https://a.example/s.xml"}},
		{[]string{"--accept", "200,429"}, `accept = [200, 429]`, func(o checkOptions) any { return o.accept }, []int{200, 429}},
		{[]string{"--max-template-run", "0"}, `max_template_run = 0`, func(o checkOptions) any { return o.traps.MaxTemplateRun }, 0},
	} {
		t.Run(strings.Join(tc.flag, " "), func(t *testing.T) {
			t.Parallel()
			byFlag, _, err := settingsFrom(t, "", tc.flag...)
			if err != nil || !reflect.DeepEqual(tc.got(byFlag), tc.want) {
				t.Errorf("flag: %v, %v; want %v", tc.got(byFlag), err, tc.want)
			}
			byKey, _, err := settingsFrom(t, tc.doc+"\n")
			if err != nil || !reflect.DeepEqual(tc.got(byKey), tc.want) {
				t.Errorf("key: %v, %v; want %v", tc.got(byKey), err, tc.want)
			}
		})
	}
}

// A value refused in the file is refused on the command line, with the
// same message after the name (file:line:col in the file).
func TestFlagAndKeyRefusedAlike(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		flag         []string
		doc          string
		wantF, wantK string
	}{
		{[]string{"--timeout=0s"}, `timeout = "0s"`, "--timeout must be more than 0: a timeout of 0s", "lp.toml:1:11: timeout must be more than 0: a timeout of 0s"},
		{[]string{"--timeout=-5s"}, `timeout = "-5s"`, `duration "-5s" is negative`, `lp.toml:1:11: timeout: duration "-5s" is negative`},
		{[]string{"--concurrency=0"}, "concurrency = 0", "--concurrency must be at least 1", "lp.toml:1:15: concurrency must be at least 1"},
		{[]string{"--per-host=0"}, "per_host = 0", "--per-host must be at least 1", "lp.toml:1:12: per_host must be at least 1"},
		{[]string{"--max-size=0"}, "max_size = 0", "--max-size must be more than 0", "lp.toml:1:12: max_size must be more than 0"},
		{[]string{"--keep-passes=0"}, "keep_passes = 0", "--keep-passes must be at least 1", "lp.toml:1:15: keep_passes must be at least 1"},
		{[]string{"--commit-batch=0"}, "commit_batch = 0", "--commit-batch must be at least 1", "lp.toml:1:16: commit_batch must be at least 1"},
		{[]string{"--commit-every=0s"}, `commit_every = "0s"`, "--commit-every must be more than 0", "lp.toml:1:16: commit_every must be more than 0"},
		{[]string{"--max-redirects=0"}, "max_redirects = 0", "--max-redirects must be at least 1", "lp.toml:1:17: max_redirects must be at least 1"},
		{[]string{"--sitemap-limit=-1"}, "sitemap_limit = -1", "--sitemap-limit must be at least 0", "lp.toml:1:17: sitemap_limit must be at least 0"},
		{[]string{"--max-hops=-1"}, "max_hops = -1", "--max-hops must be at least 0", "lp.toml:1:12: max_hops must be at least 0"},
		{[]string{"--ghost=7 days"}, `ghost = "7 days"`, `duration "7 days"`, `lp.toml:1:9: ghost: duration "7 days"`},
		{[]string{"--format=xml"}, `format = "xml"`, `--format "xml": want text, json`, `lp.toml:1:10: format "xml": want text, json`},
		{[]string{"--fail-on=some"}, `fail_on = "some"`, `--fail-on "some": want one of broken, internal`, `lp.toml:1:11: fail_on "some": want one of broken, internal`},
		{[]string{"--group-hosts=site"}, `group_hosts = "site"`, `--group-hosts "site": want host, domain`, `lp.toml:1:15: group_hosts "site": want host, domain`},
		{[]string{"--include", "ok", "--include", "("}, `include = ["ok", "("]`, `--include "(": error parsing regexp`, `lp.toml:1:18: include "(": error parsing regexp`},
		{[]string{"--accept", "200,700"}, `accept = [200, 700]`, "--accept 700: not an HTTP status code", "lp.toml:1:16: accept 700: not an HTTP status code"},
		{[]string{"-H", "no colon"}, `header = ["no colon"]`, "--header ", "lp.toml:1:11: header "},
		{[]string{"--sitemap", "not a url"}, `sitemap = ["not a url"]`, `--sitemap "not a url": want an http(s) URL`, `lp.toml:1:12: sitemap "not a url": want an http(s) URL`},
		{[]string{"--report-after", "soon"}, `report_after = "soon"`, "want a count of failed passes", "lp.toml:1:16: report_after: want a count of failed passes"},
		{[]string{"--rate", "fast"}, "", `rate "fast"`, ""},
		{[]string{"--concurrency=2", "--per-host=4"}, "concurrency = 2\nper_host = 4", "--per-host 4 is more than --concurrency 2", "lp.toml:2:12: per_host 4 is more than concurrency 2"},
	} {
		t.Run(strings.Join(tc.flag, " "), func(t *testing.T) {
			t.Parallel()
			_, _, err := settingsFrom(t, "", tc.flag...)
			if err == nil || !strings.Contains(err.Error(), tc.wantF) {
				t.Errorf("flag: %v; want %q", err, tc.wantF)
			}
			if tc.doc == "" {
				return
			}
			_, _, err = settingsFrom(t, tc.doc+"\n")
			if err == nil || !strings.Contains(err.Error(), tc.wantK) {
				t.Errorf("key: %v; want %q", err, tc.wantK)
			}
		})
	}
}

// The file's value of the wrong kind is refused with what the key wants,
// never a Go type.
func TestKeyOfTheWrongKind(t *testing.T) {
	t.Parallel()
	for doc, want := range map[string]string{
		`concurrency = "many"`:     "lp.toml:1:15: concurrency: want a whole number, not a string",
		"timeout = 30":             `lp.toml:1:11: timeout: want a duration in quotes, such as "30s"`,
		"quiet = 1":                "lp.toml:1:9: quiet: want true or false, not an integer",
		`include = "a"`:            "lp.toml:1:11: include: want a list of strings, not a string",
		`accept = ["429"]`:         "lp.toml:1:11: accept: want a list of whole numbers, not a list with a string",
		"max_size = -1":            "lp.toml:1:12: max_size: -1 is negative",
		"[recheck]\nfine = \"1h\"": "lp.toml:2:1: unknown key recheck.fine",
		"concurency = 3":           "lp.toml:1:1: unknown key concurency (did you mean concurrency?)",
	} {
		_, _, err := settingsFrom(t, doc+"\n")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", doc, err, want)
		}
	}
}

// A flag beats the file, the file beats the default; a list from a flag
// replaces the file's rather than adding to it.
func TestFlagBeatsFileBeatsDefault(t *testing.T) {
	t.Parallel()
	doc := "concurrency = 4\ninclude = [\"a\"]\nghost = \"1d\"\n"
	o, _, err := settingsFrom(t, doc, "-c", "6", "--include", "b")
	if err != nil || o.concurrency != 6 || !slices.Equal(o.include, []string{"b"}) || o.ghost != 24*time.Hour || o.timeout != 20*time.Second {
		t.Errorf("flags over the file: %v; concurrency %d include %q ghost %v timeout %v", err, o.concurrency, o.include, o.ghost, o.timeout)
	}
	o, _, err = settingsFrom(t, doc)
	if err != nil || o.concurrency != 4 || !slices.Equal(o.include, []string{"a"}) {
		t.Errorf("the file: %v; concurrency %d include %q", err, o.concurrency, o.include)
	}
	// A value the flag overrides is still checked: the file is wrong.
	if _, _, err := settingsFrom(t, "concurrency = 0\n", "-c", "6"); err == nil {
		t.Error("concurrency = 0 under -c 6 was not refused")
	}
}

// A top-level key under its former name still loads, and the warning names
// the new one.
func TestFormerKeyWarns(t *testing.T) {
	t.Parallel()
	o, warnings, err := settingsFrom(t, "sitemaps = [\"https://a.example/s.xml\"]\n")
	if err != nil || !slices.Equal(o.sitemaps, []string{"https://a.example/s.xml"}) {
		t.Errorf("sitemaps: %v, %q", err, o.sitemaps)
	}
	if !strings.Contains(warnings, "lp.toml:1:1: sitemaps is now called sitemap") {
		t.Errorf("warnings %q", warnings)
	}
	if _, _, err := settingsFrom(t, "sitemap = []\nsitemaps = []\n"); err == nil || !strings.Contains(err.Error(), "sitemaps is the former name of sitemap") {
		t.Errorf("both names: %v", err)
	}
}

// explain reads every setting of the file that decides about a URL, not
// only the rules: offline = true makes another host's link a skip.
func TestExplainReadsTheSettings(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "lp.toml")
	if err := os.WriteFile(cfg, []byte("start = [\"http://127.0.0.1:8080/\"]\noffline = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runInProcess(t, "explain", "--config", cfg, "https://elsewhere.example/x")
	if r.code != exitOK || !regexp.MustCompile(`action: +skip`).MatchString(r.stdout) {
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// --help of check lists every flag of the table under its heading.
func TestHelpGroupsComeFromTheTable(t *testing.T) {
	t.Parallel()
	var o checkOptions
	fs, _ := newFlags("check", &o)
	placed := map[string]bool{}
	for _, g := range checkGroups() {
		for _, f := range g.flags {
			placed[f] = true
		}
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if !placed[f.Name] {
			t.Errorf("--%s is under no heading", f.Name)
		}
	})
}

// pflag prints a flag's default itself; a usage that says it too shows it twice.
func TestHelpSaysEachDefaultOnce(t *testing.T) {
	t.Parallel()
	var o checkOptions
	fs, _ := newFlags("check", &o)
	fs.VisitAll(func(f *pflag.Flag) {
		one := pflag.NewFlagSet("one", pflag.ContinueOnError)
		one.AddFlag(f)
		if u := one.FlagUsages(); strings.Count(u, "(default") > 1 {
			t.Errorf("--%s says its default twice: %s", f.Name, strings.TrimSpace(u))
		}
	})
}

func TestThreshold(t *testing.T) {
	t.Parallel()
	const day = 24 * time.Hour
	for _, tt := range []struct {
		in   string
		want report.Threshold
		err  bool
	}{
		{"", report.Threshold{}, false},
		{"0", report.Threshold{}, false},
		{"3", report.Threshold{Failures: 3}, false},
		{"36h", report.Threshold{Age: 36 * time.Hour}, false},
		{"90m", report.Threshold{Age: 90 * time.Minute}, false},
		{"3d", report.Threshold{Age: 3 * day}, false},
		{"1.5d", report.Threshold{Age: 36 * time.Hour}, false},
		{"1w", report.Threshold{Age: 7 * day}, false},
		{"3+2d", report.Threshold{Failures: 3, Age: 2 * day}, false},
		{" 2d + 4 ", report.Threshold{Failures: 4, Age: 2 * day}, false},
		{"876024h", report.Threshold{Age: 36501 * day}, false},
		{"-1", report.Threshold{}, true},
		{"-3h", report.Threshold{}, true},
		{"3x", report.Threshold{}, true},
		{"d", report.Threshold{}, true},
		{"106752d", report.Threshold{}, true},
		{"3++", report.Threshold{}, true},
	} {
		var th threshold
		err := th.Set(tt.in)
		if (err != nil) != tt.err || report.Threshold(th) != tt.want {
			t.Errorf("Set(%q) = %+v, %v; want %+v, error %v", tt.in, th, err, tt.want, tt.err)
		}
	}
	th := threshold{Age: 2 * day}
	if err := th.Set("soon"); err == nil || th.String() != "2d" || th.Type() == "" {
		t.Errorf("Set(soon) = %v and left %q; want an error and the old value", err, th.String())
	}
	var u threshold
	if err := u.UnmarshalText([]byte("3+2d")); err != nil || u != (threshold{Failures: 3, Age: 2 * day}) {
		t.Errorf("UnmarshalText(3+2d) = %+v, %v", u, err)
	}
}

func FuzzThreshold(f *testing.F) {
	for _, s := range []string{"", "3", "36h", "3d", "1.5d", "3+2d", "1h30m", "-1", "+", "9223372036854775807", "876024h", "106751d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var th threshold
		if th.Set(s) != nil {
			return
		}
		if th.Failures < 0 || th.Age < 0 {
			t.Fatalf("Set(%q) = %+v: negative", s, th)
		}
		var back threshold
		if err := back.Set(th.String()); err != nil || back != th {
			t.Fatalf("Set(%q) = %+v, but its String %q reads back as %+v, %v", s, th, th.String(), back, err)
		}
	})
}

// The value types of throttle read through UnmarshalText what Set reads.
var (
	_ pflag.Value = (*throttle.Duration)(nil)
	_ pflag.Value = (*throttle.Size)(nil)
	_ pflag.Value = (*throttle.Rate)(nil)
	_ pflag.Value = (*throttle.Window)(nil)
	_ pflag.Value = (*threshold)(nil)
)

// explain takes --per-host and --concurrency like check, and shows the
// number of requests in flight that will be used, from the flag or the file.
func TestExplainShowsPerHost(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "lp.toml")
	if err := os.WriteFile(cfg, []byte("start = [\"http://127.0.0.1:8080/\"]\nper_host = 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--config", cfg}, "in flight 3"},
		{[]string{"--config", cfg, "--per-host", "5"}, "in flight 5"},
	} {
		r := runInProcess(t, append(append([]string{"explain"}, tt.args...), "http://127.0.0.1:8080/x")...)
		if r.code != exitOK || !strings.Contains(r.stdout, tt.want+",") || strings.Contains(r.stdout, "--per-host") {
			t.Errorf("explain %q: exit %d, want %q\n%s%s", tt.args, r.code, tt.want, r.stdout, r.stderr)
		}
	}
}

// A politeness key written at the top level of the file, where a user who
// knows the flag tries it first (rate = "0" to free a host), is refused
// with where it goes: a [[host]] table that names the host, or the flag
// for the site's own hosts.
func TestHostKeyAtTheTopLevelSaysWhereItGoes(t *testing.T) {
	t.Parallel()
	for _, s := range settingsTable {
		if s.hostKey == "" {
			continue
		}
		t.Run(s.hostKey, func(t *testing.T) {
			t.Parallel()
			_, _, err := settingsFrom(t, s.hostKey+" = 0\n")
			want := fmt.Sprintf("lp.toml:1:1: unknown key %s: it is set per host, in a [[host]] table whose match names the host (a glob: \"*.example.com\"); --%s sets it for the site's own hosts", s.hostKey, s.flag)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%v\nwant %q", err, want)
			}
		})
	}
}

// --rate 0 is no limit, on the site's own hosts only (explain shows it);
// its help says so and where another host's rate is set.
func TestRateZeroIsNoLimitOnTheSiteOnly(t *testing.T) {
	t.Parallel()
	const start = "http://127.0.0.1:1/"
	for url, want := range map[string]string{
		start + "x":           "politeness: rate unlimited,",
		"http://other.test/x": "politeness: rate 1/s burst 2,",
	} {
		r := runInProcess(t, "explain", "--start", start, "--rate", "0", url)
		if r.code != exitOK || !strings.Contains(r.stdout, want) {
			t.Errorf("explain --rate 0 %s: exit %d, want %q in\n%s%s", url, r.code, want, r.stdout, r.stderr)
		}
	}
	help := strings.Join(strings.Fields(runInProcess(t, "check", "--help").stdout), " ")
	if want := `--rate rate requests per second to the site's hosts, e.g. 5/s or 300/m; 0 or "unlimited" for no limit (another host: rate in a [[host]] table)`; !strings.Contains(help, want) {
		t.Errorf("check --help does not say what --rate 0 is and where another host's rate goes; want %q", want)
	}
}

// explain takes --group-hosts and --global-bandwidth (flags and keys),
// since they change the limits a URL's requests get: with domain grouping
// a host shares the limits of its domain, under a start host's settings
// when the domain has one (the pass meets it first).
func TestExplainShowsSharedLimits(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "lp.toml")
	if err := os.WriteFile(cfg, []byte("start = [\"http://example.test/\"]\ngroup_hosts = \"domain\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args      []string
		want, not []string
	}{
		{[]string{"--start", "http://example.test/", "http://cdn.example.test/x"},
			[]string{"politeness: rate 1/s burst 2,"}, []string{"shared by", "all hosts together"}},
		{[]string{"--start", "http://example.test/", "--group-hosts", "domain", "http://cdn.example.test/x"},
			[]string{"politeness: rate unlimited,", "(those of start host example.test: default for start hosts)", "shared by every host of example.test (--group-hosts domain)"}, nil},
		{[]string{"--config", cfg, "http://cdn.example.test/x"},
			[]string{"politeness: rate unlimited,", "shared by every host of example.test (--group-hosts domain)"}, nil},
		{[]string{"--start", "http://example.test/", "--group-hosts", "domain", "http://cdn.other.test/x"},
			[]string{"politeness: rate 1/s burst 2,", "shared by every host of other.test (--group-hosts domain)", "with the settings of the first host of them the pass meets"}, nil},
		{[]string{"--start", "http://example.test/", "--global-bandwidth", "2MiB", "http://example.test/x"},
			[]string{"all hosts together: at most 2MiB/s (--global-bandwidth)"}, []string{"shared by"}},
	} {
		r := runInProcess(t, append([]string{"explain"}, tt.args...)...)
		for _, w := range tt.want {
			if r.code != exitOK || !strings.Contains(r.stdout, w) {
				t.Errorf("explain %q: exit %d, want %q\n%s%s", tt.args, r.code, w, r.stdout, r.stderr)
			}
		}
		for _, n := range tt.not {
			if strings.Contains(r.stdout, n) {
				t.Errorf("explain %q says %q\n%s", tt.args, n, r.stdout)
			}
		}
	}
}

// --fsync-commits (or fsync_commits) opens the database with an fsync in
// every commit, which survives a power cut; without it check syncs only
// every --commit-every (bbolt's NoSync in between).
func TestFsyncCommitsSyncsEveryCommit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		doc  string
		args []string
		want time.Duration
	}{
		{"default", "", nil, crawler.DefaultBatchInterval},
		{"commit-every", "", []string{"--commit-every", "5s"}, 5 * time.Second},
		{"flag", "", []string{"--fsync-commits"}, 0},
		{"key", "fsync_commits = true\n", nil, 0},
		{"key off", "fsync_commits = false\n", nil, crawler.DefaultBatchInterval},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o, _, err := settingsFrom(t, tc.doc, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if got := o.syncEvery(); got != tc.want {
				t.Errorf("store.Options.SyncEvery = %v, want %v", got, tc.want)
			}
		})
	}
}
