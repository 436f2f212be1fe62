package rules

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/linkpatrol/linkpatrol/throttle"
)

// DefaultConfigFile is the config file read from the working directory
// when no --config is given and it exists.
const DefaultConfigFile = "linkpatrol.toml"

// File is a loaded config file: every setting the command line has, plus
// the rules. The command line maps its flags onto it, flags winning; IsSet
// says which keys the file set, so a flag's own default does not override
// the file and the file does not override a flag the user gave.
type File struct {
	Path string // as given to LoadConfig

	Start          []string // start URLs (http, https) or directories
	DB             string
	Concurrency    int
	PerHost        int
	Timeout        time.Duration
	MaxSize        int64
	MaxTime        time.Duration
	UserAgent      string
	Format         string
	Output         []string // report files; the format comes from the extension
	All            bool
	Quiet          bool
	Recheck        Recheck
	Ghost          time.Duration
	ReportAfter    ReportAfter
	FailOn         string // which problems make the exit code 1; the command checks the value
	KeepPasses     int
	CheckFragments bool
	Sitemaps       []string
	RobotsSitemaps bool // also seed from the Sitemap: lines of robots.txt
	SitemapLimit   int  // most URLs taken from sitemaps (0 = the command's default)
	// Root is the site root of files checked one by one, and BaseURL where
	// a checked directory is published (checked against its files).
	Root, BaseURL string
	CommitBatch   int
	MaxRedirects  int // redirects followed before a link is "too many redirects"
	CommitEvery   time.Duration
	Insecure      bool // skip TLS certificate verification

	// Warnings are things to fix that do not stop the file from loading,
	// each "file:line:col: message": a key under its former name.
	Warnings []string

	// Config is the rules part. Its Start is left empty: the command sets
	// it to the start URLs it settles on before calling New.
	Config Config

	index *posIndex
}

// ReportAfter keeps a problem out of the report until it has lasted this
// long or this many failed passes, or both when both are set (both zero: at
// once), as --report-after does.
type ReportAfter struct {
	Duration time.Duration
	Passes   int
}

// ParseReportAfter reads "3" (passes), a duration such as "36h" or "2d",
// or both joined by "+" ("3+2d"), as --report-after reads them.
func ParseReportAfter(s string) (ReportAfter, error) {
	var ra ReportAfter
	for part := range strings.SplitSeq(s, "+") {
		part = strings.TrimSpace(part)
		if part != "" && strings.Trim(part, "0123456789") == "" {
			n, err := strconv.Atoi(part)
			if err != nil {
				return ReportAfter{}, fmt.Errorf("report_after %q: %w", s, err)
			}
			ra.Passes = n
			continue
		}
		d, err := throttle.ParseDuration(part)
		if err != nil {
			return ReportAfter{}, fmt.Errorf("report_after: want a count of failed passes (3), a duration (\"36h\") or both (\"3+2d\"): %w", err)
		}
		ra.Duration = d
	}
	return ra, nil
}

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
func LoadConfig(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return ParseConfig(path, data, os.LookupEnv)
}

// The document as go-toml decodes it. Durations and sizes are `any` so a
// number where a string belongs gets a message of our own, with its place.
type fileDoc struct {
	Start           []string            `toml:"start"`
	DB              string              `toml:"db"`
	Concurrency     int                 `toml:"concurrency"`
	PerHost         int                 `toml:"per_host"`
	Timeout         any                 `toml:"timeout"`
	MaxSize         any                 `toml:"max_size"`
	MaxTime         any                 `toml:"max_time"`
	UserAgent       string              `toml:"user_agent"`
	Format          string              `toml:"format"`
	Output          []string            `toml:"output"`
	All             bool                `toml:"all"`
	Quiet           bool                `toml:"quiet"`
	Recheck         docRecheck          `toml:"recheck"`
	Ghost           any                 `toml:"ghost"`
	ReportAfter     any                 `toml:"report_after"`
	FailOn          string              `toml:"fail_on"`
	KeepPasses      int                 `toml:"keep_passes"`
	CheckFragments  bool                `toml:"check_fragments"`
	Sitemaps        []string            `toml:"sitemaps"`
	RobotsSitemaps  bool                `toml:"robots_sitemaps"`
	SitemapLimit    int                 `toml:"sitemap_limit"`
	Root            string              `toml:"root"`
	BaseURL         string              `toml:"base_url"`
	CommitBatch     int                 `toml:"commit_batch"`
	MaxRedirects    int                 `toml:"max_redirects"`
	CommitEvery     any                 `toml:"commit_every"`
	Accept          []int               `toml:"accept"`
	Header          []string            `toml:"header"`
	Offline         bool                `toml:"offline"`
	Insecure        bool                `toml:"insecure"`
	Include         []string            `toml:"include"`
	Exclude         []string            `toml:"exclude"`
	Rule            []docRule           `toml:"rule"`
	Rewrite         []docRewrite        `toml:"rewrite"`
	Unwrap          []string            `toml:"unwrap"`
	DropParams      []string            `toml:"drop_params"`
	Aliases         map[string][]string `toml:"aliases"`
	AliasStartHosts bool                `toml:"alias_start_hosts"`
	StripIndex      bool                `toml:"strip_index"`
	CollapseSlashes bool                `toml:"collapse_slashes"`
	Host            []docHost           `toml:"host"`
	docTraps
	KeepSessionIDs bool `toml:"keep_session_ids"`
}

