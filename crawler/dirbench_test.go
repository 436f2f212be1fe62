package crawler_test

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/crawler/crawltest"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// BenchmarkDirectoryVsHTTP checks one generated site twice, written to
// disk: as a directory, and over HTTP from a static file server
// (net/http's) on loopback, each with the throttle a run has (the start
// host unlimited, every other host polite). It fails unless both find the
// same problems at the same paths; ns/op compares their time.
//
//	go test -run '^$' -bench DirectoryVsHTTP -benchtime 5x ./crawler/
func BenchmarkDirectoryVsHTTP(b *testing.B) {
	const pages = 2000
	site := crawltest.NewSite(crawltest.SiteOptions{Pages: pages, Images: 2, BrokenEvery: 50, Seed: 7})
	dir := b.TempDir()
	if err := site.WriteFiles(dir); err != nil {
		b.Fatal(err)
	}
	files, err := crawler.HTMLFiles(dir)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()

	type mode struct {
		name   string
		prefix string // the site's root URL, stripped to compare paths
		cfg    crawler.Config
		seeds  []string
	}
	local := crawler.DirURL(dir)
	var web []string
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f)
		web = append(web, srv.URL+"/"+strings.TrimSuffix(filepath.ToSlash(rel), "index.html"))
	}
	modes := []mode{
		{"dir", local, crawler.Config{Roots: []string{dir}}, crawler.Seeds(files)},
		{"http", srv.URL + "/", crawler.Config{}, web},
	}
	found := make(map[string]map[string]store.Verdict)
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			engine, err := rules.New(rules.Config{Start: []string{m.prefix}, Traps: rules.DefaultTraps()})
			if err != nil {
				b.Fatal(err)
			}
			for i := range b.N {
				b.StopTimer()
				db, err := store.Open(filepath.Join(b.TempDir(), strconv.Itoa(i)+".db"), store.Options{})
				if err != nil {
					b.Fatal(err)
				}
				cfg := m.cfg
				cfg.Concurrency = 16
				settings := func(host string) throttle.Settings {
					if m.name == "http" && host == strings.TrimPrefix(srv.URL, "http://") {
						return throttle.Settings{}
					}
					return throttle.StartHostDefaults()
				}
				cfg.Throttle = throttle.New(throttle.Config{Settings: settings})
				cfg.HostSettings = settings
				c := crawler.New(cfg, engine, db)
				b.StartTimer()
				spec := crawler.PassSpec{Pass: store.Pass{StartURLs: []string{m.prefix}}, Seeds: m.seeds}
				pass, out, err := c.Run(context.Background(), context.Background(), spec)
				b.StopTimer()
				if err != nil || !out.Complete {
					b.Fatalf("run: %v complete=%v", err, out.Complete)
				}
				got := map[string]store.Verdict{}
				pages := 0
				err = db.Records(pass.ID, func(r *store.URLRecord) error {
					if r.Parsed && strings.HasPrefix(r.ContentType, "text/html") {
						pages++
					}
					if r.Verdict != store.VerdictOK {
						got[strings.TrimPrefix(r.URL, m.prefix)] = r.Verdict
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				db.Close()
				if pages != len(files) {
					b.Fatalf("%d pages parsed, want %d", pages, len(files))
				}
				found[m.name] = got
				b.ReportMetric(float64(len(got)), "problems")
				b.ReportMetric(float64(c.Progress().Requests)/float64(len(files)), "reads/page")
				b.StartTimer()
			}
		})
	}
	if d, h := found["dir"], found["http"]; d != nil && h != nil && !maps.Equal(d, h) {
		b.Fatalf("directory and HTTP disagree:\ndir:  %v\nhttp: %v", slices.Sorted(maps.Keys(d)), slices.Sorted(maps.Keys(h)))
	}
	if d := found["dir"]; d != nil && len(d) == 0 {
		b.Fatal("no problems found in a site with broken links")
	}
}
