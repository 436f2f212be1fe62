package crawler

import (
	"context"
	"net/url"

	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
)

// task is a frontier entry with the host it is queued under.
type task struct {
	store.Task
	host string
}

// target is a URL a page links to, already decided by the rules.
type target struct {
	url    string
	host   string
	action rules.Action
	rule   string // who decided, kept on skipped records
	err    string // "invalid URL" when the reference could not be parsed
}

// outcome is what a worker hands back for one task.
type outcome struct {
	task    task
	result  store.Result
	found   []target
	stopped bool // cut short by a stop: not committed, done again on resume
}

type hostQueue struct {
	name     string
	tasks    []task
	inflight int
	inRing   bool
}

// dispatcher owns the frontier and the dedupe set; only its goroutine
// touches them.
type dispatcher struct {
	c        *Crawler
	pass     store.Pass
	seen     map[string]struct{}
	hosts    map[string]*hostQueue
	ring     []*hostQueue // hosts with queued tasks and a free slot, round robin
	queued   int
	inflight int
}

func newDispatcher(c *Crawler, pass store.Pass, done map[string]struct{}) *dispatcher {
	return &dispatcher{c: c, pass: pass, seen: done, hosts: make(map[string]*hostQueue)}
}

func (d *dispatcher) idle() bool { return d.queued == 0 && d.inflight == 0 }

// push queues a task from the stored frontier; it is already in the store.
func (d *dispatcher) push(t store.Task) {
	if _, dup := d.seen[t.URL]; dup {
		return
	}
	d.seen[t.URL] = struct{}{}
	host := ""
	if u, err := url.Parse(t.URL); err == nil {
		host = u.Host
	}
	d.enqueue(task{Task: t, host: host})
}

func (d *dispatcher) enqueue(t task) {
	q := d.hosts[t.host]
	if q == nil {
		q = &hostQueue{name: t.host}
		d.hosts[t.host] = q
	}
	q.tasks = append(q.tasks, t)
	d.queued++
	d.c.stats.queued.Store(int64(d.queued))
	d.schedule(q)
}

func (d *dispatcher) schedule(q *hostQueue) {
	if !q.inRing && len(q.tasks) > 0 && q.inflight < d.c.cfg.PerHost {
		q.inRing = true
		d.ring = append(d.ring, q)
	}
}

// next returns the task that would be sent now, without taking it.
func (d *dispatcher) next() (task, bool) {
	if len(d.ring) == 0 {
		return task{}, false
	}
	return d.ring[0].tasks[0], true
}

// take removes the task next returned and rotates the ring.
func (d *dispatcher) take() {
	q := d.ring[0]
	q.tasks[0] = task{}
	q.tasks = q.tasks[1:]
	q.inflight++
	d.queued--
	d.inflight++
	d.ring = d.ring[1:]
	q.inRing = false
	d.schedule(q)
	d.c.stats.queued.Store(int64(d.queued))
	d.c.stats.inflight.Store(int64(d.inflight))
}

func (d *dispatcher) finish(host string) {
	q := d.hosts[host]
	q.inflight--
	d.inflight--
	d.c.stats.inflight.Store(int64(d.inflight))
	if len(q.tasks) == 0 && q.inflight == 0 {
		delete(d.hosts, host)
		return
	}
	d.schedule(q)
}

// loop hands tasks to workers and turns their outcomes into writes until
// the frontier is empty, or until stop is cancelled and nothing is in flight.
func (d *dispatcher) loop(stop, failed context.Context, tasks chan<- task, outcomes <-chan outcome, writes chan<- store.Result) error {
	stopCh := stop.Done()
	stopping := false
	for {
		if d.inflight == 0 && (stopping || d.queued == 0) {
			return nil
		}
		var send chan<- task
		next, ok := d.next()
		if ok && !stopping {
			send = tasks
		}
		select {
		case send <- next:
			d.take()
		case o := <-outcomes:
			d.finish(o.task.host)
			if o.stopped {
				continue
			}
			if err := d.handle(failed, o, writes); err != nil {
				return err
			}
		case <-stopCh:
			// No new tasks from here on; wait for the ones in flight.
			stopping, stopCh = true, nil
		case <-failed.Done():
			return failed.Err()
		}
	}
}

func (d *dispatcher) handle(failed context.Context, o outcome, writes chan<- store.Result) error {
	res := o.result
	var extra []store.Result
	for _, t := range o.found {
		if _, dup := d.seen[t.url]; dup {
			continue
		}
		d.seen[t.url] = struct{}{}
		switch {
		case t.err != "":
			extra = append(extra, d.c.immediate(d.pass, t.url, store.VerdictBroken, t.err, ""))
		case t.action == rules.Skip:
			extra = append(extra, d.c.immediate(d.pass, t.url, store.VerdictSkipped, "", "skipped: "+t.rule))
		default:
			nt := task{Task: store.Task{URL: t.url, Action: t.action.String(), Depth: o.task.Depth + 1}, host: t.host}
			res.Enqueue = append(res.Enqueue, nt.Task)
			d.enqueue(nt)
		}
	}
	for _, r := range append([]store.Result{res}, extra...) {
		select {
		case writes <- r:
		case <-failed.Done():
			return failed.Err()
		}
	}
	return nil
}
