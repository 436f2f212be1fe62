package report

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/store"
)

// siteHistory is one pass over a site of pages pages with 20 links each: 19
// to other pages, one to an external target of which every tenth is broken.
func siteHistory(pages int) []fixturePass {
	p := fixturePass{pass: store.Pass{StartURLs: []string{"https://example.com/p/0"}, State: store.PassComplete, Started: night2, Finished: night2.Add(time.Minute)}}
	for i := range pages {
		links := make([]store.Link, 0, 20)
		for j := 1; j < 20; j++ {
			links = append(links, link(fmt.Sprintf("https://example.com/p/%d", (i*7+j*13)%pages), 10+j))
		}
		ext := fmt.Sprintf("https://ext%d.example.net/x", i%500)
		links = append(links, link(ext, 40))
		p.results = append(p.results, page(fmt.Sprintf("https://example.com/p/%d", i), links...))
	}
	for k := range 500 {
		rec := store.URLRecord{URL: fmt.Sprintf("https://ext%d.example.net/x", k), Verdict: store.VerdictOK, Status: 200, LastGood: night2}
		if k%10 == 0 {
			rec = store.URLRecord{URL: rec.URL, Verdict: store.VerdictBroken, Status: 404, FirstBroken: night2}
		}
		p.results = append(p.results, target(rec))
	}
	return []fixturePass{p}
}

func BenchmarkBuild(b *testing.B) {
	for _, all := range []bool{false, true} {
		b.Run(fmt.Sprintf("pages=10000/all=%v", all), func(b *testing.B) {
			src := fillStore(b, siteHistory(10000))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Build(src, 1, Options{Now: now, All: all}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkWrite(b *testing.B) {
	r := build(b, fillStore(b, siteHistory(10000)), 1, Options{})
	for _, format := range Formats() {
		b.Run(format, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := Write(io.Discard, r, format); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// treeHistory is two passes over a site of hubs hubs of leaves pages each
// (every tenth leaf broken); in the second, the first unread hubs answer
// 503 with no ghost (their last copy's links kept, not followed), so the
// leaves behind them are not reached: the report walks them (qa7 Q5).
func treeHistory(hubs, leaves, unread int) []fixturePass {
	const site = "https://example.com/"
	night := func(at time.Time, second bool) fixturePass {
		p := fixturePass{pass: store.Pass{StartURLs: []string{site}, State: store.PassComplete, Started: at, Finished: at.Add(time.Minute)}}
		var top []store.Link
		for h := range hubs {
			hub := fmt.Sprintf("%sh/%d/", site, h)
			top = append(top, link(hub, h+1))
			var ls []store.Link
			for l := range leaves {
				ls = append(ls, link(fmt.Sprintf("%sl/%d", hub, l), l+1))
			}
			if second && h < unread {
				p.results = append(p.results, store.Result{Record: store.URLRecord{URL: hub, Action: "parse", Verdict: store.VerdictTransient, Status: 503, LastGood: night1}})
				continue
			}
			p.results = append(p.results, page(hub, ls...))
			for l := range leaves {
				rec := store.URLRecord{URL: ls[l].URL, Verdict: store.VerdictOK, Status: 200, LastGood: at}
				if l%10 == 0 {
					rec = store.URLRecord{URL: rec.URL, Verdict: store.VerdictBroken, Status: 404, FirstBroken: night1, Failures: 1}
				}
				p.results = append(p.results, target(rec))
			}
		}
		p.results = append(p.results, page(site, top...))
		return p
	}
	return []fixturePass{night(night1, false), night(night2, true)}
}

func BenchmarkBuildBehindUnread(b *testing.B) {
	for _, unread := range []int{0, 50} {
		b.Run(fmt.Sprintf("pages=10000/unread-hubs=%d", unread), func(b *testing.B) {
			src := fillStore(b, treeHistory(100, 100, unread))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Build(src, 2, Options{Now: now}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
