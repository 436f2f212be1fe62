package report

import (
	"cmp"
	"errors"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/linkpatrol/linkpatrol/store"
)

// Merge reads several stores as one: the files of the workers of a
// distributed pass, which share the coordinator's pass IDs and each hold
// the URLs of the shards its worker owned. A URL resolved in more than one
// file (a redirect a worker followed onto another worker's host) is taken
// from the file that fetched it last, so it is counted once. Memory stays
// small: the files are read side by side in URL order, never loaded.
func Merge(srcs ...Source) Source { return merged(srcs) }

type merged []Source

// Pass merges the pass of every file that holds it: the earliest start;
// the latest finish, once every file has finished; the longest working
// time (workers run side by side); every file's deferred URLs; and a state
// that is complete only if every file's is.
func (m merged) Pass(id uint64) (store.Pass, error) {
	var out store.Pass
	found, unfinished := false, false
	for _, src := range m {
		p, err := src.Pass(id)
		if errors.Is(err, store.ErrNoPass) {
			continue
		}
		if err != nil {
			return store.Pass{}, err
		}
		unfinished = unfinished || p.Finished.IsZero()
		if !found {
			found = true
			out = p
			out.StartURLs, out.Roots, out.Tally = slices.Clone(p.StartURLs), slices.Clone(p.Roots), addTally(nil, p.Tally)
			continue
		}
		if stateRank(p.State) > stateRank(out.State) {
			out.State = p.State
		}
		out.StartURLs = union(out.StartURLs, p.StartURLs)
		out.Roots = union(out.Roots, p.Roots)
		if p.Started.Before(out.Started) {
			out.Started = p.Started
		}
		if p.Finished.After(out.Finished) {
			out.Finished = p.Finished
		}
		out.Elapsed = max(out.Elapsed, p.Elapsed)
		out.Deferred += p.Deferred
		if p.ResumeAfter.After(out.ResumeAfter) {
			out.ResumeAfter = p.ResumeAfter
		}
		out.Config = cmp.Or(out.Config, p.Config)
		out.CheckFragments = out.CheckFragments || p.CheckFragments
		out.Insecure = out.Insecure || p.Insecure
		out.RelativePaths = out.RelativePaths || p.RelativePaths
		out.Tally = addTally(out.Tally, p.Tally)
	}
	if !found {
		return store.Pass{}, fmt.Errorf("pass %d: %w", id, store.ErrNoPass)
	}
	if unfinished {
		out.Finished = time.Time{}
	}
	return out, nil
}

// stateRank orders pass states by how much less than done they say: the
// merged pass is as unfinished as its least finished file.
func stateRank(s store.PassState) int {
	switch s {
	case store.PassComplete:
		return 0
	case store.PassAbandoned:
		return 1
	case store.PassStopped:
		return 2
	}
	return 3 // running, or a state this build does not know
}

func union(a, b []string) []string {
	for _, s := range b {
		if !slices.Contains(a, s) {
			a = append(a, s)
		}
	}
	return a
}

// addTally adds b to a: each file tallies the problems of its own shards.
func addTally(a, b *store.Tally) *store.Tally {
	if b == nil {
		return a
	}
	if a == nil {
		a = new(store.Tally)
	}
	a.Broken += b.Broken
	a.Transient += b.Transient
	a.Unverifiable += b.Unverifiable
	a.New += b.New
	a.Still += b.Still
	a.Fixed += b.Fixed
	// A page and the pages linking to it may be in different files:
	// the pass's missing fragments are all of theirs.
	a.FragmentsChecked = a.FragmentsChecked || b.FragmentsChecked
	// So are the problems behind a page not read that one of them lists.
	a.Fragments, a.Unchecked = sortedUnion(a.Fragments, b.Fragments), sortedUnion(a.Unchecked, b.Unchecked)
	a.StartsWithLinks = sortedUnion(a.StartsWithLinks, b.StartsWithLinks)
	return a
}

// sortedUnion is the sorted set of a and b, a if b is empty.
func sortedUnion(a, b []string) []string {
	if len(b) == 0 {
		return a
	}
	return slices.Compact(slices.Sorted(slices.Values(append(slices.Clip(a), b...))))
}

// PreviousComplete is the newest pass before before that is complete in
// the merged sense.
func (m merged) PreviousComplete(before uint64) (store.Pass, bool, error) {
	for before > 0 {
		var newest uint64
		for _, src := range m {
			p, ok, err := src.PreviousComplete(before)
			if err != nil {
				return store.Pass{}, false, err
			}
			if ok {
				newest = max(newest, p.ID)
			}
		}
		if newest == 0 {
			return store.Pass{}, false, nil
		}
		p, err := m.Pass(newest)
		if err != nil {
			return store.Pass{}, false, err
		}
		if p.State == store.PassComplete {
			return p, true, nil
		}
		before = newest
	}
	return store.Pass{}, false, nil
}

