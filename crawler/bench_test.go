package crawler_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/crawler/crawltest"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// BenchmarkPass crawls a generated site on loopback end to end: fetching,
// extraction, rules, dedupe and batched commits to a real bbolt file. The
// figures to watch are pages/s and, steadier on a shared machine, the CPU
// time of the process (the crawler and the test site it crawls) per page;
// the site's counters prove each URL was requested once.
//
//	go test -run '^$' -bench Pass -benchtime 3x ./crawler/
func BenchmarkPass(b *testing.B) {
	for _, pages := range []int{1000, 10000} {
		b.Run(strconv.Itoa(pages), func(b *testing.B) { benchPass(b, crawltest.SiteOptions{Pages: pages}, nil) })
	}
	// Every third page links a redirect to another page: workers claim
	// redirect targets as they follow them.
	b.Run("10000-redirects", func(b *testing.B) { benchPass(b, crawltest.SiteOptions{Pages: 10000, RedirectEvery: 3}, nil) })
	// Politeness must cost nothing when its limits do not bind.
	for name, s := range map[string]throttle.Settings{
		"throttle-unlimited": {},
		"throttle-defaults":  throttle.StartHostDefaults(),
	} {
		b.Run("10000-"+name, func(b *testing.B) { benchPass(b, crawltest.SiteOptions{Pages: 10000}, &s) })
	}
}

func benchPass(b *testing.B, opt crawltest.SiteOptions, polite *throttle.Settings) {
	{
		{
			opt.Images, opt.BrokenEvery, opt.Seed = 2, 400, 1
			site := crawltest.NewSite(opt)
			srv := httptest.NewServer(site)
			defer srv.Close()
			start := srv.URL + "/"
			// With the spider-trap limits of a default run, which must
			// not cut an ordinary site.
			engine, err := rules.New(rules.Config{Start: []string{start}, Traps: rules.DefaultTraps()})
			if err != nil {
				b.Fatal(err)
			}
			var cpu time.Duration
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				site.Reset()
				db, err := store.Open(filepath.Join(b.TempDir(), strconv.Itoa(i)+".db"), store.Options{})
				if err != nil {
					b.Fatal(err)
				}
				cfg := crawler.Config{Concurrency: 16}
				if polite != nil {
					settings := func(string) throttle.Settings { return *polite }
					cfg.Throttle = throttle.New(throttle.Config{Settings: settings})
					cfg.HostSettings = settings
				}
				c := crawler.New(cfg, engine, db)
				b.StartTimer()
				cpu0 := processCPU(b)
				_, out, err := c.Run(context.Background(), context.Background(), passOf(start))
				cpu += processCPU(b) - cpu0
				b.StopTimer()
				if err != nil || !out.Complete {
					b.Fatalf("run: %v complete=%v", err, out.Complete)
				}
				if st := site.Stats(); st.RepeatedURLs != 0 {
					b.Fatalf("%d URLs requested more than once", st.RepeatedURLs)
				}
				if n := c.Progress().Traps; n != 0 {
					b.Fatalf("%d pages of an ordinary site held back as spider traps", n)
				}
				db.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(opt.Pages*b.N)/b.Elapsed().Seconds(), "pages/s")
			b.ReportMetric(float64(cpu.Microseconds())/float64(opt.Pages*b.N), "cpu-µs/page")
		}
	}
}

// processCPU is the CPU time (user and system) the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
