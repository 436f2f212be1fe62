package throttle

import (
	"encoding/json"
	"testing"
)

// The state a host saved is read back by the next run, perhaps of another
// build: every key keeps its name and its place. A state with every key set
// reads and writes back to the same bytes.
func TestSavedStateLayout(t *testing.T) {
	t.Parallel()
	const saved = `{"v":1,"pass":7,"paused_until":"2026-11-24T12:00:00Z","deferred":true,"backoff_level":3,` +
		`"backoff_until":"2026-11-24T12:01:00Z","used_requests":40,"used_bytes":5000,"answered":12,` +
		`"conn_refused_since":"2026-11-24T11:59:00Z","robots":{"status":200,"body":"VXNlci1hZ2VudDogKgo=",` +
		`"fetched":"2026-11-24T11:00:00Z"},"held":{"http://h.test/a":"2026-11-24T13:00:00Z"},` +
		`"starts":["2026-11-24T11:58:00Z","2026-11-24T11:58:01Z"],"last_start":"2026-11-24T11:58:01Z",` +
		`"slow":750000000,"floor":500000000,"trial":{"gap":250000000,"share":0.25,"served":400000000,"floor":100000000},"share_base":0.1,"tokens":2.5,"exported":"2026-11-24T11:58:02Z","pace_until":"2026-11-24T11:59:02Z",` +
		`"refusing_since":"2026-11-24T11:50:00Z"}`
	var st savedState
	if err := json.Unmarshal([]byte(saved), &st); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != saved {
		t.Errorf("saved state written back as\n%s\nwant\n%s", b, saved)
	}
}
