package crawler

import (
	"net/url"
	"strings"
	"sync"

	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
)

// Spider traps (rules.Traps) are held back where the dispatcher admits a
// URL to the pass, because two of the limits need counts over the pass:
//
//   - the distinct query strings of each path, which are a function of the
//     dedupe set alone: every URL that enters it is counted, whatever
//     becomes of it, so a resumed pass, whose dedupe set is rebuilt from the
//     store (the URLs resolved in the pass and the frontier), counts the
//     same and decides the same;
//   - the template run and the hops of a page, which belong to the URL and
//     travel with it in its frontier entry (store.Task.Run and Depth).
//
// Only pages to parse are held back: a link that is only checked leads
// nowhere. Sitemap entries are never held back: the site lists them.

// trapInfo is what the dispatcher needs to count a page to parse: the
// limits and the URL, found by the worker, and what the limits read from
// the URL, worked out by the first admit that needs them. Most links lead
// to URLs the pass has already admitted, and working out the template and
// query path of each when it was found was a tenth of the allocations of a
// check (BenchmarkPass): now it is done once per URL that enters the pass.
type trapInfo struct {
	limits rules.Traps
	u      *url.URL // shared between pages: read only
	once   sync.Once
	// Set by once:
	path      *rules.Trap // held back by the URL alone (path segments, repeats)
	template  string
	queryPath string // "" without a query
}

// worked fills in what the limits read from the URL, once, and returns ti.
func (ti *trapInfo) worked() *trapInfo {
	ti.once.Do(func() {
		ti.template, ti.queryPath = rules.Template(ti.u), rules.QueryPath(ti.u)
		if trap, held := ti.limits.CheckPath(ti.u); held {
			ti.path = &trap
		}
	})
	return ti
}

// trapInfo fills in tg's trap info when the rules (d) would parse it:
// also when the link only has it checked (an <img>, say), since a check
// that answers with an HTML page is parsed after all (see upgrade), and
// its template run must be known then. It reads the URL from d.Parsed
// rather than parsing d.URL again.
func (c *Crawler) trapInfo(tg *target, d rules.Decision) {
	if !tg.sitemap {
		tg.traps = c.trapsOf(d)
	}
}

// trapsOf is the trap info of a URL decided d, nil when it needs none.
// It is shared by every link to the URL (see resolvedCache), and nothing
// but worked writes to it.
func (c *Crawler) trapsOf(d rules.Decision) *trapInfo {
	limits := d.Traps
	if d.Action != rules.Parse || limits == (rules.Traps{}) {
		return nil
	}
	return &trapInfo{limits: limits, u: d.Parsed}
}

// trapState is the dispatcher's count of query strings per path.
type trapState struct {
	variants map[string]int // rules.QueryPath -> distinct URLs admitted
}

func newTrapState() trapState { return trapState{variants: make(map[string]int)} }

// admitted counts a URL that entered the dedupe set; queryPath is
// rules.QueryPath of it, or "" to have it parsed here.
func (s *trapState) admitted(raw, queryPath string) {
	if queryPath == "" {
		if !strings.Contains(raw, "?") {
			return
		}
		u, err := url.Parse(raw)
		if err != nil || u.RawQuery == "" {
			return
		}
		queryPath = rules.QueryPath(u)
	}
	s.variants[queryPath]++
}

// admit counts tg, a URL new to the pass found on page, and returns its
// template run; with apply it decides whether a page to parse is held
// back.
func (s *trapState) admit(tg *target, page task, pageTemplate func() string, apply bool) (rules.Trap, bool, int) {
	if tg.traps == nil {
		s.admitted(tg.url, "")
		return rules.Trap{}, false, 0
	}
	ti := tg.traps.worked()
	// Counted after the check: the limit is on the query strings before it.
	if ti.queryPath != "" {
		defer s.admitted(tg.url, ti.queryPath)
	}
	run := 0
	if ti.template == pageTemplate() {
		run = page.Run + 1
	}
	if !apply || tg.action != rules.Parse {
		return rules.Trap{}, false, run
	}
	if ti.path != nil {
		return *ti.path, true, run
	}
	if ti.queryPath != "" {
		if trap, held := ti.limits.CheckQuery(s.variants[ti.queryPath], ti.queryPath); held {
			return trap, true, run
		}
	}
	if trap, held := ti.limits.CheckRun(run, ti.template); held {
		return trap, true, run
	}
	if trap, held := ti.limits.CheckHops(page.Depth + 1); held {
		return trap, true, run
	}
	return rules.Trap{}, false, run
}

// upgradeHeld says whether a URL that was only checked, and answered with
// a page the rules would parse at u, must stay unparsed as a suspected
// trap: its path, its template run and its hops are known here; the
// query-string count is the dispatcher's, and was applied when the link
// was found.
func upgradeHeld(t task, u *url.URL, limits rules.Traps) (rules.Trap, bool) {
	if trap, held := limits.CheckPath(u); held {
		return trap, true
	}
	if trap, held := limits.CheckRun(t.Run, rules.Template(u)); held {
		return trap, true
	}
	return limits.CheckHops(t.Depth)
}

// heldBack is the result of a URL held back as a suspected trap: skipped,
// with the reason and the setting that lets it through.
func (c *Crawler) heldBack(pass store.Pass, u string, trap rules.Trap) store.Result {
	c.stats.traps.Add(1)
	return c.immediate(pass, u, store.VerdictSkipped, store.ErrorTrap, trap.Note())
}

// templateOf is rules.Template of a URL given as text, "" when it does
// not parse.
func templateOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return rules.Template(u)
}
