package store

import (
	"fmt"
	"path/filepath"
	"testing"
)

func openBench(b *testing.B, opt Options) *DB {
	b.Helper()
	db, err := Open(filepath.Join(b.TempDir(), "bench.db"), opt)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	return db
}

var freelists = []struct {
	name string
	opt  Options
}{
	{"freelist=synced", Options{}},
	{"freelist=unsynced", Options{noFreelistSync: true}},
}

// BenchmarkCommit writes batches of 1,000 parsed pages with 20 links and 5
// new tasks each, as the crawler does about once a second, into a file that
// grows as a crawl's does. per-result commits the same results one
// transaction each, for comparison.
func BenchmarkCommit(b *testing.B) {
	const batch = 1000
	for _, fl := range freelists {
		b.Run("batch1000/"+fl.name, func(b *testing.B) {
			db := openBench(b, fl.opt)
			p := begin(b, db, "http://127.0.0.1:8080/")
			results := make([]Result, batch)
			n := 0
			for b.Loop() {
				for i := range results {
					results[i] = sitePage(n, 20)
					n++
				}
				commit(b, db, p.ID, results...)
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "results/s")
			b.ReportMetric(float64(db.Size())/float64(n), "filebytes/result")
		})
	}
	b.Run("per-result/freelist=synced", func(b *testing.B) {
		db := openBench(b, Options{})
		p := begin(b, db, "http://127.0.0.1:8080/")
		n := 0
		for b.Loop() {
			for range batch {
				commit(b, db, p.ID, sitePage(n, 20))
				n++
			}
		}
		b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "results/s")
	})
}

// fillPages commits pages results of a parsed page with links links each.
func fillPages(b *testing.B, db *DB, pages, links int) Pass {
	b.Helper()
	p := begin(b, db, "http://127.0.0.1:8080/")
	results := make([]Result, 0, 1000)
	for i := range pages {
		results = append(results, sitePage(i, links))
		if len(results) == cap(results) || i == pages-1 {
			commit(b, db, p.ID, results...)
			results = results[:0]
		}
	}
	return p
}

// BenchmarkPageLinks derives the referrers of every target of a 10,000-page
// pass with 20 links a page, as the report does: one PageLinks scan into a
// map from target to the pages and lines that link to it.
func BenchmarkPageLinks(b *testing.B) {
	db := openBench(b, Options{})
	p := fillPages(b, db, 10_000, 20)
	type ref struct {
		page string
		line int
	}
	var edges int
	for b.Loop() {
		referrers := make(map[string][]ref)
		edges = 0
		err := db.PageLinks(p.ID, func(page *URLRecord, links []Link) error {
			for _, l := range links {
				referrers[l.URL] = append(referrers[l.URL], ref{page.URL, l.Line})
			}
			edges += len(links)
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if edges != 200_000 {
		b.Fatalf("scanned %d links, want 200000", edges)
	}
	b.ReportMetric(float64(edges*b.N)/b.Elapsed().Seconds(), "links/s")
}

// BenchmarkOpen reopens a 20,000-page file: with the freelist synced bbolt
// reads it from one page, without it bbolt walks every page to rebuild it.
func BenchmarkOpen(b *testing.B) {
	for _, fl := range freelists {
		b.Run(fl.name, func(b *testing.B) {
			db := openBench(b, fl.opt)
			fillPages(b, db, 20_000, 20)
			path := db.Path()
			if err := db.Close(); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				db, err := Open(path, fl.opt)
				if err != nil {
					b.Fatal(err)
				}
				if err := db.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGet is the crawler's lookup of a URL's previous record, from
// every worker at once.
func BenchmarkGet(b *testing.B) {
	db := openBench(b, Options{})
	fillPages(b, db, 10_000, 20)
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			url := fmt.Sprintf("http://127.0.0.1:8080/section-%d/page-%d.html", i%50, i%10_000)
			if _, ok, err := db.Get(url); !ok || err != nil {
				b.Fatalf("Get(%s) = %v, %v", url, ok, err)
			}
			i += 7
		}
	})
}
