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

const checkExamples = `Examples:
  linkpatrol check https://example.com/
  linkpatrol check ./public                     a built site, before deploying
  linkpatrol check --fail-on internal -o junit.xml https://example.com/
  linkpatrol check --rate 5/s --per-host 2 https://example.com/
  linkpatrol check --recheck-ok 3d --report-after 2 https://example.com/
`

// flagUsages is fs.FlagUsagesWrapped at helpWidth, but a flag that takes
// no value (a bool such as --no-reuse, a count such as -v) is shown as it
// is typed: pflag 1.1 writes "--no-reuse[=true|false]" and "--verbose
// count", which read as if a value were wanted.
func flagUsages(fs *pflag.FlagSet) string {
	shown := pflag.NewFlagSet(fs.Name(), pflag.ContinueOnError)
	shown.SortFlags = fs.SortFlags
	fs.VisitAll(func(f *pflag.Flag) {
		if typ := f.Value.Type(); f.NoOptDefVal != "" && (typ == "bool" || typ == "count") {
			plain := *f
			plain.Value, plain.NoOptDefVal = switchValue{f.Value}, ""
			f = &plain
		}
		shown.AddFlag(f)
	})
	return shown.FlagUsagesWrapped(helpWidth)
}

// switchValue shows a flag that takes no value to pflag's usage writer as
// a bool that does not ask for "[=true|false]".
type switchValue struct{ pflag.Value }

func (switchValue) Type() string { return "bool" }

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
		b.WriteString(flagUsages(set))
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
