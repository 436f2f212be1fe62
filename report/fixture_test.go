package report

import (
	"cmp"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/store"
)

// A fixture is a history of passes, each as the results the crawler would
// commit; fill replays it into a Source.
type fixturePass struct {
	pass    store.Pass
	results []store.Result
}

var (
	day    = 24 * time.Hour
	now    = time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	night1 = time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	night2 = time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC)
)

func page(u string, links ...store.Link) store.Result {
	return store.Result{
		Record:   store.URLRecord{URL: u, Action: "parse", Verdict: store.VerdictOK, Status: 200, Parsed: true, LastGood: night2, FirstSeen: night1},
		SetLinks: true,
		Links:    links,
	}
}

func link(u string, line int) store.Link {
	return store.Link{URL: u, Line: line, Tag: "a", Attr: "href"}
}

func target(rec store.URLRecord) store.Result {
	if rec.Action == "" {
		rec.Action = "check"
	}
	return store.Result{Record: rec}
}

const (
	xssURL  = `https://example.com/search?q=<script>alert("x")</script>|&amp;` + "`"
	longURL = "https://example.com/archive/2026/11/23/a-post-whose-title-goes-on-and-on-and-on-until-it-cannot-possibly-fit-in-a-mail.html?utm_source=newsletter&utm_medium=email&utm_campaign=november"
)

