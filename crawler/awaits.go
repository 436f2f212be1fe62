package crawler

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/linkpatrol/linkpatrol/store"
)

// A redirect into a host another crawler owns is not followed: that host's
// limits are kept by its owner alone (see Frontier). The chain stops short
// of the target, which is forwarded to its owner like a link, and every
// record of the chain awaits it (store.URLRecord.Awaits): its hops and
// FinalURL go as far as the target, its verdict is a placeholder and its
// history the one before this pass. Where every crawler's results meet (a
// cluster's merged database), FinishChain completes each such record from
// the target's own record once the pass's results are all in, so the
// merged report says what one process would: where the URL redirects, and
// how the chain ends.

// awaitEnd makes rec, whose Redirects lead to target, a record that awaits
// target's result. via is the URL whose task reached rec's URL by a
// redirect ("" for the task's own URL).
func awaitEnd(rec *store.URLRecord, target, via string) {
	rec.FinalURL, rec.Awaits = target, target
	rec.Status = rec.Redirects[len(rec.Redirects)-1].Status
	// Skipped is neither good nor bad: history keeps the URL's past as it
	// was, for FinishChain to carry on from.
	rec.Verdict, rec.Error = store.VerdictSkipped, ""
	rec.Note = "redirects to " + target + ", which another worker of the pass checks: the merged report says how the chain ends"
	if via != "" {
		rec.Note = viaNote(via)
	}
}

// FinishChain completes rec, a record that awaits the result of
// rec.Awaits, from end, that URL's record in the same pass: rec then ends
// where end does, as chainEnd makes a chain's records end, with its
// history carried on from before the pass. end may itself await (the
// chains of two crawlers lead round to each other: a redirect loop); nil
// means the pass ended without a result for it. maxRedirects is the pass's
// limit on a whole chain (0: DefaultMaxRedirects).
func FinishChain(rec *store.URLRecord, end *store.URLRecord, maxRedirects int) {
	if rec.Awaits == "" {
		return
	}
	if maxRedirects <= 0 {
		maxRedirects = DefaultMaxRedirects
	}
	e := store.URLRecord{URL: rec.Awaits, Verdict: store.VerdictTransient, Error: "not checked",
		Note: "the worker that owns the redirect target's host did not check it in this pass"}
	if end != nil {
		e = *end
		if e.Awaits != "" && e.FinalURL == "" {
			e.FinalURL = e.Awaits
		}
	}
	via := ""
	if strings.HasPrefix(rec.Note, store.RedirectNote) {
		via = rec.Note
	}
	past := pastOf(rec)
	rec.Redirects = slices.Clip(rec.Redirects)
	chainEnd(rec, e, maxRedirects, true)
	if rec.Note == "" {
		rec.Note = via
	}
	rec.Awaits = ""
	// past is the one rec's worker carried, relative to the right pass
	// already: nothing in it to pass over.
	RedoHistory(rec, past, store.Pass{ID: rec.Pass})
}

// pastOf is the past an awaiting record carries: awaitEnd left it as
// history found it (a skipped verdict changes nothing), so it is the
// record before that pass, as far as history reads one.
func pastOf(rec *store.URLRecord) *store.URLRecord {
	if rec.FirstSeen.IsZero() {
		return nil
	}
	return &store.URLRecord{Pass: rec.PrevPass, Verdict: rec.PrevVerdict, FirstSeen: rec.FirstSeen,
		LastGood: rec.LastGood, FirstBroken: rec.FirstBroken, Failures: rec.Failures}
}

// RedoHistory computes rec's history again from prev, the URL's record
// before pass, rec's pass (its ID and Base). A worker whose previous record of a URL awaited
// another worker's URL does not know how that chain ended: it leaves
// PrevVerdict empty with PrevPass set (see history), and the merged
// database, which finished that chain, calls this with its own record.
func RedoHistory(rec *store.URLRecord, prev *store.URLRecord, pass store.Pass) {
	now := rec.FetchedAt
	if now.IsZero() {
		now = time.Now() // resolved without a request (see unfetched)
	}
	// history fills what it reads from prev in a record of its own.
	rec.FirstSeen, rec.LastGood, rec.FirstBroken, rec.Failures = time.Time{}, time.Time{}, time.Time{}, 0
	rec.PrevVerdict, rec.PrevPass = "", 0
	rec.PrevFailures, rec.PrevFirstBroken = 0, time.Time{}
	history(rec, prev, pass, now)
}

// UnknownPast says whether rec's worker did not know how the URL's
// previous chain ended, so its history must be redone where that is known
// (RedoHistory).
func UnknownPast(rec *store.URLRecord) bool {
	return rec.PrevPass != 0 && rec.PrevVerdict == ""
}

// EndOf looks up the record that ends an awaiting record's chain, the
// pass's record of u where it is not itself awaiting. ok false with wait
// false: the pass has none and will have none (FinishChain says the target
// was not checked); with wait true: a later run of the pass may still
// resolve it, so what awaits it keeps waiting.
type EndOf func(u string) (rec store.URLRecord, ok, wait bool, err error)

// FinishChains finishes the awaiting records of one pass (by URL) that
// can be finished, and returns them by URL: each from the record of the
// URL it awaits, looked up by end, or finished first when that URL's
// record awaits in turn. Every record on a loop of awaiting records ends at
// the awaiting record of the next, so the loop reads the same whichever of
// its URLs comes first, and a chain into a loop takes its verdict.
func FinishChains(awaiting map[string]store.URLRecord, end EndOf, maxRedirects int) (map[string]store.URLRecord, error) {
	finished := map[string]store.URLRecord{}
	busy := map[string]bool{}
	// finish says, besides u's finished record, at which URL the chain
	// from u closed a loop whose finishing is under way (u is on it).
	var finish func(u string) (rec *store.URLRecord, loopAt string, err error)
	finish = func(u string) (*store.URLRecord, string, error) {
		if r, ok := finished[u]; ok {
			return &r, "", nil
		}
		rec := awaiting[u]
		busy[u] = true
		defer delete(busy, u)
		var last *store.URLRecord
		loopAt := ""
		if e, ok := awaiting[rec.Awaits]; ok {
			if busy[rec.Awaits] {
				last, loopAt = &e, rec.Awaits
			} else {
				r, at, err := finish(rec.Awaits)
				if err != nil || r == nil {
					return nil, "", err
				}
				last, loopAt = r, at
				if at != "" {
					last = &e
				}
			}
		} else {
			e, ok, wait, err := end(rec.Awaits)
			switch {
			case err != nil:
				return nil, "", fmt.Errorf("finish the chain of %s: %w", u, err)
			case ok:
				last = &e
			case wait:
				return nil, "", nil
			}
		}
		if loopAt == u {
			loopAt = "" // the loop closes here: what awaits u is not on it
		}
		FinishChain(&rec, last, maxRedirects)
		finished[u] = rec
		return &rec, loopAt, nil
	}
	for u := range awaiting {
		if _, _, err := finish(u); err != nil {
			return nil, err
		}
	}
	return finished, nil
}
