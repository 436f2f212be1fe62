package crawler

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler/extract"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
)

// extractLinks turns a page body into its stored links and the targets to
// hand to the dispatcher, and with CheckFragments its anchors (see
// anchors). It runs on a worker, so the per-link cost (resolving,
// canonicalizing, deciding) is spread over all cores.
//
// A Refresh response header in header sends a browser on like a meta
// refresh: its URL is a link of the page on line 0 (it has no line in the
// body), resolved against the page's URL, since the header is read before
// any <base>.
func (c *Crawler) extractLinks(page *url.URL, header http.Header, body []byte, contentType string) ([]store.Link, []target, []string, bool) {
	doc, cs, err := extract.DecodeUTF8(body, contentType)
	if err != nil {
		doc = body
	}
	buf := c.pageBufs.get()
	defer c.pageBufs.put(buf)
	p := extract.Extract(doc, extract.Options{IDs: c.cfg.CheckFragments, MaxLinks: c.cfg.maxLinks, Links: buf.links})
	buf.links = p.Links
	var ids []string
	if c.cfg.CheckFragments {
		ids = anchors(p.IDs)
	}
	base := page
	s, _, local := c.siteOf(page.String())
	if local {
		base = s.publishedURL(page)
	}
	refresh := ""
	if v := header.Get("Refresh"); v != "" {
		if ref, ok := extract.RefreshHeader(v); ok {
			if u, err := rules.Resolve(base, cs.Query(ref)); err == nil {
				refresh = u.String()
			} else {
				refresh = ref // reported as the invalid URL it is
			}
		}
	}
	if p.Base != "" {
		if b, err := rules.Resolve(base, p.Base); err == nil {
			base = b
		}
	}
	col := newRefs(c, base, len(p.Links)+1, true, buf.seen)
	col.site = s
	if refresh != "" {
		col.add(refresh, store.Link{Tag: extract.RefreshHeaderTag, Attr: extract.RefreshHeaderAttr}, false, false)
	}
	for _, l := range p.Links {
		ref := l.URL
		if base.Scheme == "file" && strings.HasPrefix(strings.TrimLeft(ref, " \t\n\r\f"), "//") {
			// On the deployed site a scheme-relative link is another host
			// over https; resolved against file: it would be a local path.
			ref = "https:" + strings.TrimLeft(ref, " \t\n\r\f")
		}
		// Sent as a browser sends it: the query in the page's encoding.
		ref = cs.Query(ref)
		// An image or a script on our own host is verified, not parsed.
		col.add(ref, store.Link{Line: l.Line, Tag: l.Tag, Attr: l.Attr}, l.Kind == extract.KindResource, false)
	}
	return col.links, col.found, ids, p.More
}

// stylesheetLinks is extractLinks for a CSS file: its references are
// resolved against the stylesheet's own URL, as browsers do. An @import
// keeps the rules' action, so a stylesheet of the site it imports is read
// with one GET rather than checked with HEAD and then read.
func (c *Crawler) stylesheetLinks(sheet *url.URL, body []byte) ([]store.Link, []target) {
	ls := extract.Stylesheet(body)
	col := newRefs(c, sheet, len(ls), true, nil)
	for _, l := range ls {
		col.add(l.URL, store.Link{Line: l.Line, Tag: l.Tag, Attr: l.Attr}, l.Kind == extract.KindResource, false)
	}
	return col.links, col.found
}

// maxPageLinks bounds what one page costs by its links, not only by its
// bytes: every link becomes a stored link, a frontier entry and a task, and
// a page of a million links took minutes and a gigabyte to commit. Past it,
// the page is treated like one larger than --max-size.
const maxPageLinks = 100_000

// refs turns the references of one document (a page's links, a sitemap's
// entries) into its stored links and the targets for the dispatcher:
// resolved, rewritten and decided by the rules, deduplicated, and read
// against robots.txt where the host's file is known.
type refs struct {
	c      *Crawler
	base   *url.URL
	follow bool // false: record the links, hand nothing on
	links  []store.Link
	found  []target
	seen   map[string]struct{}
	// site, for a page of a checked directory, maps the links that lie on
	// its published site back to its files.
	site *site
	// dir and full are the baseKeys of base, once asked for.
	dir, full string
	robots    robotsMemo
}

