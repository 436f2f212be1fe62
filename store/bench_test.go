//go:build unix

package store

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time the process has used so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU starts counting CPU time; the returned function reports it per
// op as cpu-ns/op, less any time spent outside the measured work. The
// benchmark machine is shared, so wall time (ns/op) swings with the load of
// others while CPU time stays put; it leaves out waiting for the disk, which
// ns/op includes.
func reportCPU(b *testing.B) func(excluded ...time.Duration) {
	start := cpuTime()
	return func(excluded ...time.Duration) {
		used := cpuTime() - start
		for _, d := range excluded {
			used -= d
		}
		b.ReportMetric(float64(used)/float64(b.N), "cpu-ns/op")
	}
}

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
// transaction each, for comparison. Building the results is left out of
// both the timer and cpu-ns/op.
func BenchmarkCommit(b *testing.B) {
	run := func(b *testing.B, opt Options, batch int, perResult bool) {
		db := openBench(b, opt)
		p := begin(b, db, "http://127.0.0.1:8080/")
		results := make([]Result, batch)
		var n int
		var building time.Duration
		cpu := reportCPU(b)
		for b.Loop() {
			b.StopTimer()
			start := cpuTime()
			for i := range results {
				results[i] = sitePage(n, 20)
				n++
			}
			building += cpuTime() - start
			b.StartTimer()
			if perResult {
				for i := range results {
					commit(b, db, p.ID, results[i])
				}
			} else {
				commit(b, db, p.ID, results...)
			}
		}
		cpu(building)
		b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "results/s")
		b.ReportMetric(float64(db.Size())/float64(n), "filebytes/result")
	}
	for _, fl := range freelists {
		b.Run("batch1000/"+fl.name, func(b *testing.B) { run(b, fl.opt, 1000, false) })
	}
	// The crawler's default batch (crawler.DefaultBatchSize).
	b.Run("batch32/"+freelists[0].name, func(b *testing.B) { run(b, freelists[0].opt, 32, false) })
	b.Run("per-result/"+freelists[0].name, func(b *testing.B) { run(b, freelists[0].opt, 1000, true) })
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

