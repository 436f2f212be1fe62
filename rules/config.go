package rules

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/linkpatrol/linkpatrol/throttle"
)

// DefaultConfigFile is the config file read from the working directory
// when no --config is given and it exists.
const DefaultConfigFile = "linkpatrol.toml"

// File is a loaded config file: the rules, and the place of every key for
// messages. The command's own settings (timeout, db, include, ...) are
// keys of the same file, but the command reads them itself: ParseConfig
// hands them to Settings.Set. IsSet says which keys the file set.
type File struct {
	Path string // as given to LoadConfig

	// Config is the rules part. Its Start is left empty: the command sets
	// it to the start URLs it settles on before calling New.
	Config Config

	// Warnings are things to fix that do not stop the file from loading,
	// each "file:line:col: message": a key under its former name.
	Warnings []string

	index *posIndex
}

// Settings are the keys of the file that are the command's settings
// rather than rules. ParseConfig hands each one the file sets to Set, with
// its value as go-toml decodes it (string, int64, float64, bool, []any,
// map[string]any), and places the error Set returns at the value (at the
// item of a list, for an ItemError). A key of a table is dotted:
// "recheck.ok".
type Settings struct {
	Keys []string
	// Renamed maps a former key to its new one: it is read as the new one,
	// with a warning that names it.
	Renamed map[string]string
	// Elsewhere maps a key that is not a top-level key but is one
	// somewhere else (a [[host]] key) to where it goes: an unknown key of
	// that name says so.
	Elsewhere map[string]string
	Set       func(key string, value any) error
}

// ItemError is an error about one item of a list value.
type ItemError struct {
	Index int
	Err   error
}

func (e *ItemError) Error() string { return e.Err.Error() }
func (e *ItemError) Unwrap() error { return e.Err }

// IsSet reports whether the file set key, a top-level key as written in the
// file ("timeout", "recheck.ok", "drop_params", ...).
func (f *File) IsSet(key string) bool {
	if f == nil || f.index == nil {
		return false
	}
	_, ok := f.index.keys[pathKey(splitDotted(key)...)]
	return ok
}

// Errorf returns an error placed at key's value in the file
// ("file:line:col: message"), for checks the command makes itself (an
// unknown report format, say).
func (f *File) Errorf(key, format string, args ...any) error {
	if f == nil || f.index == nil {
		return fmt.Errorf(key+": "+format, args...)
	}
	return f.index.errorAt(splitDotted(key), fmt.Sprintf(format, args...))
}

func splitDotted(key string) []any {
	parts := strings.Split(key, ".")
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out
}

// LoadConfig reads and checks a config file. Every error, from a syntax
// error to a bad regex in a rule or a missing environment variable, names
// its place as file:line:col. Environment variables are read with
// os.LookupEnv.
func LoadConfig(path string, settings Settings) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return ParseConfig(path, data, os.LookupEnv, settings)
}

// The rules part of the document, as go-toml decodes it.
type fileDoc struct {
	Rule            []docRule           `toml:"rule"`
	Rewrite         []docRewrite        `toml:"rewrite"`
	Unwrap          []string            `toml:"unwrap"`
	DropParams      []string            `toml:"drop_params"`
	Aliases         map[string][]string `toml:"aliases"`
	AliasStartHosts bool                `toml:"alias_start_hosts"`
	StripIndex      bool                `toml:"strip_index"`
	CollapseSlashes bool                `toml:"collapse_slashes"`
	Host            []docHost           `toml:"host"`
}

// docTraps are the spider-trap limits of a [[rule]].
type docTraps struct {
	MaxHops          *int `toml:"max_hops"`
	MaxPathSegments  *int `toml:"max_path_segments"`
	MaxPathRepeats   *int `toml:"max_path_repeats"`
	MaxQueryVariants *int `toml:"max_query_variants"`
	MaxTemplateRun   *int `toml:"max_template_run"`
}

