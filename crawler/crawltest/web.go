package crawltest

import (
	"net/http/httptest"
	"strings"
)

// WebOptions shapes a Web.
type WebOptions struct {
	// Sites is the number of sites, each on its own server. Default 2.
	Sites int
	// Site shapes every site; site i is seeded with Site.Seed+i, so the
	// sites differ. Its Peers are set by the Web.
	Site SiteOptions
}

// A Web is many generated sites, each served on its own loopback port (so
// each is its own host:port, the unit of politeness), whose pages link to
// each other's: a crawl that starts from every site walks across hosts,
// as a cluster's workers must. Each site keeps its own counters (requests
// per URL, peak in flight, arrival times), so a test proves politeness and
// "each URL once" at every server.
type Web struct {
	Sites   []*Site
	servers []*httptest.Server
}

// NewWeb starts the servers of a web on 127.0.0.1. Close stops them.
func NewWeb(opt WebOptions) *Web {
	n := max(opt.Sites, 2)
	w := &Web{}
	// Listen first: every site must know its peers' addresses before it
	// renders a page.
	for range n {
		w.servers = append(w.servers, httptest.NewUnstartedServer(nil))
	}
	for i, srv := range w.servers {
		so := opt.Site
		so.Seed += int64(i)
		so.Peers = nil
		for j, peer := range w.servers {
			if j != i {
				so.Peers = append(so.Peers, "http://"+peer.Listener.Addr().String())
			}
		}
		site := NewSite(so)
		w.Sites = append(w.Sites, site)
		srv.Config.Handler = site
		srv.Start()
	}
	return w
}

// URL is the base URL of site i, without a trailing slash.
func (w *Web) URL(i int) string { return w.servers[i].URL }

// StartURLs are the home pages of every site: start a crawl from all of
// them and it parses every page of the web.
func (w *Web) StartURLs() []string {
	out := make([]string, len(w.servers))
	for i, srv := range w.servers {
		out[i] = srv.URL + "/"
	}
	return out
}

// SiteOf is the index of the site that serves rawURL (by its scheme and
// host), or -1.
func (w *Web) SiteOf(rawURL string) int {
	for i, srv := range w.servers {
		if rest, ok := strings.CutPrefix(rawURL, srv.URL); ok && (rest == "" || rest[0] == '/' || rest[0] == '?') {
			return i
		}
	}
	return -1
}

// Expected is what a correct checker started from StartURLs finds: every
// site's pages and the distinct URLs of the whole web, with absolute URLs
// (targets and referring pages alike).
func (w *Web) Expected() Expected {
	var f found
	for i, s := range w.Sites {
		s.collect(w.servers[i].URL, &f)
	}
	return f.expected()
}

// Stats sums the counters of every site: Requests, Bytes, DistinctURLs,
// RepeatedURLs and NotModified add up; MaxInFlight and MaxPerURL are the
// largest of any one site.
func (w *Web) Stats() Stats {
	sum := Stats{ByMethod: map[string]int64{}}
	for _, s := range w.Sites {
		st := s.Stats()
		sum.Requests += st.Requests
		sum.Bytes += st.Bytes
		sum.DistinctURLs += st.DistinctURLs
		sum.RepeatedURLs += st.RepeatedURLs
		sum.NotModified += st.NotModified
		sum.MaxInFlight = max(sum.MaxInFlight, st.MaxInFlight)
		sum.MaxPerURL = max(sum.MaxPerURL, st.MaxPerURL)
		for m, k := range st.ByMethod {
			sum.ByMethod[m] += k
		}
	}
	return sum
}

// Repeated lists the URLs (absolute) any site was asked for more than once
// with the same method.
func (w *Web) Repeated() []string {
	var out []string
	for i, s := range w.Sites {
		for _, uri := range s.Repeated() {
			out = append(out, w.servers[i].URL+uri)
		}
	}
	return out
}

// Reset zeroes every site's counters.
func (w *Web) Reset() {
	for _, s := range w.Sites {
		s.Reset()
	}
}

// Close stops every server, waiting for the requests they are serving.
func (w *Web) Close() {
	for _, srv := range w.servers {
		srv.Close()
	}
}