// newRefs is the refs of a document of about n references; seen, when not
// nil, is an empty set to dedupe them in.
func newRefs(c *Crawler, base *url.URL, n int, follow bool, seen map[string]struct{}) *refs {
	if seen == nil {
		seen = make(map[string]struct{}, n)
	}
	return &refs{c: c, base: base, follow: follow, links: make([]store.Link, 0, n),
		found: make([]target, 0, n), seen: seen}
}

// pageBufs is what extractLinks needs only while it reads one page: the
// extracted links and the dedupe set. They are lent from page to page
// (bufPool): made anew for each, they were a tenth of the bytes a check of
// 10,000 pages allocated.
type pageBufs struct {
	links []extract.Link
	seen  map[string]struct{}
}

// maxPooledLinks bounds the buffers kept for the next page, so that one
// page of 100,000 links does not keep its memory for the rest of the run.
const maxPooledLinks = 4096

type bufPool struct{ p sync.Pool }

func (bp *bufPool) get() *pageBufs {
	if b, ok := bp.p.Get().(*pageBufs); ok {
		return b
	}
	return &pageBufs{seen: make(map[string]struct{})}
}

// put empties b, which its page holds nothing of any more, for the next.
func (bp *bufPool) put(b *pageBufs) {
	if cap(b.links) > maxPooledLinks || len(b.seen) > maxPooledLinks {
		return
	}
	clear(b.links[:cap(b.links)]) // the URLs are the page's strings
	b.links = b.links[:0]
	clear(b.seen)
	bp.p.Put(b)
}

// add records one reference; link carries its line, tag and attribute.
// A resource that the rules would parse is only checked; a sitemap entry
// of an index is itself a sitemap to read.
func (r *refs) add(ref string, link store.Link, resource, sitemap bool) {
	var res *resolvedRef
	if r.site != nil {
		// A page of a checked directory: its links map to its files.
		u, err := rules.Resolve(r.base, ref)
		if err != nil {
			r.invalid(link, ref, "invalid URL")
			return
		}
		if rules.Scheme(ref) == "file" {
			r.outside(link, u)
			return
		}
		res = r.c.decided(r.site.local(u))
	} else {
		res = r.resolve(ref)
	}
	if res.invalid != "" {
		r.invalid(link, res.raw, res.invalid)
		return
	}
	d := &res.d // shared: read only
	if d.Action == rules.Ignore {
		return
	}
	if len(d.URL) > store.MaxURLLength {
		r.invalid(link, d.URL, "URL too long")
		return
	}
	link.URL, link.Fragment = d.URL, d.Fragment
	r.links = append(r.links, link)
	if !r.first(d.URL) {
		return
	}
	tg := target{url: d.URL, host: d.Parsed.Host, action: d.Action, rule: d.Rule, sitemap: sitemap, dec: &res.d}
	if resource && tg.action == rules.Parse {
		tg.action = rules.Check
	}
	if !sitemap {
		tg.traps = res.traps
	}
	r.c.robotsVerdict(&tg, res.u, &r.robots)
	r.found = append(r.found, tg)
}

// first adds u to the document's targets and says whether it is new
// there, with one lookup of the set, not two (a few of them for every link
// of a page); a document that is only recorded (follow false) has none.
func (r *refs) first(u string) bool {
	if !r.follow {
		return false
	}
	n := len(r.seen)
	r.seen[u] = struct{}{}
	return len(r.seen) > n
}

// resolve works out a reference written on a page of the web (see
// resolvedCache), once for all the pages of a directory that write it.
func (r *refs) resolve(ref string) *resolvedRef {
	if r.full == "" {
		r.dir, r.full = baseKeys(r.base)
	}
	k := keyFor(r.dir, r.full, ref)
	if res := r.c.resolved.get(k); res != nil {
		return res
	}
	res := r.c.resolveRef(r.base, ref)
	r.c.resolved.put(k, res)
	return res
}

// resolveRef resolves ref against base and decides it.
func (c *Crawler) resolveRef(base *url.URL, ref string) *resolvedRef {
	u, err := rules.Resolve(base, ref)
	if err != nil {
		return &resolvedRef{invalid: "invalid URL", raw: ref}
	}
	res := c.decided(u)
	if base.Scheme != "file" {
		if why := onAuthorsDisk(u, res.d); why != "" {
			return &resolvedRef{invalid: why, raw: u.String()}
		}
	}
	return res
}

