package rules

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n%s", name, got)
	}
}

func noEnv(string) (string, bool) { return "", false }

// testSettings stand for the command's settings, which ParseConfig hands
// over without knowing them: a few keys, one of them renamed, and a check
// that refuses a value.
var testSettings = Settings{
	Keys:    []string{"start", "concurrency", "recheck.ok", "report_after", "max_hops"},
	Renamed: map[string]string{"workers": "concurrency"},
	Set: func(key string, v any) error {
		if n, ok := v.(int64); ok && n < 0 {
			return fmt.Errorf("%s: %d is negative", key, n)
		}
		if list, ok := v.([]any); ok {
			for i, x := range list {
				if x == "bad" {
					return &ItemError{Index: i, Err: fmt.Errorf("%s: %q is bad", key, x)}
				}
			}
		}
		return nil
	},
}

func TestExampleRulesGolden(t *testing.T) {
	golden(t, "example.toml", ExampleRules())
}

func TestExampleRulesLoad(t *testing.T) {
	f, err := ParseConfig("example.toml", []byte(ExampleRules()), noEnv, Settings{})
	if err != nil {
		t.Fatalf("the example does not load:\n%v", err)
	}
	// Saved as linkpatrol.toml, the example must not quietly change what a
	// check of another site does.
	if len(f.Config.Rules) != 0 || len(f.Config.Hosts) != 0 || len(f.Config.Rewrites) != 0 ||
		len(f.Config.Aliases) != 0 || len(f.Config.Unwrap) != 0 || len(f.Config.Exclude) != 0 || f.Config.DropParams != nil {
		t.Errorf("the example applies example.com's rules as it is: %+v", f.Config)
	}
}

// uncommentExample turns the example's "#key = value" lines on.
func uncommentExample() string {
	return regexp.MustCompile(`(?m)^#([^\s#-])`).ReplaceAllString(ExampleRules(), "$1")
}

// The commented-out examples are valid config once a user turns them on.
func TestExampleConfigRulesLoadWhenUncommented(t *testing.T) {
	text := uncommentExample()
	second, n := 0, 0 // the line of the second [[rule]]
	for i, l := range strings.Split(text, "\n") {
		if l == "[[rule]]" {
			if n++; n == 2 {
				second = i + 1
				break
			}
		}
	}
	f, err := ParseConfig("example.toml", []byte(text), noEnv, Settings{})
	if err != nil {
		t.Fatalf("the example's rules do not load when uncommented:\n%v", err)
	}
	if len(f.Config.Rules) != 6 || len(f.Config.Hosts) != 2 || len(f.Config.Rewrites) != 1 ||
		f.Config.Rules[1].Source != fmt.Sprintf("example.toml:%d", second) {
		t.Errorf("unexpected values from the uncommented example: %+v", f)
	}
	f.Config.Start = []string{"https://example.com/"}
	if _, err := New(f.Config); err != nil {
		t.Errorf("New on the example's Config: %v", err)
	}
}