type docRule struct {
	Scheme     string            `toml:"scheme"`
	Host       string            `toml:"host"`
	PathPrefix string            `toml:"path_prefix"`
	Path       string            `toml:"path"`
	Regex      string            `toml:"regex"`
	Action     string            `toml:"action"`
	Timeout    string            `toml:"timeout"`
	Recheck    map[string]string `toml:"recheck"`
	Accept     map[string]string `toml:"accept"`
	Headers    map[string]string `toml:"headers"`
	Cookies    map[string]string `toml:"cookies"`
	User       string            `toml:"user"`
	Password   string            `toml:"password"`
	docTraps
	KeepSessionIDs bool `toml:"keep_session_ids"`
}

type docRewrite struct {
	Regex   string `toml:"regex"`
	Replace string `toml:"replace"`
}

type docHost struct {
	Match         string `toml:"match"`
	CIDR          string `toml:"cidr"`
	Rate          string `toml:"rate"`
	Burst         *int   `toml:"burst"`
	Window        string `toml:"window"`
	PerHost       *int   `toml:"per_host"`
	Bandwidth     any    `toml:"bandwidth"`
	QuotaRequests *int64 `toml:"quota_requests"`
	QuotaBytes    any    `toml:"quota_bytes"`
	CrawlDelay    string `toml:"crawl_delay"`
	MaxPause      string `toml:"max_pause"`
	IgnoreRobots  *bool  `toml:"ignore_robots"`
	Adaptive      *bool  `toml:"adaptive"`
	Retries       *int   `toml:"retries"`

	// Former names, read with a warning that names the new key: users
	// have files with them.
	OldMaxInFlight *int `toml:"max_in_flight"`
	OldBytesPerSec any  `toml:"bytes_per_sec"`
	OldMaxRetries  *int `toml:"max_retries"`
}

// ParseConfig parses a config file's contents; name is used in error
// positions and rule sources. lookupEnv resolves ${NAME} in secrets (nil:
// os.LookupEnv) and stays in the returned Config for New. Every error,
// from the rules and from settings.Set, names its place as file:line:col;
// a key neither knows is an error too, with the nearest known key.
func ParseConfig(name string, data []byte, lookupEnv func(string) (string, bool), settings Settings) (*File, error) {
	var doc fileDoc
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	// The settings' keys are unknown to fileDoc: checker.settings checks
	// them against settings.Keys. go-toml decodes the rest before it says
	// so.
	var strict *toml.StrictMissingError
	if err := dec.Decode(&doc); err != nil && !errors.As(err, &strict) {
		return nil, decodeError(name, err)
	}
	idx, err := buildIndex(name, data)
	if err != nil {
		return nil, err
	}
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	var raw map[string]any
	if err := toml.Unmarshal(data, &raw); err != nil {
		return nil, decodeError(name, err)
	}
	f := &File{Path: name, index: idx}
	c := &checker{idx: idx}
	if strict != nil {
		c.errs = unknownRuleKeys(name, strict)
	}
	c.settings(raw, settings)
	f.Config = c.engineConfig(name, &doc, lookupEnv)
	f.Warnings = c.warnings
	if len(c.errs) > 0 {
		return nil, c.result()
	}
	// New does the checks that need everything compiled together (regexes,
	// globs, conflicts between rules, aliases, environment variables).
	if _, err := New(f.Config); err != nil {
		var ie *itemError
		if errors.As(err, &ie) {
			return nil, idx.errorAt(ie.path, ie.Error())
		}
		return nil, err
	}
	return f, nil
}

// ruleKeys are the top-level keys of the rules part.
var ruleKeys = knownKeys(reflect.TypeFor[fileDoc](), nil)