// docTraps are the spider-trap limits, at the top level and in a [[rule]].
type docTraps struct {
	MaxHops          *int `toml:"max_hops"`
	MaxPathSegments  *int `toml:"max_path_segments"`
	MaxPathRepeats   *int `toml:"max_path_repeats"`
	MaxQueryVariants *int `toml:"max_query_variants"`
	MaxTemplateRun   *int `toml:"max_template_run"`
}

type docRecheck struct {
	OK           any `toml:"ok"`
	Pages        any `toml:"pages"`
	Broken       any `toml:"broken"`
	Transient    any `toml:"transient"`
	Unverifiable any `toml:"unverifiable"`
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
// os.LookupEnv) and stays in the returned Config for New.
func ParseConfig(name string, data []byte, lookupEnv func(string) (string, bool)) (*File, error) {
	var doc fileDoc
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, decodeError(name, err)
	}
	idx, err := buildIndex(name, data)
	if err != nil {
		return nil, err
	}
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	f := &File{
		Path: name, Start: doc.Start, DB: doc.DB, Concurrency: doc.Concurrency,
		PerHost: doc.PerHost, UserAgent: doc.UserAgent, Format: doc.Format,
		Output: doc.Output, All: doc.All, Quiet: doc.Quiet, KeepPasses: doc.KeepPasses, FailOn: doc.FailOn,
		CheckFragments: doc.CheckFragments, Sitemaps: doc.Sitemaps,
		RobotsSitemaps: doc.RobotsSitemaps, SitemapLimit: doc.SitemapLimit,
		Root: doc.Root, BaseURL: doc.BaseURL,
		CommitBatch: doc.CommitBatch, MaxRedirects: doc.MaxRedirects, Insecure: doc.Insecure,
		index: idx,
	}
	c := &checker{idx: idx}
	c.duration(&f.Timeout, doc.Timeout, "timeout")
	c.duration(&f.MaxTime, doc.MaxTime, "max_time")
	c.duration(&f.Ghost, doc.Ghost, "ghost")
	c.duration(&f.CommitEvery, doc.CommitEvery, "commit_every")
	c.duration(&f.Recheck.OK, doc.Recheck.OK, "recheck", "ok")
	c.duration(&f.Recheck.Pages, doc.Recheck.Pages, "recheck", "pages")
	c.duration(&f.Recheck.Broken, doc.Recheck.Broken, "recheck", "broken")
	c.duration(&f.Recheck.Transient, doc.Recheck.Transient, "recheck", "transient")
	c.duration(&f.Recheck.Unverifiable, doc.Recheck.Unverifiable, "recheck", "unverifiable")
	if s, ok := c.size(doc.MaxSize, "max_size"); ok {
		var z throttle.Size
		if err := z.Set(s); err != nil {
			c.add([]any{"max_size"}, fmt.Sprintf("max_size: %v", err))
		} else if err := CheckSetting("max_size", "max_size", int64(z)); err != nil {
			c.add([]any{"max_size"}, err.Error())
		} else {
			f.MaxSize = int64(z)
		}
	}
	switch v := doc.ReportAfter.(type) {
	case nil:
	case int64:
		if v < 0 {
			c.add([]any{"report_after"}, "report_after is negative")
		}
		f.ReportAfter = ReportAfter{Passes: int(v)}
	case string:
		ra, err := ParseReportAfter(v)
		if err != nil {
			c.add([]any{"report_after"}, err.Error())
		}
		f.ReportAfter = ra
	default:
		c.add([]any{"report_after"}, "report_after: want a count of failed passes (3) or a duration (\"36h\")")
	}
	for _, k := range []struct {
		key string
		v   any
	}{
		{"concurrency", f.Concurrency}, {"per_host", f.PerHost},
		{"keep_passes", f.KeepPasses}, {"sitemap_limit", f.SitemapLimit},
		{"commit_batch", f.CommitBatch}, {"max_redirects", f.MaxRedirects},
		{"timeout", f.Timeout}, {"commit_every", f.CommitEvery},
	} {
		if !idx.has(k.key) {
			continue
		}
		if err := CheckSetting(k.key, k.key, k.v); err != nil {
			c.add([]any{k.key}, err.Error())
		}
	}
	if idx.has("concurrency", "per_host") && f.PerHost > f.Concurrency {
		c.add([]any{"per_host"}, fmt.Sprintf("per_host %d is more than concurrency %d, which bounds it", f.PerHost, f.Concurrency))
	}
	for i, s := range f.Start {
		if u, _, ok := splitScheme(s); ok && len(u) > 1 {
			if u != "http" && u != "https" {
				c.add([]any{"start", i}, fmt.Sprintf("start %q: want an http(s) URL or a directory", s))
			} else if _, err := Resolve(nil, s); err != nil {
				c.add([]any{"start", i}, fmt.Sprintf("start %q: %v", s, err))
			}
		}
	}
	for i, s := range f.Sitemaps {
		if u, err := Resolve(nil, s); err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			c.add([]any{"sitemaps", i}, fmt.Sprintf("sitemap %q: want an http(s) URL", s))
		}
	}
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

