package throttle_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/throttle"
)

// BenchmarkReserveDone measures the cost of politeness when no limit binds:
// one Reserve and one Done per operation, on real time.
func BenchmarkReserveDone(b *testing.B) {
	cases := []struct {
		name string
		s    throttle.Settings
	}{
		{"none", throttle.Settings{}},
		{"generous", throttle.Settings{Rate: 1e12, Burst: 1 << 30, MaxInFlight: 1 << 20, QuotaRequests: 1 << 62, QuotaBytes: 1 << 62, MaxRetries: 3}},
		{"generous+window", throttle.Settings{Rate: 1e12, Burst: 1 << 30, MaxInFlight: 1 << 20, WindowMax: 1 << 30, Window: time.Millisecond}},
		{"generous+adaptive", throttle.Settings{Rate: 1e12, Burst: 1 << 30, MaxInFlight: 1 << 20, Adaptive: true}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			th := throttle.New(fixed(c.s))
			b.ReportAllocs()
			for b.Loop() {
				p, wait, err := th.Reserve(host)
				if p == nil {
					b.Fatalf("refused: wait %v, err %v", wait, err)
				}
				p.Done(throttle.Outcome{Status: 200, Bytes: 1000, Latency: time.Microsecond})
			}
		})
	}
	b.Run("parallel-hosts", func(b *testing.B) {
		th := throttle.New(fixed(throttle.Settings{Rate: 1e12, Burst: 1 << 30, MaxInFlight: 1 << 20}))
		var next atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			h := fmt.Sprintf("host%d.test:443", next.Add(1))
			for pb.Next() {
				p, wait, err := th.Reserve(h)
				if p == nil {
					b.Fatalf("refused: wait %v, err %v", wait, err)
				}
				p.Done(throttle.Outcome{Status: 200, Latency: time.Microsecond})
			}
		})
	})
}
