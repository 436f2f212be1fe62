package throttle

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// The value types below are how a politeness setting (and every other
// duration or size of a run) is read, alike from the command line
// (pflag.Value: Set, String, Type) and from the config file
// (encoding.TextUnmarshaler): one parser, so --ghost 7d means what
// ghost = "7d" means. String gives back what Set reads.

// Duration is a duration with days and weeks: ParseDuration.
type Duration time.Duration

// Set reads s with ParseDuration.
func (d *Duration) Set(s string) error {
	v, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// UnmarshalText reads the file's value as Set reads the flag's.
func (d *Duration) UnmarshalText(b []byte) error { return d.Set(string(b)) }

// String is "0" for no duration, which --help leaves out as a default.
func (d Duration) String() string {
	if d == 0 {
		return "0"
	}
	return FormatDuration(time.Duration(d))
}

// Type names the value in --help.
func (d *Duration) Type() string { return "duration" }

// Size is a byte size: ParseBytes.
type Size int64

// Set reads s with ParseBytes.
func (z *Size) Set(s string) error {
	n, err := ParseBytes(s)
	if err != nil {
		return err
	}
	*z = Size(n)
	return nil
}

// UnmarshalText reads the file's value as Set reads the flag's.
func (z *Size) UnmarshalText(b []byte) error { return z.Set(string(b)) }

// String is "0" for no size, which --help leaves out as a default.
func (z Size) String() string {
	if z == 0 {
		return "0"
	}
	return FormatBytes(int64(z))
}

// Type names the value in --help.
func (z *Size) Type() string { return "size" }

// Rate is a request rate in requests per second: ParseRate.
type Rate float64

// Set reads s with ParseRate.
func (r *Rate) Set(s string) error {
	v, err := ParseRate(s)
	if err != nil {
		return err
	}
	*r = Rate(v)
	return nil
}

// UnmarshalText reads the file's value as Set reads the flag's.
func (r *Rate) UnmarshalText(b []byte) error { return r.Set(string(b)) }

// String is "unlimited" for no rate, else the rate in whole requests per
// second, minute or hour where it is one ("5/s", "20/m"), or in requests
// per second exactly: what ParseRate reads back as the same rate.
func (r Rate) String() string {
	if r <= 0 {
		return unlimited
	}
	for _, per := range []struct {
		unit string
		secs float64
	}{{"s", 1}, {"m", 60}, {"h", 3600}} {
		n := float64(r) * per.secs
		if whole := math.Round(n); whole >= 1 && math.Abs(n-whole) < 1e-9*whole {
			return strconv.FormatFloat(whole, 'f', -1, 64) + "/" + per.unit
		}
	}
	return strconv.FormatFloat(float64(r), 'f', -1, 64) + "/s"
}

// Type names the value in --help.
func (r *Rate) Type() string { return "rate" }

// Window is a flood limit, at most Max requests in any Per: ParseWindow.
type Window struct {
	Max int
	Per time.Duration
}

// Set reads s with ParseWindow.
func (w *Window) Set(s string) error {
	n, per, err := ParseWindow(s)
	if err != nil {
		return err
	}
	*w = Window{n, per}
	return nil
}

// UnmarshalText reads the file's value as Set reads the flag's.
func (w *Window) UnmarshalText(b []byte) error { return w.Set(string(b)) }

// String is "unlimited" for no window, else "100/1m".
func (w Window) String() string {
	if w.Max <= 0 {
		return unlimited
	}
	return strconv.Itoa(w.Max) + "/" + FormatDuration(w.Per)
}

// Type names the value in --help.
func (w *Window) Type() string { return "window" }

// ParseDuration reads a Go duration ("90s", "1h30m") that may also use days
// and weeks ("7d", "2w", "1d12h"), which recheck intervals need. Negative
// durations are refused.
func ParseDuration(s string) (time.Duration, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return 0, errors.New("empty duration")
	}
	var total time.Duration
	rest := in
	for rest != "" {
		i := 0
		for i < len(rest) && ('0' <= rest[i] && rest[i] <= '9' || rest[i] == '.') {
			i++
		}
		if i == 0 || i == len(rest) || (rest[i] != 'd' && rest[i] != 'w') {
			break
		}
		n, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil {
			return 0, fmt.Errorf("duration %q: %q is not a number", s, rest[:i])
		}
		unit := 24 * time.Hour
		if rest[i] == 'w' {
			unit *= 7
		}
		if n*float64(unit) > float64(1<<62) {
			return 0, fmt.Errorf("duration %q is too long", s)
		}
		total += time.Duration(n * float64(unit))
		rest = rest[i+1:]
	}
	if rest != "" {
		d, err := time.ParseDuration(rest)
		if err != nil {
			return 0, fmt.Errorf("duration %q: want a number and a unit (ms, s, m, h, d, w), e.g. \"30s\" or \"7d\"", s)
		}
		if d < 0 {
			return 0, fmt.Errorf("duration %q is negative", s)
		}
		total += d
	}
	return total, nil
}

// FormatDuration prints a setting's duration the way people write it, in a
// form ParseDuration reads back: "7d", "1d12h", "10m" rather than
// "168h0m0s".
func FormatDuration(d time.Duration) string {
	const day = 24 * time.Hour
	days := ""
	if d >= day {
		days = strconv.FormatInt(int64(d/day), 10) + "d"
		d %= day
		if d == 0 {
			return days
		}
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return days + s
}

// FormatBytes prints a size in the largest unit that divides it evenly, in
// a form ParseBytes reads back: "10MiB", "2GB", "1500 bytes". It is for
// settings, which must read back as the same number, and not for measured
// amounts: exact, 1,234,567 bytes read would print as "1234567 bytes",
// which is why the command rounds those ("1.2 MB") with a formatter of its
// own. #15 asked for one formatter; the two answer different questions.
func FormatBytes(n int64) string {
	for _, u := range []struct {
		size int64
		name string
	}{{1 << 30, "GiB"}, {1e9, "GB"}, {1 << 20, "MiB"}, {1e6, "MB"}, {1 << 10, "KiB"}, {1e3, "kB"}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

func trimFloat(f float64) string {
	s := fmt.Sprintf("%.3f", f)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
