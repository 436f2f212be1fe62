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
