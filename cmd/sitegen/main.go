// Command sitegen serves a generated website of N pages on a loopback
// address, for load tests of linkpatrol and of other link checkers. It is the
// load harness of scripts/bench.sh; the site itself is crawltest.Site.
//
//	go run ./cmd/sitegen -pages 10000 -addr 127.0.0.1:8080 [-latency 20ms] [-external-addr 127.0.0.2:8081]
//
// It prints the site's URL on the first line of standard output, then serves
// until SIGINT or SIGTERM, when it prints what it was asked for. Besides the
// site, each server answers:
//
//	/__stats     its request counters as JSON (crawltest.Stats)
//	/__reset     zeroes the counters, for the next run against the same site
//	/__expected  what a correct checker must find, as JSON (crawltest.Expected)
//	/__traps     with -traps, the requests each spider trap received
//
// With -traps the site has four spider traps beside it under /traps/ (an
// endless calendar, a session-id trap, a growing relative path and a
// faceted listing; see crawltest.TrapSite): crawl both start URLs,
// URL/ and URL/traps/.
//
// It refuses any address that is not loopback: it exists to be crawled as
// hard as possible, which no other machine should see.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler/crawltest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

type config struct {
	site         crawltest.SiteOptions
	addr         string
	externalAddr string
	traps        bool
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("sitegen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: sitegen [flags]\n\nServes a generated site on a loopback address; see /__stats, /__reset and /__expected.\n\n")
		fs.PrintDefaults()
	}
	fs.IntVar(&c.site.Pages, "pages", 10000, "number of HTML pages")
	fs.IntVar(&c.site.LinksPerPage, "links", 20, "links from each page to other pages of the site")
	fs.IntVar(&c.site.Images, "images", 3, "images per page, from a shared pool")
	fs.IntVar(&c.site.BrokenEvery, "broken-every", 100, "give every k-th page a link to a missing page (0: none)")
	fs.IntVar(&c.site.PageBytes, "page-bytes", 6000, "approximate size of a page")
	fs.Int64Var(&c.site.Seed, "seed", 1, "seed of the generated links and text")
	fs.DurationVar(&c.site.Latency, "latency", 0, "delay added to every response, e.g. 20ms")
	fs.BoolVar(&c.site.ETags, "etags", false, "send ETags and answer If-None-Match with 304")
	fs.IntVar(&c.site.RedirectEvery, "redirect-every", 0, "give every k-th page a link to /r/N, a 301 to page N (0: none)")
	fs.BoolVar(&c.site.RelNav, "rel-nav", false, "put <link rel=prev/next> to the neighbouring pages in every head, as Sphinx does")
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8080", "loopback address to serve the site on (port 0 picks a free one)")
	fs.BoolVar(&c.traps, "traps", false, "serve spider traps beside the site, under /traps/ (see /__traps)")
	fs.StringVar(&c.externalAddr, "external-addr", "", "loopback address of a second, \"external\" site every page links to once")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if c.site.Pages < 1 {
		return c, fmt.Errorf("-pages %d: need at least 1", c.site.Pages)
	}
	if err := checkLoopback("-addr", c.addr); err != nil {
		return c, err
	}
	if c.externalAddr != "" {
		if err := checkLoopback("-external-addr", c.externalAddr); err != nil {
			return c, err
		}
	}
	return c, nil
}

// checkLoopback accepts host:port where host is an IP literal in 127.0.0.0/8
// or ::1.
func checkLoopback(flagName, addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s %q: %w", flagName, addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%s %q: sitegen serves only on loopback; use 127.0.0.1:PORT (any 127.x.y.z) or [::1]:PORT", flagName, addr)
	}
	return nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "sitegen: %v\n", err)
		return 2
	}
	if err := serve(ctx, cfg, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "sitegen: %v\n", err)
		return 1
	}
	return 0
}

// server is one site on one listener.
type server struct {
	url  string
	site *crawltest.Site
	http *http.Server
	ln   net.Listener
}

func listen(addr string, opt crawltest.SiteOptions, traps bool) (*server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	site := crawltest.NewSite(opt)
	var ts *crawltest.TrapSite
	if traps {
		ts = crawltest.NewTrapSite(site)
	}
	return &server{
		url:  "http://" + ln.Addr().String(),
		site: site,
		ln:   ln,
		http: &http.Server{Handler: newHandler(site, ts), ReadHeaderTimeout: 10 * time.Second},
	}, nil
}

func serve(ctx context.Context, cfg config, stdout, stderr io.Writer) error {
	var servers []*server
	defer func() {
		for _, s := range servers {
			s.ln.Close()
		}
	}()
	if cfg.externalAddr != "" {
		// The external site has the same pages, so every external link
		// (to one of its first 100 pages) resolves.
		ext, err := listen(cfg.externalAddr, crawltest.SiteOptions{
			Pages: cfg.site.Pages, Seed: cfg.site.Seed, Latency: cfg.site.Latency, PageBytes: cfg.site.PageBytes,
		}, false)
		if err != nil {
			return err
		}
		servers = append(servers, ext)
		cfg.site.External = ext.url
	}
	site, err := listen(cfg.addr, cfg.site, cfg.traps)
	if err != nil {
		return err
	}
	servers = append([]*server{site}, servers...)

	fmt.Fprintln(stdout, site.url+"/")
	fmt.Fprintf(stderr, "sitegen: %d pages at %s/ (counters: /__stats, /__reset, /__expected)\n", cfg.site.Pages, site.url)
	if cfg.site.External != "" {
		fmt.Fprintf(stderr, "sitegen: external site at %s/\n", cfg.site.External)
	}
	if cfg.traps {
		fmt.Fprintf(stderr, "sitegen: spider traps at %s%s (counters: /__traps)\n", site.url, crawltest.TrapsPath)
	}

	errc := make(chan error, len(servers))
	for _, s := range servers {
		go func() { errc <- s.http.Serve(s.ln) }()
	}
	select {
	case err = <-errc:
		err = fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, s := range servers {
		// Crawlers that keep connections open must not hold up the exit
		// past the timeout; whatever they were asking for is counted.
		if s.http.Shutdown(shutdown) != nil {
			s.http.Close()
		}
		st, _ := json.Marshal(s.site.Stats())
		fmt.Fprintf(stdout, "stats %s/ %s\n", s.url, st)
	}
	return err
}

// newHandler serves the site (with traps beside it unless traps is nil)
// and, beside it, the counters and the expectations; requests for those are
// not counted. It routes by hand rather than with a ServeMux, which would
// answer unclean paths with redirects of its own that the site never
// counted.
func newHandler(site *crawltest.Site, traps *crawltest.TrapSite) http.Handler {
	expected := sync.OnceValue(site.Expected)
	var pages http.Handler = site
	if traps != nil {
		pages = traps
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/__stats":
			writeJSON(w, site.Stats())
		case "/__reset":
			site.Reset()
			writeJSON(w, site.Stats())
		case "/__expected":
			writeJSON(w, expected())
		case "/__traps":
			if traps == nil {
				http.NotFound(w, r)
				return
			}
			writeJSON(w, traps.Requests())
		default:
			pages.ServeHTTP(w, r)
		}
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// An encoding error here is the client hanging up; nothing to tell it.
	_ = enc.Encode(v)
}
