package rules

import (
	"fmt"
	"time"

	"github.com/linkpatrol/linkpatrol/throttle"
)

// Duration is a setting's duration, read alike from the command line
// (pflag.Value) and the config file (encoding.TextUnmarshaler): Go's units
// plus d and w, so that --ghost 7d means what ghost = "7d" means.
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
	return formatDuration(time.Duration(d))
}

// Type names the value in --help.
func (d *Duration) Type() string { return "duration" }

// Size is a setting's byte size, read alike from the command line and the
// config file: a number of bytes or one with a unit ("10MiB", "2GB").
type Size int64

// Set reads s with throttle.ParseBytes.
func (z *Size) Set(s string) error {
	n, err := throttle.ParseBytes(s)
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
	return formatBytes(int64(z))
}

// Type names the value in --help.
func (z *Size) Type() string { return "size" }

// CheckSetting is the check a setting's value gets whether it comes from
// the file or the command line; name is how the user wrote it ("per_host"
// in the file, "--per-host" on the command line), key the file's key. It
// returns nil for a key it has no check for.
func CheckSetting(name, key string, v any) error {
	if min, ok := intMinimums[key]; ok {
		if n, ok := v.(int); ok && n < min {
			return fmt.Errorf("%s must be at least %d", name, min)
		}
	}
	switch key {
	case "timeout":
		if d, ok := v.(time.Duration); ok && d <= 0 {
			return fmt.Errorf("%s must be more than 0: a timeout of %v would fail every request", name, d)
		}
	case "commit_every":
		if d, ok := v.(time.Duration); ok && d <= 0 {
			return fmt.Errorf("%s must be more than 0", name)
		}
	case "max_size":
		if n, ok := v.(int64); ok && n <= 0 {
			return fmt.Errorf("%s must be more than 0", name)
		}
	}
	return nil
}

// intMinimums are the smallest values of the whole-number settings. A
// database keeps at least the pass just made (keep_passes 0 pruned
// nothing, the opposite of what it reads as).
var intMinimums = map[string]int{
	"concurrency": 1, "per_host": 1, "keep_passes": 1, "sitemap_limit": 0,
	"commit_batch": 1, "max_redirects": 1,
}