// onAuthorsDisk is the error of u, a link written on a web page, when it
// names a file on the author's disk, which no visitor can follow: a file:
// URL, or a Windows path (C:\docs\a.html, read as a URL in scheme "c",
// which was "not checked: scheme c is not supported": review10 R5); "" for
// any other link, or one an --exclude or a rule leaves out.
func onAuthorsDisk(u *url.URL, d rules.Decision) string {
	switch {
	case u.Scheme == "file" && fileOnWeb(d):
		return errFileOnWeb
	case len(u.Scheme) == 1 && d.Action != rules.Skip && d.Action != rules.Ignore:
		return errWindowsPath
	case len(u.Scheme) == 1:
		if _, unsupported := rules.UnsupportedSchemeOf(d.Rule); unsupported {
			return errWindowsPath
		}
	}
	return ""
}

// decided is what the rules make of the resolved URL u.
func (c *Crawler) decided(u *url.URL) *resolvedRef {
	d := c.rules.Decide(u)
	return &resolvedRef{u: u, d: d, traps: c.trapsOf(d)}
}

// outside records a file: URL written in a page of a checked directory. It
// is not a file of the site, whatever path it names: on the deployed site it
// points at the visitor's own disk, which no visitor can follow. It is
// skipped with that reason, never read and never mapped into the directory
// (where file:///usr/share/doc/x.html would become a false "no such file").
func (r *refs) outside(link store.Link, u *url.URL) {
	link.URL, link.Fragment = clip(rules.Canonicalize(u).String()), rules.LinkedFragment(u)
	r.links = append(r.links, link)
	if r.first(link.URL) {
		r.found = append(r.found, target{url: link.URL, action: rules.Skip, rule: fileLinkRule})
	}
}

// fileLinkRule is the reason a file: link of a checked directory is skipped.
const fileLinkRule = "a file: URL is not part of the site (on the web it points at the visitor's own disk)"

// fileOnWeb says whether d, the decision of a file: URL written on a web
// page, leaves it to be reported as such: unless an --exclude or a rule
// skips or ignores it, as they may any URL.
func fileOnWeb(d rules.Decision) bool {
	return d.Rule == rules.FileOutside || (d.Action != rules.Skip && d.Action != rules.Ignore)
}

// errFileOnWeb is the error of a file: link on a web page: it names a file
// on the author's disk, which no visitor can follow.
const errFileOnWeb = "file: link on a web page"

// errWindowsPath is the error of a Windows path written as a link (its
// drive letter taken for a scheme).
const errWindowsPath = "Windows file path, not a URL"

// invalid records a reference that is broken as written.
func (r *refs) invalid(link store.Link, raw, why string) {
	link.URL = clip(raw)
	r.links = append(r.links, link)
	if r.first(link.URL) {
		r.found = append(r.found, target{url: link.URL, err: why})
	}
}

// anchors is the set of fragments a page can be linked to (its id and
// <a name> values), sorted and without repeats. It is never nil: a page
// without any is told apart from a record whose anchors were not collected.
func anchors(ids []string) []string {
	out := append(make([]string, 0, len(ids)), ids...)
	slices.Sort(out)
	return slices.Compact(out)
}

// robotsVerdict reads robots.txt for a target whose host's file is already
// known, here on a worker, so the dispatcher does not have to; when it is
// not, the dispatcher asks once it is. m is the memo of the document the
// target was found in.
func (c *Crawler) robotsVerdict(tg *target, u *url.URL, m *robotsMemo) {
	if tg.action == rules.Parse || tg.action == rules.Check {
		tg.robots = m.gate(c, u, false)
	}
}

// clip shortens a URL that is too long to be a database key; such a URL
// is reported as a problem under its first MaxURLLength bytes.
func clip(u string) string {
	if len(u) > store.MaxURLLength {
		return u[:store.MaxURLLength]
	}
	return u
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Host
}

// storedTargets re-decides the links a page had when it was last parsed, so
// the walk goes on through a page that was not fetched (fresh, 304, ghost).
// Rules may have changed since, so nothing stored is trusted but the URLs.
func (c *Crawler) storedTargets(page string) []target {
	links, err := c.store.Links(page)
	if err != nil {
		c.readFailed("read stored links", err, "page", page)
		return nil
	}
	return c.linkTargets(page, links)
}

