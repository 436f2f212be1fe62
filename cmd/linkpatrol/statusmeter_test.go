package main

import (
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

func TestStatusMeterRates(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC)
	var m statusMeter
	if _, ok := m.rate(statusRateWindow); ok {
		t.Error("a rate from no samples")
	}
	// The crawler's count grows by 78 every 2 s (39/s, redirects and
	// fallbacks included); the throttle saw 42 starts of one host.
	for i := range 10 {
		m.add(t0.Add(time.Duration(i)*2*time.Second), int64(78*i), []throttle.HostStats{{Key: "a:80", Requests: int64(42 * i)}})
	}
	if r, ok := m.rate(statusRateWindow); !ok || math.Abs(r-39) > 1e-9 {
		t.Errorf("rate = %v, %v; want 39/s", r, ok)
	}
	rates := m.hostRates()["a:80"]
	if len(rates) != 9 || rates[0] != 21 || rates[8] != 21 {
		t.Errorf("host rates = %v, want nine samples of 21/s", rates)
	}
	// Older samples than statusHistory are forgotten.
	m.add(t0.Add(statusHistory+20*time.Second), 78*10, nil)
	if n := len(m.samples); n >= 11 {
		t.Errorf("%d samples kept over %s", n, statusHistory)
	}
}

func TestRateGraph(t *testing.T) {
	t.Parallel()
	if g := rateSVG([]float64{1}, 5); g != "" {
		t.Errorf("a graph from one sample: %s", g)
	}
	g := string(rateSVG([]float64{1, 5, 3}, 5))
	for _, want := range []string{"<svg", "<polyline", "stroke-dasharray", "the limit, 5/s"} {
		if !strings.Contains(g, want) {
			t.Errorf("graph lacks %q: %s", want, g)
		}
	}
	if g := string(rateSVG([]float64{1, 2}, 0)); strings.Contains(g, "dasharray") {
		t.Errorf("a limit line without a limit: %s", g)
	}
}

// The page ends on the pass's summary, which does not reload, instead of
// "refused to connect"; Finish returns once a viewer has loaded it.
func TestStatusFinishShowsTheSummary(t *testing.T) {
	t.Parallel()
	pass, src := statusFixture(t)
	u, srv, err := serveStatus(t.Context(), "127.0.0.1:0", false, pass, src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	srv.linger = time.Hour // Finish returns because the page was loaded, not on time
	if _, page := get(t, "GET", u, ""); !strings.Contains(page, `http-equiv="refresh"`) {
		t.Fatal("the live page does not reload")
	}
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		srv.Finish(statusFinal{State: "complete", Summary: "12 pages parsed: 2 broken", ExitCode: 1})
	}()
	// Finish sets the final state before it waits; poll the JSON until
	// it shows, then load the page as a browser would.
	for {
		_, doc := get(t, "GET", u+"status.json", "")
		if strings.Contains(doc, `"final"`) {
			break
		}
	}
	_, page := get(t, "GET", u, "")
	if strings.Contains(page, `http-equiv="refresh"`) || !strings.Contains(page, "12 pages parsed: 2 broken") || !strings.Contains(page, "exit code 1") {
		t.Errorf("the final page:\n%s", page)
	}
	<-finished
	if resp, err := http.Get(u); err == nil {
		resp.Body.Close()
		t.Error("the page still answers after Finish")
	}
}

func TestStatusQuotaColumnOnlyWithAQuota(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC)
	render := func(hosts []throttle.HostStats) string {
		var b strings.Builder
		if err := statusPage.Execute(&b, newStatusView(buildStatus(store.Pass{ID: 1}, time.Minute, crawler.Progress{}, hosts, now))); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if page := render([]throttle.HostStats{{Key: "a:80", Requests: 3}}); strings.Contains(page, "quota") {
		t.Error("a quota column without any quota set")
	}
	page := render([]throttle.HostStats{{Key: "a:80", Requests: 3, QuotaRequests: 100, Standing: throttle.Standing{UsedRequests: 3}}, {Key: "b:80"}})
	if !strings.Contains(page, "3 of 100 req") {
		t.Errorf("the quota of a:80 is not shown:\n%s", page)
	}
}
