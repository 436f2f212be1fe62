package report

import (
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/store"
)

// What a pass left unchecked with no problem to show for it is named in
// three sentences, each in its own words: the first line (HeldBack), the
// line for a report that lists nothing (Nothing) and the counts (Counts).
// Each kind, alone and together, one and many.
func TestHeldKindsSentences(t *testing.T) {
	t.Parallel()
	unread := store.URLRecord{URL: "https://example.com/a", Action: "parse", Verdict: store.VerdictTransient, Status: 503}
	ghost := unread
	ghost.URL, ghost.Parsed, ghost.Note = "https://example.com/g", true, "ghost: following its links from 2026-11-22"
	tests := []struct {
		name                      string
		sum                       Summary
		unread                    []store.URLRecord
		heldBack, nothing, counts string
	}{
		{name: "nothing held back",
			heldBack: "",
			nothing:  "No problems found.",
			counts:   "0 pages parsed, 0 links, 0 URLs: 0 broken, 0 transient, 0 unverifiable, 0 skipped; took 0s."},
		{name: "one trap", sum: Summary{URLs: 3, Skipped: 1, Traps: 1},
			heldBack: "PARTLY CHECKED: 1 URL held back as suspected spider traps. They are listed below with the setting that lets them through.",
			nothing:  "No problems found among the URLs checked; 1 URL was held back as suspected spider traps.",
			counts:   "0 pages parsed, 0 links, 3 URLs: 0 broken, 0 transient, 0 unverifiable, 1 skipped (1 held back as suspected spider traps, listed below); took 0s."},
		{name: "two traps", sum: Summary{URLs: 3, Skipped: 2, Traps: 2},
			heldBack: "PARTLY CHECKED: 2 URLs held back as suspected spider traps. They are listed below with the setting that lets them through.",
			nothing:  "No problems found among the URLs checked; 2 URLs were held back as suspected spider traps.",
			counts:   "0 pages parsed, 0 links, 3 URLs: 0 broken, 0 transient, 0 unverifiable, 2 skipped (2 held back as suspected spider traps, listed below); took 0s."},
		{name: "one over quota", sum: Summary{URLs: 3, Skipped: 1, Quota: 1},
			heldBack: "PARTLY CHECKED: 1 URL not checked because a host's quota for the pass was used up. They are listed below with the setting that lets them through.",
			nothing:  "No problems found among the URLs checked; 1 URL was not checked: a host's quota for the pass (--quota-requests, --quota-bytes) was used up.",
			counts:   "0 pages parsed, 0 links, 3 URLs: 0 broken, 0 transient, 0 unverifiable, 1 skipped (1 not checked: a host's quota for the pass was used up, listed below); took 0s."},
		{name: "two over quota", sum: Summary{URLs: 3, Skipped: 2, Quota: 2},
			heldBack: "PARTLY CHECKED: 2 URLs not checked because a host's quota for the pass was used up. They are listed below with the setting that lets them through.",
			nothing:  "No problems found among the URLs checked; 2 URLs were not checked: a host's quota for the pass (--quota-requests, --quota-bytes) was used up.",
			counts:   "0 pages parsed, 0 links, 3 URLs: 0 broken, 0 transient, 0 unverifiable, 2 skipped (2 not checked: a host's quota for the pass was used up, listed below); took 0s."},
		{name: "one sitemap entry not taken", sum: Summary{URLs: 3, NotTaken: 1},
			heldBack: "PARTLY CHECKED: 1 sitemap entry not taken because the sitemap limit (--sitemap-limit) was reached. They are listed below with the setting that lets them through.",
			nothing:  "No problems found among the URLs checked; 1 sitemap entry was not taken: the sitemap limit (--sitemap-limit) was reached.",
			counts:   "0 pages parsed, 0 links, 3 URLs: 0 broken, 0 transient, 0 unverifiable, 0 skipped; 1 sitemap entry not taken: the sitemap limit was reached, listed below; took 0s."},
		{name: "two sitemap entries not taken", sum: Summary{URLs: 3, NotTaken: 2},
			heldBack: "PARTLY CHECKED: 2 sitemap entries not taken because the sitemap limit (--sitemap-limit) was reached. They are listed below with the setting that lets them through.",
			nothing:  "No problems found among the URLs checked; 2 sitemap entries were not taken: the sitemap limit (--sitemap-limit) was reached.",
			counts:   "0 pages parsed, 0 links, 3 URLs: 0 broken, 0 transient, 0 unverifiable, 0 skipped; 2 sitemap entries not taken: the sitemap limit was reached, listed below; took 0s."},
		{name: "one page cut", sum: Summary{Pages: 2, URLs: 3, Cut: 1},
			heldBack: "PARTLY CHECKED: 1 page read only in part (cut short), so links past the cut may not have been checked. They are listed below with the setting that lets them through.",
			nothing:  "No problems found among the URLs checked; 1 page was cut short: links past the cut were not checked.",
			counts:   "2 pages parsed (1 cut short: links past the cut not checked, listed below), 0 links, 3 URLs: 0 broken, 0 transient, 0 unverifiable, 0 skipped; took 0s."},
		{name: "two pages cut", sum: Summary{Pages: 2, URLs: 3, Cut: 2},
			heldBack: "PARTLY CHECKED: 2 pages read only in part (cut short), so links past the cut may not have been checked. They are listed below with the setting that lets them through.",
			nothing:  "No problems found among the URLs checked; 2 pages were cut short: links past the cut were not checked.",
			counts:   "2 pages parsed (2 cut short: links past the cut not checked, listed below), 0 links, 3 URLs: 0 broken, 0 transient, 0 unverifiable, 0 skipped; took 0s."},
		{name: "one page not read", sum: Summary{URLs: 3, Transient: 1, Unread: 1}, unread: []store.URLRecord{unread},
			heldBack: "PARTLY CHECKED: 1 page of the site could not be read (503 Service Unavailable), so the links behind it were not checked. They are listed below.",
			nothing:  "No problems found among the URLs checked; 1 page of the site could not be read: the links behind it were not checked.",
			counts:   "0 pages parsed, 0 links, 3 URLs: 0 broken, 1 transient, 0 unverifiable, 0 skipped; 1 page of the site not read: links behind it not checked, listed below; took 0s."},
		{name: "two pages not read, one a ghost", sum: Summary{URLs: 3, Transient: 2, Unread: 2, Ghosts: 1}, unread: []store.URLRecord{unread, ghost},
			heldBack: "PARTLY CHECKED: 2 pages of the site could not be read (503 Service Unavailable), so the links behind them were not checked (behind 1 of them, only those added since its last good copy). They are listed below.",
			nothing:  "No problems found among the URLs checked; 2 pages of the site could not be read: the links behind them were not checked (behind 1 of them, only those added since its last good copy).",
			counts:   "0 pages parsed, 1 failing page's links followed from its last good copy, 0 links, 3 URLs: 0 broken, 2 transient, 0 unverifiable, 0 skipped; 2 pages of the site not read: links behind them not checked, listed below; took 0s."},
		{name: "one ghost not read", sum: Summary{URLs: 3, Transient: 1, Unread: 1, Ghosts: 1}, unread: []store.URLRecord{ghost},
			heldBack: "PARTLY CHECKED: 1 page of the site could not be read (503 Service Unavailable): the links of its last good copy were checked, any added since were not. They are listed below.",
			nothing:  "No problems found among the URLs checked; 1 page of the site could not be read: the links of its last good copy were checked, any added since were not.",
			counts:   "0 pages parsed, 1 failing page's links followed from its last good copy, 0 links, 3 URLs: 0 broken, 1 transient, 0 unverifiable, 0 skipped; 1 page of the site not read: only the links of its last good copy checked, listed below; took 0s."},
		{name: "every kind", sum: Summary{Pages: 4, URLs: 9, Transient: 1, Skipped: 3, Traps: 2, Quota: 1, NotTaken: 3, Cut: 1, Unread: 1, Robots: 1, Hops: 1}, unread: []store.URLRecord{unread},
			heldBack: "PARTLY CHECKED: 2 URLs held back as suspected spider traps; 1 URL not checked because a host's quota for the pass was used up; 3 sitemap entries not taken because the sitemap limit (--sitemap-limit) was reached; 1 page read only in part (cut short), so links past the cut may not have been checked; 1 page of the site could not be read (503 Service Unavailable), so the links behind it were not checked. They are listed below with the setting that lets them through.",
			nothing:  "No problems found among the URLs checked; 2 URLs were held back as suspected spider traps; 1 URL was not checked: a host's quota for the pass (--quota-requests, --quota-bytes) was used up; 3 sitemap entries were not taken: the sitemap limit (--sitemap-limit) was reached; 1 page was cut short: links past the cut were not checked; 1 page of the site could not be read: the links behind it were not checked.",
			counts:   "4 pages parsed (1 cut short: links past the cut not checked, listed below), 0 links, 9 URLs: 0 broken, 1 transient, 0 unverifiable, 3 skipped (2 held back as suspected spider traps, listed below) (1 not checked: a host's quota for the pass was used up, listed below); 3 sitemap entries not taken: the sitemap limit was reached, listed below (1 on the site's own hosts, which their robots.txt disallows, listed below; --ignore-robots checks them); 1 URL no page links to is a hop of a failing redirect chain, counted as part of the link that leads there; 1 page of the site not read: links behind it not checked, listed below; took 0s."},
		{name: "only unread, with a page cut", sum: Summary{Pages: 2, URLs: 3, Transient: 1, Cut: 1, Unread: 1}, unread: []store.URLRecord{unread},
			heldBack: "PARTLY CHECKED: 1 page read only in part (cut short), so links past the cut may not have been checked; 1 page of the site could not be read (503 Service Unavailable), so the links behind it were not checked. They are listed below with the setting that lets them through.",
			nothing:  "No problems found among the URLs checked; 1 page was cut short: links past the cut were not checked; 1 page of the site could not be read: the links behind it were not checked.",
			counts:   "2 pages parsed (1 cut short: links past the cut not checked, listed below), 0 links, 3 URLs: 0 broken, 1 transient, 0 unverifiable, 0 skipped; 1 page of the site not read: links behind it not checked, listed below; took 0s."},
	}
	for _, tt := range tests {
		r := &Report{Pass: store.Pass{ID: 1, State: store.PassComplete}, Summary: tt.sum, Unread: tt.unread, Options: Options{Now: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)}}
		if got := r.HeldBack(); got != tt.heldBack {
			t.Errorf("%s: HeldBack\n got %q\nwant %q", tt.name, got, tt.heldBack)
		}
		if got := r.Nothing(); got != tt.nothing {
			t.Errorf("%s: Nothing\n got %q\nwant %q", tt.name, got, tt.nothing)
		}
		if got := r.Counts(); got != tt.counts {
			t.Errorf("%s: Counts\n got %q\nwant %q", tt.name, got, tt.counts)
		}
	}
}
