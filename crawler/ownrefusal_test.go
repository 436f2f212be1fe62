package crawler_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// searchSite serves a start page linking /search and /p0 … /p(n-1):
// /search answers "429 Retry-After: ra" every time (one endpoint behind
// its own limit), every page 200. It records when each path was asked.
type searchSite struct {
	n  int
	ra int
	mu sync.Mutex
	at map[string][]time.Time
}

func (s *searchSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.at == nil {
		s.at = make(map[string][]time.Time)
	}
	s.at[r.URL.Path] = append(s.at[r.URL.Path], time.Now())
	s.mu.Unlock()
	switch {
	case r.URL.Path == "/robots.txt":
		http.NotFound(w, r)
	case r.URL.Path == "/search":
		w.Header().Set("Retry-After", fmt.Sprint(s.ra))
		w.WriteHeader(http.StatusTooManyRequests)
	case r.URL.Path == "/":
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintln(w, `<a href="/search">search</a>`)
		for i := range s.n {
			fmt.Fprintf(w, "<a href=\"/p%d\">%d</a>\n", i, i)
		}
	default:
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<p>a page</p>")
	}
}

// One URL refused with "429 Retry-After: 3" every time, while its host
// serves everything else, is held on its own: its Retry-After is honoured
// for it, and the rest of the site goes on. It paused the whole host at
// each of its ten comebacks, so the site's 30 other pages waited 39 s
// behind it (qa11 Q7). It still ends not checked (unverifiable: 429,
// never OK nor broken) once its retries are spent.
func TestURLRefusedEveryTimeHoldsOnlyItself(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		site := &searchSite{n: 30, ra: 3}
		base, tr := pipeServer(t, site)
		began := time.Now()
		_, recs, _ := politeRunVia(t, openDB(t), base+"/", throttle.Settings{MaxPause: 10 * time.Minute, MaxRetries: 2}, context.Background(), tr)

		var last time.Time
		for i := range site.n {
			at := site.at[fmt.Sprintf("/p%d", i)]
			if len(at) == 0 {
				t.Fatalf("/p%d never asked", i)
			}
			if at[0].After(last) {
				last = at[0]
			}
		}
		// Two of its pauses (its first refusal, and its first comeback
		// refused before the host served another URL) are the host's,
		// and its second comeback tells: the pages wait for no more.
		if took := last.Sub(began); took > 10*time.Second {
			t.Errorf("the last page was asked %s into the crawl; the refusals of /search held the site up", took)
		}
		search := site.at["/search"]
		for i := 1; i < len(search); i++ {
			if gap := search[i].Sub(search[i-1]); gap < time.Duration(site.ra)*time.Second {
				t.Errorf("/search asked again %s after it was refused with Retry-After: %d", gap, site.ra)
			}
		}
		// Its first refusal and the first comeback are the host's, and
		// come back as the server asked; once the refusals are found to
		// be its own, each spends a retry.
		if want := 1 + 2 + 2; len(search) != want {
			t.Errorf("/search asked %d times, want %d (1 + two comebacks + its retries)", len(search), want)
		}
		rec := recs[base+"/search"]
		if rec.Verdict != store.VerdictUnverifiable || rec.Status != http.StatusTooManyRequests {
			t.Errorf("/search recorded %s, status %d, error %q; want unverifiable, 429", rec.Verdict, rec.Status, rec.Error)
		}
		for i := range site.n {
			if r := recs[fmt.Sprintf("%s/p%d", base, i)]; r.Verdict != store.VerdictOK {
				t.Errorf("/p%d recorded %s (%s)", i, r.Verdict, strings.TrimSpace(r.Note))
			}
		}
	})
}

// Behind a per-host limit, a site with one URL refused every time is
// asked at the limit's pace once that URL is found to be refused for
// itself: the slowdowns its refusals made are undone. Kept, the pause its
// first comeback waited for counted as the host's pace, and the pages
// settled 4 s apart at --rate 1/s (qa11 R11).
func TestURLRefusedEveryTimeLeavesThePace(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		site := &searchSite{n: 20, ra: 3}
		base, tr := pipeServer(t, site)
		politeRunVia(t, openDB(t), base+"/", throttle.Settings{Rate: 1, Burst: 1, MaxPause: 10 * time.Minute, MaxRetries: 2}, context.Background(), tr)
		// Every request from the first page on: the URL's own comebacks
		// take their place in the limit's pace too.
		var reqs []time.Time
		first := site.at["/p0"][0]
		for _, ats := range site.at {
			for _, a := range ats {
				if !a.Before(first) {
					reqs = append(reqs, a)
				}
			}
		}
		slices.SortFunc(reqs, time.Time.Compare)
		var gaps []time.Duration
		for i := 1; i < len(reqs); i++ {
			gaps = append(gaps, reqs[i].Sub(reqs[i-1]))
		}
		slices.Sort(gaps)
		if median := gaps[len(gaps)/2]; median > 1250*time.Millisecond {
			t.Errorf("requests a median %s apart at --rate 1/s (gaps %v)", median, gaps)
		}
	})
}

// A URL refused on every request of the pass says how often it was
// asked: its record read "429 Too Many Requests; never worked", like that
// of a URL asked once, after 5 requests (hold2).
func TestURLRefusedEveryTimeSaysHowOftenItWasAsked(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		site := &searchSite{n: 4, ra: 3}
		base, tr := pipeServer(t, site)
		_, recs, _ := politeRunVia(t, openDB(t), base+"/", throttle.Settings{MaxPause: 10 * time.Minute, MaxRetries: 2}, context.Background(), tr)
		want := fmt.Sprintf("gave up after %d tries", len(site.at["/search"]))
		if rec := recs[base+"/search"]; !strings.Contains(rec.Note, want) {
			t.Errorf("/search recorded %s, note %q; want it to say %q", rec.Verdict, rec.Note, want)
		}
		if rec := recs[base+"/p0"]; strings.Contains(rec.Note, "gave up") {
			t.Errorf("/p0, served at once, has the note %q", rec.Note)
		}
	})
}
