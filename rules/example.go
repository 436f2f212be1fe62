package rules

// ExampleConfig returns a commented config file that shows every key. It
// loads as it is and changes nothing: settings show their defaults, and
// everything that only makes sense for example.com (start URLs, rules,
// rewrites, hosts) is commented out with a "#" right before the key, for a
// user to adapt. Prose comments start with "# ".
func ExampleConfig() string { return exampleConfig }

const exampleConfig = `# linkpatrol.toml: settings and rules for linkpatrol.
#
# Every key is optional; command-line flags override what is set here.
# linkpatrol reads ./linkpatrol.toml when it exists, or the file given with
# --config. To check a file without crawling: linkpatrol config check FILE
#
# Durations are written "90s", "30m", "12h", "7d" or "2w"; sizes "512KiB",
# "10MiB", "2GB" or a number of bytes.
#
# Settings show their defaults. Lines like "#key = value" are examples for
# example.com, off until you adapt them and remove the "#".

# ---- The run --------------------------------------------------------------

# Where the crawl starts: http(s) URLs, or one directory of a built site.
# Pages on the hosts of these URLs are parsed; every other link is checked.
#start = ["https://example.com/"]

db = "linkpatrol.db"     # the database that keeps every pass
concurrency = 16         # requests in flight in total
per_host = 8             # requests in flight to one host (at most concurrency)
timeout = "20s"          # one request; a whole task may take twice this
max_size = "10MiB"       # largest HTML page read, after decompression
max_redirects = 20       # redirects followed, as browsers do; one more is "too many redirects"
max_time = "0s"          # stop after this long and exit 3; the next run resumes (0: no limit)
user_agent = ""          # empty: linkpatrol and its version
commit_batch = 32        # results per transaction, at most: what a kill may cost
commit_every = "1s"      # longest time between commits, and between fsyncs

# ---- Seeding --------------------------------------------------------------

sitemaps = []            # sitemap URLs (indexes and .gz too) that add start URLs
robots_sitemaps = false  # also follow the Sitemap: lines of the start hosts' robots.txt
sitemap_limit = 50000    # most URLs taken from sitemaps in a pass
# A built site on disk: base_url is where it is published (absolute links
# under it are checked against its files); root is the site root of files
# given one by one (default: the directory holding them all).
base_url = ""
root = ""

# ---- The report -----------------------------------------------------------

format = "text"          # text, json, ... (linkpatrol check --help lists them)
output = []              # report files, format from the extension, e.g. ["report.json"]
all = false              # list every URL, not only the problems
quiet = false            # no progress line
check_fragments = false  # check page#fragment against the page's id and name attributes
# Keep a problem out of the report until it has failed this many passes
# (a number) or for this long (a duration); 0 reports it at once.
report_after = 0
# Which problems make the exit code 1: "broken" (broken links and missing
# fragments), "internal" (only those on the site: third-party rot is
# reported but not fatal), "any" (transient and unverifiable too), "never".
fail_on = "broken"

# Statuses taken as ok for every URL (like --accept 200,429); a [[rule]]'s
# own accept decides for the URLs it matches.
#accept = [429]

# Headers sent to the start hosts (like -H "Name: value"), or to the https
# host named before "=" ("api.example.com=X-Api-Key: ${API_KEY}"; ${NAME}
# reads the environment). A [[rule]] with headers scopes them more finely.
#header = ["Accept-Language: en"]

# Only the site's own links: links to other hosts are listed as skipped, not
# fetched (like --offline). A [[rule]] with an action still decides its URLs.
offline = false

# Skip TLS certificate verification (like --insecure), for a staging host
# with a self-signed certificate. Every report of the pass says so first.
insecure = false

# ---- Passes over time -----------------------------------------------------

# A page that fails now but was good within this long still has its old
# links followed, so one broken index page does not hide the rest.
ghost = "7d"
keep_passes = 10         # complete passes kept in the database; older ones are pruned

# ---- Quick scope (like --include / --exclude) ------------------------------

# Regexes on the whole URL. With include, URLs matching none are skipped
# (the start URLs excepted); exclude skips what it matches. Both come before
# the [[rule]]s below.
#include = []
#exclude = ['\.(zip|tar\.gz|iso)$']

# ---- Spider traps ---------------------------------------------------------
#
# A page that would be parsed is held back as a suspected trap (not fetched;
# listed as skipped with the reason and the key that lets it through) when:
max_hops = 50            # it is more links than this from a start URL or sitemap entry
max_path_segments = 20   # its path has more segments than this
max_path_repeats = 2     # a segment (or run of them) repeats more often in a row: /a/a/a/
max_query_variants = 100 # its path already has this many distinct query strings
max_template_run = 40    # it is one of more pages of one template (/cal/#/#) in a
                         # row, each found on the one before: an endless calendar
# 0 turns a limit off. A [[rule]] may set any of them for the URLs it matches.
# Query and ;path parameters that carry a session id (jsessionid, and sid,
# session, ... with a random-looking value; ASP.NET's /(S(...))/ segments)
# are dropped before dedupe, so every link with a fresh session id is the
# same URL; keep_session_ids = true keeps them (also per [[rule]]).
keep_session_ids = false

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

[recheck]
# How long a result is reused in the next pass before the URL is fetched
# again, per verdict (0: always fetch). Reuse is for good results of links
# that are only checked (other sites above all, where it spares them);
# the site's own pages are revalidated (a 304 when unchanged) and problems
# are checked again, so a fix shows in the next run.
ok = "20h"
pages = "0s"             # a good page of the site, links included
broken = "0s"
transient = "0s"         # 0: a timeout or 5xx is always tried again next pass
unverifiable = "0s"

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
#crawl_delay = "0s"       # minimum gap between requests
#max_pause = "10m"        # longest Retry-After honoured; longer defers to the next pass
#ignore_robots = true     # only for hosts you own
#adaptive = true          # slow down while the server slows down
#retries = 2              # tries again after 429, 503, timeouts

#[[host]]
#cidr = "10.0.0.0/8"
#rate = "50/s"
#per_host = 8
`
