package ge_test

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/floatx"
	"github.com/ascend-go/cann/ge"
)

// float64 references of the nn family (Resize, GridSample, RoiAlign, NMS,
// pooling, padding and normalisation ops), written from the ONNX op
// definitions: each output element is computed on its own, by the
// formulas of the spec, without sharing the kernels' plans.

func init() {
	refOps[ge.OpResize] = refResize
	refOps[ge.OpGridSample] = refGridSample
	refOps[ge.OpAffineGrid] = refAffineGrid
	refOps[ge.OpNonMaxSuppression] = refNMS
}

// nnEncode stores float64 values as dt bytes (every storable type: floats
// round to nearest even, integers truncate).
func nnEncode(dt acl.DataType, v []float64) []byte {
	b := make([]byte, len(v)*dt.Size())
	for i, x := range v {
		switch dt {
		case acl.Float64:
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
		case acl.Float32:
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(x)))
		case acl.Float16:
			binary.LittleEndian.PutUint16(b[2*i:], floatx.F64ToF16(x))
		case acl.BFloat16:
			binary.LittleEndian.PutUint16(b[2*i:], floatx.F64ToBF16(x))
		case acl.Int8, acl.Uint8:
			b[i] = byte(int64(x))
		case acl.Bool:
			if x != 0 {
				b[i] = 1
			}
		case acl.Int16:
			binary.LittleEndian.PutUint16(b[2*i:], uint16(int64(x)))
		case acl.Int32:
			binary.LittleEndian.PutUint32(b[4*i:], uint32(int64(x)))
		case acl.Int64:
			binary.LittleEndian.PutUint64(b[8*i:], uint64(int64(x)))
		default:
			panic("nnEncode: " + dt.String())
		}
	}
	return b
}

// nnRand returns random data of dt: normal floats, small integers.
func nnRand(r *rand.Rand, dt acl.DataType, dims []int64) []byte {
	v := make([]float64, numel(dims))
	for i := range v {
		switch dt {
		case acl.Float32, acl.Float16, acl.BFloat16, acl.Float64:
			v[i] = r.NormFloat64()
		case acl.Uint8:
			v[i] = float64(r.IntN(256))
		case acl.Bool:
			v[i] = float64(r.IntN(2))
		default:
			v[i] = float64(r.IntN(200) - 100)
		}
	}
	return nnEncode(dt, v)
}

func parseFloatList(t testing.TB, s string) []float64 {
	var v []float64
	for _, w := range strings.Fields(s) {
		x, err := strconv.ParseFloat(w, 64)
		require.NoError(t, err)
		v = append(v, x)
	}
	return v
}