// webHistory is two nightly passes over a site served over HTTP: the second
// has every kind of problem and every kind of change.
func webHistory() []fixturePass {
	start := []string{"https://example.com/"}
	var tagLinks []store.Link
	for i := range 23 {
		tagLinks = append(tagLinks, link("https://slow.example.com/", 100+i))
	}
	tagLinks = append(tagLinks, link(longURL, 130))
	return []fixturePass{
		{
			pass: store.Pass{StartURLs: start, State: store.PassComplete, Started: night1, Finished: night1.Add(80 * time.Second), Elapsed: 80 * time.Second,
				Tally: &store.Tally{Broken: 4, Transient: 1, Unverifiable: 1, New: 2, Still: 4, Fixed: 3}},
			results: []store.Result{
				page("https://example.com/", link("https://example.com/removed-page", 3), link("https://old.example.com/", 4)),
				target(store.URLRecord{URL: "https://example.com/removed-page", Verdict: store.VerdictBroken, Status: 404, FirstBroken: night1.Add(-2 * day), Failures: 3}),
				target(store.URLRecord{URL: "https://old.example.com/", Verdict: store.VerdictTransient, Error: "timeout", LastGood: night1.Add(-9 * day), FirstBroken: night1.Add(-day), Failures: 2}),
				// What pass 2 finds again, as pass 1 left it: the PrevVerdict of
				// each record in pass 2.
				target(store.URLRecord{URL: "https://example.com/missing.html", Verdict: store.VerdictBroken, Status: 404, FirstSeen: night1.Add(-3 * day), FirstBroken: night1.Add(-3 * day), Failures: 3}),
				target(store.URLRecord{URL: "https://example.com/old-post", Verdict: store.VerdictBroken, Status: 410, LastGood: time.Date(2026, 11, 1, 3, 0, 0, 0, time.UTC), FirstBroken: time.Date(2026, 11, 20, 3, 0, 0, 0, time.UTC), Failures: 2}),
				target(store.URLRecord{URL: "https://cdn.example.net/img/photo-2x.jpg", Verdict: store.VerdictOK, Status: 200, LastGood: night1}),
				target(store.URLRecord{URL: "https://api.example.com/status", Verdict: store.VerdictOK, Status: 200, LastGood: night1}),
				target(store.URLRecord{URL: "https://slow.example.com/", Verdict: store.VerdictTransient, Error: "timeout", LastGood: night1.Add(-5 * day), FirstBroken: night1.Add(-4 * day), Failures: 4}),
				target(store.URLRecord{URL: "https://www.linkedin.com/in/someone", Verdict: store.VerdictUnverifiable, Status: 999, FirstBroken: night1.Add(-30 * day), Failures: 29}),
				target(store.URLRecord{URL: "https://example.com/private/", Verdict: store.VerdictOK, Status: 200, LastGood: night1}),
				target(store.URLRecord{URL: "https://example.com/fixed.html", Verdict: store.VerdictBroken, Status: 404, FirstBroken: night1.Add(-day), Failures: 2}),
			},
		},
		{
			pass: store.Pass{StartURLs: start, State: store.PassComplete, Started: night2, Finished: night2.Add(90 * time.Second), Elapsed: 90 * time.Second},
			results: []store.Result{
				page("https://example.com/",
					link("https://example.com/about/", 9),
					link("https://example.com/missing.html", 12),
					link("https://example.com/blog/", 14),
					link("https://example.com/missing.html", 40),
					link("https://example.com/fixed.html", 41),
					store.Link{URL: "https://cdn.example.net/img/photo-2x.jpg", Line: 31, Tag: "img", Attr: "srcset"},
					link("https://gone.example.org/", 50),
				),
				page("https://example.com/about/",
					link("https://example.com/missing.html", 7),
					store.Link{URL: "https://example.com/old-post", Fragment: "comments", Line: 22, Tag: "a", Attr: "href"},
					link("https://www.linkedin.com/in/someone", 30),
					link("https://example.com/private/", 31),
					link(xssURL, 32),
					link("https://example.com/admin/", 33),
					link("https://api.example.com/status", 34),
				),
				page("https://example.com/blog/", tagLinks...),
				target(store.URLRecord{URL: "https://example.com/missing.html", Verdict: store.VerdictBroken, Status: 404,
					FirstSeen: night1.Add(-3 * day), FirstBroken: night1.Add(-3 * day), Failures: 4, PrevVerdict: store.VerdictBroken, PrevPass: 1}),
				target(store.URLRecord{URL: "https://example.com/old-post", Verdict: store.VerdictBroken, Status: 410, FinalURL: "https://example.com/posts/old-post/",
					Redirects: []store.Hop{{URL: "https://example.com/old-post", Status: 301}, {URL: "https://example.com/posts/old-post/", Status: 410}},
					LastGood:  time.Date(2026, 11, 1, 3, 0, 0, 0, time.UTC), FirstBroken: time.Date(2026, 11, 20, 3, 0, 0, 0, time.UTC), Failures: 3,
					PrevVerdict: store.VerdictBroken, PrevPass: 1}),
				target(store.URLRecord{URL: "https://cdn.example.net/img/photo-2x.jpg", Verdict: store.VerdictBroken, Status: 404,
					LastGood: night1, FirstBroken: night2.Add(40 * time.Second), Failures: 1, PrevVerdict: store.VerdictOK, PrevPass: 1}),
				target(store.URLRecord{URL: "https://gone.example.org/", Verdict: store.VerdictBroken, Error: "dns", FirstSeen: night2, FirstBroken: night2.Add(time.Second), Failures: 1}),
				target(store.URLRecord{URL: xssURL, Verdict: store.VerdictBroken, Error: "invalid URL", FirstSeen: night2, FirstBroken: night2.Add(time.Second), Failures: 1,
					Note: `<b>bold</b> & <script>alert(1)</script>`}),
				target(store.URLRecord{URL: longURL, Verdict: store.VerdictBroken, Status: 404, FirstSeen: night2, FirstBroken: night2.Add(time.Second), Failures: 1}),
				target(store.URLRecord{URL: "https://api.example.com/status", Verdict: store.VerdictTransient, Status: 503,
					LastGood: night1, FirstBroken: night2.Add(20 * time.Second), Failures: 1, PrevVerdict: store.VerdictOK, PrevPass: 1}),
				target(store.URLRecord{URL: "https://slow.example.com/", Verdict: store.VerdictTransient, Error: "timeout",
					LastGood: night1.Add(-5 * day), FirstBroken: night1.Add(-4 * day), Failures: 5, PrevVerdict: store.VerdictTransient, PrevPass: 1}),
				target(store.URLRecord{URL: "https://www.linkedin.com/in/someone", Verdict: store.VerdictUnverifiable, Status: 999,
					FirstBroken: night1.Add(-30 * day), Failures: 30, PrevVerdict: store.VerdictUnverifiable, PrevPass: 1}),
				target(store.URLRecord{URL: "https://example.com/private/", Verdict: store.VerdictUnverifiable, Status: 403, Note: "bot challenge",
					LastGood: night1, FirstBroken: night2.Add(5 * time.Second), Failures: 1, PrevVerdict: store.VerdictOK, PrevPass: 1}),
				target(store.URLRecord{URL: "https://example.com/admin/", Action: "skip", Verdict: store.VerdictSkipped, Note: "skipped: robots"}),
				target(store.URLRecord{URL: "https://example.com/fixed.html", Verdict: store.VerdictOK, Status: 200, LastGood: night2,
					PrevVerdict: store.VerdictBroken, PrevPass: 1}),
			},
		},
	}
}