// TestExampleRulesCoverEveryKey finds every key the decoder knows in the
// example, commented out or not.
func TestExampleRulesCoverEveryKey(t *testing.T) {
	example := ExampleRules()
	var keys []string
	var walk func(reflect.Type)
	walk = func(typ reflect.Type) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			if f.Anonymous {
				walk(f.Type) // its keys are the embedding table's own
				continue
			}
			if strings.HasPrefix(f.Name, "Old") {
				continue // a former name, read with a warning
			}
			keys = append(keys, strings.Split(f.Tag.Get("toml"), ",")[0])
			switch ft := f.Type; {
			case ft.Kind() == reflect.Struct:
				walk(ft)
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
				walk(ft.Elem())
			}
		}
	}
	walk(reflect.TypeFor[fileDoc]())
	for _, k := range keys {
		table := regexp.MustCompile(`(?m)^#?\[\[?` + regexp.QuoteMeta(k) + `\]\]?`)
		key := regexp.MustCompile(`(?m)(^|[{,]|^#)\s*` + regexp.QuoteMeta(k) + ` = `)
		if !table.MatchString(example) && !key.MatchString(example) {
			t.Errorf("key %q is not in the example config", k)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	env := func(k string) (string, bool) {
		if k == "SET" {
			return "value", true
		}
		return "", false
	}
	tests := []struct {
		name, doc, want string
	}{
		{"syntax", "concurrency = = 3\n", "linkpatrol.toml:1:15: "},
		{"unknown key", "concurrency = 3\nbogus = 1\n", "linkpatrol.toml:2:1: unknown key bogus"},
		{"unknown rule key", "[[rule]]\nhost = \"a\"\nactoin = \"skip\"\n", "linkpatrol.toml:3:1: unknown key rule.actoin"},
		{"wrong type in a rule", "[[rule]]\nhost = 3\n", "linkpatrol.toml:2:8: rule.host: want a string in quotes, not an integer"},
		{"misspelt key", "concurency = 3\n", "linkpatrol.toml:1:1: unknown key concurency (did you mean concurrency?)"},
		{"misspelt rule key", "[[rule]]\nhost = \"a\"\nactoin = \"skip\"\n", "linkpatrol.toml:3:1: unknown key rule.actoin (did you mean action?)"},
		{"misspelt trap key in a rule", "[[rule]]\nhost = \"a\"\nmax_hop = 3\n", "linkpatrol.toml:3:1: unknown key rule.max_hop (did you mean max_hops?)"},
		{"unknown recheck verdict", "[recheck]\nfine = \"1h\"\n", "linkpatrol.toml:2:1: unknown key recheck.fine"},
		{"a setting's error", "concurrency = -3\n", "linkpatrol.toml:1:15: concurrency: -3 is negative"},
		{"a setting's error in a list", "start = [\"a\", \"bad\"]\n", "linkpatrol.toml:1:15: start: \"bad\" is bad"},
		{"former and new name", "concurrency = 3\nworkers = 3\n", "linkpatrol.toml:2:11: workers is the former name of concurrency: keep only concurrency"},
		{"bad regex on line 7", "start = [\"https://example.com/\"]\n\n[[rule]]\nhost = \"example.com\"\naction = \"skip\"\n\nregex = '(unclosed'\n",
			"linkpatrol.toml:7:9: rule 1 (linkpatrol.toml:3) regex: error parsing regexp"},
		{"bad glob", "[[rule]]\npath = \"/a/[b\"\naction = \"skip\"\n", "linkpatrol.toml:2:8: rule 1 (linkpatrol.toml:1) path: unclosed ["},
		{"bad action", "[[rule]]\nhost = \"a\"\naction = \"follow\"\n", "linkpatrol.toml:3:10: rule 1 (linkpatrol.toml:1) action: unknown action"},
		{"skip with settings", "[[rule]]\nhost = \"a\"\naction = \"skip\"\ntimeout = \"5s\"\n", "linkpatrol.toml:3:10: rule 1 (linkpatrol.toml:1) action: action skip never fetches"},
		{"headers without host", "[[rule]]\npath_prefix = \"/x/\"\nheaders = { \"X-A\" = \"b\" }\n", "linkpatrol.toml:3:11: rule 1 (linkpatrol.toml:1) headers: headers, cookies and credentials need a host"},
		{"credentials for every host", "[[rule]]\nhost = \"*\"\nuser = \"u\"\npassword = \"p\"\n", "linkpatrol.toml:3:8: rule 1 (linkpatrol.toml:1) user: "},
		{"missing env", "[[rule]]\nhost = \"a\"\nheaders = { \"X-Token\" = \"${NOPE}\" }\n", "linkpatrol.toml:3:25: rule 1 (linkpatrol.toml:1) headers.X-Token: environment variable NOPE is not set"},
		{"bad header name", "[[rule]]\nhost = \"a\"\nheaders = { \"X Token\" = \"${SET}\" }\n", "linkpatrol.toml:3:25: rule 1 (linkpatrol.toml:1) headers.X Token: \"X Token\" is not a header name"},
		{"bad accept", "[[rule]]\nhost = \"a\"\naccept = { \"40x\" = \"ok\" }\n", "linkpatrol.toml:3:20: rule 1 (linkpatrol.toml:1) accept.40x: \"40x\" is not an HTTP status code"},
		{"bad accept verdict", "[[rule]]\nhost = \"a\"\naccept = { 403 = \"fine\" }\n", "linkpatrol.toml:3:18: rule 1 (linkpatrol.toml:1) accept.403: unknown verdict"},
		{"rule recheck", "[[rule]]\nhost = \"a\"\nrecheck = { ok = \"1d\", later = \"2d\" }\n", "linkpatrol.toml:3:32: rule 1 (linkpatrol.toml:1) recheck.later: unknown verdict"},
		{"catch-all not last", "[[rule]]\naction = \"check\"\n\n[[rule]]\nhost = \"a\"\naction = \"skip\"\n", "linkpatrol.toml:1:3: rule 1 (linkpatrol.toml:1): has no scheme, host, path_prefix, path or regex, so it matches every URL and rule 2 would never apply"},
		{"rewrite regex", "[[rewrite]]\nregex = \"[\"\nreplace = \"x\"\n", "linkpatrol.toml:2:9: rewrite 1 (linkpatrol.toml:1) regex: "},
		{"unwrap", "unwrap = [\"/go/?url\"]\n", "linkpatrol.toml:1:11: unwrap \"/go/?url\": want"},
		{"drop_params", "drop_params = [\"utm_[\"]\n", "linkpatrol.toml:1:16: drop_params \"utm_[\": unclosed ["},
		{"alias twice", "[aliases]\n\"https://a.example\" = [\"https://www.a.example\"]\n\"https://b.example\" = [\"https://www.a.example\"]\n",
			"linkpatrol.toml:3:24: alias \"https://www.a.example\" of \"https://b.example\": is already an alias of https://a.example"},
		{"alias with path", "[aliases]\n\"https://a.example\" = [\"https://b.example/x\"]\n", "linkpatrol.toml:2:24: alias \"https://b.example/x\" of \"https://a.example\": want an origin"},
		{"host without match", "[[host]]\nrate = \"1/s\"\n", "linkpatrol.toml:1:3: host 1 (linkpatrol.toml:1): a [[host]] needs match"},
		{"host both", "[[host]]\nmatch = \"a\"\ncidr = \"10.0.0.0/8\"\nrate = \"1/s\"\n", "linkpatrol.toml:3:8: host 1 (linkpatrol.toml:1) cidr: give match or cidr"},
		{"host rate", "[[host]]\nmatch = \"a\"\nrate = \"fast\"\n", "linkpatrol.toml:3:8: host 1 (linkpatrol.toml:1) rate: "},
		{"host cidr", "[[host]]\ncidr = \"10.0.0.0/33\"\nrate = \"1/s\"\n", "linkpatrol.toml:2:8: host 1 (linkpatrol.toml:1) cidr: "},
		{"host bytes", "[[host]]\nmatch = \"a\"\nbandwidth = \"lots\"\n", "linkpatrol.toml:3:13: host.bandwidth: size"},
		{"host bytes, former name", "[[host]]\nmatch = \"a\"\nbytes_per_sec = \"lots\"\n", "linkpatrol.toml:3:17: host.bytes_per_sec: size"},
		{"host key under both names", "[[host]]\nmatch = \"a\"\nper_host = 2\nmax_in_flight = 3\n", "linkpatrol.toml:4:17: host.max_in_flight is the former name of host.per_host: keep only per_host"},
		{"host negative", "[[host]]\nmatch = \"a\"\nburst = -1\n", "linkpatrol.toml:3:9: host 1 (linkpatrol.toml:1) burst: -1 is negative"},
		{"host nothing set", "[[host]]\nmatch = \"a\"\n", "linkpatrol.toml:1:3: host 1 (linkpatrol.toml:1): a [[host]] sets no politeness setting"},
		{"second rule, inline", "rule = [{ host = \"a\" }, { regex = \"(\" }]\n", "linkpatrol.toml:1:35: rule 2 (linkpatrol.toml:1) regex: "},
		{"table under array table", "[[rule]]\nhost = \"a\"\n[[rule]]\nhost = \"b\"\n[rule.headers]\n\"X Y\" = \"1\"\n", "linkpatrol.toml:6:9: rule 2 (linkpatrol.toml:3) headers.X Y: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig("linkpatrol.toml", []byte(tt.doc), env, testSettings)
			if err == nil {
				t.Fatalf("no error; want %q", tt.want)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error\n  %v\nwant it to start with\n  %s", err, tt.want)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Errorf("%T is not a *ConfigError", err)
			}
		})
	}
}

