package cluster

import (
	"fmt"
	"hash/fnv"
	"net"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// Shards is the number of virtual shards hosts are spread over. Fixed: a
// task's subject, a consumer and a lease are named by shard number.
const Shards = 256

// Shard is the shard of host (as in URL.Host): fnv32a of its registrable
// domain (the public suffix list's eTLD+1) mod Shards, so every host of a
// domain, and so every throttle key, www→apex and http→https redirects,
// stays with one owner. An IP address or a name without a public suffix
// (localhost) has no registrable domain; there host:port is the key, which
// is the throttle's own key (with --group-hosts domain, the ports of one
// IP address are limited per shard, not together).
func Shard(host string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(shardKey(host)))
	return int(h.Sum32() % Shards)
}

func shardKey(host string) string {
	name, port := host, ""
	if h, p, err := net.SplitHostPort(host); err == nil {
		name, port = h, p
	}
	name = strings.ToLower(strings.TrimSuffix(strings.Trim(name, "[]"), "."))
	if net.ParseIP(name) == nil {
		if d, err := publicsuffix.EffectiveTLDPlusOne(name); err == nil {
			return d
		}
	}
	if port == "" {
		return name
	}
	return net.JoinHostPort(name, port)
}

// ParseShards reads a list of shards and ranges, such as "0-127" or
// "0-9,200,250-255", into sorted shard numbers without repeats.
func ParseShards(s string) ([]int, error) {
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := shardNumber(lo)
		if err != nil {
			return nil, fmt.Errorf("shards %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = shardNumber(hi); err != nil {
				return nil, fmt.Errorf("shards %q: %w", s, err)
			}
			if b < a {
				return nil, fmt.Errorf("shards %q: range %s runs backwards", s, part)
			}
		}
		for n := a; n <= b; n++ {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func shardNumber(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 || n >= Shards {
		return 0, fmt.Errorf("%q is not a shard number (0 to %d)", s, Shards-1)
	}
	return n, nil
}

// FormatShards writes shard numbers as ParseShards reads them, runs as ranges.
func FormatShards(shards []int) string {
	s := slices.Sorted(slices.Values(shards))
	s = slices.Compact(s)
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", s[i], s[j])
		} else {
			b.WriteString(strconv.Itoa(s[i]))
		}
		i = j + 1
	}
	return b.String()
}
