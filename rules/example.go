package rules

// ExampleRules returns the rules part of a commented config file, every
// key of it: rewrites, [aliases], [[rewrite]], [[rule]] and [[host]]. The
// command puts its settings before it (linkpatrol config example). It
// loads as it is and changes nothing: keys show their defaults, and what
// only makes sense for example.com is commented out with a "#" right
// before the key, for a user to adapt. Prose comments start with "# ".
func ExampleRules() string { return exampleRules }

const exampleRules = `
# ---- Rewrites, applied before dedupe, in this order -----------------------
#
# 1. unwrap, 2. [[rewrite]], 3. [aliases] and alias_start_hosts,
# 4. drop_params, 5. strip_index, 6. collapse_slashes.

# Redirect services whose target is in a query parameter: "[host]/path?param=".
# The host and the path are globs; no host means any host.
#unwrap = ["/go/?url=", "out.example.com/r?to="]

# Query (and ;path) parameters dropped, as case-insensitive globs. Leaving
# drop_params out keeps the built-in list (utm_*, fbclid, gclid, msclkid,
# jsessionid, phpsessid, ...); drop_params = [] drops nothing.
#drop_params = ["utm_*", "fbclid", "gclid", "msclkid", "mc_cid", "mc_eid", "jsessionid", "phpsessid", "sessionid"]

alias_start_hosts = true # fold http/https and www./bare variants of each start host into it
strip_index = false      # /docs/index.html -> /docs/ (only where the server serves both)
collapse_slashes = false # /a//b -> /a/b

#[aliases]
# Origins that serve the same site as the canonical origin on the left.
#"https://example.com" = ["https://example.net", "https://www.example.net"]

#[[rewrite]]
# A regex replacement on the whole canonical URL; $1 etc. refer to groups.
#regex = '^https://blog\.example\.com/(\d{4})/(.*)$'
#replace = 'https://example.com/blog/$1/$2'

# ---- Rules: the first rule that matches a URL decides ---------------------
#
# Criteria (all given must match): scheme, host (a glob; "*" also spans
# dots; with ":port" it matches the port too), path_prefix, path (a glob:
# "*" within a segment, "**" across), regex (on the whole URL after rewrites).
# A rule without criteria matches every URL, so it can only be the last.
#
# action: parse (fetch, parse, follow links), check (verify only), skip (not
# fetched, listed with its referrers) or ignore (not recorded). Left out,
# the default stays: parse on the start hosts, check elsewhere.
#
# Settings for requests to matched URLs: timeout, recheck, accept (status ->
# verdict: ok, broken, transient, unverifiable), headers, cookies, user and
# password (basic auth). Headers, cookies and credentials need a host in the
# same rule and go only to URLs on it, over https only unless the rule says
# scheme = "http", never across a redirect that changes scheme, host or port. Values may use ${NAME} for environment variables; explain never
# prints them.

#[[rule]]
#path_prefix = "/private/"
#action = "skip"

#[[rule]]
#host = "*.example.com"
#path = "/downloads/**/*.pdf"
#action = "check"
#timeout = "60s"
#recheck = { ok = "7d" }

#[[rule]]
#scheme = "https"
#host = "staging.example.com"
#action = "parse"
#headers = { "X-Audit" = "linkpatrol" }
# headers = { "X-Token" = "${STAGING_TOKEN}" }
# cookies = { session = "${STAGING_SESSION}" }
# user = "audit"
# password = "${STAGING_PASSWORD}"

#[[rule]]
# Sites that turn robots away: a 403 or 999 from them says nothing about
# the link.
#regex = '^https://(www\.)?(linkedin|facebook|instagram)\.com/'
#action = "check"
#accept = { "403" = "unverifiable", "999" = "unverifiable" }

#[[rule]]
## An archive only reachable through its "next" links, and whose ?sid= is
## a story id that merely looks like a session id.
#path_prefix = "/archive/"
#max_template_run = 500
#max_hops = 600
#max_path_segments = 20
#max_path_repeats = 2
#max_query_variants = 100
#keep_session_ids = true

#[[rule]]
#scheme = "ftp"
#action = "ignore"

# ---- Politeness per host: the first [[host]] that matches wins ------------
#
# match is a host glob (with ":port" it matches the port too); cidr matches
# the resolved address. Keys left out keep the default: start hosts are
# brisk (no rate limit beyond per_host, no adaptive slowdown), third-party
# hosts conservative
# (rate "1/s", burst 2, per_host 2, adaptive). The names are the flags'
# (--rate, --per-host, --bandwidth, --retries, ...), which set them for the
# start hosts. Former names (max_in_flight, bytes_per_sec, max_retries)
# still load, with a warning.

#[[host]]
#match = "*.example.com"
#rate = "10/s"            # requests per second ("300/m", "unlimited")
#burst = 10
#window = "500/1m"        # at most 500 requests in any minute
#per_host = 4
#bandwidth = "2MiB"       # body read rate
#quota_requests = 50000   # per pass
#quota_bytes = "5GB"      # per pass
#crawl_delay = "0s"       # minimum gap between requests; on the site's own hosts in place of robots.txt's Crawl-delay
#max_pause = "10m"        # longest Retry-After honoured (longer defers to the next pass); the longest Crawl-delay kept on the site's own hosts (another site's longer one defers its links too)
#ignore_robots = true     # only for hosts you own
#adaptive = true          # slow down while the server slows down
#retries = 2              # tries again after 429, 503, timeouts

#[[host]]
#cidr = "10.0.0.0/8"
#rate = "50/s"
#per_host = 8
`
