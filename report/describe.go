package report

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/linkpatrol/linkpatrol/store"
)

// The sentences below are shared by every format meant for people, so a mail,
// a pull request comment and the HTML page say the same thing.

// Problem says what went wrong with a URL: its error class, its HTTP status
// with the status text, or both.
func Problem(rec store.URLRecord) string {
	if rec.Error == store.ErrorUnsupportedScheme {
		return "scheme " + notCheckedScheme(rec) + " is not supported"
	}
	status := ""
	if rec.Status != 0 {
		status = strconv.Itoa(rec.Status)
		if t := http.StatusText(rec.Status); t != "" {
			status += " " + t
		}
	}
	switch {
	case rec.Error != "" && status != "":
		return rec.Error + " (" + status + ")"
	case rec.Error != "":
		return rec.Error
	case status != "":
		return status
	}
	return string(rec.Verdict)
}

// Since says how long a problem has lasted: "never worked", or "broken since
// 2026-11-20, 3 days". It is empty for a URL that is not a problem or whose
// history is unknown.
func (r *Report) Since(rec store.URLRecord) string {
	if !rec.Verdict.Problem() {
		return ""
	}
	if rec.Error == store.ErrorHostDown || rec.Error == store.ErrorUnsupportedScheme {
		return "" // not checked: nothing is known of how long
	}
	if rec.LastGood.IsZero() {
		return "never worked"
	}
	if rec.FirstBroken.IsZero() {
		return ""
	}
	word := "failing"
	if rec.Verdict == store.VerdictBroken {
		word = "broken"
	}
	d := r.Options.Now.Sub(rec.FirstBroken)
	at := rec.FirstBroken.In(r.Options.Now.Location())
	if d < 24*time.Hour {
		return fmt.Sprintf("%s since %s, %s", word, at.Format("2006-01-02 15:04"), age(d))
	}
	return fmt.Sprintf("%s since %s, %s", word, at.Format("2006-01-02"), age(d))
}