// dirHistory is one check of a built site on disk, stopped half way.
func dirHistory() []fixturePass {
	return []fixturePass{{
		pass: store.Pass{StartURLs: []string{"file:///work/site/"}, Root: "/work/site", Roots: []string{"/work/site"}, RelativePaths: true, State: store.PassStopped, Started: night2, Elapsed: 90 * time.Second},
		results: []store.Result{
			page("file:///work/site/",
				link("file:///work/site/about/", 5),
				link("file:///work/site/about/team.html", 6),
				store.Link{URL: "file:///work/site/img/logo%20big.png", Line: 8, Tag: "img", Attr: "src"},
				link("https://example.org/gone", 9),
			),
			page("file:///work/site/about/", link("file:///work/site/about/team.html", 12), store.Link{URL: "file:///work/site/", Fragment: "top", Line: 40, Tag: "a", Attr: "href"}),
			target(store.URLRecord{URL: "file:///work/site/about/team.html", Verdict: store.VerdictBroken, Status: 404, FirstSeen: night2, FirstBroken: night2, Failures: 1}),
			target(store.URLRecord{URL: "file:///work/site/img/logo%20big.png", Verdict: store.VerdictBroken, Status: 404, FirstSeen: night2, FirstBroken: night2, Failures: 1}),
			target(store.URLRecord{URL: "https://example.org/gone", Verdict: store.VerdictBroken, Status: 404, FirstSeen: night2, FirstBroken: night2, Failures: 1}),
		},
	}}
}

// cutHistory is one complete check of a built site with nothing broken
// among what was read, but two pages read only in part: one cut at
// --max-size, one also past the bound on links per page.
func cutHistory() []fixturePass {
	cut := func(u string, c store.Cut, note string, links ...store.Link) store.Result {
		r := page(u, links...)
		r.Record.Cut, r.Record.Note = c, note
		return r
	}
	const size = "page larger than 10485760 bytes: only the first part was checked"
	return []fixturePass{{
		pass: store.Pass{StartURLs: []string{"file:///work/site/"}, Root: "/work/site", Roots: []string{"/work/site"}, RelativePaths: true,
			State: store.PassComplete, Started: night2, Finished: night2.Add(time.Minute), Elapsed: time.Minute},
		results: []store.Result{
			cut("file:///work/site/", store.CutSize, size, link("file:///work/site/ok.html", 2), link("file:///work/site/links.html", 3)),
			page("file:///work/site/ok.html"),
			cut("file:///work/site/links.html", store.CutSize|store.CutLinks, size+"; page has more than 100000 links: only the first 100000 were checked",
				link("file:///work/site/ok.html", 1)),
		},
	}}
}

// carriedHistory is cutHistory where the page cut at --max-size was read
// whole the night before: its link to gone.html, not in the part read now,
// is carried from that copy (store.URLRecord.Carried), and is broken.
func carriedHistory() []fixturePass {
	h := cutHistory()
	res := &h[0].results[0]
	res.Record.Carried, res.Record.CarriedFrom = 1, night1
	res.Record.Note += "; 1 link not in the part read carried from its last full copy (2026-11-22)"
	res.Links = append(res.Links, link("file:///work/site/gone.html", 9003))
	h[0].results = append(h[0].results, target(store.URLRecord{URL: "file:///work/site/gone.html", Verdict: store.VerdictBroken,
		Error: "no such file", FirstSeen: night1, FirstBroken: night1, Failures: 2}))
	return h
}