// linkTargets re-decides stored links of page (see storedTargets).
func (c *Crawler) linkTargets(page string, links []store.Link) []target {
	found := make([]target, 0, len(links))
	seen := make(map[string]struct{}, len(links))
	var robots robotsMemo
	for _, l := range links {
		if _, dup := seen[l.URL]; dup {
			continue
		}
		seen[l.URL] = struct{}{}
		u, err := url.Parse(l.URL)
		if err != nil || !u.IsAbs() {
			found = append(found, target{url: l.URL, err: "invalid URL"})
			continue
		}
		d := c.rules.Decide(u)
		if !strings.HasPrefix(page, "file:") {
			if why := onAuthorsDisk(u, d); why != "" {
				found = append(found, target{url: l.URL, err: why})
				continue
			}
		}
		if d.Action == rules.Ignore {
			continue
		}
		action := d.Action
		if action == rules.Parse && extract.KindOf(l.Tag, l.Attr) == extract.KindResource {
			action = rules.Check
		}
		tg := target{url: d.URL, host: u.Host, action: action, rule: d.Rule, dec: &d}
		c.trapInfo(&tg, d)
		c.robotsVerdict(&tg, u, &robots)
		found = append(found, tg)
	}
	return found
}

// redirectTargets are the URLs a reused redirect led through and to, as
// targets to walk on to, as the fetch that followed it recorded them.
func (c *Crawler) redirectTargets(t task, prev store.URLRecord) []target {
	var found []target
	var robots robotsMemo
	for i, raw := range append(hopURLs(prev.Redirects[min(1, len(prev.Redirects)):]), prev.FinalURL) {
		u, err := url.Parse(raw)
		if err != nil {
			continue
		}
		d := c.rules.Decide(u)
		if d.Action != rules.Parse && d.Action != rules.Check {
			continue
		}
		// Its task is requested as the redirect would request it.
		tg := target{url: d.URL, host: u.Host, action: d.Action, rule: d.Rule, dec: &d, public: publicHop(t, d.URL)}
		if t.Action == rules.Check.String() || i < len(prev.Redirects)-1 {
			tg.action = rules.Check // a resource stays one, unless it answers HTML
		}
		c.robotsVerdict(&tg, u, &robots)
		found = append(found, tg)
	}
	return found
}

func hopURLs(hops []store.Hop) []string {
	out := make([]string, len(hops))
	for i, h := range hops {
		out[i] = h.URL
	}
	return out
}

// mayReuse says whether any stored result could be fresh enough to reuse.
func (c *Crawler) mayReuse() bool {
	if c.cfg.Refetch {
		return false
	}
	r := c.cfg.Recheck
	return r.OK > 0 || r.Pages > 0 || r.Broken > 0 || r.Unverifiable > 0 || r.Transient > 0 || c.cfg.RulesRecheck
}

// fresh says whether a stored result is young enough to reuse without a
// request. A transient failure is never replayed as if it were final. A
// parsed page falls under Recheck.Pages, not OK: the site's own pages are
// what a user edits between two runs, and revalidating one costs a 304.
// So does anything else good on the site's own hosts (an image, a
// stylesheet, a download): a deploy deletes those between two runs as
// well, a CI check after each deploy must see it, and the server is ours,
// so a HEAD a run is cheap. Recheck.OK is for other sites' links.
// A rule's own interval is the user asking for exactly those URLs, so it
// applies to pages too.
func (c *Crawler) fresh(prev store.URLRecord, now time.Time, p *rules.Policy) bool {
	if c.cfg.Refetch || c.needsAnchors(prev) {
		return false
	}
	var ttl time.Duration
	switch prev.Verdict {
	case store.VerdictOK:
		ttl = c.cfg.Recheck.OK
		if prev.Parsed || c.ownURL(prev.URL) {
			ttl = c.cfg.Recheck.Pages
		}
	case store.VerdictBroken:
		ttl = c.cfg.Recheck.Broken
	case store.VerdictUnverifiable:
		ttl = c.cfg.Recheck.Unverifiable
	case store.VerdictTransient:
		// Reused as transient, never as final: only when asked for.
		ttl = c.cfg.Recheck.Transient
	default:
		return false
	}
	if p != nil {
		switch prev.Verdict {
		case store.VerdictOK:
			ttl = pick(p.Recheck.OK, ttl)
		case store.VerdictBroken:
			ttl = pick(p.Recheck.Broken, ttl)
		case store.VerdictUnverifiable:
			ttl = pick(p.Recheck.Unverifiable, ttl)
		case store.VerdictTransient:
			ttl = pick(p.Recheck.Transient, ttl)
		}
	}
	return ttl > 0 && !prev.FetchedAt.IsZero() && now.Sub(prev.FetchedAt) < ttl
}

