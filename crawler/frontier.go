package crawler

import (
	"sync"

	"github.com/linkpatrol/linkpatrol/store"
)

// Frontier is where a pass's work comes from besides the links the crawler
// finds itself, and who decides which hosts this crawler fetches. Its
// methods are called from the dispatcher and (Owns) from the workers at
// once, so an implementation must be safe for concurrent use.
type Frontier interface {
	// Owns says whether this crawler fetches host's URLs (host as in URL.Host).
	// A found link to a host it does not own is not fetched: it is put on
	// store.Result.Forward of the result that found it, so it is committed in
	// the same transaction (the outbox) and some other worker fetches it.
	Owns(host string) bool
	// Incoming delivers tasks for owned hosts found by other workers. Each
	// batch is ALREADY committed to this crawler's store frontier (the
	// cluster does that, then acks the message, then sends the batch here),
	// so a crash after delivery loses nothing. nil channel: none ever come.
	Incoming() <-chan []store.Task
	// Idle is called by the dispatcher each time it becomes idle (nothing
	// queued, in flight, staged, probing, parked, waiting on a redirect
	// chain, AND every result handed to the writer committed) with true,
	// and with false when it gets work again.
	Idle(idle bool)
	// Done closes when the pass is complete everywhere. The crawler's Run
	// returns Complete once it is idle and Done is closed.
	Done() <-chan struct{}
}

// Local returns the frontier of a pass that one crawler does alone: it owns
// every host, nothing comes in from elsewhere, and the pass is done the
// first time the crawler is idle. A nil Config.Frontier is one of these.
func Local() Frontier {
	return &localFrontier{done: make(chan struct{})}
}

type localFrontier struct {
	once sync.Once
	done chan struct{}
}

func (*localFrontier) Owns(string) bool              { return true }
func (*localFrontier) Incoming() <-chan []store.Task { return nil }
func (l *localFrontier) Done() <-chan struct{}       { return l.done }
func (l *localFrontier) Idle(idle bool) {
	if idle {
		l.once.Do(func() { close(l.done) })
	}
}