func (c *checker) engineConfig(name string, doc *fileDoc, lookupEnv func(string) (string, bool)) Config {
	cfg := Config{
		Include: doc.Include, Exclude: doc.Exclude, Unwrap: doc.Unwrap,
		DropParams: doc.DropParams, Aliases: doc.Aliases,
		AliasStartHosts: doc.AliasStartHosts, StripIndex: doc.StripIndex,
		CollapseSlashes: doc.CollapseSlashes, LookupEnv: lookupEnv,
		KeepSessionIDs: doc.KeepSessionIDs, Accept: doc.Accept, Offline: doc.Offline,
	}
	for i, raw := range doc.Header {
		h, err := ParseHeaderFlag(raw)
		if err != nil {
			c.add([]any{"header", i}, "header "+err.Error())
			continue
		}
		cfg.Headers = append(cfg.Headers, h)
	}
	// A limit the file leaves out is 0 here; the command starts from
	// DefaultTraps and takes only the keys the file sets (File.IsSet).
	var err error
	cfg.Traps, _, err = Rule{MaxHops: doc.MaxHops, MaxPathSegments: doc.MaxPathSegments,
		MaxPathRepeats: doc.MaxPathRepeats, MaxQueryVariants: doc.MaxQueryVariants,
		MaxTemplateRun: doc.MaxTemplateRun}.trapLimits(Traps{})
	if fe := (*fieldError)(nil); errors.As(err, &fe) {
		c.add([]any{fe.field[0]}, fe.Error())
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

// warn records a warning placed like an error: the file is loaded anyway.
func (c *checker) warn(path []any, msg string) {
	c.warnings = append(c.warnings, c.idx.errorAt(path, msg).Error())
}

func (c *checker) duration(dst *time.Duration, v any, path ...any) {
	switch v := v.(type) {
	case nil:
	case string:
		if err := (*throttle.Duration)(dst).Set(v); err != nil {
			c.add(path, fmt.Sprintf("%s: %v", dotted(path), err))
		}
	default:
		c.add(path, fmt.Sprintf("%s: want a duration in quotes, such as \"30s\", \"2h\" or \"7d\"", dotted(path)))
	}
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

// decodeError turns go-toml's errors (syntax, unknown keys, wrong types)
// into ConfigErrors.
func decodeError(name string, err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) {
		errs := make([]error, 0, len(strict.Errors))
		for _, e := range strict.Errors {
			line, col := e.Position()
			msg := "unknown key " + strings.Join(e.Key(), ".")
			if k := e.Key(); len(k) > 0 {
				if near := DidYouMean(k[len(k)-1], knownKeys(reflect.TypeFor[fileDoc](), k[:len(k)-1])); near != "" {
					msg += " (did you mean " + near + "?)"
				}
			}
			errs = append(errs, &ConfigError{File: name, Line: line, Col: col, Msg: msg})
		}
		return errors.Join(errs...)
	}
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

// posIndex maps the path of every key in the document ("rule", 2,
// "regex") to where its key and its value are.
type posIndex struct {
	file string
	keys map[string]position
	vals map[string]position
}

type position struct{ line, col int }

func pathKey(parts ...any) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(0)
		}
		if n, ok := p.(int); ok {
			b.WriteByte('#')
			b.WriteString(strconv.Itoa(n))
		} else {
			fmt.Fprint(&b, p)
		}
	}
	return b.String()
}

