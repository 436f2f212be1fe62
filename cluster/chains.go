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
	finished, err := crawler.FinishChains(awaiting, func(u string) (store.URLRecord, bool, bool, error) {
		e, ok, err := db.Get(u)
		switch {
		case err != nil:
			return e, false, false, err
		case ok && e.Pass == p.ID && !(e.HeldOwn() && p.State != store.PassComplete):
			return e, true, false, nil
		}
		return e, false, p.State != store.PassComplete, nil
	}, maxRedirects)
	if err != nil || len(finished) == 0 {
		return err
	}
	results := make([]store.Result, 0, len(finished))
	for _, r := range finished {
		results = append(results, store.Result{Record: r})
	}
	return db.Commit(p.ID, results)
}

// redoHistories gives the results of pass whose worker did not know how their
// URL's previous chain ended (it went on at another worker's URL) their
// history from the merged database, where that chain was finished.
func (c *Coordinator) redoHistories(pass store.Pass, results []store.Result) error {
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
			crawler.RedoHistory(rec, &prev, pass)
		}
	}
	return nil
}