// needsAnchors says whether a page stored without its anchors must be
// fetched again for the fragment checks: it was parsed before they were on.
func (c *Crawler) needsAnchors(prev store.URLRecord) bool {
	return c.cfg.CheckFragments && prev.Parsed && prev.IDs == nil
}

// ownURL says whether raw is on one of the site's own hosts (see
// Decider.StartHost).
func (c *Crawler) ownURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && c.rules.StartHost(u.Host)
}

func pick(d, fallback time.Duration) time.Duration {
	if d != 0 {
		return d
	}
	return fallback
}

func (c *Crawler) ghost(prev store.URLRecord, now time.Time) bool {
	return c.cfg.Ghost > 0 && !prev.LastGood.IsZero() && now.Sub(prev.LastGood) <= c.cfg.Ghost
}

// reuse answers a task from a fresh stored result, without a request.
// It is not a page parsed now, and not one more pass that saw the URL fail.
func (c *Crawler) reuse(pass store.Pass, t task, prev store.URLRecord) outcome {
	c.stats.reused.Add(1)
	o := outcome{task: t, result: c.reused(pass, t, prev, prev.FetchedAt)}
	o.result.Record.ReusedFrom = prev.Pass
	if prev.ReusedFrom != 0 {
		o.result.Record.ReusedFrom = prev.ReusedFrom // the pass that fetched it
	}
	if prev.Parsed && c.mayParse(t.Depth) {
		o.found = c.storedTargets(t.URL)
		c.countPage(prev.ContentType)
		c.same.read(&o.result.Record)
		fromPage(o.found, o.result.Record.Digest)
	} else if prev.FinalURL != "" {
		// A reused redirect carries the walk on to where it led, or the
		// page behind it and all it links to would drop out of the pass.
		o.found = c.redirectTargets(t, prev)
	}
	if prev.Verdict.Problem() {
		c.stats.problems.Add(1)
	}
	return o
}

// reused carries a stored result into this pass; fetchedAt says when it was
// last confirmed (now for a 304, the old time for a fresh reuse). The run
// of failures is left alone: --report-after counts passes that fetched.
func (c *Crawler) reused(pass store.Pass, t task, prev store.URLRecord, fetchedAt time.Time) store.Result {
	rec := prev
	rec.Pass = pass.ID
	rec.Action = t.Action
	rec.FetchedAt = fetchedAt
	rec.ReusedFrom = 0
	rec.Unchanged = false
	carryPast(&rec, &prev, pass)
	if rec.Verdict == store.VerdictOK && fetchedAt.After(rec.LastGood) {
		rec.LastGood = fetchedAt
	}
	return store.Result{Record: rec}
}

// logDecision logs at Debug (-vv) what became of one URL of the pass and
// why: fetched (and what came back), reused from an earlier pass, or
// resolved without a request (a rule, robots.txt, a suspected trap, a
// quota, a pause, an invalid URL), with the note that names the setting.
func (c *Crawler) logDecision(rec *store.URLRecord) {
	ctx := context.Background()
	if !c.cfg.Logger.Enabled(ctx, slog.LevelDebug) {
		return
	}
	attrs := []slog.Attr{slog.String("url", rec.URL), slog.String("action", rec.Action), slog.String("verdict", string(rec.Verdict))}
	decision := "fetched"
	switch {
	case rec.ReusedFrom != 0:
		decision = "reused"
		attrs = append(attrs, slog.Uint64("from_pass", rec.ReusedFrom), slog.Time("checked", rec.FetchedAt))
	case rec.Verdict == store.VerdictSkipped:
		decision = "skipped"
	case rec.FetchedAt.IsZero():
		decision = "not fetched"
	}
	if rec.Status != 0 {
		attrs = append(attrs, slog.Int("status", rec.Status))
	}
	if rec.Error != "" {
		attrs = append(attrs, slog.String("error", rec.Error))
	}
	if rec.Note != "" {
		attrs = append(attrs, slog.String("why", rec.Note))
	}
	c.cfg.Logger.LogAttrs(ctx, slog.LevelDebug, decision, attrs...)
}