// settings hands every key of the document outside the rules part to
// s.Set, reads former keys as their new names with a warning, and reports
// keys it does not know.
func (c *checker) settings(raw map[string]any, s Settings) {
	known := make(map[string]bool, len(s.Keys))
	for _, k := range s.Keys {
		known[k] = true
	}
	var walk func(prefix []string, m map[string]any)
	walk = func(prefix []string, m map[string]any) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			v := m[k]
			path := append(slices.Clone(prefix), k)
			key := strings.Join(path, ".")
			switch now, renamed := s.Renamed[key]; {
			case len(prefix) == 0 && slices.Contains(ruleKeys, k):
			case renamed:
				if _, both := lookupDotted(raw, now); both {
					c.add(anyPath(path), fmt.Sprintf("%s is the former name of %s: keep only %s", key, now, now))
					continue
				}
				c.warn(anyPath(path), fmt.Sprintf("%s is now called %s; the old name still works for now", key, now))
				c.set(s, now, path, v)
			case known[key]:
				c.set(s, key, path, v)
			case isTable(v) && slices.ContainsFunc(s.Keys, func(k string) bool { return strings.HasPrefix(k, key+".") }):
				walk(path, v.(map[string]any))
			default:
				msg := "unknown key " + key
				if where, ok := s.Elsewhere[key]; ok {
					msg += ": " + where
				} else if near := DidYouMean(k, siblings(s, prefix)); near != "" {
					msg += " (did you mean " + near + "?)"
				}
				c.addAtKey(anyPath(path), msg)
			}
		}
	}
	walk(nil, raw)
}

func isTable(v any) bool {
	_, ok := v.(map[string]any)
	return ok
}

// set hands one setting to s.Set; path is where the file has it (under
// its former name, perhaps).
func (c *checker) set(s Settings, key string, path []string, v any) {
	if s.Set == nil {
		return
	}
	err := s.Set(key, v)
	if err == nil {
		return
	}
	at := anyPath(path)
	var ie *ItemError
	if errors.As(err, &ie) {
		at = append(at, ie.Index)
	}
	c.add(at, err.Error())
}

// siblings are the keys a misspelt one may have meant: at the top level
// the rules' and the settings', in a table the settings' in it.
func siblings(s Settings, prefix []string) []string {
	var out []string
	if len(prefix) == 0 {
		out = slices.Clone(ruleKeys)
	}
	p := strings.Join(prefix, ".")
	for _, k := range s.Keys {
		if p != "" {
			var ok bool
			if k, ok = strings.CutPrefix(k, p+"."); !ok {
				continue
			}
		}
		first, _, _ := strings.Cut(k, ".")
		if !slices.Contains(out, first) {
			out = append(out, first)
		}
	}
	return out
}

// lookupDotted finds a dotted key in the decoded document.
func lookupDotted(m map[string]any, key string) (any, bool) {
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		sub, ok := m[p].(map[string]any)
		if !ok {
			return nil, false
		}
		m = sub
	}
	v, ok := m[parts[len(parts)-1]]
	return v, ok
}

func anyPath(parts []string) []any {
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out
}

