// Package rules makes every decision linkpatrol takes about a URL without
// touching the network: how a reference in a page resolves (Resolve), the
// canonical form that is the dedupe key (Canonicalize), the rewrites
// applied before dedupe (aliases, regex replacements, dropped tracking
// parameters, index.html, doubled slashes, redirect services), the action
// a URL gets (parse, check, skip or ignore), the per-rule policy (recheck
// intervals, accepted statuses, headers, cookies, credentials) and the
// per-host politeness settings (Engine.Decide, Engine.HostSettings, with
// throttle's defaults and parsers). It reads the TOML config file
// (LoadConfig): the rules part itself, and the command's settings (every
// other key) it hands to the command's table (Settings) without knowing
// them, so every mistake in either is reported as file:line:col, and a key
// under a former name loads with a warning. It explains each decision step
// by step (Engine.Explain). Nothing here does I/O beyond reading that file,
// so all of it is tested with tables.
package rules
