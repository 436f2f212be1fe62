package crawler

import (
	"math"
	"slices"

	"github.com/linkpatrol/linkpatrol/rules"
)

// A pass finds most URLs of a site long before it fetches them: on the
// generated 100,000-page site nearly every URL is queued once a few
// thousand pages are parsed, and stays queued for most of the pass. A
// queued task used to be a whole task (176 bytes in its host's queue) and
// its own copy of its decision (128 bytes): 30 MB of the live heap there.
// A host's queue now holds a queued entry of 48 bytes, with the decision
// shared by every task decided alike; only a task that carries more (a
// retry, a delay, the reading of robots.txt) keeps all of itself.

// queued is a task on its host's queue.
type queued struct {
	url string
	// dec is the task's decision without its URL, shared (see
	// dispatcher.shared); nil for a task that was never decided.
	dec *rules.Decision
	// full is the whole task, when it carries more than these fields;
	// the others are then unused.
	full       *task
	depth, run int32
	action     uint8 // an index into queuedActions
	robotsOK   bool
}

// queuedActions are the actions a queued entry can carry, by index.
var queuedActions = []string{"", rules.Parse.String(), rules.Check.String(), actionSitemap}

// queue makes the entry for t, whole unless the small form gives back
// exactly t.
func (d *dispatcher) queue(t task) queued {
	action := slices.Index(queuedActions, t.Action)
	small := action >= 0 && t.Depth >= 0 && t.Depth <= math.MaxInt32 && t.Run >= 0 && t.Run <= math.MaxInt32 &&
		(t.dec == nil || t.dec.URL == t.URL)
	if small {
		e := queued{url: t.URL, dec: d.shared(t.dec), depth: int32(t.Depth), run: int32(t.Run), action: uint8(action), robotsOK: t.robotsOK}
		// Whatever field task gains, a task the entry does not give back
		// whole is kept whole.
		back, orig := e.task(t.host), t
		back.dec, orig.dec = nil, nil
		if back == orig {
			return e
		}
	}
	t.dec = queuedDecision(t.dec)
	return queued{url: t.URL, full: &t}
}

// task is the queued task, on host's queue. Its decision, when shared,
// has no URL until the task is taken (see withURL).
func (e *queued) task(host string) task {
	if e.full != nil {
		return *e.full
	}
	t := task{host: host, dec: e.dec, robotsOK: e.robotsOK}
	t.URL, t.Action, t.Depth, t.Run = e.url, queuedActions[e.action], int(e.depth), int(e.run)
	return t
}

// shared is a decision equal to dec but for its URL, fragment and parsed
// URL, the same one for every task decided alike. The dispatcher's
// goroutine alone uses it. A rule set that decided every URL differently
// would give one per URL: no more than a copy each, as before.
func (d *dispatcher) shared(dec *rules.Decision) *rules.Decision {
	if dec == nil {
		return nil
	}
	key := *dec
	key.URL, key.Fragment, key.Parsed = "", "", nil
	if s, ok := d.decisions[key]; ok {
		return s
	}
	s := &key
	d.decisions[key] = s
	return s
}

// withURL gives a task taken from its queue a decision of its own, with
// its URL, which the steps of the task read.
func withURL(t *task) {
	if t.dec != nil && t.dec.URL == "" {
		dec := *t.dec
		dec.URL = t.URL
		t.dec = &dec
	}
}
