#!/usr/bin/env bash
# bench.sh — load harness: linkpatrol and muffet against the same generated
# site, one after the other, in one run.
#
# Builds linkpatrol and sitegen, serves an N-page site on 127.0.0.1, runs each
# checker against it with the site's counters reset in between, and prints
# wall time, pages/s, requests, requests per page, repeated URLs, CPU
# seconds (user+sys, from /usr/bin/time; "?" without it) and per page, peak RSS,
# the broken URLs each found against the number the site says it has, and
# exit codes.
#
# With -latency, ideal% is how close the run came to what the latency allows:
# every request takes at least the latency and at most C are in flight, so
# no checker can be done before requests x latency / C; ideal% is that over
# the wall time. It counts requests, not pages: a page also costs the
# requests for its images and broken links (1.1 per page on the default
# site), so pages/s can reach only about 90% of C / latency. mean_in_flight
# is the site's own count of requests being served at once, on average from
# the first arrival to the last answer: how busy the checker kept its C
# connections, however slow a loaded machine made each answer.
#
# site_cpu_us/page is the CPU the generated site itself used while the
# checker ran, per page ("?" without /proc). It runs on the same cores: on a
# 2-core machine the wall time is about the two programs' CPU together, so
# compare wall times of two sizes next to it (the site keeps its per-URI
# counters where the garbage collector need not mark them, so that its own
# cost per page does not grow with the site; BenchmarkServeEachOnce in
# crawler/crawltest measures that).
#
# Usage: scripts/bench.sh [-pages N] [-latency D] [-concurrency C] [-tools "linkpatrol muffet"] [-site "SITEGEN FLAGS"]
#   -pages N         pages in the generated site (default 10000)
#   -site FLAGS      more sitegen flags, e.g. "-redirect-every 10 -rel-nav" for
#                    redirects and <link rel=prev/next> as on documentation sites
#   -latency D       delay per response, a Go duration such as 20ms (default 0)
#   -concurrency C   connections each checker may use (default 16)
#   -tools LIST      checkers to run, in order (default "linkpatrol muffet")
# Environment: MUFFET (default ../shared/peers/muffet from the repository root);
#   LPFLAGS, more flags for linkpatrol check, e.g. LPFLAGS=--fsync-commits.
#
# Needs go, curl and jq; peak RSS comes from /usr/bin/time -v
# (apt-get install -y time), or else from polling VmHWM in /proc.
# A checker that cannot be built or found is reported as such and skipped.
set -euo pipefail

pages=10000
latency=0s
concurrency=16
tools="linkpatrol muffet"
siteflags=""
while [ $# -gt 0 ]; do
	case "$1" in
	-pages | --pages) pages=$2; shift 2 ;;
	-latency | --latency) latency=$2; shift 2 ;;
	-concurrency | --concurrency) concurrency=$2; shift 2 ;;
	-tools | --tools) tools=$2; shift 2 ;;
	-site | --site) siteflags=$2; shift 2 ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
done

root=$(cd "$(dirname "$0")/.." && pwd)
muffet=${MUFFET:-$root/../shared/peers/muffet}
for cmd in go curl jq; do
	command -v "$cmd" >/dev/null || { echo "bench.sh: $cmd is needed; install it and run again" >&2; exit 2; }
done
timev=""
if [ -x /usr/bin/time ] && /usr/bin/time -v true 2>/dev/null; then
	timev=/usr/bin/time
else
	echo "bench.sh: /usr/bin/time not found (apt-get install -y time); peak RSS is sampled from /proc and may miss the peak" >&2
fi