// BenchmarkPageLinks scans the links of a 10,000-page pass with 20 links a
// page. scan only decodes them; referrers also builds what the report
// builds from them, a map from each target to the pages and lines linking
// to it.
func BenchmarkPageLinks(b *testing.B) {
	db := openBench(b, Options{})
	p := fillPages(b, db, 10_000, 20)
	type ref struct {
		page string
		line int
	}
	for _, build := range []bool{false, true} {
		name := "scan"
		if build {
			name = "referrers"
		}
		b.Run(name, func(b *testing.B) {
			var edges int
			cpu := reportCPU(b)
			for b.Loop() {
				referrers := make(map[string][]ref)
				edges = 0
				err := db.PageLinks(p.ID, func(page *URLRecord, links []Link) error {
					edges += len(links)
					if build {
						for _, l := range links {
							referrers[l.URL] = append(referrers[l.URL], ref{page.URL, l.Line})
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			cpu()
			if edges != 200_000 {
				b.Fatalf("scanned %d links, want 200000", edges)
			}
			b.ReportMetric(float64(edges*b.N)/b.Elapsed().Seconds(), "links/s")
		})
	}
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
			cpu := reportCPU(b)
			for b.Loop() {
				db, err := Open(path, fl.opt)
				if err != nil {
					b.Fatal(err)
				}
				if err := db.Close(); err != nil {
					b.Fatal(err)
				}
			}
			cpu()
		})
	}
}

// BenchmarkGet is the crawler's lookup of a URL's previous record, from
// every worker at once.
func BenchmarkGet(b *testing.B) {
	db := openBench(b, Options{})
	fillPages(b, db, 10_000, 20)
	b.ResetTimer()
	cpu := reportCPU(b)
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
	cpu()
}

// The benchmarks below are how the encoding was chosen (see doc.go): JSON
// against the binary codec for a record and for link lists of typical sizes.

func BenchmarkCodec(b *testing.B) {
	rec := sitePage(42, 20).Record
	rec.FinalURL = rec.URL
	rec.LastModified = t0.Format(time.RFC1123)
	for _, n := range []int{20, 100} {
		links := sitePage(42, n).Links
		b.Run(fmt.Sprintf("links%d/binary/encode", n), func(b *testing.B) {
			var v []byte
			cpu := reportCPU(b)
			for b.Loop() {
				v = appendLinks(v[:0], links)
			}
			cpu()
			b.ReportMetric(float64(len(v)), "bytes/value")
		})
		b.Run(fmt.Sprintf("links%d/binary/decode", n), func(b *testing.B) {
			v := appendLinks(nil, links)
			cpu := reportCPU(b)
			for b.Loop() {
				if _, err := decodeLinks(v); err != nil {
					b.Fatal(err)
				}
			}
			cpu()
		})
		b.Run(fmt.Sprintf("links%d/json/encode", n), func(b *testing.B) {
			var v []byte
			cpu := reportCPU(b)
			for b.Loop() {
				v, _ = json.Marshal(links)
			}
			cpu()
			b.ReportMetric(float64(len(v)), "bytes/value")
		})
		b.Run(fmt.Sprintf("links%d/json/decode", n), func(b *testing.B) {
			v, _ := json.Marshal(links)
			cpu := reportCPU(b)
			for b.Loop() {
				var out []Link
				if err := json.Unmarshal(v, &out); err != nil {
					b.Fatal(err)
				}
			}
			cpu()
		})
	}
	b.Run("record/binary/encode", func(b *testing.B) {
		var v []byte
		cpu := reportCPU(b)
		for b.Loop() {
			v, _ = appendRecord(v[:0], &rec)
		}
		cpu()
		b.ReportMetric(float64(len(v)), "bytes/value")
	})
	b.Run("record/binary/decode", func(b *testing.B) {
		v, _ := appendRecord(nil, &rec)
		var out URLRecord
		cpu := reportCPU(b)
		for b.Loop() {
			if err := decodeRecord(rec.URL, v, &out); err != nil {
				b.Fatal(err)
			}
		}
		cpu()
	})
	b.Run("record/json/encode", func(b *testing.B) {
		var v []byte
		cpu := reportCPU(b)
		for b.Loop() {
			v, _ = json.Marshal(&rec)
		}
		cpu()
		b.ReportMetric(float64(len(v)), "bytes/value")
	})
	b.Run("record/json/decode", func(b *testing.B) {
		v, _ := json.Marshal(&rec)
		cpu := reportCPU(b)
		for b.Loop() {
			var out URLRecord
			if err := json.Unmarshal(v, &out); err != nil {
				b.Fatal(err)
			}
		}
		cpu()
	})
}

// BenchmarkEnqueue queues task messages as a cluster worker does: 32 new
// tasks a message, one transaction each, fsynced (the worker's default).
// received also notes the message (EnqueueReceived), which a worker does
// for every message since qa5 N16; plain is Enqueue, for comparison.
func BenchmarkEnqueue(b *testing.B) {
	run := func(b *testing.B, note bool) {
		db := openBench(b, Options{})
		p := begin(b, db, "http://127.0.0.1:8080/")
		tasks := make([]Task, 32)
		var n uint64
		cpu := reportCPU(b)
		for b.Loop() {
			for i := range tasks {
				tasks[i] = Task{URL: fmt.Sprintf("http://127.0.0.1:8080/t/%d", n*32+uint64(i)), Action: "check", Depth: 1}
			}
			n++
			var err error
			if note {
				_, err = db.EnqueueReceived(p.ID, tasks, "lp.todo.7", n)
			} else {
				_, err = db.Enqueue(p.ID, tasks)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		cpu()
		b.ReportMetric(float64(n*32)/b.Elapsed().Seconds(), "tasks/s")
		b.ReportMetric(float64(db.Size())/float64(n*32), "filebytes/task")
	}
	b.Run("plain", func(b *testing.B) { run(b, false) })
	b.Run("received", func(b *testing.B) { run(b, true) })
}