// robotsHistory is one complete pass with nothing broken, but two URLs of
// the site's own host that its robots.txt disallows, one URL of another
// host that its robots.txt disallows, and one that --exclude skips.
func robotsHistory() []fixturePass {
	const site = "https://example.com/"
	robots := func(u string) store.Result {
		return target(store.URLRecord{URL: u, Action: "check", Verdict: store.VerdictSkipped, Error: "robots", Note: "skipped: robots.txt disallows it", FirstSeen: night2})
	}
	return []fixturePass{{
		pass: store.Pass{StartURLs: []string{site}, State: store.PassComplete, Started: night2, Finished: night2.Add(time.Minute), Elapsed: time.Minute},
		results: []store.Result{
			page(site, link(site+"ok", 2), link(site+"sub/a", 3), link(site+"sub/b", 4), link("https://other.example/private", 5), link("https://twitter.com/someone", 6)),
			target(store.URLRecord{URL: site + "ok", Verdict: store.VerdictOK, Status: 200, LastGood: night2}),
			robots(site + "sub/a"), robots(site + "sub/b"), robots("https://other.example/private"),
			target(store.URLRecord{URL: "https://twitter.com/someone", Action: "skip", Verdict: store.VerdictSkipped, Note: "skipped: --exclude twitter"}),
		},
	}}
}

// quotaHistory is two passes over a site; in the second a host's quota ran
// out before /gone, broken in the first, and before /new, never checked:
// both are listed with the setting that lets them through, and /gone with
// what it was when last checked.
func quotaHistory() []fixturePass {
	const site = "https://example.com/"
	const quota = "skipped: the host's quota for this pass is used up"
	return []fixturePass{{
		pass: store.Pass{StartURLs: []string{site}, State: store.PassComplete, Started: night1, Finished: night1.Add(time.Minute), Elapsed: time.Minute},
		results: []store.Result{
			page(site, link(site+"ok", 2), link(site+"gone", 3)),
			target(store.URLRecord{URL: site + "ok", Verdict: store.VerdictOK, Status: 200, LastGood: night1}),
			target(store.URLRecord{URL: site + "gone", Verdict: store.VerdictBroken, Status: 404, FirstSeen: night1, FirstBroken: night1, Failures: 1}),
		},
	}, {
		pass: store.Pass{StartURLs: []string{site}, State: store.PassComplete, Started: night2, Finished: night2.Add(time.Minute), Elapsed: time.Minute},
		results: []store.Result{
			page(site, link(site+"ok", 2), link(site+"gone", 3), link(site+"new", 4)),
			target(store.URLRecord{URL: site + "ok", Verdict: store.VerdictOK, Status: 200, LastGood: night2, PrevVerdict: store.VerdictOK, PrevPass: 1}),
			target(store.URLRecord{URL: site + "gone", Action: "skip", Verdict: store.VerdictSkipped, Error: "quota", Note: quota,
				FirstSeen: night1, FirstBroken: night1, Failures: 1, PrevVerdict: store.VerdictBroken, PrevPass: 1}),
			target(store.URLRecord{URL: site + "new", Action: "skip", Verdict: store.VerdictSkipped, Error: "quota", Note: quota, FirstSeen: night2}),
		},
	}}
}

// downHistory is a complete pass whose only start URL answered 503: the
// site was down, nothing behind it was checked, and the pass exits 4.
func downHistory() []fixturePass {
	const site = "https://example.com/"
	return []fixturePass{{
		pass: store.Pass{StartURLs: []string{site}, State: store.PassComplete, Started: night2, Finished: night2.Add(time.Minute), Elapsed: time.Minute},
		results: []store.Result{
			target(store.URLRecord{URL: site, Action: "parse", Verdict: store.VerdictTransient, Status: 503, FirstSeen: night2, FirstBroken: night2, Failures: 1}),
		},
	}}
}

