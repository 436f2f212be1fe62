package report

import (
	"fmt"
	"html/template"
	"slices"
	"strings"

	"github.com/linkpatrol/linkpatrol/store"
)

// passLister is the optional part of a Source that lists every stored
// pass, for the trend over passes; *store.DB is one.
type passLister interface {
	Passes() ([]store.Pass, error)
}

// TrendPoint is one complete pass of the trend: its problems, split into
// new and still there, and what it fixed.
type TrendPoint struct {
	Pass  uint64
	Tally store.Tally
}

// Tally is what this pass found, to be kept with it (see store.Pass.Tally).
func (r *Report) Tally() store.Tally {
	s := r.Summary
	return store.Tally{Broken: s.Broken, Transient: s.Transient, Unverifiable: s.Unverifiable, New: s.New, Still: s.StillBroken, Fixed: s.Fixed,
		FragmentsChecked: r.checksFragments(), Fragments: r.fragmentKeys, Unchecked: r.heldBehind,
		StartsWithLinks: slices.Sorted(slices.Values(r.startsWithLinks))}
}

// trend reads the tallies of the complete passes of the same start URLs
// up to this one, oldest first, this pass's own from its summary.
func (r *Report) trend(src Source) error {
	l, ok := src.(passLister)
	if !ok {
		return nil
	}
	passes, err := l.Passes()
	if err != nil {
		return fmt.Errorf("list passes: %w", err)
	}
	for _, p := range passes {
		if p.ID < r.Pass.ID && p.State == store.PassComplete && p.Tally != nil && p.SameSite(r.Pass) {
			r.Trend = append(r.Trend, TrendPoint{Pass: p.ID, Tally: *p.Tally})
		}
	}
	if r.Pass.State == store.PassComplete {
		r.Trend = append(r.Trend, TrendPoint{Pass: r.Pass.ID, Tally: r.Tally()})
	}
	return nil
}

// Colours of the trend, as in the page's style sheet; the SVG uses
// presentation attributes, which the page's CSP allows, not style.
const (
	trendNew   = "#c0392b"
	trendStill = "#b9770e"
	trendFixed = "#1e8449"
)

// trendSVG draws the problems of each kept pass as a column, new ones on
// top of those still there, and the fixed ones below the axis: the trend a
// site owner looks at first. It is "" with fewer than two passes.
func (r *Report) trendSVG() template.HTML {
	pts := r.Trend
	if len(pts) < 2 {
		return ""
	}
	top, bottom := 1, 0
	for _, p := range pts {
		top = max(top, p.Tally.New+p.Tally.Still)
		bottom = max(bottom, p.Tally.Fixed)
	}
	const (
		col, gap, left, chartH, label = 28, 10, 36, 90, 16
	)
	fixedH := 0
	if bottom > 0 {
		fixedH = max(12, chartH*bottom/(top+bottom))
	}
	upH := chartH - fixedH
	scale := float64(upH) / float64(max(top, bottom))
	width := left + len(pts)*(col+gap)
	height := 14 + upH + fixedH + label + 4
	axis := 14 + upH
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-labelledby="trend-title">`, width+150, height, width+150, height)
	fmt.Fprintf(&b, `<title id="trend-title">Problems per pass, passes %d to %d: new, still there, and fixed below the line</title>`, pts[0].Pass, pts[len(pts)-1].Pass)
	fmt.Fprintf(&b, `<text x="0" y="10" font-size="10" fill="currentColor">%d</text>`, top)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="currentColor" stroke-width="1"/>`, left-4, axis, width, axis)
	for i, p := range pts {
		x := left + i*(col+gap)
		still := int(float64(p.Tally.Still) * scale)
		newH := int(float64(p.Tally.New) * scale)
		fixed := int(float64(p.Tally.Fixed) * scale)
		fmt.Fprintf(&b, `<g><title>pass %d: %d new, %d still there, %d fixed (%d broken, %d transient, %d unverifiable)</title>`,
			p.Pass, p.Tally.New, p.Tally.Still, p.Tally.Fixed, p.Tally.Broken, p.Tally.Transient, p.Tally.Unverifiable)
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`, x, axis-still, col, still, trendStill)
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`, x, axis-still-newH, col, newH, trendNew)
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`, x, axis+1, col, fixed, trendFixed)
		fmt.Fprintf(&b, `</g><text x="%d" y="%d" font-size="10" text-anchor="middle" fill="currentColor">%d</text>`, x+col/2, height-4, p.Pass)
	}
	lx := width + 12
	for i, l := range []struct{ name, colour string }{{"new", trendNew}, {"still there", trendStill}, {"fixed", trendFixed}} {
		y := 14 + i*16
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d" font-size="11" fill="currentColor">%s</text>`, lx, y, l.colour, lx+14, y+9, l.name)
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11" fill="currentColor">pass</text></svg>`, lx, height-4)
	return template.HTML(b.String()) // built here from numbers only
}
