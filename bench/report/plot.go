package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// point is one size of a series: the runs of one unit at that size.
type point struct {
	size float64
	s    summary
}

// series is one line of a plot: the rows of a family that differ only in
// size, such as every inproc/ranks=2/size=... row.
type series struct {
	label  string
	points []point // by increasing size
}

// plottable reports whether f's rows can be drawn against size: every row
// names a size and there are at least two of them.
func plottable(f *family) bool {
	sizes := map[float64]bool{}
	for _, r := range f.rows {
		s, _, ok := sizeOf(r.parts)
		if !ok || s <= 0 {
			return false
		}
		sizes[s] = true
	}
	return len(sizes) >= 2
}

// seriesOf groups f's rows by the parts of their names other than the
// size, in the order the groups first appear, keeping the points where
// unit has values.
func seriesOf(f *family, unit string) []series {
	var out []series
	index := map[string]int{}
	for _, r := range f.rows {
		size, rest, ok := sizeOf(r.parts)
		xs := r.samples[unit]
		if !ok || size <= 0 || len(xs) == 0 {
			continue
		}
		label := joinParts(rest)
		if f.multiProcs && r.procs != "" {
			label += "-" + r.procs
		}
		if label == "" {
			label = f.name
		}
		i, seen := index[label]
		if !seen {
			i = len(out)
			index[label] = i
			out = append(out, series{label: label})
		}
		out[i].points = append(out[i].points, point{size: size, s: summarize(xs)})
	}
	for _, s := range out {
		slices.SortStableFunc(s.points, func(a, b point) int {
			switch {
			case a.size < b.size:
				return -1
			case a.size > b.size:
				return 1
			}
			return 0
		})
	}
	return out
}

func joinParts(ps []part) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, "/")
}

// plotUnits lists the units of f to plot: those selected (by default every
// unit but the allocation counts) that span at least two sizes.
func plotUnits(f *family, selected []string) []string {
	var out []string
	for _, u := range orderUnits(f.units) {
		if selected == nil && isAllocUnit(u) || selected != nil && !slices.Contains(selected, u) {
			continue
		}
		sizes := map[float64]bool{}
		for _, s := range seriesOf(f, u) {
			for _, p := range s.points {
				sizes[p.size] = true
			}
		}
		if len(sizes) >= 2 {
			out = append(out, u)
		}
	}
	return out
}

// Plot size: the axes plus a legend column to their right.
const plotWidth, plotHeight = 20 * vg.Centimeter, 10 * vg.Centimeter

// legendGap separates the axes from the legend column; it also leaves room
// for the half of the last x tick label ("64MiB") that extends past the
// axis end, which would otherwise be clipped.
const legendGap = vg.Centimeter

// writePlot draws one unit of a family against size as SVG: one line per
// series, the median of the runs at each point and, when there were
// several runs, their range as error bars.
func writePlot(w io.Writer, title, unit string, ss []series) error {
	p, leg, err := buildPlot(title, unit, ss)
	if err != nil {
		return err
	}
	c := vgsvg.New(plotWidth, plotHeight)
	drawPlot(draw.New(c), p, leg)
	_, err = c.WriteTo(w)
	return err
}

// buildPlot makes the plot and its legend, drawn apart by drawPlot.
func buildPlot(title, unit string, ss []series) (*plot.Plot, plot.Legend, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "size"
	p.Y.Label.Text = unit
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.TickerFunc(sizeTicks)
	p.Add(plotter.NewGrid())
	leg := plot.NewLegend()
	leg.Top, leg.Left = true, true

	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		for _, pt := range s.points {
			lo, hi = min(lo, pt.s.min), max(hi, pt.s.max)
		}
	}
	// A log y axis only where the values span two decades: a bandwidth
	// from 1 KiB to 64 MiB does, a ratio near 1 does not.
	if lo > 0 && hi/lo >= 100 {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.TickerFunc(logTicks)
	}
	for i, s := range ss {
		xys := make(plotter.XYs, len(s.points))
		errs := make(plotter.YErrors, len(s.points))
		several := false
		for j, pt := range s.points {
			xys[j].X, xys[j].Y = pt.size, pt.s.median
			errs[j].Low, errs[j].High = pt.s.median-pt.s.min, pt.s.max-pt.s.median
			several = several || pt.s.n > 1
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, leg, fmt.Errorf("plot %s: %s: %w", title, s.label, err)
		}
		line.Color = plotutil.Color(i)
		line.Dashes = plotutil.Dashes(i / len(plotutil.DefaultColors))
		points.Color = plotutil.Color(i)
		points.Shape = plotutil.Shape(i)
		p.Add(line, points)
		if several {
			eb, err := plotter.NewYErrorBars(struct {
				plotter.XYs
				plotter.YErrors
			}{xys, errs})
			if err != nil {
				return nil, leg, fmt.Errorf("plot %s: %s: %w", title, s.label, err)
			}
			eb.Color = plotutil.Color(i)
			p.Add(eb)
		}
		leg.Add(s.label, line, points)
	}

	return p, leg, nil
}

// drawPlot draws the axes on the left of dc and the legend in a column to
// their right, so the legend never covers data whatever the lines do.
func drawPlot(dc draw.Canvas, p *plot.Plot, leg plot.Legend) {
	r := leg.Rectangle(dc)
	legW := r.Max.X - r.Min.X
	if legW > 0 {
		legW += legendGap
	}
	p.Draw(draw.Crop(dc, 0, -legW, 0, 0))
	if legW > 0 {
		// The legend column starts level with the title's baseline area.
		leg.Draw(draw.Crop(dc, dc.Max.X-dc.Min.X-legW+legendGap, 0, 0, -p.Title.TextStyle.Height(p.Title.Text)-p.Title.Padding))
	}
}

// sizeTicks marks the powers of two in [lo, hi], labelled in B, KiB or
// MiB from the smallest on: every one when there are few, every 2nd, 3rd...
// otherwise, so that at most ten carry a label.
func sizeTicks(lo, hi float64) []plot.Tick {
	if lo <= 0 || hi <= lo {
		return nil
	}
	first, last := int(math.Ceil(math.Log2(lo))), int(math.Floor(math.Log2(hi)))
	step := max(1, (last-first+8)/9)
	var ticks []plot.Tick
	for e := first; e <= last; e++ {
		v := math.Ldexp(1, e)
		t := plot.Tick{Value: v}
		if (e-first)%step == 0 {
			t.Label = formatSize(v)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// logTicks marks every decade of [lo, hi] and its 2 and 5 multiples,
// labelling the multiples too when the range spans less than three
// decades (else only decades carry labels).
func logTicks(lo, hi float64) []plot.Tick {
	if lo <= 0 || hi <= lo {
		return nil
	}
	few := hi/lo < 1000
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || few {
				t.Label = tickLabel(v)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// tickLabel writes an axis value with at most three significant digits
// and an SI prefix from a million up: 0.02, 500, 20M.
func tickLabel(v float64) string {
	a := math.Abs(v)
	if a < 1e6 {
		r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
		return strconv.FormatFloat(r, 'f', -1, 64)
	}
	k := min(int(math.Log10(a)/3), 6)
	return tickLabel(v/math.Pow(1000, float64(k))) + string("kMGTPE"[k-1])
}
