package main

import (
	"strings"

	"github.com/spf13/pflag"
)

// helpWidth is the width --help is wrapped to: a terminal's default.
const helpWidth = 80

// flagGroup is a heading of --help and the flags under it.
type flagGroup struct {
	title string
	flags []string
}

// checkGroups sorts check's flags for --help, in the order a user meets
// the questions: what is checked, how gently, what is reused, what is
// printed, where it is kept.
var checkGroups = []flagGroup{
	{"Scope (what is checked)", []string{"include", "exclude", "offline", "accept", "header", "sitemap", "robots-sitemaps", "sitemap-limit",
		"root", "base-url", "check-fragments", "max-redirects", "max-size",
		"max-hops", "max-path-segments", "max-path-repeats", "max-query-variants", "max-template-run", "keep-session-ids"}},
	{"Politeness (how hard the hosts are hit)", []string{"concurrency", "per-host", "rate", "burst", "window", "bandwidth",
		"global-bandwidth", "quota-requests", "quota-bytes", "crawl-delay", "max-pause", "retries", "adaptive",
		"group-hosts", "ignore-robots", "timeout", "user-agent", "insecure"}},
	{"Caching (what earlier passes save)", []string{"recheck-ok", "recheck-pages", "recheck-broken", "recheck-unverifiable",
		"no-reuse", "ghost"}},
	{"Output", []string{"format", "output", "quiet", "all", "fail-on", "only-new", "report-after", "verbose", "log-format",
		"status-addr", "status-public"}},
	{"Database and passes", []string{"config", "db", "new-pass", "max-time", "keep-passes", "commit-batch", "commit-every"}},
	{"Distributed passes (see linkpatrol serve-frontier)", []string{"nats", "token-file", "nkey", "tls-ca"}},
}

const checkExamples = `Examples:
  linkpatrol check https://example.com/
  linkpatrol check ./public                     a built site, before deploying
  linkpatrol check --fail-on internal -o junit.xml https://example.com/
  linkpatrol check --rate 5/s --per-host 2 https://example.com/
  linkpatrol check --recheck-ok 3d --report-after 2 https://example.com/
`

// groupedUsage prints fs's flags under the groups' headings, wrapped at
// helpWidth; a flag in no group (a new one) is listed under "Other flags"
// rather than left out.
func groupedUsage(fs *pflag.FlagSet, groups []flagGroup) string {
	var b strings.Builder
	placed := make(map[string]bool)
	section := func(title string, set *pflag.FlagSet) {
		if !set.HasFlags() {
			return
		}
		b.WriteString(title + ":\n")
		b.WriteString(set.FlagUsagesWrapped(helpWidth))
		b.WriteString("\n")
	}
	for _, g := range groups {
		set := pflag.NewFlagSet(g.title, pflag.ContinueOnError)
		set.SortFlags = false // in the group's order: most used first
		for _, name := range g.flags {
			if f := fs.Lookup(name); f != nil && !placed[name] {
				set.AddFlag(f)
				placed[name] = true
			}
		}
		section(g.title, set)
	}
	rest := pflag.NewFlagSet("other", pflag.ContinueOnError)
	fs.VisitAll(func(f *pflag.Flag) {
		if !placed[f.Name] {
			rest.AddFlag(f)
		}
	})
	section("Other flags", rest)
	return b.String()
}