// sitemapHistory is one pass seeded from a sitemap of 200 URLs with the
// sitemap limit at 50: 150 entries were not taken, and no record of
// theirs exists, so the report says how many and from which sitemap.
func sitemapHistory() []fixturePass {
	const site = "https://example.com/"
	return []fixturePass{{
		pass: store.Pass{StartURLs: []string{site}, State: store.PassComplete, Started: night2, Finished: night2.Add(time.Minute), Elapsed: time.Minute},
		results: []store.Result{
			page(site, link(site+"ok", 2)),
			target(store.URLRecord{URL: site + "ok", Verdict: store.VerdictOK, Status: 200, LastGood: night2}),
			{Record: store.URLRecord{URL: site + "sitemap.xml", Action: "sitemap", Verdict: store.VerdictOK, Status: 200, LastGood: night2, NotTaken: 150,
				Note: "lists 150 entries more than the most a pass takes from sitemaps (50, --sitemap-limit): they were not taken"},
				SetLinks: true, Links: []store.Link{{URL: site + "ok", Line: 3, Tag: "url", Attr: "loc"}}},
		},
	}}
}

// unreadHistory is one pass over a site two of whose sections could not
// be read: /section/ answered 503 and /private/ 403, so nothing behind
// them was checked (exit 5, qa5 N4). /docs/ answered 503 too, but it was
// followed from its last good copy (a ghost): what is behind it was
// checked. A third-party link that timed out is a problem reported, not
// a part of the site hidden, and so is /report.pdf, a 403 sent as a PDF:
// no page, nothing behind it (qa6 Q6).
func unreadHistory() []fixturePass {
	const site = "https://example.com/"
	ghost := page(site+"docs/", link(site+"docs/a", 4))
	ghost.Record.Verdict, ghost.Record.Status, ghost.Record.Note = store.VerdictTransient, 503, "ghost: following its links from 2026-11-22"
	ghost.Record.LastGood, ghost.Record.FirstBroken, ghost.Record.Failures = night1, night2, 1
	return []fixturePass{{
		pass: store.Pass{StartURLs: []string{site}, State: store.PassComplete, Started: night2, Finished: night2.Add(time.Minute), Elapsed: time.Minute},
		results: []store.Result{
			page(site, link(site+"section/", 2), link(site+"private/", 3), link(site+"docs/", 4), link("https://other.example.net/", 5), link(site+"report.pdf", 6)),
			target(store.URLRecord{URL: site + "section/", Action: "parse", Verdict: store.VerdictTransient, Status: 503, FirstSeen: night2, FirstBroken: night2, Failures: 1}),
			target(store.URLRecord{URL: site + "report.pdf", Action: "parse", Verdict: store.VerdictUnverifiable, Status: 403, ContentType: "application/pdf", FirstSeen: night2, FirstBroken: night2, Failures: 1}),
			target(store.URLRecord{URL: site + "private/", Action: "parse", Verdict: store.VerdictUnverifiable, Status: 403, FirstSeen: night2, FirstBroken: night2, Failures: 1}),
			ghost,
			target(store.URLRecord{URL: site + "docs/a", Verdict: store.VerdictOK, Status: 200, LastGood: night2}),
			target(store.URLRecord{URL: "https://other.example.net/", Verdict: store.VerdictTransient, Error: "timeout", FirstSeen: night2, FirstBroken: night2, Failures: 1}),
		},
	}}
}

