package main

import "testing"

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
