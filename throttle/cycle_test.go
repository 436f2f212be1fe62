package throttle

import (
	"testing"
	"time"
)

// A cycle counts the time the crawl was busy with the host between two
// slowdowns over the normal answers in it: a pause or a request out is
// busy, a crawl with nothing to ask only as long as the gap in force.
func TestCycleGap(t *testing.T) {
	t0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	type start struct {
		at   int  // ms
		busy bool // a request out, or one waiting for its turn, since the start before
	}
	tests := []struct {
		name   string
		begun  bool // a slowdown began the cycle at 0
		starts []start
		served int
		end    int // ms: the refusal that ends it
		want   time.Duration
	}{
		{"the first slowdown measures nothing", false, []start{{1000, true}}, 1, 2000, 0},
		{"nothing served: nothing to tell", true, []start{{1000, true}}, 0, 2000, 0},
		{"busy all along: the whole cycle", true, []start{{1000, true}, {1500, true}, {2000, true}}, 3, 3000, time.Second},
		{"idle: only the gap counts", true, []start{{1000, true}, {61000, false}, {61500, true}}, 3, 62000, 2500 * time.Millisecond / 3},
		{"the tail to the refusal is busy", true, []start{{500, true}}, 1, 2500, 2500 * time.Millisecond},
	}
	for _, tt := range tests {
		var c cycle
		if tt.begun {
			c.since = t0
		}
		last := at(-300) // a start before the cycle: counted from its beginning
		for _, s := range tt.starts {
			c.admit(at(s.at), last, s.busy, 500*time.Millisecond)
			last = at(s.at)
		}
		c.served = tt.served
		if got := c.end(at(tt.end), last); got != tt.want {
			t.Errorf("%s: gap %v, want %v", tt.name, got, tt.want)
		}
		if !c.since.Equal(at(tt.end)) || c.busy != 0 || c.served != 0 {
			t.Errorf("%s: next cycle %+v, want one begun at the refusal", tt.name, c)
		}
	}
}
