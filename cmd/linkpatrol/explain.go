package main

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"

	"time"

	"github.com/spf13/pflag"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

func runExplain(args []string, stdout, stderr io.Writer) error {
	var o checkOptions
	fs, _ := newFlags("explain", &o)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(helpWriter(args, stdout, stderr), "Usage: linkpatrol explain [flags] URL\n\nShows each rewriting step, the canonical URL, the rule that decides it\n(with its file:line), the action, and the politeness settings of its host.\n\nFlags:\n%s", flagUsages(fs))
	}
	if err := parseFlags(fs, args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("explain takes one URL")
	}
	file, err := loadSettings(fs, &o, stderr, "text")
	if err != nil {
		return err
	}
	if err := crossCheck(fs, &o, file); err != nil {
		return err
	}
	starts := o.start
	var siteOrigins []string
	if len(starts) == 0 {
		// The database's last pass supplies the start URLs when neither
		// --start nor the config does, and the hosts they redirected to,
		// which that pass checked as the site's.
		starts, siteOrigins = lastStartURLs(existingDatabase(fs.Changed("db"), o.db))
	}
	if len(starts) == 0 {
		// Without start URLs nothing is "the site", and every answer
		// would be about another host.
		return errors.New("explain needs the site's start URLs: give --start URL, a config file with start, or a --db that holds a pass")
	}
	targets, err := parseTargets(starts, "")
	if err != nil {
		return err
	}
	canonical := targets.starts
	engine, err := rules.New(rulesConfig(file, &o, canonical, o.polite.hostRules(fs, canonical)))
	if err != nil {
		return err
	}
	if err := engine.AddSiteOrigins(siteOrigins); err != nil {
		return err
	}
	target := fs.Arg(0)
	if abs, err := filepath.Abs(target); err == nil && len(targets.roots) > 0 {
		// A file of the site on disk stands for its file: URL.
		for _, r := range targets.roots {
			if _, err := os.Stat(abs); err == nil && inside(r, abs) {
				target = crawler.FileURL(abs)
				break
			}
		}
	}
	ex := engine.Explain(target)
	if ex.Host != "" {
		shareLimits(&ex, &o, canonical, engine)
	}
	if perHost := min(o.perHost, o.concurrency); ex.Host != "" && (ex.Politeness.MaxInFlight == 0 || ex.Politeness.MaxInFlight > perHost) {
		// The crawler holds every host to --per-host (at most
		// --concurrency) besides the host's own cap: show the number used.
		ex.Politeness.MaxInFlight = perHost
	}
	if err := ex.Write(stdout); err != nil {
		return fmt.Errorf("write explanation: %w", err)
	}
	if ex.Err != "" {
		return fmt.Errorf("%q: %s", fs.Arg(0), ex.Err)
	}
	return nil
}

// shareLimits adds to ex what bounds its host's requests besides the
// host's own settings, as check applies them. With --group-hosts domain
// every host of a registrable domain shares one set of limits, those of
// the first of its hosts the pass meets: a start host, when the group has
// one, since a pass begins there. --global-bandwidth caps the reading of
// all hosts together.
func shareLimits(ex *rules.Explanation, o *checkOptions, starts []string, engine *rules.Engine) {
	if o.polite.groupHosts == "domain" {
		group := throttle.DomainKey(ex.Host)
		first := ""
		for _, s := range starts {
			if u, err := url.Parse(s); err == nil && u.Host != "" && throttle.DomainKey(u.Host) == group {
				first = u.Host
				break
			}
		}
		if first != "" && first != ex.Host {
			ex.Politeness, ex.PolitenessFrom = engine.HostSettings(first, nil)
			ex.PolitenessFrom = "those of start host " + first + ": " + ex.PolitenessFrom
		}
		ex.Shared = append(ex.Shared, fmt.Sprintf("shared by every host of %s (--group-hosts domain)", group))
		if first == "" {
			ex.Shared = append(ex.Shared, "with the settings of the first host of them the pass meets")
		}
	}
	if bps := o.polite.globalBandwidth; bps > 0 {
		ex.Shared = append(ex.Shared, fmt.Sprintf("all hosts together: at most %s/s (--global-bandwidth)", throttle.FormatBytes(bps)))
	}
}

// lastStartURLs reads the start URLs of the newest pass, and the origins
// they redirected to (store.Pass.SiteOrigins), if the database exists and
// is free; explain is a question, so it never waits or fails here.
func lastStartURLs(path string) (starts, siteOrigins []string) {
	db, err := store.Open(path, store.Options{ReadOnly: true, Timeout: 200 * time.Millisecond})
	if err != nil {
		return nil, nil
	}
	defer db.Close()
	p, ok, err := db.LastPass()
	if err != nil || !ok {
		return nil, nil
	}
	if dirs := p.Dirs(); len(dirs) > 0 {
		return dirs, nil
	}
	return p.StartURLs, p.SiteOrigins
}
