// Package rules makes every decision linkpatrol takes about a URL without
// touching the network: how a reference in a page resolves (Resolve), the
// canonical form that is the dedupe key (Canonicalize), the rewrites
// applied before dedupe (aliases, regex replacements, dropped tracking
// parameters, index.html, doubled slashes, redirect services), the action
// a URL gets (parse, check, skip or ignore), the per-rule policy (recheck
// intervals, accepted statuses, headers, cookies, credentials) and the
// per-host politeness settings (Engine.Decide, Engine.HostSettings). It
// reads the TOML config file (LoadConfig), reporting every mistake as
// file:line:col, and explains each decision step by step
// (Engine.Explain). Nothing here does I/O beyond reading that file, so all
// of it is tested with tables.
package rules
