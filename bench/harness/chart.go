package main

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// chart draws the headline ratios as "times better than controller-runtime"
// (base / opgen for costs, opgen / base for throughput and the code
// generation speed-up) on a log scale: a bar for the median of the rounds,
// a line for their min–max, a square for the target.
func (s *suite) chart(evs []evaluated, path string) error {
	type bar struct {
		name            string
		med, lo, hi, tg float64
		met             bool
	}
	var bars []bar
	for _, e := range evs {
		if e.chart == "" || !e.ok {
			continue
		}
		sm, _ := summarize(e.values)
		b := bar{name: e.chart, met: e.met}
		if e.atMost { // a cost ratio: invert, so that higher is better
			b.med, b.lo, b.hi, b.tg = 1/sm.med, 1/sm.max, 1/sm.min, 1/e.limit
		} else {
			b.med, b.lo, b.hi, b.tg = sm.med, sm.min, sm.max, e.limit
		}
		bars = append(bars, b)
	}
	if len(bars) == 0 {
		return nil
	}
	lo, hi := 1.0, 1.0
	for _, b := range bars {
		lo = math.Min(lo, math.Min(b.lo, b.tg))
		hi = math.Max(hi, math.Max(b.hi, b.tg))
	}
	xmin, xmax := lo/1.6, hi*1.6

	p := plot.New()
	p.Title.Text = fmt.Sprintf("opgen vs controller-runtime v0.25.2, same run, %s", s.res.Date)
	p.X.Label.Text = "times better than controller-runtime (log scale)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.X.Min, p.X.Max = xmin, xmax
	p.Y.Min, p.Y.Max = -0.7, float64(len(bars))-0.3
	green := color.RGBA{R: 70, G: 150, B: 95, A: 255}
	red := color.RGBA{R: 205, G: 85, B: 65, A: 255}
	names := make([]string, len(bars))
	var targets plotter.XYs
	var legendMet, legendMissed *plotter.Polygon
	for i, b := range bars {
		y := float64(len(bars) - 1 - i) // the first check on top
		names[int(y)] = b.name
		poly, err := plotter.NewPolygon(plotter.XYs{{X: xmin, Y: y - 0.32}, {X: b.med, Y: y - 0.32}, {X: b.med, Y: y + 0.32}, {X: xmin, Y: y + 0.32}})
		if err != nil {
			return err
		}
		poly.LineStyle.Width = 0
		if b.met {
			poly.Color, legendMet = green, poly
		} else {
			poly.Color, legendMissed = red, poly
		}
		p.Add(poly)
		l, err := plotter.NewLine(plotter.XYs{{X: b.lo, Y: y}, {X: b.hi, Y: y}})
		if err != nil {
			return err
		}
		l.Width = vg.Points(1.5)
		p.Add(l)
		targets = append(targets, plotter.XY{X: b.tg, Y: y})
	}
	one, err := plotter.NewLine(plotter.XYs{{X: 1, Y: -0.7}, {X: 1, Y: float64(len(bars)) - 0.3}})
	if err != nil {
		return err
	}
	one.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
	p.Add(one)
	sc, err := plotter.NewScatter(targets)
	if err != nil {
		return err
	}
	sc.GlyphStyle.Shape = draw.BoxGlyph{}
	sc.GlyphStyle.Radius = vg.Points(3.5)
	sc.GlyphStyle.Color = color.Black
	p.Add(sc)
	if legendMet != nil {
		p.Legend.Add("target met (median of rounds; line: min–max)", legendMet)
	}
	if legendMissed != nil {
		p.Legend.Add("target missed", legendMissed)
	}
	p.Legend.Add("target", sc)
	p.Legend.Top = true // the top right stays clear: costs come first, near 1x
	p.Legend.Left = false
	p.NominalY(names...)
	return p.Save(9*vg.Inch, vg.Length(1.4+0.4*float64(len(bars)))*vg.Inch, path)
}