// refResizeAxis interpolates one axis as ONNX's definition reads:
// the output coordinate x maps to x_ori, the coefficients come from the
// fraction of x_ori, and the taps are the len(coeffs) indices nearest
// x_ori (the smaller first on ties) in the input padded by its edge.
func refResizeAxis(data []float64, x int, scale float64, outLen int, roi [2]float64, a ge.Attrs) float64 {
	in := len(data)
	fin := float64(in)
	outW := scale * fin
	xf := float64(x)
	var xo float64
	switch a.String(ge.AttrCoordTransform) {
	case "align_corners":
		if outW != 1 {
			xo = xf * (fin - 1) / (outW - 1)
		}
	case "asymmetric":
		xo = xf / scale
	case "tf_half_pixel_for_nn":
		xo = (xf + 0.5) / scale
	case "tf_crop_and_resize":
		if outW == 1 {
			xo = (roi[1] - roi[0]) * (fin - 1) / 2
		} else {
			xo = xf * (roi[1] - roi[0]) * (fin - 1) / (outW - 1)
		}
		xo += roi[0] * (fin - 1)
		if xo < 0 || xo > fin-1 {
			return a.Float(ge.AttrExtrapolationVal, 0)
		}
	case "pytorch_half_pixel":
		xo = -0.5
		if outW != 1 {
			xo = (xf+0.5)/scale - 0.5
		}
	case "half_pixel_symmetric":
		xo = fin/2*(1-float64(outLen)/outW) + (xf+0.5)/scale - 0.5
	default:
		xo = (xf+0.5)/scale - 0.5
	}
	ratio := 1.0
	if xo != math.Floor(xo) {
		ratio = xo - math.Floor(xo)
	}
	var coeffs []float64
	A := a.Float(ge.AttrCubicCoeffA, -0.75)
	s := math.Min(scale, 1)
	cubic := func(x float64) float64 {
		x = math.Abs(x)
		if x <= 1 {
			return (A+2)*x*x*x - (A+3)*x*x + 1
		}
		if x < 2 {
			return A*x*x*x - 5*A*x*x + 8*A*x - 4*A
		}
		return 0
	}
	switch mode := a.String(ge.AttrResizeMode); {
	case mode == "nearest" || mode == "":
		up := ratio == 1
		switch a.String(ge.AttrNearestMode) {
		case "round_prefer_ceil":
			up = up || ratio >= 0.5
		case "floor":
		case "ceil":
			up = true
		case "simple":
			up = up || scale < 1
		default:
			up = up || ratio > 0.5
		}
		coeffs = []float64{1, 0}
		if up {
			coeffs = []float64{0, 1}
		}
	case mode == "linear" && !a.Bool(ge.AttrAntialias):
		coeffs = []float64{1 - ratio, ratio}
	case mode == "linear":
		start := int(math.Floor(-1/s)) + 1
		sum := 0.0
		for i := start; i < 2-start; i++ {
			c := math.Max(0, math.Min(1, 1-math.Abs((float64(i)-ratio)*s)))
			coeffs = append(coeffs, c)
			sum += c
		}
		for i := range coeffs {
			coeffs[i] /= sum
		}
	case !a.Bool(ge.AttrAntialias):
		coeffs = []float64{cubic(ratio + 1), cubic(ratio), cubic(1 - ratio), cubic(2 - ratio)}
	default:
		start := int(math.Floor(-2/s)) + 1
		sum := 0.0
		for i := start; i < 2-start; i++ {
			c := cubic(s * (float64(i) - ratio))
			coeffs = append(coeffs, c)
			sum += c
		}
		for i := range coeffs {
			coeffs[i] /= sum
		}
	}
	n := len(coeffs)
	pad := (n + 1) / 2
	cand := make([]int, in+2*pad)
	for i := range cand {
		cand[i] = i - pad
	}
	slices.SortStableFunc(cand, func(p, q int) int {
		dp, dq := math.Abs(xo-float64(p)), math.Abs(xo-float64(q))
		switch {
		case dp < dq:
			return -1
		case dp > dq:
			return 1
		}
		return p - q
	})
	taps := slices.Clone(cand[:n])
	slices.Sort(taps)
	if a.Bool(ge.AttrExcludeOutside) {
		sum := 0.0
		for i, tp := range taps {
			if tp < 0 || tp >= in {
				coeffs[i] = 0
			}
			sum += coeffs[i]
		}
		for i := range coeffs {
			coeffs[i] /= sum
		}
	}
	v := 0.0
	for i, tp := range taps {
		v += coeffs[i] * data[max(0, min(tp, in-1))]
	}
	return v
}

// refResizeND resamples the block data (dims) at output index idx: the
// leading axis interpolates the results of the inner axes, as ONNX's
// reference nests them.
func refResizeND(data []float64, dims []int64, idx []int, k int, scales []float64, sizes []int64, roi []float64, a ge.Attrs) float64 {
	r := len(sizes)
	var rr [2]float64
	if roi != nil {
		rr = [2]float64{roi[k], roi[r+k]}
	}
	if len(dims) == 1 {
		return refResizeAxis(data, idx[k], scales[k], int(sizes[k]), rr, a)
	}
	inner := numel(dims[1:])
	vals := make([]float64, dims[0])
	for i := range vals {
		vals[i] = refResizeND(data[i*inner:(i+1)*inner], dims[1:], idx, k+1, scales, sizes, roi, a)
	}
	return refResizeAxis(vals, idx[k], scales[k], int(sizes[k]), rr, a)
}

