package main

import (
	"math"
	"testing"
)

func TestGCPercent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		live uint64
		want int
	}{
		{0, 100},                 // no collection yet: the default
		{minHeapGoal / 2, 100},   // a big live heap: the default
		{minHeapGoal, 100},       //
		{minHeapGoal / 4, 300},   // 16 MiB live: next collection at 64 MiB
		{minHeapGoal / 64, 6300}, // 1 MiB live
		{minHeapGoal / 3, 200},   // 21.3 MiB live: 200%, rounded down in steps of 50
	}
	for _, tt := range tests {
		if got := gcPercent(tt.live); got != tt.want {
			t.Errorf("gcPercent(%d) = %d, want %d", tt.live, got, tt.want)
		}
		if goal := tt.live + tt.live*uint64(gcPercent(tt.live))/100; tt.live > 0 && goal > max(minHeapGoal, 2*tt.live) {
			t.Errorf("gcPercent(%d): next goal %d is above both %d and twice the live heap", tt.live, goal, minHeapGoal)
		}
	}
}

func TestMemoryLimit(t *testing.T) {
	t.Parallel()
	for _, live := range []uint64{0, minHeapGoal / 64, minHeapGoal / 4, minHeapGoal / 2, minHeapGoal} {
		pct := gcPercent(live)
		limit := memoryLimit(pct)
		switch {
		case pct > 100 && limit < minHeapGoal:
			t.Errorf("live %d: limit %d under the goal %d that GOGC=%d aims at", live, limit, minHeapGoal, pct)
		case pct > 100 && limit > 2*minHeapGoal:
			t.Errorf("live %d: limit %d lets a stale GOGC=%d overshoot", live, limit, pct)
		case pct <= 100 && limit != math.MaxInt64:
			t.Errorf("live %d: GOGC=%d with limit %d, want none", live, pct, limit)
		}
	}
}
