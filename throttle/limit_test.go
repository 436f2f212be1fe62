package throttle_test

import (
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/throttle"
)

// The status page draws each host's rate against the limit its settings
// allow, and shows quotas only where they are set.
func TestStatsLimitAndQuotas(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		set  throttle.Settings
		want float64
	}{
		{"none", throttle.Settings{}, 0},
		{"rate", throttle.Settings{Rate: 5, Burst: 5}, 5},
		{"window tighter", throttle.Settings{Rate: 5, Burst: 5, WindowMax: 60, Window: time.Minute}, 1},
		{"crawl delay tighter", throttle.Settings{Rate: 5, Burst: 5, CrawlDelay: 500 * time.Millisecond}, 2},
		{"window alone", throttle.Settings{WindowMax: 100, Window: 10 * time.Second}, 10},
		{"quotas", throttle.Settings{QuotaRequests: 7, QuotaBytes: 9}, 0},
	} {
		th := throttle.New(fixed(tt.set))
		acquire(t, th, host).Done(throttle.Outcome{Status: 200})
		st := th.Stats()[0]
		if st.Limit != tt.want {
			t.Errorf("%s: Limit = %v, want %v", tt.name, st.Limit, tt.want)
		}
		if st.QuotaRequests != tt.set.QuotaRequests || st.QuotaBytes != tt.set.QuotaBytes {
			t.Errorf("%s: quotas %d, %d; want %d, %d", tt.name, st.QuotaRequests, st.QuotaBytes, tt.set.QuotaRequests, tt.set.QuotaBytes)
		}
	}
}