func refResize(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
	x := in[0]
	scales := parseFloatList(t, a.String(ge.AttrResizeScales))
	var roi []float64
	if a.String(ge.AttrCoordTransform) == "tf_crop_and_resize" {
		roi = parseFloatList(t, a.String(ge.AttrResizeROI))
	}
	sizes := a.Ints(ge.AttrResizeSizes)
	v := make([]float64, numel(out.Dims))
	for i := range v {
		v[i] = refResizeND(x.v, x.dims, unravel(i, out.Dims), 0, scales, sizes, roi, a)
	}
	return rounded(out.DataType, out.Dims, v)
}

// refGridSample follows ONNX's GridSample: denormalise each grid
// coordinate, round it for nearest, move it inside for border (clamp) and
// reflection (fold), then interpolate with taps read by the padding mode.
func refGridSample(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
	x, grid := in[0], in[1]
	mode, pad := a.String(ge.AttrGridMode), a.String(ge.AttrPaddingMode)
	if mode == "" {
		mode = "linear"
	}
	if pad == "" {
		pad = "zeros"
	}
	align := a.Bool(ge.AttrAlignCorners)
	sp := len(x.dims) - 2
	dims := x.dims[2:]
	reflect := func(v, lo, hi float64) float64 {
		rng := hi - lo
		if v < lo {
			dx := lo - v
			n := math.Floor(dx / rng)
			r := dx - n*rng
			if int(n)%2 == 0 {
				return lo + r
			}
			return hi - r
		}
		if v > hi {
			dx := v - hi
			n := math.Floor(dx / rng)
			r := dx - n*rng
			if int(n)%2 == 0 {
				return hi - r
			}
			return lo + r
		}
		return v
	}
	bounds := func(d int) (float64, float64) {
		if align {
			return 0, float64(dims[d]) - 1
		}
		return -0.5, float64(dims[d]) - 0.5
	}
	// pixel reads plane at integer position pos under the padding mode.
	pixel := func(plane []float64, pos []int) float64 {
		idx := make([]int, sp)
		for d, i := range pos {
			l := int(dims[d])
			switch {
			case i >= 0 && i < l:
				idx[d] = i
			case pad == "zeros":
				return 0
			case pad == "border":
				idx[d] = max(0, min(i, l-1))
			default:
				lo, hi := bounds(d)
				idx[d] = int(reflect(float64(i), lo, hi))
			}
		}
		return plane[ravel(idx, dims)]
	}
	cubic := func(f float64) []float64 {
		const A = -0.75
		k := func(x float64) float64 {
			x = math.Abs(x)
			if x <= 1 {
				return (A+2)*x*x*x - (A+3)*x*x + 1
			}
			if x < 2 {
				return A*x*x*x - 5*A*x*x + 8*A*x - 4*A
			}
			return 0
		}
		return []float64{k(f + 1), k(f), k(1 - f), k(2 - f)}
	}
	v := make([]float64, numel(out.Dims))
	for i := range v {
		oi := unravel(i, out.Dims)
		b, ch := oi[0], oi[1]
		gpos := append([]int{b}, oi[2:]...)
		co := make([]float64, sp)
		for d := range sp {
			gi := append(slices.Clone(gpos), sp-1-d)
			nv := grid.v[ravel(gi, grid.dims)]
			l := float64(dims[d])
			if align {
				co[d] = (nv + 1) / 2 * (l - 1)
			} else {
				co[d] = ((nv+1)*l - 1) / 2
			}
			if mode == "nearest" {
				if sp == 3 {
					co[d] = math.Round(co[d])
				} else {
					co[d] = math.RoundToEven(co[d])
				}
			}
			lo, hi := bounds(d)
			if co[d] < lo || co[d] > hi {
				switch pad {
				case "border":
					co[d] = math.Max(0, math.Min(co[d], l-1))
				case "reflection":
					co[d] = reflect(co[d], lo, hi)
				}
			}
		}
		plane := x.v[(b*int(x.dims[1])+ch)*numel(dims) : (b*int(x.dims[1])+ch+1)*numel(dims)]
		// Enumerate every tap combination.
		var offs [][]int
		var ws [][]float64
		for d := range sp {
			f0 := math.Floor(co[d])
			f := co[d] - f0
			switch mode {
			case "nearest":
				offs = append(offs, []int{int(co[d])})
				ws = append(ws, []float64{1})
			case "linear":
				offs = append(offs, []int{int(f0), int(f0) + 1})
				ws = append(ws, []float64{1 - f, f})
			default:
				offs = append(offs, []int{int(f0) - 1, int(f0), int(f0) + 1, int(f0) + 2})
				ws = append(ws, cubic(f))
			}
		}
		total := 1
		for _, o := range offs {
			total *= len(o)
		}
		s := 0.0
		for comb := range total {
			pos := make([]int, sp)
			w := 1.0
			rem := comb
			for d := sp - 1; d >= 0; d-- {
				k := rem % len(offs[d])
				rem /= len(offs[d])
				pos[d] = offs[d][k]
				w *= ws[d][k]
			}
			s += w * pixel(plane, pos)
		}
		v[i] = s
	}
	return rounded(out.DataType, out.Dims, v)
}

