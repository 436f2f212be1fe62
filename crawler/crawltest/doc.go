// Package crawltest serves a generated website for tests, benchmarks and the
// load harness, the way net/http/httptest serves a handler: a Site is an
// http.Handler whose N pages are a pure function of their index and a seed,
// so a 100,000-page site costs no memory until a page is requested, and the
// same options always give byte-for-byte the same site. A site as small as
// a test's keeps the pages it served, so serving one again costs nothing.
//
// A Site counts what it is asked for (requests per method and per URL, bytes,
// the peak number of requests in flight) so a test or the harness can check
// that a crawler fetched every URL exactly once and how hard it pushed, and it
// knows what a correct checker must report (Expected): its pages, the
// distinct URLs they link to, and every broken link with its page and line.
//
// The pages are meant to cost what real pages cost to crawl: a head with a
// stylesheet and a script, a navigation bar, paragraphs of text with links
// spread over lines, links whose href sits on a later line than the tag,
// img and srcset candidates on their own lines, a link hidden in an HTML
// comment (which must never be requested) and a mailto: link.
//
// A Web is many Sites, each on its own loopback port, whose pages link to
// each other's (and, with PeerRedirectEvery, redirect to each other's): the
// multi-host web that distributed passes are tested on, with each site's
// counters (peak in flight, repeated URLs, MaxStartsIn a window) proving
// politeness and "each URL once" at every server.
//
// AtOnce runs a test's subtests together in the test's own slot, where
// parallel subtests would queue behind every other test (in packages
// whose TestMain runs more parallel tests than CPUs: testmain.RunWaiting).
//
// The package does not import crawler; crawler's own tests import it.
package crawltest