func (x *posIndex) has(keys ...string) bool {
	for _, k := range keys {
		if _, ok := x.keys[pathKey(k)]; !ok {
			return false
		}
	}
	return true
}

// errorAt places msg at the value of path, or at its nearest ancestor
// that the file spells out.
func (x *posIndex) errorAt(path []any, msg string) *ConfigError {
	for n := len(path); n > 0; n-- {
		k := pathKey(path[:n]...)
		if p, ok := x.vals[k]; ok {
			return &ConfigError{File: x.file, Line: p.line, Col: p.col, Msg: msg}
		}
		if p, ok := x.keys[k]; ok {
			return &ConfigError{File: x.file, Line: p.line, Col: p.col, Msg: msg}
		}
	}
	return &ConfigError{File: x.file, Line: 1, Col: 1, Msg: msg}
}

// source is "file:line" of the table of an array item, for rule sources.
func (x *posIndex) source(name string, kind string, i int) string {
	k := pathKey(kind, i)
	p, ok := x.keys[k]
	if !ok {
		p, ok = x.vals[k]
	}
	if !ok {
		return name
	}
	return fmt.Sprintf("%s:%d", name, p.line)
}

// buildIndex walks the document with go-toml's parser, which keeps the
// byte range of every key and value. The decoder has already accepted the
// document, so a parse error here would be a bug in one of the two.
func buildIndex(name string, data []byte) (*posIndex, error) {
	x := &posIndex{file: name, keys: map[string]position{}, vals: map[string]position{}}
	var p unstable.Parser
	p.Reset(data)
	arrays := map[string]int{} // array-table path -> tables so far
	var table []any
	resolve := func(parts []string, arrayTable bool) []any {
		var path []any
		for i, part := range parts {
			path = append(path, part)
			if arrayTable && i == len(parts)-1 {
				break
			}
			if n, ok := arrays[pathKey(path...)]; ok {
				path = append(path, n-1)
			}
		}
		return path
	}
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table:
			parts, first := keyParts(e.Key())
			table = resolve(parts, false)
			x.keys[pathKey(table...)] = x.pos(&p, first)
		case unstable.ArrayTable:
			parts, first := keyParts(e.Key())
			base := resolve(parts, true)
			n := arrays[pathKey(base...)]
			arrays[pathKey(base...)] = n + 1
			x.keys[pathKey(base...)] = x.pos(&p, first)
			table = append(base, n)
			x.keys[pathKey(table...)] = x.pos(&p, first)
		case unstable.KeyValue:
			x.keyValue(&p, table, e)
		}
	}
	if err := p.Error(); err != nil {
		return nil, &ConfigError{File: name, Line: 1, Col: 1, Msg: err.Error()}
	}
	return x, nil
}

func (x *posIndex) keyValue(p *unstable.Parser, prefix []any, kv *unstable.Node) {
	parts, first := keyParts(kv.Key())
	path := slices.Clone(prefix)
	for _, part := range parts {
		path = append(path, part)
	}
	x.keys[pathKey(path...)] = x.pos(p, first)
	x.value(p, path, kv.Value())
}

func (x *posIndex) value(p *unstable.Parser, path []any, v *unstable.Node) {
	if v.Raw.Length > 0 {
		x.vals[pathKey(path...)] = x.pos(p, v)
	}
	switch v.Kind {
	case unstable.InlineTable:
		it := v.Children()
		for it.Next() {
			if n := it.Node(); n.Kind == unstable.KeyValue {
				x.keyValue(p, path, n)
			}
		}
	case unstable.Array:
		it := v.Children()
		i := 0
		for it.Next() {
			n := it.Node()
			if n.Kind == unstable.Comment {
				continue
			}
			elem := append(slices.Clone(path), i)
			x.keys[pathKey(elem...)] = x.pos(p, n)
			x.value(p, elem, n)
			i++
		}
	}
}

func keyParts(it unstable.Iterator) ([]string, *unstable.Node) {
	var parts []string
	var first *unstable.Node
	for it.Next() {
		n := it.Node()
		if first == nil {
			first = n
		}
		parts = append(parts, string(n.Data))
	}
	return parts, first
}

func (x *posIndex) pos(p *unstable.Parser, n *unstable.Node) position {
	if n == nil || n.Raw.Length == 0 && n.Raw.Offset == 0 {
		return position{1, 1}
	}
	s := p.Shape(n.Raw)
	return position{s.Start.Line, s.Start.Column}
}