func TestConfigReportsAllUnknownKeys(t *testing.T) {
	_, err := ParseConfig("c.toml", []byte("a = 1\nb = 2\n"), noEnv, testSettings)
	if err == nil || err.Error() != "c.toml:1:1: unknown key a\nc.toml:2:1: unknown key b" {
		t.Errorf("got %v", err)
	}
}

func TestConfigValues(t *testing.T) {
	doc := `start = ["https://example.com/", "public/"]
report_after = "36h"
max_size = 4096
drop_params = []

[recheck]
broken = "2h"

[[rule]]
host = "staging.example.com"
headers = { "X-Token" = "${TOKEN}" }
cookies = { session = "abc" }
user = "audit"
password = "${PASS}"
`
	env := map[string]string{"TOKEN": "t0k3n", "PASS": "hunter2"}
	got := map[string]any{}
	settings := testSettings
	settings.Keys = append(settings.Keys, "max_size", "recheck.broken")
	settings.Set = func(key string, v any) error { got[key] = v; return nil }
	f, err := ParseConfig("c.toml", []byte(doc), func(k string) (string, bool) { v, ok := env[k]; return v, ok }, settings)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"start": []any{"https://example.com/", "public/"}, "report_after": "36h", "max_size": int64(4096), "recheck.broken": "2h"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("settings handed over:\n%#v\nwant\n%#v", got, want)
	}
	if f.Config.DropParams == nil || len(f.Config.DropParams) != 0 {
		t.Errorf("drop_params = [] gave %#v, want an empty list", f.Config.DropParams)
	}
	for key, want := range map[string]bool{"start": true, "report_after": true, "recheck": true, "recheck.broken": true, "recheck.ok": false, "timeout": false} {
		if f.IsSet(key) != want {
			t.Errorf("IsSet(%q) = %v", key, !want)
		}
	}
	if err := f.Errorf("report_after", "not with --only-new"); err.Error() != "c.toml:2:16: not with --only-new" {
		t.Errorf("Errorf: %v", err)
	}
	f.Config.Start = []string{"https://example.com/"}
	e, err := New(f.Config)
	if err != nil {
		t.Fatal(err)
	}
	p := e.Decide(mustParse(t, "https://staging.example.com/")).Policy
	if p.Header.Get("X-Token") != "t0k3n" || p.Header.Get("Cookie") != "session=abc" || p.User != "audit" || p.Password != "hunter2" {
		t.Errorf("policy: %+v", p)
	}
	s := p.String()
	for _, secret := range []string{"t0k3n", "hunter2", "abc"} {
		if strings.Contains(s, secret) {
			t.Errorf("Policy.String shows a secret: %s", s)
		}
	}
	if want := "header Cookie: <redacted>; header X-Token: <from $TOKEN>; basic auth audit:<redacted>"; s != want {
		t.Errorf("Policy.String() = %q, want %q", s, want)
	}
}

func TestLoadConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "linkpatrol.toml")
	if err := os.WriteFile(path, []byte("concurrency = 3\n\n[[rule]]\nregex = \"(\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadConfig(path, testSettings)
	if err == nil || !strings.HasPrefix(err.Error(), path+":4:9: ") {
		t.Errorf("LoadConfig error = %v, want one at %s:4:9", err, path)
	}
	if _, err := LoadConfig(filepath.Join(t.TempDir(), "missing.toml"), testSettings); err == nil {
		t.Error("a missing file loaded")
	}
}

// FuzzParseConfig feeds arbitrary documents to the loader: it must never
// panic, every error must carry a position, and what loads must compile.
func FuzzParseConfig(f *testing.F) {
	f.Add(ExampleRules())
	f.Add("[[rule]]\nhost = \"a\"\nregex = \"(\"\n")
	f.Add("rule = [{ host = \"a\", headers = { X = \"${A}\" } }]\n[aliases]\n\"https://a\" = [\"http://a\"]\n")
	f.Add("[[host]]\ncidr = \"::1/128\"\nrate = \"1/s\"\n[[rule]]\n[rule.recheck]\nok = \"1d\"\n")
	f.Fuzz(func(t *testing.T, doc string) {
		file, err := ParseConfig("f.toml", []byte(doc), func(k string) (string, bool) { return "v", k == "A" }, testSettings)
		if err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				if !strings.HasPrefix(line, "f.toml:") {
					t.Fatalf("error without a position: %q", line)
				}
			}
			return
		}
		if _, err := New(file.Config); err != nil {
			t.Fatalf("loaded, but New fails: %v", err)
		}
	})
}

// Keys of [[host]] renamed to the flags' names still load, with a warning
// that names the new key: users have files with the old ones.
func TestHostKeysUnderFormerNames(t *testing.T) {
	t.Parallel()
	doc := "[[host]]\nmatch = \"example.com\"\nmax_in_flight = 3\nbytes_per_sec = \"1MiB\"\nmax_retries = 0\n"
	f, err := ParseConfig("c.toml", []byte(doc), noEnv, testSettings)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"c.toml:3:17: host.max_in_flight is now called per_host; the old name still works for now",
		"c.toml:5:15: host.max_retries is now called retries; the old name still works for now",
		"c.toml:4:17: host.bytes_per_sec is now called bandwidth; the old name still works for now",
	}
	if !reflect.DeepEqual(f.Warnings, want) {
		t.Errorf("warnings\n%q\nwant\n%q", f.Warnings, want)
	}
	f.Config.Start = []string{"https://example.com/"}
	e, err := New(f.Config)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := e.HostSettings("example.com", nil)
	if s.MaxInFlight != 3 || s.BytesPerSec != 1<<20 || s.MaxRetries != 0 {
		t.Errorf("settings from the former names: %+v", s)
	}
}
