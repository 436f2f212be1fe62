// Package report owns what a person reads after a pass: it reads one pass
// from the store, decides what is worth showing and in which order, compares
// it with the previous complete pass, and renders it as text for a cron mail,
// JSON (DESIGN.md's schema), CSV, JUnit XML, SARIF 2.1.0, GitHub Actions
// annotations, Markdown or one self-contained HTML page.
//
// Build does all the deciding once, so every format shows the same problems
// in the same order:
//
//   - Sections, in this order: broken (what makes the exit code 1), transient,
//     unverifiable, then (only with Options.All) skipped and ok.
//   - Worst-first within a section: never good (LastGood zero) first, then the
//     longest since last good (by day), then the most referring pages,
//     then the URL, so the order is stable from one run to the next.
//   - By default the problems (broken, transient, unverifiable) are listed;
//     All lists every URL of the pass.
//   - Referrers come from the store's forward link lists (PageLinks), turned
//     around in one scan; each is kept with its line, sorted by page then line.
//
// Every format lists the same entries: by default the problems (broken,
// transient and unverifiable, each in its own section: only broken ones
// are failures in JUnit and errors in SARIF and GitHub annotations); with
// Options.All every URL of the pass; with Options.OnlyNew only the problems
// that are new. Problems younger than Options.ReportAfter are left out of
// every format and counted in Summary.Suppressed. HasBroken is the exit
// code's question, asked of what is shown. Text and Markdown list each
// referring page once with its lines, cap the pages listed per URL
// (Options.MaxReferrers) and say how many more there are; JSON, CSV, HTML
// and the annotations list every referrer.
//
// With Options.CheckFragments, links to page#fragment whose page (parsed in
// the pass, with its anchors stored) has no such id or <a name> are listed
// in a section of their own after the others, "Missing fragments", in every
// format: JSON adds "missing_fragments" (a list of {url, fragment, error:
// "missing fragment", referrers}) and summary.missing_fragments, both only
// when the check ran; CSV adds rows with verdict broken and error "missing
// fragment"; JUnit a failing suite; SARIF rule LP004. They make HasBroken
// true. They count in what changed like URLs (new, still there, fixed, no
// longer linked, against the list the previous complete pass kept in its
// tally), so OnlyNew lists the new ones; text lists the fixed and no longer
// linked ones in sections of their own, JSON in changes.fixed_fragments and
// changes.no_longer_linked_fragments, and each missing one has a "change".
// One missing when last checked whose page this pass could not read is
// listed and counted as missing, and the summary of every format says how
// many of them were not checked (JSON: summary.missing_fragments_not_checked).
// See fragments.go for the matching rules.
//
// A sitemap the pass was seeded from is a URL like any other, with action
// "sitemap"; the URLs it listed name it, and the line of their <loc>, as
// their referrer.
//
// For a check of a directory (Pass.Roots set), file:// URLs are shown as
// the paths of their files, resolved inside the directory (store.LocalFile):
// relative to the working directory when the directory was given as a
// relative path (site/about/index.html:12), absolute when it was given as
// one. GitHub annotations and SARIF point at the same paths.
//
// A redirect chain that fails is one problem, on the URL a page links to
// (or a start URL): its entry names the chain (Report.Chain). A problem
// that no page links to and that lies on such a chain is a hop of it: it
// gets no entry in any format, even with Options.All, and is counted in
// Summary.Hops, not in the verdicts. A hop a page links to is an entry of
// its own.
//
// What changed is measured against the newest complete pass before this one
// (Report.Previous), using the PrevVerdict/PrevPass every record carries:
// a problem is new when it was not a reported problem in that pass (fine,
// unlinked, or still too young for ReportAfter: its entry then says it is
// first reported now), still broken otherwise; fixed is ok now after being
// a reported problem there (too young for ReportAfter then, it was never
// shown; PrevFailures says), reached by a link or a start URL; no longer
// linked is a reported problem of that pass, not reached only by a
// redirect, that this (complete) pass never reached again. A pass between
// the two that never finished is passed over: the crawler carries what the
// compared pass recorded through it (store.Pass.Skips), and a problem of
// the compared pass that such a pass rechecked (still a problem there) is
// read from that pass's records for "no longer linked" (qa6 Q3).
//
// Summary.Pages counts pages read; a page that failed and had its last
// good copy's links followed (a ghost) is counted in Summary.Ghosts, and
// its links to itself do not make it its own referrer.
package report
