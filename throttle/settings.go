package throttle

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Settings are the politeness limits for one limiter key (a host, or a group
// of hosts when Config.Key groups them). The zero value limits nothing and
// retries nothing. Negative values are treated as zero.
type Settings struct {
	// Rate is the token bucket refill in requests per second (0 = unlimited);
	// Burst is the bucket size (at least 1 when Rate is set).
	Rate  float64
	Burst int
	// WindowMax and Window are the flood limit: at most WindowMax request
	// starts in any half-open interval of length Window (0 = no limit).
	WindowMax int
	Window    time.Duration
	// MaxInFlight caps the requests to the host at the same time (0 = unlimited).
	MaxInFlight int
	// BytesPerSec paces body reads from the host (0 = unlimited).
	BytesPerSec int64
	// QuotaRequests and QuotaBytes bound what one pass may take from the host
	// (0 = unlimited). Past them Reserve answers ErrQuota.
	QuotaRequests int64
	QuotaBytes    int64
	// CrawlDelay is the minimum gap between request starts. A robots.txt
	// Crawl-delay raises it unless IgnoreRobots or OwnCrawlDelay is set.
	CrawlDelay time.Duration
	// OwnCrawlDelay says CrawlDelay is the site owner's choice for one of
	// the site's own hosts: it replaces robots.txt's Crawl-delay instead
	// of being raised by it (robots.txt's rules still apply).
	OwnCrawlDelay bool
	// MaxPause caps how long the host may be paused by Retry-After (and how
	// long one backoff step may be). A pause beyond it defers the host's
	// URLs to the next pass; so does a robots.txt Crawl-delay longer than
	// it, unless CapCrawlDelay. 0 = no cap.
	MaxPause time.Duration
	// CapCrawlDelay is for the site's own hosts: a robots.txt Crawl-delay
	// longer than MaxPause is kept at MaxPause, since the owner asked for
	// the check (and may put a crawl delay of their own in its place).
	// Another site's Crawl-delay is never shortened: when it would keep a
	// request waiting longer than MaxPause, the host is deferred like a
	// longer Retry-After (see Reserve, Deferred).
	CapCrawlDelay bool
	// IgnoreRobots is the user's choice for hosts they own: robots.txt rules
	// and its Crawl-delay are not applied.
	IgnoreRobots bool
	// Adaptive slows the host down as its response latency climbs (longer
	// gaps, fewer in flight) and speeds it up again as it recovers, never
	// beyond the limits above.
	Adaptive bool
	// MaxRetries bounds how often one URL is tried again after a 429, a 503,
	// a timeout or a connection error (0 = never).
	MaxRetries int
}

// StartHostDefaults are the settings of the hosts being audited: no rate
// limit beyond the run's per-host cap, but still listening to the server
// (Retry-After, backoff). The adaptive slowdown is off: latency rises with
// concurrency on any server, so it would halve the crawl of a site its owner
// asked to check briskly; the owner turns it on (adaptive = true).
func StartHostDefaults() Settings {
	return Settings{MaxPause: 10 * time.Minute, CapCrawlDelay: true, MaxRetries: 2}
}

// OtherHostDefaults are the settings of third-party hosts: about one
// request a second, two in flight.
func OtherHostDefaults() Settings {
	return Settings{Rate: 1, Burst: 2, MaxInFlight: 2, MaxPause: 2 * time.Minute, Adaptive: true, MaxRetries: 1}
}

// String lists the limits that are set, for people (explain, -v): "rate
// 1/s burst 2, in flight 2, max pause 2m, retries 1, adaptive".
func (s Settings) String() string {
	var parts []string
	add := func(format string, args ...any) { parts = append(parts, fmt.Sprintf(format, args...)) }
	if s.Rate > 0 {
		add("rate %s/s burst %d", trimFloat(s.Rate), max(s.Burst, 1))
	} else {
		add("rate unlimited")
	}
	if s.WindowMax > 0 {
		add("window %d/%s", s.WindowMax, FormatDuration(s.Window))
	}
	if s.MaxInFlight > 0 {
		add("in flight %d", s.MaxInFlight)
	} else {
		add("in flight per --per-host")
	}
	if s.BytesPerSec > 0 {
		add("%s/s", FormatBytes(s.BytesPerSec))
	}
	if s.QuotaRequests > 0 {
		add("quota %d requests", s.QuotaRequests)
	}
	if s.QuotaBytes > 0 {
		add("quota %s", FormatBytes(s.QuotaBytes))
	}
	switch {
	case s.OwnCrawlDelay:
		add("crawl delay %s (in place of robots.txt's)", FormatDuration(s.CrawlDelay))
	case s.CrawlDelay > 0:
		add("crawl delay %s", FormatDuration(s.CrawlDelay))
	}
	if s.MaxPause > 0 {
		add("max pause %s", FormatDuration(s.MaxPause))
	}
	if s.MaxRetries > 0 {
		add("retries %d", s.MaxRetries)
	}
	if s.Adaptive {
		add("adaptive")
	}
	if s.IgnoreRobots {
		add("robots.txt ignored")
	}
	return strings.Join(parts, ", ")
}

// normalized turns every meaningless value into "no limit" so the rest of
// the package can test for > 0 only.
func (s Settings) normalized() Settings {
	if !(s.Rate > 0) || math.IsInf(s.Rate, 0) {
		s.Rate = 0
	}
	if s.Rate > 0 && s.Burst < 1 {
		s.Burst = 1
	}
	if s.WindowMax <= 0 || s.Window <= 0 {
		s.WindowMax, s.Window = 0, 0
	}
	s.MaxInFlight = max(s.MaxInFlight, 0)
	s.BytesPerSec = max(s.BytesPerSec, 0)
	s.QuotaRequests = max(s.QuotaRequests, 0)
	s.QuotaBytes = max(s.QuotaBytes, 0)
	s.CrawlDelay = max(s.CrawlDelay, 0)
	s.MaxPause = max(s.MaxPause, 0)
	s.MaxRetries = max(s.MaxRetries, 0)
	return s
}

// unlimited is the spelling that turns a limit off in every parser.
const unlimited = "unlimited"

// ParseRate reads a request rate such as "5/s", "300/m", "0.5/s", "10/1m30s"
// or "unlimited" (also "0"), and returns requests per second (0 = unlimited).
// The unit after the slash is s, m, h or a Go duration.
func ParseRate(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if isUnlimited(s) {
		return 0, nil
	}
	num, per, err := splitPer(s)
	if err != nil {
		return 0, fmt.Errorf("rate %q: %w", s, err)
	}
	n, err := parseDecimal(num)
	if err != nil {
		return 0, fmt.Errorf("rate %q: %w", s, err)
	}
	if n == 0 {
		return 0, nil
	}
	r := n / per.Seconds()
	if r <= 0 || math.IsInf(r, 0) {
		return 0, fmt.Errorf("rate %q: out of range", s)
	}
	return r, nil
}

// ParseWindow reads a flood limit such as "100/1m" (at most 100 requests in
// any minute) or "unlimited" (also "0").
func ParseWindow(s string) (int, time.Duration, error) {
	s = strings.TrimSpace(s)
	if isUnlimited(s) {
		return 0, 0, nil
	}
	num, per, err := splitPer(s)
	if err != nil {
		return 0, 0, fmt.Errorf("window %q: %w", s, err)
	}
	if !allDigits(num) {
		return 0, 0, fmt.Errorf("window %q: count %q is not a whole number", s, num)
	}
	n, err := strconv.Atoi(num)
	if err != nil {
		return 0, 0, fmt.Errorf("window %q: count: %w", s, err)
	}
	if n == 0 {
		return 0, 0, nil
	}
	return n, per, nil
}

// ParseBytes reads a byte size such as "512KiB", "2MB", "1.5M", "4096" or
// "unlimited" (also "0"). Units are case-insensitive; k, M, G and T are
// powers of 1000 with or without a trailing B, Ki, Mi, Gi and Ti are powers
// of 1024. Fractions are rounded down; a non-zero size below one byte is an
// error.
func ParseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if isUnlimited(s) {
		return 0, nil
	}
	if strings.HasPrefix(s, "-") {
		return 0, fmt.Errorf("size %q is negative", s)
	}
	end := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if end < 0 {
		end = len(s)
	}
	num, unit := s[:end], strings.ToLower(strings.TrimSpace(s[end:]))
	mult, ok := byteUnits[unit]
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit %q", s, unit)
	}
	if allDigits(num) {
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n > math.MaxInt64/mult {
			return 0, fmt.Errorf("size %q: out of range", s)
		}
		return n * mult, nil
	}
	f, err := parseDecimal(num)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	v := f * float64(mult)
	if v >= math.MaxInt64 {
		return 0, fmt.Errorf("size %q: out of range", s)
	}
	if f > 0 && v < 1 {
		return 0, fmt.Errorf("size %q: less than one byte", s)
	}
	return int64(v), nil
}