tmp=$(mktemp -d)
sitegen_pid=""
cleanup() {
	if [ -n "$sitegen_pid" ]; then
		kill "$sitegen_pid" 2>/dev/null || true
		wait "$sitegen_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

cd "$root"
echo "building sitegen and linkpatrol..." >&2
go build -o "$tmp/sitegen" ./cmd/sitegen
declare -A skip=()
if ! go build -o "$tmp/linkpatrol" ./cmd/linkpatrol 2>"$tmp/linkpatrol.build"; then
	skip[linkpatrol]="does not build yet: $(grep -m1 . "$tmp/linkpatrol.build")"
fi
if [ ! -x "$muffet" ]; then
	skip[muffet]="not found at $muffet"
fi

# shellcheck disable=SC2086 # siteflags is a list of flags
"$tmp/sitegen" -pages "$pages" -latency "$latency" $siteflags -addr 127.0.0.1:0 >"$tmp/sitegen.out" 2>"$tmp/sitegen.err" &
sitegen_pid=$!
for _ in $(seq 100); do
	[ -s "$tmp/sitegen.out" ] && break
	kill -0 "$sitegen_pid" 2>/dev/null || { cat "$tmp/sitegen.err" >&2; exit 2; }
	sleep 0.1
done
url=$(head -n1 "$tmp/sitegen.out")
[ -n "$url" ] || { echo "bench.sh: sitegen did not start" >&2; exit 2; }
# The latency in seconds, for ideal%: a Go duration such as 20ms or 1m30s.
latency_s=$(awk -v d="$latency" 'BEGIN {
	u["ns"] = 1e-9; u["us"] = 1e-6; u["µs"] = 1e-6; u["ms"] = 1e-3; u["s"] = 1; u["m"] = 60; u["h"] = 3600
	s = 0
	while (match(d, /^[0-9.]+(ns|us|µs|ms|s|m|h)/)) {
		part = substr(d, 1, RLENGTH); d = substr(d, RLENGTH + 1)
		match(part, /^[0-9.]+/); s += substr(part, 1, RLENGTH) * u[substr(part, RLENGTH + 1)]
	}
	print s
}')
expected=$(curl -sf "${url}__expected" | jq -c '{urls, broken: (.broken | length)}')
exp_urls=$(jq .urls <<<"$expected")
exp_broken=$(jq .broken <<<"$expected")

# site_ticks prints the CPU clock ticks (user+system) sitegen has used so
# far, or nothing without /proc.
site_ticks() {
	awk '{print $14 + $15}' "/proc/$sitegen_pid/stat" 2>/dev/null || true
}

# measure NAME CMD... runs one checker and leaves its results in $tmp/NAME.*
measure() {
	local name=$1
	shift
	curl -sf "${url}__reset" >/dev/null
	local start end rc=0 ticks0 ticks1
	ticks0=$(site_ticks)
	start=$(date +%s%N)
	if [ -n "$timev" ]; then
		"$timev" -v -o "$tmp/$name.time" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
		rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tmp/$name.time")
		cpu_s=$(awk -F': ' '/User time|System time/ {s += $2} END {print s}' "$tmp/$name.time")
	else
		"$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
		local pid=$! hwm
		rss_kb=0
		cpu_s=null
		while kill -0 "$pid" 2>/dev/null; do
			hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
			[ -n "$hwm" ] && [ "$hwm" -gt "$rss_kb" ] && rss_kb=$hwm
			sleep 0.05
		done
		wait "$pid" || rc=$?
	fi
	end=$(date +%s%N)
	ticks1=$(site_ticks)
	site_cpu_s=null
	if [ -n "$ticks0" ] && [ -n "$ticks1" ]; then
		site_cpu_s=$(awk -v a="$ticks0" -v b="$ticks1" -v hz="$(getconf CLK_TCK)" 'BEGIN {print (b - a) / hz}')
	fi
	wall_ns=$((end - start))
	exit_code=$rc
	curl -sf "${url}__stats" >"$tmp/$name.stats"
}

# found NAME prints how many broken URLs the checker reported, or ? when its
# output cannot be read.
found() {
	case "$1" in
	linkpatrol) jq -r '.summary.broken // "?"' "$tmp/linkpatrol.out" 2>/dev/null || echo "?" ;;
	muffet) jq -r '[.[].links[].url] | unique | length' "$tmp/muffet.out" 2>/dev/null || echo "?" ;;
	esac
}

rows=()
skipped=()
for tool in $tools; do
	if [ -n "${skip[$tool]:-}" ]; then
		skipped+=("$tool skipped: ${skip[$tool]}")
		continue
	fi
	echo "running $tool..." >&2
	case "$tool" in
	linkpatrol) measure linkpatrol "$tmp/linkpatrol" check --concurrency "$concurrency" --per-host "$concurrency" --db "$tmp/linkpatrol.db" --format json ${LPFLAGS:-} "$url" ;;
	muffet) measure muffet "$muffet" -c "$concurrency" --max-connections-per-host "$concurrency" --format json -t 30 "$url" ;;
	*) echo "bench.sh: unknown tool $tool (linkpatrol, muffet)" >&2; exit 2 ;;
	esac
	if [ "$exit_code" -gt 1 ]; then
		echo "bench.sh: $tool exited $exit_code; its stderr:" >&2
		tail -n 5 "$tmp/$tool.err" >&2
	fi
	rows+=("$(jq -r --arg tool "$tool" --argjson pages "$pages" --argjson ns "$wall_ns" \
		--argjson rss "${rss_kb:-0}" --argjson cpu "${cpu_s:-null}" --argjson rc "$exit_code" --arg found "$(found "$tool")" --argjson scpu "$site_cpu_s" \
		--argjson broken "$exp_broken" --argjson lat "$latency_s" --argjson conc "$concurrency" '
		def r(n): (n * 100 | round) / 100;
		[$tool, ($rc | tostring), (r($ns / 1e9) | tostring), ($pages / ($ns / 1e9) | round | tostring),
		 (.requests | tostring), (r(.requests / $pages) | tostring), (.repeated_urls | tostring),
		 (.max_per_url | tostring), (.max_in_flight | tostring), (r(.mean_in_flight) | tostring),
		 (if $cpu == null then "?" else (r($cpu) | tostring) end),
		 (if $cpu == null then "?" else (r($cpu * 1e6 / $pages) | tostring) end),
		 (r($rss / 1024) | tostring),
		 "\($found)/\($broken)",
		 (if $lat > 0 then (.requests * $lat / $conc) / ($ns / 1e9) * 100 | round | tostring else "-" end),
		 (if $scpu == null then "?" else (r($scpu * 1e6 / $pages) | tostring) end)] | @tsv' "$tmp/$tool.stats")")
done

echo
echo "site: $pages pages, $exp_urls URLs, $exp_broken broken; latency $latency; concurrency $concurrency; $(nproc) CPUs; $(go env GOVERSION)"
{
	printf 'tool\texit\twall_s\tpages/s\trequests\treq/page\trepeated\tmax/URL\tpeak_in_flight\tmean_in_flight\tcpu_s\tcpu_us/page\tpeak_RSS_MiB\tbroken_found\tideal%%\tsite_cpu_us/page\n'
	[ ${#rows[@]} -eq 0 ] || printf '%s\n' "${rows[@]}"
} | column -t -s $'\t'
[ ${#skipped[@]} -eq 0 ] || printf '%s\n' "${skipped[@]}"