// loopHistory is one pass over a site with redirects whose targets no page
// links to: a loop /loop1 -> /loop2 -> /loop1, a redirect to a missing page,
// and a redirect to a missing page that a page also links to.
func loopHistory() []fixturePass {
	const site = "https://example.com/"
	broken := func(rec store.URLRecord) store.Result {
		rec.Verdict, rec.FirstSeen, rec.FirstBroken, rec.Failures = store.VerdictBroken, night2, night2, 1
		if rec.FinalURL == "" {
			rec.FinalURL = rec.URL
		}
		return target(rec)
	}
	return []fixturePass{{
		pass: store.Pass{StartURLs: []string{site}, State: store.PassComplete, Started: night2, Finished: night2.Add(time.Minute), Elapsed: time.Minute},
		results: []store.Result{
			page(site, link(site+"loop1", 1), link(site+"moved", 2), link(site+"elsewhere", 3), link(site+"gone2", 4)),
			broken(store.URLRecord{URL: site + "loop1", Action: "parse", Status: 302, Error: "redirect loop",
				Redirects: []store.Hop{{URL: site + "loop1", Status: 302}, {URL: site + "loop2", Status: 302}}}),
			broken(store.URLRecord{URL: site + "loop2", Status: 302, Error: "redirect loop", FinalURL: site + "loop1",
				Redirects: []store.Hop{{URL: site + "loop2", Status: 302}}, Note: store.RedirectNote + site + "loop1"}),
			broken(store.URLRecord{URL: site + "moved", Action: "parse", Status: 404, FinalURL: site + "gone",
				Redirects: []store.Hop{{URL: site + "moved", Status: 302}}}),
			broken(store.URLRecord{URL: site + "gone", Action: "parse", Status: 404, Note: store.RedirectNote + site + "moved"}),
			broken(store.URLRecord{URL: site + "elsewhere", Action: "parse", Status: 404, FinalURL: site + "gone2",
				Redirects: []store.Hop{{URL: site + "elsewhere", Status: 302}}}),
			broken(store.URLRecord{URL: site + "gone2", Action: "parse", Status: 404, Note: store.RedirectNote + site + "elsewhere"}),
		},
	}}
}

// memSource keeps the store's read semantics in memory (one record per URL,
// the latest; links per page) for the fuzz target, where a bbolt file per
// input would be too slow. TestBuildFromStore checks it builds the same
// reports as the real store; every other test uses the real store.
type memSource struct {
	passes  []store.Pass
	records map[string]store.URLRecord
	links   map[string][]store.Link
}

func newMemSource(t testing.TB, history []fixturePass) *memSource {
	t.Helper()
	m := &memSource{records: map[string]store.URLRecord{}, links: map[string][]store.Link{}}
	for _, fp := range history {
		p := fp.pass
		p.ID = uint64(len(m.passes) + 1)
		for _, q := range slices.Backward(m.passes) {
			if q.State == store.PassComplete && q.SameSite(p) {
				p.Base = q.ID // as the store's BeginPass sets it
				break
			}
		}
		m.passes = append(m.passes, p)
		for _, res := range fp.results {
			rec := res.Record
			rec.Pass = p.ID
			m.records[rec.URL] = rec
			if res.SetLinks {
				m.links[rec.URL] = res.Links
			}
		}
	}
	return m
}

func (m *memSource) Pass(id uint64) (store.Pass, error) {
	if id == 0 || id > uint64(len(m.passes)) {
		return store.Pass{}, fmt.Errorf("no pass %d", id)
	}
	return m.passes[id-1], nil
}

func (m *memSource) Passes() ([]store.Pass, error) { return slices.Clone(m.passes), nil }

func (m *memSource) PreviousComplete(before uint64) (store.Pass, bool, error) {
	for id := min(before-1, uint64(len(m.passes))); id >= 1; id-- {
		if p := m.passes[id-1]; p.State == store.PassComplete {
			return p, true, nil
		}
	}
	return store.Pass{}, false, nil
}

func (m *memSource) sorted(passID uint64) []store.URLRecord {
	var out []store.URLRecord
	for _, rec := range m.records {
		if rec.Pass == passID {
			out = append(out, rec)
		}
	}
	slices.SortFunc(out, func(a, b store.URLRecord) int { return cmp.Compare(a.URL, b.URL) })
	return out
}

func (m *memSource) Records(passID uint64, fn func(*store.URLRecord) error) error {
	for _, rec := range m.sorted(passID) {
		if err := fn(&rec); err != nil {
			return err
		}
	}
	return nil
}

