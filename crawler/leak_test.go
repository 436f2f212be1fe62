package crawler_test

import (
	"bytes"
	"context"
	"fmt"
	"runtime/pprof"
	"strings"
	"testing"
	"time"
)

// leakLabel is the pprof label by which verifyNoLeaks knows a test's
// goroutines.
const leakLabel = "leakcheck"

// verifyNoLeaks checks, after every other cleanup (servers closed), that the
// test left no goroutine behind. It may run beside other tests (t.Parallel):
// it labels the test's goroutine, every goroutine started from it inherits
// the label, and so on down (the crawler's workers, the servers' and the
// transports' connections), and at the end it looks only for goroutines
// with the test's label. What it does not see is a goroutine the runtime
// starts for a time.AfterFunc callback, which carries no label.
func verifyNoLeaks(t *testing.T) {
	t.Helper()
	id := fmt.Sprintf("%p", t)
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels(leakLabel, id)))
	t.Cleanup(func() {
		// This goroutine is the test's own: it is not a leak.
		pprof.SetGoroutineLabels(context.Background())
		// A goroutine that is ending still shows for a moment after what it
		// waited on closed: look again, backing off, as goleak does.
		deadline := time.Now().Add(10 * time.Second)
		for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
			leaked := labelledGoroutines(leakLabel, id)
			if leaked == "" {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("the test left goroutines behind:\n%s", leaked)
				return
			}
			time.Sleep(wait)
		}
	})
}

// labelledGoroutines are the stacks of the goroutines whose label key is
// value, as the goroutine profile prints them; "" when there are none.
func labelledGoroutines(key, value string) string {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
		return fmt.Sprintf("goroutine profile: %v", err)
	}
	want := fmt.Sprintf("%q:%q", key, value)
	var out []string
	// Each record (one stack and the goroutines on it) is a paragraph.
	for rec := range strings.SplitSeq(buf.String(), "\n\n") {
		for line := range strings.SplitSeq(rec, "\n") {
			if strings.HasPrefix(line, "# labels: ") && strings.Contains(line, want) {
				out = append(out, rec)
				break
			}
		}
	}
	return strings.Join(out, "\n\n")
}