func (c *checker) engineConfig(name string, doc *fileDoc, lookupEnv func(string) (string, bool)) Config {
	cfg := Config{
		Unwrap: doc.Unwrap, DropParams: doc.DropParams, Aliases: doc.Aliases,
		AliasStartHosts: doc.AliasStartHosts, StripIndex: doc.StripIndex,
		CollapseSlashes: doc.CollapseSlashes, LookupEnv: lookupEnv,
	}
	if c.idx.has("drop_params") && cfg.DropParams == nil {
		cfg.DropParams = []string{}
	}
	for i, r := range doc.Rule {
		cfg.Rules = append(cfg.Rules, Rule{
			Source: c.idx.source(name, "rule", i),
			Scheme: r.Scheme, Host: r.Host, PathPrefix: r.PathPrefix, Path: r.Path,
			Regex: r.Regex, Action: r.Action, Timeout: r.Timeout, Recheck: r.Recheck,
			Accept: r.Accept, Headers: r.Headers, Cookies: r.Cookies,
			User: r.User, Password: r.Password, KeepSessionIDs: r.KeepSessionIDs,
			MaxHops: r.MaxHops, MaxPathSegments: r.MaxPathSegments, MaxPathRepeats: r.MaxPathRepeats,
			MaxQueryVariants: r.MaxQueryVariants, MaxTemplateRun: r.MaxTemplateRun,
		})
	}
	for i, r := range doc.Rewrite {
		cfg.Rewrites = append(cfg.Rewrites, Rewrite{Source: c.idx.source(name, "rewrite", i), Regex: r.Regex, Replace: r.Replace})
	}
	for i, h := range doc.Host {
		renamed(c, &h.PerHost, &h.OldMaxInFlight, "host", i, "max_in_flight", "per_host")
		renamed(c, &h.Retries, &h.OldMaxRetries, "host", i, "max_retries", "retries")
		bandwidth := "bandwidth"
		if h.Bandwidth == nil && h.OldBytesPerSec != nil {
			bandwidth = "bytes_per_sec" // an error names the key as written
		}
		renamed(c, &h.Bandwidth, &h.OldBytesPerSec, "host", i, "bytes_per_sec", "bandwidth")
		hr := HostRule{
			Source: c.idx.source(name, "host", i), Match: h.Match, CIDR: h.CIDR,
			Rate: h.Rate, Burst: h.Burst, Window: h.Window, PerHost: h.PerHost,
			QuotaRequests: h.QuotaRequests, CrawlDelay: h.CrawlDelay, MaxPause: h.MaxPause,
			IgnoreRobots: h.IgnoreRobots, Adaptive: h.Adaptive, Retries: h.Retries,
		}
		if s, ok := c.size(h.Bandwidth, "host", i, bandwidth); ok {
			hr.Bandwidth = s
		}
		if s, ok := c.size(h.QuotaBytes, "host", i, "quota_bytes"); ok {
			hr.QuotaBytes = s
		}
		cfg.Hosts = append(cfg.Hosts, hr)
	}
	return cfg
}

// checker collects the errors found while turning the document into a File.
type checker struct {
	idx      *posIndex
	errs     []*ConfigError
	warnings []string
}

func (c *checker) add(path []any, msg string) {
	c.errs = append(c.errs, c.idx.errorAt(path, msg))
}

// renamed reads a key of a [[host]] given under its former name into the
// new one's place (dst), with a warning that names the new key; both at
// once is an error.
func renamed[T any](c *checker, dst, old *T, table string, i int, oldKey, newKey string) {
	if reflect.ValueOf(old).Elem().IsZero() {
		return
	}
	path := []any{table, i, oldKey}
	if !reflect.ValueOf(dst).Elem().IsZero() {
		c.add(path, fmt.Sprintf("%s.%s is the former name of %s.%s: keep only %s", table, oldKey, table, newKey, newKey))
		return
	}
	*dst = *old
	c.warn(path, fmt.Sprintf("%s.%s is now called %s; the old name still works for now", table, oldKey, newKey))
}

// addAtKey places msg at the key of path rather than its value: the key is
// what is wrong.
func (c *checker) addAtKey(path []any, msg string) {
	if p, ok := c.idx.keys[pathKey(path...)]; ok {
		c.errs = append(c.errs, &ConfigError{File: c.idx.file, Line: p.line, Col: p.col, Msg: msg})
		return
	}
	c.add(path, msg)
}

// warn records a warning placed like an error: the file is loaded anyway.
func (c *checker) warn(path []any, msg string) {
	c.warnings = append(c.warnings, c.idx.errorAt(path, msg).Error())
}