func (m *memSource) PageLinks(passID uint64, fn func(*store.URLRecord, []store.Link) error) error {
	for _, rec := range m.sorted(passID) {
		if links := m.links[rec.URL]; len(links) > 0 {
			if err := fn(&rec, links); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m *memSource) Get(u string) (store.URLRecord, bool, error) {
	rec, ok := m.records[u]
	return rec, ok, nil
}

func (m *memSource) Links(page string) ([]store.Link, error) { return m.links[page], nil }

func build(t testing.TB, src Source, passID uint64, opt Options) *Report {
	t.Helper()
	if opt.Now.IsZero() {
		opt.Now = now
	}
	r, err := Build(src, passID, opt)
	if err != nil {
		t.Fatalf("Build(pass %d): %v", passID, err)
	}
	return r
}

// reportAfterHistory is two nights reported with --report-after 2 (see
// golden case "reportafter"): a problem held back on night 1 that is fine
// on night 2 (never reported, so not fixed) and one still failing (first
// reported now); one reported on night 1 that is fine now (fixed); one held
// back and one reported on night 1 that night 2 no longer reaches (only the
// reported one is no longer linked); and a page that fails on night 2,
// whose last good copy, linking to itself, has its links followed (a
// ghost: not a page parsed, not its own referrer).
func reportAfterHistory() []fixturePass {
	const site = "https://example.com/"
	start := []string{site}
	broken := func(u string, failures int, first time.Time) store.Result {
		return target(store.URLRecord{URL: site + u, Verdict: store.VerdictBroken, Status: 404, FirstSeen: night1,
			FirstBroken: first, Failures: failures})
	}
	night0 := night1.Add(-day)
	ghost := page(site+"a.html", link(site+"a.html", 1), link(site+"c.html", 2), link(site+"a.html", 3))
	ghost.Record.Verdict, ghost.Record.Status, ghost.Record.Note = store.VerdictBroken, 404, "ghost: following its links from 2026-11-22"
	ghost.Record.LastGood, ghost.Record.FirstBroken, ghost.Record.Failures = night1, night2, 1
	ghost.Record.PrevVerdict, ghost.Record.PrevPass = store.VerdictOK, 1
	fine := func(u string, prevFailures int, prevFirst time.Time) store.Result {
		return target(store.URLRecord{URL: site + u, Verdict: store.VerdictOK, Status: 200, FirstSeen: night1, LastGood: night2,
			PrevVerdict: store.VerdictBroken, PrevPass: 1, PrevFailures: prevFailures, PrevFirstBroken: prevFirst})
	}
	still := broken("h.html", 2, night1)
	still.Record.PrevVerdict, still.Record.PrevPass = store.VerdictBroken, 1
	return []fixturePass{
		{
			pass: store.Pass{StartURLs: start, State: store.PassComplete, Started: night1, Finished: night1.Add(time.Minute), Elapsed: time.Minute},
			results: []store.Result{
				page(site, link(site+"f.html", 1), link(site+"h.html", 2), link(site+"k.html", 3), link(site+"g.html", 4),
					link(site+"r.html", 5), link(site+"a.html", 6)),
				broken("f.html", 1, night1),
				broken("h.html", 1, night1),
				broken("k.html", 2, night0),
				broken("g.html", 1, night1),
				broken("r.html", 3, night0.Add(-day)),
				page(site+"a.html", link(site+"a.html", 1), link(site+"c.html", 2), link(site+"a.html", 3)),
				page(site + "c.html"),
			},
		},
		{
			pass: store.Pass{StartURLs: start, State: store.PassComplete, Started: night2, Finished: night2.Add(time.Minute), Elapsed: time.Minute},
			results: []store.Result{
				page(site, link(site+"f.html", 1), link(site+"h.html", 2), link(site+"k.html", 3), link(site+"a.html", 6)),
				fine("f.html", 1, night1),
				still,
				fine("k.html", 2, night0),
				ghost,
				page(site + "c.html"),
			},
		},
	}
}
