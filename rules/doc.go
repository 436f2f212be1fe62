// Package rules makes every decision linkpatrol takes about a URL without
// touching the network: how a reference in a page resolves, the canonical
// form that serves as the dedupe key, the rewrites applied before dedupe,
// which action a URL gets (parse, check, skip or ignore), the per-rule
// policy (recheck intervals, accepted statuses, headers, credentials) and
// the per-host politeness settings. It reads the config file and nothing
// else, so everything here can be tested with tables.
package rules
