package rules

import (
	"fmt"
	"time"
)

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
