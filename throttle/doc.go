// Package throttle owns politeness towards the hosts linkpatrol crawls.
//
// For every host (or group of hosts sharing a limiter key) it keeps a token
// bucket (rate with burst), a sliding flood window (at most N requests
// reaching the host in any window W: a request counts from its permit until
// W after it is over), a cap on requests in flight, a minimum gap between
// request starts (configured, or from robots.txt Crawl-delay: on the site's
// own hosts up to the host's max pause, unless the owner's own delay takes
// its place; another site's in full, deferring the host when it is longer
// than the max pause, as a long Retry-After does), per-pass
// request and byte quotas, pauses asked for by the server (429/503 with
// Retry-After) with the slower pace a 429 asks for while its refusals
// come from the pace (a halving after which as many new URLs are refused
// is undone), which comes back no faster than to the pace the
// host's limit was found to allow (see limiter.slowDown), and the retries they
// cost nothing (comebacks, see Decision.Comeback), exponential backoff after
// failures, and an optional
// AutoThrottle-style slowdown driven by response latency. Body reads are
// paced to a per-host and a global bytes-per-second budget.
//
// The package never blocks a caller that asks to start a request: Reserve
// answers either with a Permit or with the time to wait, so one dispatcher
// can serve many hosts and a slow host never holds up the others. Only the
// body reader returned by Permit.Body sleeps, and only inside the request it
// belongs to. Ready signals that a permit is done, and Freed names the
// hosts whose waits that may have cut short, so that a dispatcher with
// thousands of hosts waiting asks again for those only.
//
// It owns the vocabulary of politeness too: the defaults for the site's own
// hosts and for third-party hosts (StartHostDefaults, OtherHostDefaults),
// and the parsers and formatters of rates, windows, sizes and durations
// (with days and weeks). Their value types (Rate, Window, Size, Duration)
// are both pflag.Value and encoding.TextUnmarshaler, so the command line
// and the config file read a value with one parser.
//
// It knows nothing of HTML, HTTP clients or the database. robots.txt bodies
// are parsed with github.com/temoto/robotstxt; per-host state that must
// survive a restart (pauses, backoff, quota used this pass, the robots.txt
// cache) is exported as opaque bytes for the store to keep.
package throttle