func age(d time.Duration) string {
	switch {
	case d >= 24*time.Hour:
		return plural(int(d/(24*time.Hour)), "day", "days")
	case d >= time.Hour:
		return plural(int(d/time.Hour), "hour", "hours")
	case d >= time.Minute:
		return plural(int(d/time.Minute), "minute", "minutes")
	}
	return "less than a minute"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// Redirected is the final URL after redirects when it differs from the URL.
func Redirected(rec store.URLRecord) string {
	if rec.FinalURL == "" || rec.FinalURL == rec.URL {
		return ""
	}
	return rec.FinalURL
}

// hopsNamed is how many URLs at each end of a long redirect chain are
// named; the ones between are counted.
const hopsNamed = 2

// Chain says where a URL's redirects lead, or "" when it did not redirect:
// for a URL that is fine, "redirects to" where it ends; for a problem, the
// chain after the URL itself (first hops ... last) and why it failed, since
// the URL the page links to is the one problem of the whole chain.
func (r *Report) Chain(rec store.URLRecord) string {
	urls, why := r.chain(rec)
	if len(urls) == 0 {
		return ""
	}
	return "redirects to " + strings.Join(urls, " -> ") + why
}

// chain is Chain in parts: the URLs named, as Location shows them (a
// count of the ones between, when there are many, is one of them), and why
// the chain failed, to follow them.
func (r *Report) chain(rec store.URLRecord) (urls []string, why string) {
	if !(rec.Verdict.Problem() || stoppedShort(&rec)) || len(rec.Redirects) == 0 {
		if final := Redirected(rec); final != "" {
			return []string{r.Location(final)}, ""
		}
		return nil, ""
	}
	urls = make([]string, 0, len(rec.Redirects))
	for _, h := range rec.Redirects[1:] {
		urls = append(urls, r.Location(h.URL))
	}
	end := rec.FinalURL
	if end == "" {
		end = rec.URL
	}
	if end := r.Location(end); len(urls) == 0 || urls[len(urls)-1] != end {
		urls = append(urls, end)
	}
	if n := len(urls); n > 2*hopsNamed+1 {
		urls = slices.Concat(urls[:hopsNamed], []string{fmt.Sprintf(hopsBetween, n-2*hopsNamed)}, urls[n-hopsNamed:])
	}
	switch {
	case rec.Error == store.ErrorTooManyRedirects:
		// The last URL named is where the server sent us next: it was
		// not requested.
		why = " and on: more than " + plural(len(rec.Redirects)-1, "redirect", "redirects") + ", not followed further"
	case stoppedShort(&rec):
		// The last URL named is where the server sent us next: it was
		// not requested, by the user's choice or the site's.
		why = ", not requested: " + stopReason(rec.Note)
	case rec.Error == store.ErrorRedirectLoop:
		why = ", back to a URL of the chain: a redirect loop"
	case rec.Error == store.ErrorUnsupportedScheme:
		// Nothing failed there: it was not requested.
		why = ", not requested: " + Problem(rec)
	case rec.Error != "":
		why = ", where it fails: " + rec.Error
	case rec.Status != 0:
		why = ", which answers " + Problem(rec)
	}
	return urls, why
}

// stopReason is why a chain stopped short, from its note ("redirect not
// followed; its target is skipped: matches no --include").
func stopReason(note string) string {
	if i := strings.LastIndex(note, "skipped: "); i >= 0 {
		return note[i+len("skipped: "):]
	}
	return note
}

// hopsBetween counts the URLs of a long chain that are not named.
const hopsBetween = "... (%d more)"

// Incomplete is the warning that belongs on the report's first line, or
// "" for a complete pass that fetched its start page: the pass has not
// finished (stopped, still running, or URLs of the site held back by a
// server's pause), and/or no start URL could be fetched and parsed.
func (r *Report) Incomplete() string {
	var msg string
	switch r.Pass.State {
	case store.PassComplete:
	case store.PassStopped:
		if r.Pass.Unfinished != "" {
			msg = "INCOMPLETE: " + r.Pass.Unfinished
		} else if n := r.Pass.Deferred - r.downURLs(); n > 0 {
			msg = fmt.Sprintf("INCOMPLETE: %s of the site held back by the server's request to pause (Retry-After) until %s; run the same command again after then to check %s and finish the pass.",
				plural(n, "URL", "URLs"), r.Pass.ResumeAfter.In(r.Options.Now.Location()).Format("2006-01-02 15:04"), them(n))
		} else if len(r.Down) == 0 || r.Pass.Deferred == 0 {
			msg = fmt.Sprintf("INCOMPLETE: stopped after %s; run the same command again to resume.", RoundDuration(r.Summary.Elapsed))
		}
		if down := r.downLine(); down != "" {
			msg = strings.TrimSpace("INCOMPLETE: " + down + " " + strings.TrimPrefix(msg, "INCOMPLETE: "))
		}
	default:
		// Elapsed is saved when a run of the pass stops or commits its
		// time; a pass still running (a distributed one above all, whose
		// coordinator never runs it) has none, and "killed after 0s" was
		// false for a pass that ran 40 s (qa4 F7).
		how := "killed after " + RoundDuration(r.Summary.Elapsed).String()
		if r.Summary.Elapsed == 0 {
			how = "killed; started " + r.started()
		}
		msg = fmt.Sprintf("INCOMPLETE: pass %d has not finished (it is still running, or it was %s); run the same command again to resume.", r.Pass.ID, how)
		if r.Pass.Interrupted(r.Options.Now) {
			// Its run stopped beating: killed or crashed, not running.
			msg = fmt.Sprintf("INCOMPLETE: pass %d was interrupted (its run was last seen %s, after %s of work); run the same command again to resume.",
				r.Pass.ID, r.Pass.LastSeen().In(r.Options.Now.Location()).Format("2006-01-02 15:04:05"), RoundDuration(r.Summary.Elapsed))
		}
	}
	// Worst first: a site down, then the pass unfinished (what the next
	// run must do), then what a limit held back, which is the least of
	// them (exit 5 only when nothing else applies).
	var lines []string
	for _, line := range []string{r.StartFailure, msg, r.HeldBack()} {
		if line != "" {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, " ")
}

// downURLs counts the URLs not checked because their host stopped
// answering.
func (r *Report) downURLs() int {
	n := 0
	for _, d := range r.Down {
		n += d.URLs
	}
	return n
}

// downLine says which hosts of the site stopped answering part way
// through the pass, when, after how many answers, and what that left
// unchecked: "127.0.0.1:8080 stopped answering at 2026-11-24 07:04:05
// after 84 requests: 217 URLs not checked; run the same command again to
// check them and finish the pass." "" when none did.
func (r *Report) downLine() string {
	if len(r.Down) == 0 {
		return ""
	}
	var parts []string
	n := 0
	for _, d := range r.Down {
		at := ""
		if !d.Since.IsZero() {
			at = " at " + d.Since.In(r.Options.Now.Location()).Format("2006-01-02 15:04:05")
		}
		after := ""
		if d.After > 0 {
			after = " after " + plural(d.After, "request", "requests")
		}
		parts = append(parts, fmt.Sprintf("%s stopped answering%s%s: %s not checked", d.Host, at, after, plural(d.URLs, "URL", "URLs")))
		n += d.URLs
	}
	return strings.Join(parts, "; ") + fmt.Sprintf("; they are not dead links: run the same command again to check %s and finish the pass.", them(n))
}

// HeldBack is the first line of a pass in which a limit of the crawler's
// held part of what it was to check back (suspected spider traps, a
// host's quota, pages cut at --max-size or at the bound on links per
// page), or "" when none did. Those URLs are listed with the setting that
// lets them through, but nothing is known about them, so the pass cannot
// say "all clear": it exits 5 unless something worse decides the code.
// What a rule skips or robots.txt disallows is the site's own choice and
// is not counted here.
func (r *Report) HeldBack() string {
	var parts []string
	limits, listed := false, false
	for _, k := range heldKinds {
		if n := k.count(r.Summary); n > 0 {
			parts = append(parts, k.line(r, n))
			limits = limits || k.limit
			listed = listed || !k.unlisted
		}
	}
	if len(parts) == 0 {
		return ""
	}
	if !listed {
		return "PARTLY CHECKED: " + strings.Join(parts, "; ") + "."
	}
	how := "."
	if limits {
		how = " with the setting that lets them through."
	}
	return "PARTLY CHECKED: " + strings.Join(parts, "; ") + ". They are listed below" + how
}

// heldKind is one kind of what a pass left unchecked with no problem to
// show for it: what a limit of the crawler's held back, or the pages of
// the site it could not read. Each makes the pass "PARTLY CHECKED"
// (exit 5 unless something worse decides the code), and three sentences
// name it, each in its own words: HeldBack's, Nothing's and Counts'.
type heldKind struct {
	count func(Summary) int
	// limit says a setting lets them through (HeldBack then says they are
	// listed with it); unlisted says they are not listed one by one.
	limit, unlisted bool
	line            func(r *Report, n int) string // in HeldBack
	nothing         func(r *Report, n int) string // in Nothing
	// counted is the clause in Counts, written at where.
	counted func(r *Report, n int) string
	where   countsPlace
}

// countsPlace is where in Counts a heldKind's clause goes.
type countsPlace int

const (
	afterPages    countsPlace = iota // with the pages parsed
	afterVerdicts                    // after the count of each verdict
	afterHops                        // after the hops of failing chains
)

// heldKinds are the kinds of what a pass can leave unchecked, in the order
// HeldBack and Nothing name them.
var heldKinds = []heldKind{{
	count: func(s Summary) int { return s.Traps }, limit: true,
	line: func(_ *Report, n int) string {
		return fmt.Sprintf("%s held back as suspected spider traps", plural(n, "URL", "URLs"))
	},
	nothing: func(_ *Report, n int) string {
		return fmt.Sprintf("%s held back as suspected spider traps", plural(n, "URL was", "URLs were"))
	},
	counted: func(_ *Report, n int) string {
		return fmt.Sprintf(" (%d held back as suspected spider traps, listed below)", n)
	},
	where: afterVerdicts,
}, {
	count: func(s Summary) int { return s.Quota }, limit: true,
	line: func(_ *Report, n int) string {
		return fmt.Sprintf("%s not checked because a host's quota for the pass was used up", plural(n, "URL", "URLs"))
	},
	nothing: func(_ *Report, n int) string {
		return fmt.Sprintf("%s not checked: a host's quota for the pass (--quota-requests, --quota-bytes) was used up", plural(n, "URL was", "URLs were"))
	},
	counted: func(_ *Report, n int) string {
		return fmt.Sprintf(" (%d not checked: a host's quota for the pass was used up, listed below)", n)
	},
	where: afterVerdicts,
}, {
	count: func(s Summary) int { return s.NotTaken }, limit: true,
	line: func(_ *Report, n int) string {
		return fmt.Sprintf("%s not taken because the sitemap limit (--sitemap-limit) was reached", plural(n, "sitemap entry", "sitemap entries"))
	},
	nothing: func(_ *Report, n int) string {
		return fmt.Sprintf("%s not taken: the sitemap limit (--sitemap-limit) was reached", plural(n, "sitemap entry was", "sitemap entries were"))
	},
	counted: func(_ *Report, n int) string {
		return fmt.Sprintf("; %s not taken: the sitemap limit was reached, listed below", plural(n, "sitemap entry", "sitemap entries"))
	},
	where: afterVerdicts,
}, {
	count: func(s Summary) int { return s.Cut }, limit: true,
	line: func(_ *Report, n int) string {
		// "may": links carried from a page's last full copy were checked,
		// but whatever is new past the cut was not.
		return fmt.Sprintf("%s read only in part (cut short), so links past the cut may not have been checked", plural(n, "page", "pages"))
	},
	nothing: func(_ *Report, n int) string {
		return fmt.Sprintf("%s cut short: links past the cut were not checked", plural(n, "page was", "pages were"))
	},
	counted: func(_ *Report, n int) string {
		return fmt.Sprintf(" (%d cut short: links past the cut not checked, listed below)", n)
	},
	where: afterPages,
}, {
	count:   func(s Summary) int { return s.Unread },
	line:    func(r *Report, _ int) string { return r.unreadLine() },
	nothing: func(r *Report, n int) string { return r.unreadSaid(n, "", ": ") },
	counted: func(r *Report, n int) string {
		behind := "links behind " + them(n) + " not checked"
		if g := r.unreadGhosts(); g == n {
			behind = "only the links of " + its(g) + " last good copy checked"
		}
		return fmt.Sprintf("; %s of the site not read: %s, listed below", plural(n, "page", "pages"), behind)
	},
	where: afterHops,
}, {
	// A start page that comes back with no links (an empty or broken
	// deploy) leaves the rest of the site unreached: a report of one page
	// that reads as a clean night (qa7 Q3). Compared with the last
	// complete pass only, so a site meant to be this small is said once:
	// the next run compares with this pass.
	count: func(s Summary) int { return s.Unreached }, unlisted: true,
	line: func(r *Report, n int) string { return r.emptyStartLine(n) },
	nothing: func(r *Report, n int) string {
		return fmt.Sprintf("%s: %s of pass %d %s not reached", r.emptyWhat(), plural(n, "page", "pages"), r.Previous.ID, wasWere(n))
	},
	counted: func(r *Report, n int) string {
		return fmt.Sprintf("; %s of pass %d not reached: %s", plural(n, "page", "pages"), r.Previous.ID, r.emptyWhat())
	},
	where: afterHops,
}, {
	// A page with the content of one read before it in another directory
	// (a catch-all's made-up path, a mirror) was not read for links, and
	// its relative links lead elsewhere there: not checked. The line of
	// its own (SameContentLine) gives examples.
	count: func(s Summary) int { return s.SameContent.Elsewhere }, unlisted: true,
	line:    func(_ *Report, n int) string { return notReadCopies(n, "") },
	nothing: func(_ *Report, n int) string { return notReadCopies(n, wasWere(n)+" ") },
	counted: func(_ *Report, n int) string {
		return fmt.Sprintf(" (%d not read for links: the same content as a page read in another directory)", n)
	},
	where: afterPages,
}, {
	// A link that could not be verified (a third-party host that
	// rate-limits one URL, times out, answers 503) is listed with its
	// verdict; the exit code said "all clear" beside it (qa8).
	count:   func(s Summary) int { return s.Unverified },
	line:    func(r *Report, n int) string { return r.unverifiedLine(n) },
	nothing: func(_ *Report, n int) string { return plural(n, "link", "links") + " could not be verified" },
	counted: func(*Report, int) string { return "" }, // each verdict's count says it
	where:   afterVerdicts,
}}

// notReadCopies names n pages not read for links as copies of a page in
// another directory, with verb ("were ") or without.
func notReadCopies(n int, verb string) string {
	return fmt.Sprintf("%s %snot read for links, having the same content as a page read in another directory, so links relative to %s were not checked",
		plural(n, "page", "pages"), verb, them(n))
}

// unverifiedLine says how many links could not be verified and why, up to
// three distinct reasons: "2 links could not be verified (timeout, 429 Too
// Many Requests)".
func (r *Report) unverifiedLine(n int) string {
	var why causes
	var schemes []string
	for i := range r.Entries {
		e := &r.Entries[i]
		switch {
		case !r.isUnverified(e):
		case e.Record.Error == store.ErrorUnsupportedScheme:
			if sc := notCheckedScheme(e.Record); !slices.Contains(schemes, sc) {
				schemes = append(schemes, sc)
			}
		default:
			why.add(e.Record)
		}
	}
	if len(schemes) > 0 {
		// One cause for them all: "not checked: schemes ftp and irc are
		// not supported", not one per scheme crowding out the others.
		why = append(causes{"not checked: " + unsupportedSchemes(schemes)}, why...)
	}
	return fmt.Sprintf("%s could not be verified (%s)", plural(n, "link", "links"), why)
}

// unsupportedSchemes says that schemes are not supported, in alphabetical
// order: "scheme ftp is not supported", "schemes ftp, irc and news are not
// supported".
func unsupportedSchemes(schemes []string) string {
	schemes = slices.Sorted(slices.Values(schemes))
	if len(schemes) == 1 {
		return "scheme " + schemes[0] + " is not supported"
	}
	return "schemes " + strings.Join(schemes[:len(schemes)-1], ", ") + " and " + schemes[len(schemes)-1] + " are not supported"
}

// notCheckedScheme is the scheme rec, not checked (unsupported scheme),
// ends in: its own, or its redirect target's (review10 R5).
func notCheckedScheme(rec store.URLRecord) string {
	if rec.FinalURL != "" {
		return schemeOf(rec.FinalURL)
	}
	return schemeOf(rec.URL)
}

// schemeOf is the scheme of u, a URL as stored.
func schemeOf(u string) string {
	sc, _, _ := strings.Cut(u, ":")
	return strings.ToLower(sc)
}

// causes are the distinct problems of some records, in the order met.
type causes []string

func (c *causes) add(rec store.URLRecord) {
	if why := Problem(rec); !slices.Contains(*c, why) {
		*c = append(*c, why)
	}
}

// String names up to three causes and counts the rest: "503 Service
// Unavailable, timeout and 2 more".
func (c causes) String() string {
	const named = 3
	why := strings.Join(c[:min(named, len(c))], ", ")
	if len(c) > named {
		why += fmt.Sprintf(" and %d more", len(c)-named)
	}
	return why
}

// emptyStartLine says that the start page came back with no links, or a
// page of the site empty, and n pages of the compared pass were not
// reached (Report.EmptyStart).
func (r *Report) emptyStartLine(n int) string {
	if !r.isStart(r.EmptyStart) {
		return fmt.Sprintf("the page %s came back empty (0 bytes) this pass, so %s of pass %d %s not reached (if that is meant, the next run compares with this one and says no more)",
			r.Location(r.EmptyStart), plural(n, "page", "pages"), r.Previous.ID, wasWere(n))
	}
	return fmt.Sprintf("the start page %s has no links this pass, so %s of pass %d %s not reached (if the site is meant to be this small, the next run compares with this one and says no more)",
		r.Location(r.EmptyStart), plural(n, "page", "pages"), r.Previous.ID, wasWere(n))
}

// emptyWhat says briefly why pages were not reached (Report.EmptyStart).
func (r *Report) emptyWhat() string {
	if !r.isStart(r.EmptyStart) {
		return "the page " + r.Location(r.EmptyStart) + " came back empty"
	}
	return "the start page has no links"
}

// wasWere is the verb for n things.
func wasWere(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

// heldBack says whether the pass left something unchecked with no problem
// to show for it (see heldKinds).
func (s Summary) heldBack() bool {
	return slices.ContainsFunc(heldKinds, func(k heldKind) bool { return k.count(s) > 0 })
}

// countHeld writes the Counts clauses of the kinds held back that go at
// where.
func (r *Report) countHeld(b *strings.Builder, where countsPlace) {
	for _, k := range heldKinds {
		if n := k.count(r.Summary); n > 0 && k.where == where {
			b.WriteString(k.counted(r, n))
		}
	}
}

// unreadLine says how many pages of the site could not be read, and
// why: "1 page of the site could not be read (503 Service Unavailable),
// so the links behind it were not checked". Up to three distinct
// problems are named, the rest counted.
func (r *Report) unreadLine() string {
	var why causes
	for _, rec := range r.Unread {
		why.add(rec)
	}
	return r.unreadSaid(len(r.Unread), " ("+why.String()+")", ", so ")
}

// unreadSaid says that n pages of the site could not be read, then why
// (HeldBack names the causes, Nothing does not), then what that left
// unchecked, after so: the links behind them, or, behind a page followed
// from its last good copy (a ghost), only those added since.
func (r *Report) unreadSaid(n int, why, so string) string {
	line := plural(n, "page", "pages") + " of the site could not be read" + why
	switch g := r.unreadGhosts(); {
	case g == n:
		return line + fmt.Sprintf(": the links of %s last good copy were checked, any added since were not", its(g))
	case g > 0:
		return line + so + fmt.Sprintf("the links behind %s were not checked (behind %d of them, only those added since %s last good copy)", them(n), g, its(g))
	}
	return line + so + "the links behind " + them(n) + " were not checked"
}

// them is the pronoun for n pages.
func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// its is the possessive for n pages.
func its(n int) string {
	if n == 1 {
		return "its"
	}
	return "their"
}

// unreadGhosts counts the pages not read whose last good copy's links were
// followed: behind them only links added since that copy are unseen.
func (r *Report) unreadGhosts() int {
	n := 0
	for i := range r.Unread {
		if ghostPage(&r.Unread[i]) {
			n++
		}
	}
	return n
}

// UnreadHelp says what the section of pages of the site that could not
// be read is for. A page not read that has an entry of its own is listed
// there, marked (unreadNote), and not again in this section.
const UnreadHelp = "pages of the site, reached by a redirect, that could not be read this pass (a server error, a timeout, a refusal), so the links behind them were not checked, or, for a page followed from its last good copy, those added since (the pass exits 5 if nothing worse happened; each is listed with what it answered and the link that leads there; a page not read that is linked itself is listed above with its problem, marked \"not read\")"

// UnreadAlone are the pages of Unread that have no entry of their own
// (reached by a redirect): the ones the section of pages not read lists.
func (r *Report) UnreadAlone() []store.URLRecord {
	var alone []store.URLRecord
	for _, rec := range r.Unread {
		if _, listed := r.unreadListed[rec.URL]; !listed {
			alone = append(alone, rec)
		}
	}
	return alone
}

// unreadNote marks the entry of a page not read: what was not checked
// because of it, and what would let it through. "" for any other entry.
func (r *Report) unreadNote(rec store.URLRecord) string {
	if _, listed := r.unreadListed[rec.URL]; !listed {
		return ""
	}
	note := "not read, so the links behind it were not checked"
	if ghostPage(&rec) {
		note = "not read, so only the links added since its last good copy were not checked"
	}
	if advice := UnreadAdvice(rec); advice != "" {
		note += "; " + advice
	}
	return note
}

// unreadText is one line for a page of the site that could not be read.
func (r *Report) unreadText(rec store.URLRecord) string {
	msg := r.Location(rec.URL) + ": could not be read (" + Problem(rec) + ")"
	if !ghostPage(&rec) {
		// For a ghost, unreadMore says which links were checked behind it.
		msg += ", so the links behind it were not checked"
	}
	if more := r.unreadMore(rec); more != "" {
		msg += "; " + more
	}
	return msg
}

// unreadWhat is why a page of the site could not be read, with what
// unreadMore adds.
func (r *Report) unreadWhat(rec store.URLRecord) string {
	what := Problem(rec)
	if more := r.unreadMore(rec); more != "" {
		what += "; " + more
	}
	return what
}

// unreadMore is what a page not read has besides its problem: since when
// it fails, and, for one reached by a redirect, where from. Such a page is
// a hop of the link's chain and has no entry of its own (see hop), so
// without it nothing would say which link leads there.
func (r *Report) unreadMore(rec store.URLRecord) string {
	var parts []string
	if since := r.Since(rec); since != "" {
		parts = append(parts, since)
	}
	if strings.HasPrefix(rec.Note, store.RedirectNote) {
		parts = append(parts, rec.Note)
	}
	if ghostPage(&rec) {
		parts = append(parts, "following its links from "+strings.TrimPrefix(rec.Note, store.GhostNote)+" (its last good copy), so only links added since were not checked")
	}
	if advice := UnreadAdvice(rec); advice != "" {
		parts = append(parts, advice)
	}
	return strings.Join(parts, "; ")
}

// UnreadAdvice says what lets a page of the site that refused to be read
// (401, 403) through, as every other entry of a PARTLY CHECKED pass names
// the setting that lets it through: a login page or a members-only area
// is normal, and an exit 5 every night that names no way out teaches
// people to ignore exit 5 (qa6 Q6). It is "" for a page that failed (a
// server error, a timeout): no setting fixes that.
func UnreadAdvice(rec store.URLRecord) string {
	switch rec.Status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Sprintf("give credentials for it with -H or a [[rule]]'s headers (or user and password), or --exclude it, or --accept %d if it is a login page you mean to link", rec.Status)
	}
	return ""
}

// RoundDuration keeps two significant units at most, which is all a
// person reads of a measured time: 4m2s, 1.2s, 120ms. It is how the report,
// the status page and the -v summary show elapsed times and waits; a
// setting's duration is printed as it is written (throttle.FormatDuration).
func RoundDuration(d time.Duration) time.Duration {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(time.Millisecond)
	}
	return d
}

// Target names what the pass checked: the directory, or the start URLs.
func (r *Report) Target() string {
	if dirs := r.Pass.Dirs(); len(dirs) > 0 {
		shown := make([]string, len(dirs))
		for i, d := range dirs {
			shown[i] = r.relative(d)
		}
		return strings.Join(shown, " ")
	}
	switch n := len(r.Pass.StartURLs); n {
	case 0:
		return "no start URL"
	case 1:
		return r.Pass.StartURLs[0]
	default:
		return fmt.Sprintf("%s and %d more", r.Pass.StartURLs[0], n-1)
	}
}

// Headline is one sentence naming the pass, when it started and the config
// file it was run with (a ./linkpatrol.toml is read without being named).
func (r *Report) Headline() string {
	config := ""
	if r.Pass.Config != "" {
		config = ", config " + r.Pass.Config
	}
	line := fmt.Sprintf("linkpatrol pass %d of %s, started %s%s.", r.Pass.ID, r.Target(), r.started(), config)
	for _, rec := range r.siteVia {
		// Its host was checked as the site, which the user did not name.
		line += fmt.Sprintf(" Start URL %s redirects to %s; checked that site.", rec.URL, rec.FinalURL)
	}
	if r.Pass.Insecure {
		// A certificate that is expired, self-signed or forged passed as
		// ok: no reader of the report may miss that.
		line = "INSECURE: TLS certificates were not verified (--insecure). " + line
	}
	return line
}

func (r *Report) started() string {
	return r.Pass.Started.In(r.Options.Now.Location()).Format("2006-01-02 15:04")
}

// Counts is the summary sentence: pages parsed, links, URLs, each verdict,
// suppressed problems and the time the pass took.
func (r *Report) Counts() string {
	s := r.Summary
	var b strings.Builder
	fmt.Fprintf(&b, "%s parsed", plural(s.Pages-s.Unchanged, "page", "pages"))
	if s.Unchanged > 0 {
		// A 304 is not a page read: say what was done instead.
		fmt.Fprintf(&b, " and %d unchanged (answered 304, stored links followed)", s.Unchanged)
	}
	r.countHeld(&b, afterPages)
	if s.Ghosts > 0 {
		// A page that failed is not one read; following its old links
		// is what was done instead.
		fmt.Fprintf(&b, ", %s followed from %s last good copy", plural(s.Ghosts, "failing page's links", "failing pages' links"), its(s.Ghosts))
	}
	fmt.Fprintf(&b, ", %s, %s", plural(s.Links, "link", "links"), plural(s.URLs, "URL", "URLs"))
	if n := len(r.heldBehind); n > 0 {
		// Their verdicts are counted as they were when last checked: a
		// reader must not take them for what this pass found (RV2 #6).
		fmt.Fprintf(&b, " (%d not checked this pass, counted as when last checked)", n)
	}
	fmt.Fprintf(&b, ": %d broken, %d transient, %d unverifiable", s.Broken, s.Transient, s.Unverifiable)
	if s.Unsupported > 0 {
		// Never requested, unlike the rest: said apart, with the schemes.
		fmt.Fprintf(&b, " (%d not checked: %s)", s.Unsupported, unsupportedSchemes(r.unsupported))
	}
	fmt.Fprintf(&b, ", %d skipped", s.Skipped)
	r.countHeld(&b, afterVerdicts)
	if s.Robots > 0 {
		fmt.Fprintf(&b, " (%d on the site's own hosts, which their robots.txt disallows, listed below; --ignore-robots checks them)", s.Robots)
	}
	if rest := s.Skipped - s.Traps - s.Quota - s.Robots; rest > 0 && !r.Options.All {
		// Without a word, "4 skipped" beside "Skipped (2)" reads as two
		// lost: the rest are skipped as asked, and listed only with --all.
		more := ""
		if rest < s.Skipped {
			more = " more"
		}
		fmt.Fprintf(&b, " (%d%s by a rule, --exclude, --offline or another host's robots.txt; --all lists them)", rest, more)
	}
	if s.Hops > 0 {
		// Each is part of one problem listed below, not one more.
		fmt.Fprintf(&b, "; %s of a failing redirect chain, counted as part of the link that leads there",
			plural(s.Hops, "URL no page links to is a hop", "URLs no page links to are hops"))
	}
	if s.SkippedHops > 0 {
		fmt.Fprintf(&b, "; %s of a redirect chain not followed to its end, counted as part of the skipped link that leads there",
			plural(s.SkippedHops, "URL no page links to is a hop", "URLs no page links to are hops"))
	}
	r.countHeld(&b, afterHops)
	if r.checksFragments() {
		fmt.Fprintf(&b, "; %s", plural(s.MissingFragments, "missing fragment", "missing fragments"))
		// Those listed with what they were when last checked (qa7 Q9).
		if n := s.FragmentsUnchecked; n > 0 {
			which := "its page"
			if n > 1 {
				which = "their pages"
			}
			count := ""
			if n < s.MissingFragments {
				count = strconv.Itoa(n) + " "
			}
			fmt.Fprintf(&b, " (%snot checked this pass: %s could not be read)", count, which)
		}
	}
	if s.Suppressed > 0 {
		fmt.Fprintf(&b, "; %d suppressed by --report-after %s", s.Suppressed, r.Options.ReportAfter)
	}
	if s.Elapsed == 0 && r.Pass.State == store.PassRunning {
		b.WriteString("; not finished.") // its time is unknown, not 0s
	} else {
		fmt.Fprintf(&b, "; took %s.", RoundDuration(s.Elapsed))
	}
	return b.String()
}

// SeedLine says, for a check of a directory, which URLs the pass started
// from (its pages found on disk) and which it reached by links, naming the
// pages no other page links to; "" otherwise.
func (r *Report) SeedLine() string {
	if len(r.Pass.Dirs()) == 0 {
		return ""
	}
	s := r.Summary
	line := fmt.Sprintf("Started from %s found on disk; %d more %s reached by links.",
		plural(s.Seeds, "HTML file", "HTML files"), s.URLs-s.Seeds, map[bool]string{true: "URL", false: "URLs"}[s.URLs-s.Seeds == 1])
	if s.Orphans > 0 {
		line += fmt.Sprintf(" Linked from no other page: %s.", r.someFiles(r.Orphans))
	}
	if n := len(r.LinkedOut); n > 0 {
		// ok, as a web server serves them, but a page or a stylesheet
		// among them had its links go unchecked: say which.
		what := "files are symlinks out of the directory, to files that exist (ok, as a web server serves them; not read)"
		if n == 1 {
			what = "file is a symlink out of the directory, to a file that exists (ok, as a web server serves it; not read)"
		}
		line += fmt.Sprintf(" %d %s: %s.", n, what, r.someFiles(r.LinkedOut))
	}
	return line
}

// someFiles names the first few of urls by their files, and how many more.
func (r *Report) someFiles(urls []string) string {
	const named = 5
	shown := make([]string, 0, named)
	for _, u := range urls[:min(named, len(urls))] {
		shown = append(shown, r.Location(u))
	}
	more := ""
	if len(urls) > named {
		more = fmt.Sprintf(" and %d more", len(urls)-named)
	}
	return strings.Join(shown, ", ") + more
}

// SchemeLine says how many pages were read under the other scheme of a
// start host, and what folds the two into one, or "" when none was: on a
// site that serves both, one absolute http:// link walks the whole site
// again (review9 R2).
func (r *Report) SchemeLine() string {
	s := r.Summary
	if s.OtherScheme == 0 {
		return ""
	}
	scheme, _ := schemeHost(s.OtherSchemeOrigin)
	return fmt.Sprintf("%s read under %s as well as %s (links written with %s:// lead there, and the site serves them); "+
		"if both schemes serve the same pages, alias_start_hosts = true in the config file reads each page once.",
		plural(s.OtherScheme, "page was", "pages were"), s.OtherSchemeOrigin, s.OtherSchemeStart, scheme)
}

// ReuseLine says which results were carried over from earlier passes
// without a request, and from when, or "" when every URL was fetched.
func (r *Report) ReuseLine() string {
	s := r.Summary
	if s.Reused == 0 {
		return ""
	}
	var from string
	switch n := len(s.ReusedFrom); n {
	case 1:
		from = "pass " + strconv.FormatUint(s.ReusedFrom[0], 10)
	case 2:
		from = fmt.Sprintf("passes %d and %d", s.ReusedFrom[0], s.ReusedFrom[1])
	default:
		from = fmt.Sprintf("passes %d to %d", s.ReusedFrom[0], s.ReusedFrom[n-1])
	}
	when := ""
	if !s.ReusedOldest.IsZero() {
		newest, oldest := age(r.Options.Now.Sub(s.ReusedNewest)), age(r.Options.Now.Sub(s.ReusedOldest))
		if newest == oldest {
			when = ", checked " + oldest + " ago"
		} else {
			when = ", checked " + newest + " to " + oldest + " ago"
		}
	}
	return fmt.Sprintf("%s reused from %s%s, without a new request; --no-reuse fetches everything.",
		plural(s.Reused, "result", "results"), from, when)
}

// Nothing is the sentence for a report that lists nothing, or "" when it
// lists something. An unfinished pass has found nothing so far, which is
// not the same as nothing.
func (r *Report) Nothing() string {
	if !r.nothingListed() && !r.onlyHeldListed() {
		return ""
	}
	so := "."
	if r.Pass.State != store.PassComplete {
		so = " so far."
	}
	switch {
	case r.StartFailure != "" && r.nothingBehindStarts:
		// The first line already says why; "no problems" would read as a
		// clean night when nothing behind the start URLs was looked at.
		return "Nothing behind the start URLs was checked."
	case r.StartFailure != "":
		return "No other problems found behind the start URLs that were checked" + so
	case r.Options.OnlyNew:
		return "No new problems" + so
	case r.Summary.Suppressed > 0:
		return fmt.Sprintf("No problems to report%s (%d suppressed by --report-after)", strings.TrimSuffix(so, "."), r.Summary.Suppressed) + "."
	case r.Summary.heldBack():
		// The first line says PARTLY CHECKED already; this one must not
		// read as "the whole site is fine" either.
		var unchecked []string
		for _, k := range heldKinds {
			if n := k.count(r.Summary); n > 0 {
				unchecked = append(unchecked, k.nothing(r, n))
			}
		}
		return fmt.Sprintf("No problems found among the URLs checked%s; %s.", strings.TrimSuffix(so, "."), strings.Join(unchecked, "; "))
	case r.Summary.SamePage.Count > 0:
		// Not a clean night to read at a glance: the line above says
		// broken links may hide behind a page answering 200 (qa10 Q3).
		return fmt.Sprintf("No problems found%s, unless the %d URLs that answered the same page are missing (see above).", strings.TrimSuffix(so, "."), r.Summary.SamePage.Count)
	}
	return "No problems found" + so
}

// CutHelp says what the section of pages cut short is for.
const CutHelp = "only the first part of these pages was read, so their links past the cut were not checked (the pass exits 5 if nothing worse happened)"

// NotTakenHelp says what the section of sitemaps with entries not taken
// is for.
const NotTakenHelp = "the pass took no more URLs from sitemaps once it had taken the most it takes, so these entries were not checked (the pass exits 5 if nothing worse happened)"

// NotTakenAdvice says what lets a sitemap's entries that were not taken
// through.
const NotTakenAdvice = "raise --sitemap-limit (sitemap_limit in the config file)"

// notTakenText is one line for a sitemap with entries not taken.
func (r *Report) notTakenText(rec store.URLRecord) string {
	return fmt.Sprintf("%s: %s not taken; %s", r.Location(rec.URL), plural(rec.NotTaken, "entry", "entries"), NotTakenAdvice)
}

// CutAdvice says what would let the whole of a page cut short be read.
func CutAdvice(rec store.URLRecord) string {
	var advice []string
	if rec.Cut&store.CutSize != 0 {
		advice = append(advice, "raise --max-size (max_size in the config file)")
	}
	if rec.Cut&store.CutLinks != 0 {
		// The bound on links per page is no setting: it caps what one
		// page may cost.
		advice = append(advice, "the links read from one page are capped at a fixed number: split the page")
	}
	return strings.Join(advice, "; ")
}

// cutText is one line for a page cut short: where, what its note says and
// what would let all of it be read.
func (r *Report) cutText(rec store.URLRecord) string {
	return r.Location(rec.URL) + ": " + rec.Note + "; " + CutAdvice(rec)
}

// MovedHelp says what the permanent redirects section is for.
const MovedHelp = "the links work but have moved for good; update them to the target (not counted in the exit code)"

// MovedTo names the permanent redirect of a moved link: "301 Moved
// Permanently to", followed by the target.
func MovedTo(rec store.URLRecord) string {
	s := rec.Redirects[0].Status
	return strconv.Itoa(s) + " " + http.StatusText(s) + " to"
}

// movedText is one line for an annotation of a permanent redirect.
func (r *Report) movedText(e Entry) string {
	return r.Location(e.Record.URL) + ": " + MovedTo(e.Record) + " " + r.Location(e.Record.FinalURL) + "; update the link"
}

// ReusedNote marks a result that this pass did not fetch, or "".
func (r *Report) ReusedNote(rec store.URLRecord) string {
	if rec.ReusedFrom == 0 {
		return ""
	}
	if rec.FetchedAt.IsZero() {
		return fmt.Sprintf("reused from pass %d", rec.ReusedFrom)
	}
	return fmt.Sprintf("reused from pass %d, checked %s ago", rec.ReusedFrom, age(r.Options.Now.Sub(rec.FetchedAt)))
}

// ChangeLine says what changed since the previous complete pass, or "" when
// there is none. It counts problems, the word the summary's broken,
// transient and unverifiable add up to: "still broken" beside "6 broken"
// would count transient ones as broken.
func (r *Report) ChangeLine() string {
	if r.Previous == nil {
		return ""
	}
	s := r.Summary
	unchecked := ""
	if s.Unchecked > 0 {
		// --only-new lists new problems only: these are not (RV2 #7).
		where := "listed below"
		if r.Options.OnlyNew {
			where = "not listed: --only-new lists new problems only"
		}
		unchecked = fmt.Sprintf(", %d not checked this pass (a problem when last checked, %s)", s.Unchecked, where)
	}
	return fmt.Sprintf("Since pass %d (%s): %s, %d still there, %d fixed, %d no longer linked%s.",
		r.Previous.ID, passTime(*r.Previous).In(r.Options.Now.Location()).Format("2006-01-02 15:04"),
		plural(s.New, "new problem", "new problems"), s.StillBroken, s.Fixed, s.Gone, unchecked)
}

// SectionTitle names a section for people.
func SectionTitle(v store.Verdict) string {
	switch v {
	case store.VerdictBroken:
		return "Broken"
	case store.VerdictTransient:
		return "Transient"
	case store.VerdictUnverifiable:
		return "Unverifiable"
	case store.VerdictSkipped:
		return "Skipped"
	case store.VerdictOK:
		return "OK"
	}
	return string(v)
}

// fragmentNote marks a missing fragment new since the previous complete
// pass, as changeNote does an entry.
func (r *Report) fragmentNote(m MissingFragment) string {
	if m.Change == ChangeUnchecked {
		return r.fragmentLastChecked(m)
	}
	if r.Previous == nil || m.Change != ChangeNew {
		return ""
	}
	return "new since pass " + strconv.FormatUint(r.Previous.ID, 10)
}

// fragmentLastChecked says, for a missing fragment whose page this pass
// could not read, that it was not checked and when it was last found
// missing: in the compared pass if its page was read then (pass N), or
// else in an earlier one.
func (r *Report) fragmentLastChecked(m MissingFragment) string {
	msg := "NOT CHECKED this pass: its page could not be read"
	if m.Page != nil {
		msg += ": " + Problem(*m.Page)
	}
	msg += "; missing when last checked"
	if p := m.Page; p != nil && r.Previous != nil && p.PrevPass == r.Previous.ID && p.PrevVerdict == store.VerdictOK {
		msg += fmt.Sprintf(" (pass %d, %s)", r.Previous.ID, passTime(*r.Previous).In(r.Options.Now.Location()).Format("2006-01-02 15:04"))
	}
	return msg
}

// changeNote marks an entry for people: only "new" is worth a word, and only
// when there is a previous pass to be new against.
func (r *Report) changeNote(e Entry) string {
	if r.Previous == nil || e.Change != ChangeNew {
		return ""
	}
	if rec := e.Record; rec.PrevPass == r.Previous.ID && rec.PrevVerdict.Problem() {
		// New to the report, not to the site: it was a problem then,
		// too young to be reported (qa5 N9).
		return fmt.Sprintf("first reported now: a problem in pass %d too, not reported then (--report-after %s)", r.Previous.ID, r.Options.ReportAfter)
	}
	return "new since pass " + strconv.FormatUint(r.Previous.ID, 10)
}

// isStart reports whether u is one of the pass's start URLs.
func (r *Report) isStart(u string) bool {
	for _, s := range r.Pass.StartURLs {
		if s == u {
			return true
		}
	}
	return false
}

// note is the record's note as the human formats show it: without the
// redirect it was reached by when no page links to it, since noReferrers
// says that on the same entry ("linked from: no page; reached only by a
// redirect from ..."). JSON and CSV keep the note as stored.
func (r *Report) note(e Entry) string {
	note, unread := r.recordNote(e), r.unreadNote(e.Record)
	if note == "" || unread == "" {
		return note + unread
	}
	return note + "; " + unread
}

// recordNote is what note says of e besides its being a page not read.
func (r *Report) recordNote(e Entry) string {
	if len(e.Referrers) == 0 && strings.HasPrefix(e.Record.Note, store.RedirectNote) {
		return ""
	}
	if r.ownRobots(&e.Record) {
		return strings.TrimPrefix(e.Record.Note+"; "+RobotsAdvice, "; ")
	}
	if e.Record.Verdict == store.VerdictSkipped && e.Record.Error == store.ErrorQuota {
		note := strings.TrimPrefix(e.Record.Note+"; "+QuotaAdvice, "; ")
		if last := r.LastChecked(e); last != "" {
			note = last + "; " + note
		}
		return note
	}
	note := withAdvice(e.Record, r.ownSite(e.Record.URL))
	if last := r.LastChecked(e); last != "" {
		return strings.TrimSuffix(last+"; "+note, "; ")
	}
	return note
}

// InsecureAdvice says what lets a certificate that is not trusted through.
// It is given only for the hosts of the start URLs: a staging host with a
// self-signed certificate is the user's to vouch for, another site's is
// not, and a broken certificate there is the link's problem to report.
const InsecureAdvice = "--insecure skips certificate checks (for a staging host you run; every report then begins INSECURE:)"

// withAdvice is rec's note with the setting that would let it through,
// where there is one the user may choose; own says rec is on the host of
// a start URL.
func withAdvice(rec store.URLRecord, own bool) string {
	if rec.Error == store.ErrorTLS && own {
		return strings.TrimPrefix(rec.Note+"; "+InsecureAdvice, "; ")
	}
	return rec.Note
}

// QuotaAdvice says what would let the URLs a host's quota left unchecked
// through.
const QuotaAdvice = "raise --quota-requests or --quota-bytes (quota_requests, quota_bytes in the config file or a [[host]]), or 0 for no quota"

// LastChecked says, for an entry a limit held back this pass that was a
// problem when it was last checked (ChangeUnchecked), what it was and
// since when, so that a link broken last night is never dropped from the
// report because tonight it was not looked at; "" otherwise.
func (r *Report) LastChecked(e Entry) string {
	if e.Change != ChangeUnchecked {
		return ""
	}
	rec := e.Record
	what, when := "a problem", "" // which problem is not known
	if rec.PrevVerdict.Problem() {
		if rec.PrevVerdict != store.VerdictTransient {
			what = string(rec.PrevVerdict)
		}
		if r.Previous != nil && rec.PrevPass == r.Previous.ID {
			when = fmt.Sprintf(" (pass %d, %s)", rec.PrevPass, passTime(*r.Previous).In(r.Options.Now.Location()).Format("2006-01-02 15:04"))
		} else if e.Behind != "" && !rec.FetchedAt.IsZero() {
			when = fmt.Sprintf(" (pass %d, %s)", rec.PrevPass, rec.FetchedAt.In(r.Options.Now.Location()).Format("2006-01-02 15:04"))
		}
	}
	msg := "NOT CHECKED this pass; " + what + " when last checked" + when
	if e.Behind != "" {
		why := ", which could not be read"
		if e.Behind == r.EmptyStart {
			why = ", the start page, which has no links this pass"
			if !r.isStart(e.Behind) {
				why = ", which came back empty (0 bytes) this pass"
			}
		}
		lead := "only linked from behind " + r.Location(e.Behind)
		if e.Behind == r.EmptyStart && len(e.Referrers) == 0 {
			// No kept copy links to it: the start page's own links of
			// the last pass were replaced by its empty read.
			lead = "linked from no page read this pass, perhaps from " + r.Location(e.Behind) + " itself"
		}
		msg = "NOT CHECKED this pass: " + lead + why + ", so nothing says the link is gone; " +
			what + " when last checked" + when
	}
	if !rec.FirstBroken.IsZero() {
		word := "failing"
		if what == string(store.VerdictBroken) {
			word = "broken"
		}
		msg += fmt.Sprintf(", %s since %s", word, rec.FirstBroken.In(r.Options.Now.Location()).Format("2006-01-02 15:04"))
	}
	return msg
}

// RobotsAdvice says what would let a URL of the site that its robots.txt
// disallows be checked.
const RobotsAdvice = "--ignore-robots checks the site's own hosts anyway (never other hosts)"

// noReferrers explains an entry that no stored page links to.
func (r *Report) noReferrers(e Entry) string {
	if r.isStart(e.Record.URL) {
		return "a start URL; no page links to it"
	}
	if e.Record.Action == "sitemap" {
		return "a sitemap the pass was seeded from"
	}
	if from, ok := strings.CutPrefix(e.Record.Note, store.RedirectNote); ok {
		// Part of a redirect chain (a loop above all): no page was lost.
		return "no page; reached only by a redirect from " + r.Location(from)
	}
	return "no referring page stored"
}

// pageRefs is one referring page and the lines on which it links to a URL.
type pageRefs struct {
	Page  string
	Lines []int
	From  Referrer // Referrer.copyOf of these lines
}

// maxLinesShown is how many line numbers of one page are listed before the
// rest are counted.
const maxLinesShown = 8

// lines is ":12" for one line, or ": lines 3, 7, ... (746)" for several;
// a link of the page's Refresh header is ": Refresh header" before them.
func (p pageRefs) lines() string {
	return p.lineList() + p.From.Carried()
}

func (p pageRefs) lineList() string {
	lines := p.Lines
	if lines[0] == headerLine {
		// Sorted: the Refresh header's link comes first.
		if len(lines) == 1 {
			return ": " + headerWhere
		}
		lines = lines[1:]
		if len(lines) == 1 {
			return ": " + headerWhere + ", line " + strconv.Itoa(lines[0])
		}
		return ": " + headerWhere + ", " + pageRefs{Lines: lines}.lineList()[2:]
	}
	if len(lines) == 1 {
		return ":" + strconv.Itoa(lines[0])
	}
	var b strings.Builder
	b.WriteString(": lines ")
	for i, l := range lines {
		if i == maxLinesShown {
			fmt.Fprintf(&b, ", ... (%d)", len(lines))
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(l))
	}
	return b.String()
}

func pageWord(n int) string {
	if n == 1 {
		return "page"
	}
	return "pages"
}

// byPage groups referrers (sorted by page, then line) by page.
func byPage(refs []Referrer) []pageRefs {
	var out []pageRefs
	for _, ref := range refs {
		if n := len(out); n > 0 && out[n-1].Page == ref.Page && out[n-1].From.carriedNote() == ref.carriedNote() {
			if last := out[n-1].Lines; last[len(last)-1] != ref.Line {
				out[n-1].Lines = append(last, ref.Line)
			}
			continue
		}
		out = append(out, pageRefs{Page: ref.Page, Lines: []int{ref.Line}, From: ref.copyOf()})
	}
	return out
}