var byteUnits = map[string]int64{
	"": 1, "b": 1, "byte": 1, "bytes": 1,
	"k": 1e3, "kb": 1e3, "ki": 1 << 10, "kib": 1 << 10,
	"m": 1e6, "mb": 1e6, "mi": 1 << 20, "mib": 1 << 20,
	"g": 1e9, "gb": 1e9, "gi": 1 << 30, "gib": 1 << 30,
	"t": 1e12, "tb": 1e12, "ti": 1 << 40, "tib": 1 << 40,
}

func isUnlimited(s string) bool {
	return strings.EqualFold(s, unlimited) || s == "0"
}

// splitPer splits "N/unit" into N and the length of the unit.
func splitPer(s string) (string, time.Duration, error) {
	num, unit, ok := strings.Cut(s, "/")
	if !ok {
		return "", 0, errors.New(`want "count/unit", for example "5/s" or "100/1m"`)
	}
	num, unit = strings.TrimSpace(num), strings.TrimSpace(unit)
	var per time.Duration
	switch unit {
	case "s":
		per = time.Second
	case "m":
		per = time.Minute
	case "h":
		per = time.Hour
	default:
		d, err := time.ParseDuration(unit)
		if err != nil {
			return "", 0, fmt.Errorf("unit %q is not s, m, h or a duration", unit)
		}
		per = d
	}
	if per <= 0 {
		return "", 0, fmt.Errorf("unit %q is not a positive duration", unit)
	}
	return num, per, nil
}

// parseDecimal accepts plain decimals only ("12", "0.5", "3."): strconv
// alone would also take signs, exponents, hex, "Inf" and "NaN".
func parseDecimal(s string) (float64, error) {
	digits := strings.Count(s, ".") <= 1 && strings.Trim(s, ".") != ""
	for _, r := range s {
		if (r < '0' || r > '9') && r != '.' {
			digits = false
		}
	}
	if !digits {
		return 0, fmt.Errorf("%q is not a decimal number", s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%q is out of range", s)
	}
	return f, nil
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
