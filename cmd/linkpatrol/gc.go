package main

import (
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// minHeapGoal is the heap size below which collecting is not worth its CPU.
// With Go's default GOGC=100 a check of a 10,000-page site collects every
// few megabytes, because what it keeps between pages is small: about a
// fifth of its CPU went to the collector. Letting the heap reach 64 MiB
// before a collection cuts CPU per page by about a fifth there, for 30-45
// MiB more peak RSS (scripts/bench.sh -tools linkpatrol, run with GOGC=100
// and without). Once the live heap is half of it or more, as on a site of
// 100,000 pages, GOGC=100 holds as before, so the heap still grows with
// what is live and never past twice it.
const minHeapGoal = 64 << 20

// paceGC keeps the collector's next goal at minHeapGoal while the live
// heap is small, by raising GOGC, and leaves it at 100 once it is not. A
// GOGC set in the environment is the user's choice and is left alone. It
// runs for the life of the process; main starts it, so that tests calling
// run in-process do not change their own collector.
//
// The live heap is read every 100 ms, and a raised GOGC applies to what is
// live at the next collection, which may be several times what was read:
// a report of 100,000 pages went from 1 to 4 MiB live between two reads
// and let the heap reach 234 MiB under GOGC=6300. So while GOGC is raised
// a memory limit (memoryCap) holds the heap near the goal; a GOMEMLIMIT set
// in the environment is left alone too.
func paceGC() {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	_, limitSet := os.LookupEnv("GOMEMLIMIT")
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	current := 100
	for range time.Tick(100 * time.Millisecond) {
		metrics.Read(live)
		if live[0].Value.Kind() != metrics.KindUint64 {
			return
		}
		if pct := gcPercent(live[0].Value.Uint64()); pct != current {
			debug.SetGCPercent(pct)
			if !limitSet {
				debug.SetMemoryLimit(memoryLimit(pct))
			}
			current = pct
		}
	}
}

// memoryCap is the memory limit while GOGC is raised: the runtime's whole
// memory, so a little above minHeapGoal, which GOGC aims the heap at.
// Should the live heap near it before the next read, the collector works
// harder until then (the runtime caps that at half the CPU).
const memoryCap = minHeapGoal + minHeapGoal/4

// memoryLimit is the memory limit that goes with a GOGC of pct: memoryCap
// while it is raised, none at the default.
func memoryLimit(pct int) int64 {
	if pct > 100 {
		return memoryCap
	}
	return math.MaxInt64
}

// gcPercent is the GOGC that puts the next collection of a heap with live
// bytes at minHeapGoal, in steps of 50 so that it is not set on every
// tick, and never under the default 100.
func gcPercent(live uint64) int {
	if live == 0 || 2*live >= minHeapGoal {
		return 100
	}
	pct := int(minHeapGoal*100/live) - 100
	return max(100, pct-pct%50)
}