func refAffineGrid(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
	th := in[0]
	size := a.Ints(ge.AttrGridSize)
	sp := len(size) - 2
	align := a.Bool(ge.AttrAlignCorners)
	lin := func(i int, l int64) float64 {
		if align {
			if l == 1 {
				return 0
			}
			return -1 + 2*float64(i)/float64(l-1)
		}
		return -1 + (2*float64(i)+1)/float64(l)
	}
	v := make([]float64, numel(out.Dims))
	for i := range v {
		oi := unravel(i, out.Dims)
		b, r := oi[0], oi[len(oi)-1]
		sidx := oi[1 : 1+sp]
		s := th.v[(b*sp+r)*(sp+1)+sp]
		for k := range sp {
			// component k is the coordinate of spatial dim sp-1-k.
			s += th.v[(b*sp+r)*(sp+1)+k] * lin(sidx[sp-1-k], size[2+sp-1-k])
		}
		v[i] = s
	}
	return rounded(out.DataType, out.Dims, v)
}

func refNMS(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
	boxes, scores := in[0], in[1]
	nb, n, nc := int(boxes.dims[0]), int(boxes.dims[1]), int(scores.dims[1])
	k := min(int(a.Int(ge.AttrMaxOutputBoxes, 0)), n)
	thr := a.Float(ge.AttrIOUThreshold, 0)
	sthr, hasS := a[ge.AttrScoreThreshold]
	center := a.Bool(ge.AttrCenterPointBox)
	rect := func(b int, i int) (x1, y1, x2, y2 float64) {
		v := boxes.v[(b*n+i)*4 : (b*n+i)*4+4]
		if center {
			return v[0] - v[2]/2, v[1] - v[3]/2, v[0] + v[2]/2, v[1] + v[3]/2
		}
		return math.Min(v[1], v[3]), math.Min(v[0], v[2]), math.Max(v[1], v[3]), math.Max(v[0], v[2])
	}
	iou := func(b, i, j int) float64 {
		ax1, ay1, ax2, ay2 := rect(b, i)
		bx1, by1, bx2, by2 := rect(b, j)
		w := math.Max(0, math.Min(ax2, bx2)-math.Max(ax1, bx1))
		h := math.Max(0, math.Min(ay2, by2)-math.Max(ay1, by1))
		inter := w * h
		u := (ax2-ax1)*(ay2-ay1) + (bx2-bx1)*(by2-by1) - inter
		if inter <= 0 || u <= 0 {
			return 0
		}
		return inter / u
	}
	var rows []float64
	for b := range nb {
		for c := range nc {
			sc := scores.v[(b*nc+c)*n : (b*nc+c+1)*n]
			var cand []int
			for i := range n {
				if !hasS || sc[i] > sthr.F {
					cand = append(cand, i)
				}
			}
			slices.SortStableFunc(cand, func(p, q int) int {
				switch {
				case sc[p] > sc[q]:
					return -1
				case sc[p] < sc[q]:
					return 1
				}
				return 0
			})
			var sel []int
			for _, i := range cand {
				if len(sel) == k {
					break
				}
				ok := true
				for _, j := range sel {
					if iou(b, i, j) > thr {
						ok = false
					}
				}
				if ok {
					sel = append(sel, i)
					rows = append(rows, float64(b), float64(c), float64(i))
				}
			}
		}
	}
	for len(rows) < numel(out.Dims) {
		rows = append(rows, -1)
	}
	return refVal{out.DataType, out.Dims, rows}
}
