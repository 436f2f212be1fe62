package report

import (
	"strings"
	"testing"

	"github.com/linkpatrol/linkpatrol/store"
)

// The first line puts the worst first: a site down, then an unfinished
// pass, then what a limit held back, whatever mix of them a pass has.
func TestFirstLineWorstFirst(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		state store.PassState
		start string
		traps int
		want  []string
	}{
		{"held back only", store.PassComplete, "", 1, []string{"PARTLY CHECKED:"}},
		{"unfinished and held back", store.PassStopped, "", 1, []string{"INCOMPLETE:", "PARTLY CHECKED:"}},
		{"all three", store.PassStopped, "FAILED: no start URL could be fetched and parsed.", 2, []string{"FAILED:", "INCOMPLETE:", "PARTLY CHECKED:"}},
		{"down and held back", store.PassComplete, "FAILED: 1 of 2 start URLs could not be fetched and parsed.", 1, []string{"FAILED:", "PARTLY CHECKED:"}},
	}
	for _, tt := range tests {
		r := &Report{Pass: store.Pass{ID: 1, State: tt.state}, StartFailure: tt.start}
		r.Summary.Traps = tt.traps
		line := r.Incomplete()
		at := -1
		for _, w := range tt.want {
			i := strings.Index(line, w)
			if i <= at {
				t.Errorf("%s: %q not after what comes before it in %q", tt.name, w, line)
			}
			at = i
		}
		if !strings.HasPrefix(line, tt.want[0]) {
			t.Errorf("%s: first line %q, want it to begin %q", tt.name, line, tt.want[0])
		}
	}
}
