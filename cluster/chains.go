package cluster

import (
	"fmt"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/store"
)

// finishChains completes, in the merged database, the records of pass p
// whose redirect chain went on at a URL another worker owns (see
// crawler.FinishChain): each from that URL's own record, once the pass's
// results are all in. A chain whose end awaits in turn is finished after
// it; chains that lead round to each other end as a redirect loop. When
// the pass stopped with URLs deferred to a later run, a record whose end
// has no result yet, or one held back by a pause, keeps waiting for that
// run.
func (c *Coordinator) finishChains(p store.Pass, maxRedirects int) error {
	db := c.cfg.DB
	awaiting := map[string]store.URLRecord{}
	err := db.Records(p.ID, func(r *store.URLRecord) error {
		if r.Awaits != "" {
			awaiting[r.URL] = *r
		}
		return nil
	})
	if err != nil || len(awaiting) == 0 {
		return err
	}
	finished := map[string]*store.URLRecord{}
	busy := map[string]bool{}
	// finish finishes u's record, and says at which URL the chain from u
	// closed a loop of awaiting records whose finishing is still under
	// way (u is on that loop then): every record on a loop ends at the
	// awaiting record of the next, so that the loop reads the same
	// whichever of its URLs is finished first.
	var finish func(u string) (rec *store.URLRecord, loopAt string, err error)
	finish = func(u string) (*store.URLRecord, string, error) {
		if r, ok := finished[u]; ok {
			return r, "", nil
		}
		rec := awaiting[u]
		busy[u] = true
		defer delete(busy, u)
		var end *store.URLRecord
		loopAt := ""
		if e, ok := awaiting[rec.Awaits]; ok {
			if busy[rec.Awaits] {
				end, loopAt = &e, rec.Awaits
			} else {
				r, at, err := finish(rec.Awaits)
				if err != nil || r == nil {
					return nil, "", err
				}
				end, loopAt = r, at
				if at != "" {
					end = &e
				}
			}
		} else {
			e, ok, err := db.Get(rec.Awaits)
			if err != nil {
				return nil, "", fmt.Errorf("finish the chain of %s: %w", u, err)
			}
			switch {
			case ok && e.Pass == p.ID && !(crawler.HeldOwn(e) && p.State != store.PassComplete):
				end = &e
			case p.State != store.PassComplete:
				return nil, "", nil // its end is done (again) by a later run
			}
		}
		if loopAt == u {
			loopAt = "" // the loop closes here: what awaits u is not on it
		}
		crawler.FinishChain(&rec, end, maxRedirects)
		finished[u] = &rec
		return &rec, loopAt, nil
	}
	for u := range awaiting {
		if _, _, err := finish(u); err != nil {
			return err
		}
	}
	results := make([]store.Result, 0, len(finished))
	for _, r := range finished {
		results = append(results, store.Result{Record: *r})
	}
	if len(results) == 0 {
		return nil
	}
	return db.Commit(p.ID, results)
}

// redoHistories gives the results whose worker did not know how their
// URL's previous chain ended (it went on at another worker's URL) their
// history from the merged database, where that chain was finished.
func (c *Coordinator) redoHistories(results []store.Result) error {
	for i := range results {
		rec := &results[i].Record
		if !crawler.UnknownPast(rec) {
			continue
		}
		prev, ok, err := c.cfg.DB.Get(rec.URL)
		if err != nil {
			return fmt.Errorf("history of %s: %w", rec.URL, err)
		}
		if ok && prev.Pass == rec.PrevPass && prev.Awaits == "" {
			crawler.RedoHistory(rec, &prev)
		}
	}
	return nil
}