// size returns a byte size as text for ParseBytes: a string as written or
// a whole number of bytes.
func (c *checker) size(v any, path ...any) (string, bool) {
	switch v := v.(type) {
	case nil:
		return "", false
	case string:
		if _, err := throttle.ParseBytes(v); err != nil {
			c.add(path, fmt.Sprintf("%s: %v", dotted(path), err))
			return "", false
		}
		return v, true
	case int64:
		if v < 0 {
			c.add(path, fmt.Sprintf("%s: %d is negative", dotted(path), v))
			return "", false
		}
		return strconv.FormatInt(v, 10), true
	default:
		c.add(path, fmt.Sprintf("%s: want a size such as \"10MiB\" or a number of bytes", dotted(path)))
		return "", false
	}
}

func (c *checker) result() error {
	slices.SortStableFunc(c.errs, func(a, b *ConfigError) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
	errs := make([]error, len(c.errs))
	for i, e := range c.errs {
		errs[i] = e
	}
	return errors.Join(errs...)
}

func dotted(path []any) string {
	parts := make([]string, 0, len(path))
	for _, p := range path {
		if _, isIndex := p.(int); !isIndex {
			parts = append(parts, fmt.Sprint(p))
		}
	}
	return strings.Join(parts, ".")
}

// unknownRuleKeys turns go-toml's unknown keys of the rules part into
// ConfigErrors; those outside it are the settings', which checker.settings
// checks.
func unknownRuleKeys(name string, strict *toml.StrictMissingError) []*ConfigError {
	var errs []*ConfigError
	for _, e := range strict.Errors {
		k := e.Key()
		if len(k) < 2 || !slices.Contains(ruleKeys, k[0]) {
			continue
		}
		line, col := e.Position()
		msg := "unknown key " + strings.Join(k, ".")
		if near := DidYouMean(k[len(k)-1], knownKeys(reflect.TypeFor[fileDoc](), k[:len(k)-1])); near != "" {
			msg += " (did you mean " + near + "?)"
		}
		errs = append(errs, &ConfigError{File: name, Line: line, Col: col, Msg: msg})
	}
	return errs
}

// decodeError turns go-toml's other errors (syntax, wrong types) into
// ConfigErrors.
func decodeError(name string, err error) error {
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, col := de.Position()
		msg := strings.TrimPrefix(de.Error(), "toml: ")
		// go-toml names our Go types ("into struct field
		// rules.fileDoc.Concurrency of type int"): say what the key wants.
		if m := wrongType.FindStringSubmatch(msg); m != nil {
			article := "a "
			if strings.ContainsAny(m[1][:1], "aeiou") {
				article = "an "
			}
			msg = "want " + wantedType(m[2]) + ", not " + article + m[1]
		}
		if k := de.Key(); len(k) > 0 && !strings.Contains(msg, strings.Join(k, ".")) {
			msg = strings.Join(k, ".") + ": " + msg
		}
		return &ConfigError{File: name, Line: line, Col: col, Msg: msg}
	}
	return &ConfigError{File: name, Line: 1, Col: 1, Msg: err.Error()}
}

var wrongType = regexp.MustCompile(`cannot decode TOML (\w+) into (?:struct field \S+|a Go value) of type (\S+)`)

// wantedType names a Go type the way the file's author writes values.
func wantedType(goType string) string {
	switch {
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"), strings.HasPrefix(goType, "*int"):
		return "a whole number"
	case goType == "bool", goType == "*bool":
		return "true or false"
	case goType == "string":
		return "a string in quotes"
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map["):
		return "a table"
	}
	return "another kind of value"
}

// knownKeys lists the keys a table of the document accepts, at path (the
// keys leading to it: nil for the top level, ["rule"] in a [[rule]]), for
// a suggestion after a typo. A table of free keys (headers) has none.
func knownKeys(t reflect.Type, path []string) []string {
	for t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			if len(path) == 0 {
				keys = append(keys, knownKeys(f.Type, nil)...)
			} else if sub := knownKeys(f.Type, path); sub != nil {
				return sub
			}
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if len(path) == 0 {
			keys = append(keys, name)
		} else if name == path[0] {
			return knownKeys(f.Type, path[1:])
		}
	}
	if len(path) > 0 {
		return nil
	}
	return keys
}
