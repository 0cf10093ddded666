package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
	"gonum.org/v1/plot/vg/vgimg"
)

// TestPlotLayout draws every plot of the captured HCCL run on a recording
// canvas and checks the geometry of the text: every string lies inside the
// canvas (so no axis label, "64MiB" included, is clipped), and the legend's
// labels start to the right of every axis label, that is outside the data
// area, whichever way the lines run.
func TestPlotLayout(t *testing.T) {
	f, err := os.Open(captured)
	require.NoError(t, err)
	defer f.Close()
	rep := newReport()
	nop := func(string, ...any) {}
	require.NoError(t, rep.read(f, captured, nop, nop))
	plots := 0
	for _, fam := range rep.families {
		if !plottable(fam) {
			continue
		}
		for _, u := range plotUnits(fam, nil) {
			ss := seriesOf(fam, u)
			p, leg, err := buildPlot(fam.name+": "+u, u, ss)
			require.NoError(t, err)
			rec := &recorder.Canvas{}
			drawPlot(draw.NewCanvas(rec, plotWidth, plotHeight), p, leg)
			labels := map[string]bool{}
			for _, s := range ss {
				labels[s.label] = true
			}
			axisRight, legendLeft := vg.Length(-1), plotWidth
			// The y label is drawn rotated, in coordinates of its own;
			// only upright text is measured.
			rotated, saved := false, []bool(nil)
			for _, a := range rec.Actions {
				switch a.(type) {
				case *recorder.Push:
					saved = append(saved, rotated)
				case *recorder.Pop:
					rotated, saved = saved[len(saved)-1], saved[:len(saved)-1]
				case *recorder.Rotate:
					rotated = true
				}
				fs, ok := a.(*recorder.FillString)
				if !ok || rotated {
					continue
				}
				face := font.DefaultCache.Lookup(fs.Font, fs.Font.Size)
				w := face.Width(fs.String)
				x, y := fs.Point.X, fs.Point.Y
				assert.GreaterOrEqual(t, float64(x), 0.0, "%s %s: %q starts left of the canvas", fam.name, u, fs.String)
				assert.LessOrEqual(t, float64(x+w), float64(plotWidth)+0.01, "%s %s: %q is clipped on the right", fam.name, u, fs.String)
				assert.GreaterOrEqual(t, float64(y), 0.0, "%s %s: %q is clipped at the bottom", fam.name, u, fs.String)
				assert.LessOrEqual(t, float64(y), float64(plotHeight), "%s %s: %q is clipped at the top", fam.name, u, fs.String)
				if labels[fs.String] {
					legendLeft = min(legendLeft, x)
				} else if fs.String != p.Title.Text {
					axisRight = max(axisRight, x+w)
				}
			}
			assert.Greater(t, legendLeft, axisRight, "%s %s: the legend overlaps the axes", fam.name, u)
			if os.Getenv("REPORT_PNG_DIR") != "" {
				c := vgimg.New(plotWidth, plotHeight)
				drawPlot(draw.New(c), p, leg)
				out, err := os.Create(os.Getenv("REPORT_PNG_DIR") + "/" + fileName(fam.name+"_"+u) + ".png")
				require.NoError(t, err)
				_, err = vgimg.PngCanvas{Canvas: c}.WriteTo(out)
				require.NoError(t, err)
				require.NoError(t, out.Close())
			}
			plots++
		}
	}
	assert.Equal(t, 13, plots)
}