// Passes lists every pass any file holds, merged, oldest first.
func (m merged) Passes() ([]store.Pass, error) {
	var ids []uint64
	for _, src := range m {
		l, ok := src.(passLister)
		if !ok {
			continue
		}
		ps, err := l.Passes()
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			ids = append(ids, p.ID)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	out := make([]store.Pass, 0, len(ids))
	for _, id := range ids {
		p, err := m.Pass(id)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// Records calls fn for every URL of the pass once, in URL order.
func (m merged) Records(passID uint64, fn func(*store.URLRecord) error) error {
	return m.each(func(src Source, yield func(*store.URLRecord, []store.Link) error) error {
		return src.Records(passID, func(r *store.URLRecord) error { return yield(r, nil) })
	}, func(r *store.URLRecord, _ []store.Link) error { return fn(r) })
}

// PageLinks calls fn for every page of the pass once, in URL order, with
// the links of the same file Records takes the page's record from.
func (m merged) PageLinks(passID uint64, fn func(*store.URLRecord, []store.Link) error) error {
	return m.each(func(src Source, yield func(*store.URLRecord, []store.Link) error) error {
		return src.PageLinks(passID, yield)
	}, fn)
}

// Get reads u's record from the file that resolved it last: the newest
// pass, and within one pass the latest fetch (the first file's on a tie),
// as Records and PageLinks choose.
func (m merged) Get(u string) (store.URLRecord, bool, error) {
	_, rec, ok, err := m.latest(u)
	return rec, ok, err
}

// Links reads the links of page from the file Get takes its record from:
// the copy of the page that file read.
func (m merged) Links(page string) ([]store.Link, error) {
	i, _, ok, err := m.latest(page)
	if err != nil || !ok {
		return nil, err
	}
	return m[i].Links(page)
}

// latest finds the file holding u's newest record, and that record.
func (m merged) latest(u string) (int, store.URLRecord, bool, error) {
	best, found := 0, false
	var out store.URLRecord
	for i, src := range m {
		rec, ok, err := src.Get(u)
		if err != nil {
			return 0, store.URLRecord{}, false, err
		}
		if ok && (!found || rec.Pass > out.Pass || rec.Pass == out.Pass && rec.FetchedAt.After(out.FetchedAt)) {
			best, out, found = i, rec, true
		}
	}
	return best, out, found, nil
}

type recordLinks struct {
	rec   *store.URLRecord
	links []store.Link
}

// errStopScan ends a file's scan early when the merge is cut short.
var errStopScan = errors.New("scan stopped")

// each merges the URL-ordered scans of every file: of the records for one
// URL it calls fn with the one fetched last (the first file's on a tie).
func (m merged) each(scan func(Source, func(*store.URLRecord, []store.Link) error) error, fn func(*store.URLRecord, []store.Link) error) (err error) {
	type cursor struct {
		next   func() (recordLinks, bool)
		stop   func()
		cur    recordLinks
		ok     bool
		scanEr *error
	}
	cursors := make([]*cursor, len(m))
	for i, src := range m {
		var scanErr error
		seq := func(yield func(recordLinks) bool) {
			scanErr = scan(src, func(r *store.URLRecord, l []store.Link) error {
				if !yield(recordLinks{r, l}) {
					return errStopScan
				}
				return nil
			})
		}
		next, stop := iter.Pull(iter.Seq[recordLinks](seq))
		c := &cursor{next: next, stop: stop, scanEr: &scanErr}
		c.cur, c.ok = next()
		cursors[i] = c
	}
	defer func() {
		for _, c := range cursors {
			c.stop()
			if e := *c.scanEr; e != nil && !errors.Is(e, errStopScan) && err == nil {
				err = e
			}
		}
	}()
	for {
		var url string
		have := false
		for _, c := range cursors {
			if c.ok && (!have || c.cur.rec.URL < url) {
				url, have = c.cur.rec.URL, true
			}
		}
		if !have {
			return nil
		}
		var best *recordLinks
		for _, c := range cursors {
			if !c.ok || c.cur.rec.URL != url {
				continue
			}
			if best == nil || c.cur.rec.FetchedAt.After(best.rec.FetchedAt) {
				cur := c.cur
				best = &cur
			}
			c.cur, c.ok = c.next()
		}
		if err := fn(best.rec, best.links); err != nil {
			return err
		}
	}
}
