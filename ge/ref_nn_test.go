package ge_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
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
	refOps[ge.OpMaxPoolWithIndices] = refPool
	refOps[ge.OpLpPool] = refPool
	refOps[ge.OpMaxPool] = refPool
	refOps[ge.OpMaxUnpool] = refMaxUnpool
	refOps[ge.OpGroupNorm] = refGroupNorm
	refOps[ge.OpLpNorm] = refLpNorm
	refOps[ge.OpLRN] = refLRN
	refOps[ge.OpMVN] = refMVN
	refOps[ge.OpBatchNormTrain] = refBatchNormTrain
	refOps[ge.OpRoiAlign] = refRoiAlign
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
	return encodeAny(dt, v)
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
// reflection (fold) except in cubic mode (PyTorch's bicubic, which ONNX
// Runtime follows, pads only the taps), then interpolate with taps read
// by the padding mode.
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
				idx[d] = max(0, min(int(reflect(float64(i), lo, hi)), l-1))
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
			// cubic pads its taps only (PyTorch's bicubic).
			if (co[d] < lo || co[d] > hi) && mode != "cubic" {
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

// refPoolIndexed returns the pooled values and, for max pooling, the flat
// input index of each maximum (column-major spatial dims when colMajor).
// Windows tap x at o·stride - pad_begin + k·dilation; taps outside the
// input are skipped.
func refPoolIndexed(x refVal, a ge.Attrs, out ge.TensorDesc, lp bool) ([]float64, []float64) {
	k := a.Ints(ge.AttrKernelShape)
	sp := len(k)
	get := func(key string, i int, def int64) int64 {
		if v := a.Ints(key); v != nil {
			return v[i]
		}
		return def
	}
	p := float64(a.Int(ge.AttrP, 2))
	colMajor := a.Int(ge.AttrStorageOrder, 0) == 1
	vals := make([]float64, numel(out.Dims))
	idx := make([]float64, len(vals))
	in := x.dims[2:]
	for i := range vals {
		oi := unravel(i, out.Dims)
		best, bi, sum := math.Inf(-1), -1, 0.0
		for t := range numel(k) {
			ki := unravel(t, k)
			pos := make([]int, sp)
			inside := true
			for d := range sp {
				pos[d] = oi[2+d]*int(get(ge.AttrStrides, d, 1)) - int(get(ge.AttrPads, d, 0)) + ki[d]*int(get(ge.AttrDilations, d, 1))
				inside = inside && pos[d] >= 0 && pos[d] < int(in[d])
			}
			if !inside {
				continue
			}
			v := x.v[ravel(append([]int{oi[0], oi[1]}, pos...), x.dims)]
			if lp {
				sum += math.Pow(math.Abs(v), p)
			} else if bi < 0 || v > best {
				best = v
				if colMajor {
					bi = 0
					for d := sp - 1; d >= 0; d-- {
						bi = bi*int(in[d]) + pos[d]
					}
				} else {
					bi = ravel(pos, in)
				}
			}
		}
		if lp {
			vals[i] = math.Pow(sum, 1/p)
		} else {
			vals[i] = best
			idx[i] = float64((oi[0]*int(x.dims[1])+oi[1])*numel(in) + bi)
		}
	}
	return vals, idx
}

func refPool(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
	v, _ := refPoolIndexed(in[0], a, out, a.Int(ge.AttrP, 0) != 0)
	return rounded(out.DataType, out.Dims, v)
}

func refMaxUnpool(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
	x, ix := in[0], in[1]
	is := a.Ints(ge.AttrIndexShape)
	if is == nil {
		is = out.Dims
	}
	v := make([]float64, numel(out.Dims))
	for i, j := range ix.v {
		v[ravel(unravel(int(j), is), out.Dims)] = x.v[i]
	}
	return refVal{out.DataType, out.Dims, v}
}

func refGroupNorm(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
	x, sc, bi := in[0], in[1], in[2]
	n, c := int(x.dims[0]), int(x.dims[1])
	g := int(a.Int(ge.AttrNumGroups, 1))
	eps := a.Float(ge.AttrEpsilon, 1e-5)
	inner := numel(x.dims[2:])
	per := c / g * inner
	v := make([]float64, len(x.v))
	for i := range v {
		b, ch := i/(c*inner), i/inner%c
		grp := ch / (c / g)
		start := (b*c + grp*(c/g)) * inner
		mean, sq := 0.0, 0.0
		for _, e := range x.v[start : start+per] {
			mean += e
		}
		mean /= float64(per)
		for _, e := range x.v[start : start+per] {
			sq += (e - mean) * (e - mean)
		}
		s, bb := sc.v[min(ch, len(sc.v)-1)], bi.v[min(ch, len(bi.v)-1)]
		if len(sc.v) != c {
			s, bb = sc.v[grp], bi.v[grp]
		}
		v[i] = s*(x.v[i]-mean)/math.Sqrt(sq/float64(per)+eps) + bb
	}
	_ = n
	return rounded(out.DataType, out.Dims, v)
}

func refLpNorm(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
	x := in[0]
	axis := normAxisRef(a.Int(ge.AttrAxis, -1), len(x.dims))
	p := a.Int(ge.AttrP, 2)
	v := make([]float64, len(x.v))
	for i := range v {
		idx := unravel(i, x.dims)
		s := 0.0
		for j := range int(x.dims[axis]) {
			idx2 := slices.Clone(idx)
			idx2[axis] = j
			e := x.v[ravel(idx2, x.dims)]
			if p == 1 {
				s += math.Abs(e)
			} else {
				s += e * e
			}
		}
		if p == 2 {
			s = math.Sqrt(s)
		}
		v[i] = x.v[i] / s
	}
	return rounded(out.DataType, out.Dims, v)
}

func refLRN(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
	x := in[0]
	size := int(a.Int(ge.AttrSize, 1))
	alpha, beta, bias := a.Float(ge.AttrAlpha, 1e-4), a.Float(ge.AttrLRNBeta, 0.75), a.Float(ge.AttrLRNBias, 1)
	c := int(x.dims[1])
	v := make([]float64, len(x.v))
	for i := range v {
		idx := unravel(i, x.dims)
		ch := idx[1]
		s := 0.0
		lo := max(0, ch-int(math.Floor(float64(size-1)/2)))
		hi := min(c-1, ch+int(math.Ceil(float64(size-1)/2)))
		for j := lo; j <= hi; j++ {
			idx[1] = j
			e := x.v[ravel(idx, x.dims)]
			s += e * e
		}
		v[i] = x.v[i] / math.Pow(bias+alpha/float64(size)*s, beta)
	}
	return rounded(out.DataType, out.Dims, v)
}

func refMVN(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
	x := in[0]
	red := map[int]bool{}
	for _, ax := range a.Ints(ge.AttrAxes) {
		red[normAxisRef(ax, len(x.dims))] = true
	}
	same := func(i, j []int) bool {
		for k := range i {
			if !red[k] && i[k] != j[k] {
				return false
			}
		}
		return true
	}
	v := make([]float64, len(x.v))
	for i := range v {
		ii := unravel(i, x.dims)
		var m, m2, cnt float64
		for j := range x.v {
			if same(ii, unravel(j, x.dims)) {
				m += x.v[j]
				m2 += x.v[j] * x.v[j]
				cnt++
			}
		}
		m /= cnt
		v[i] = (x.v[i] - m) / (math.Sqrt(math.Max(m2/cnt-m*m, 0)) + 1e-9)
	}
	return rounded(out.DataType, out.Dims, v)
}

// refBNStats is the per-channel batch mean and population variance.
func refBNStats(x refVal) (mean, variance []float64) {
	c := int(x.dims[1])
	inner := numel(x.dims[2:])
	mean, variance = make([]float64, c), make([]float64, c)
	cnt := make([]float64, c)
	for i, e := range x.v {
		mean[i/inner%c] += e
		cnt[i/inner%c]++
	}
	for ch := range mean {
		mean[ch] /= cnt[ch]
	}
	for i, e := range x.v {
		ch := i / inner % c
		variance[ch] += (e - mean[ch]) * (e - mean[ch]) / cnt[ch]
	}
	return mean, variance
}

func refBatchNormTrain(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
	x, sc, bi := in[0], in[1], in[2]
	mean, variance := refBNStats(x)
	eps := a.Float(ge.AttrEpsilon, 1e-5)
	c := int(x.dims[1])
	inner := numel(x.dims[2:])
	v := make([]float64, len(x.v))
	for i, e := range x.v {
		ch := i / inner % c
		v[i] = (e-mean[ch])/math.Sqrt(variance[ch]+eps)*sc.v[ch] + bi.v[ch]
	}
	return rounded(out.DataType, out.Dims, v)
}

// refRoiAlign averages (or maxes) bilinear samples on a regular grid in
// each bin, as ONNX's RoiAlign (and its reference) define it.
func refRoiAlign(t testing.TB, in []refVal, a ge.Attrs, out ge.TensorDesc) refVal {
	x, rois, bidx := in[0], in[1], in[2]
	h, w := int(x.dims[2]), int(x.dims[3])
	ph, pw := int(out.Dims[2]), int(out.Dims[3])
	scale := a.Float(ge.AttrSpatialScale, 1)
	ratio := int(a.Int(ge.AttrSamplingRatio, 0))
	half := a.String(ge.AttrRoiCoordMode) != "output_half_pixel"
	isMax := a.String(ge.AttrRoiMode) == "max"
	bilinear := func(plane []float64, y, xx float64) []float64 {
		if y < -1 || y > float64(h) || xx < -1 || xx > float64(w) {
			return []float64{0, 0, 0, 0}
		}
		y, xx = math.Max(y, 0), math.Max(xx, 0)
		y0, x0 := int(math.Floor(y)), int(math.Floor(xx))
		y1, x1 := y0+1, x0+1
		if y0 >= h-1 {
			y0, y1, y = h-1, h-1, float64(h-1)
		}
		if x0 >= w-1 {
			x0, x1, xx = w-1, w-1, float64(w-1)
		}
		ly, lx := y-float64(y0), xx-float64(x0)
		return []float64{(1 - ly) * (1 - lx) * plane[y0*w+x0], (1 - ly) * lx * plane[y0*w+x1], ly * (1 - lx) * plane[y1*w+x0], ly * lx * plane[y1*w+x1]}
	}
	v := make([]float64, numel(out.Dims))
	for i := range v {
		oi := unravel(i, out.Dims)
		r, ch, py, px := oi[0], oi[1], oi[2], oi[3]
		off := 0.0
		if half {
			off = 0.5
		}
		x1, y1 := rois.v[4*r]*scale-off, rois.v[4*r+1]*scale-off
		rw, rh := rois.v[4*r+2]*scale-off-x1, rois.v[4*r+3]*scale-off-y1
		if !half {
			rw, rh = math.Max(rw, 1), math.Max(rh, 1)
		}
		bh, bw := rh/float64(ph), rw/float64(pw)
		gh, gw := ratio, ratio
		if ratio == 0 {
			gh, gw = int(math.Ceil(rh/float64(ph))), int(math.Ceil(rw/float64(pw)))
		}
		b := int(bidx.v[r])
		plane := x.v[(b*int(x.dims[1])+ch)*h*w : (b*int(x.dims[1])+ch+1)*h*w]
		acc := 0.0
		first := true
		for iy := range gh {
			for ix := range gw {
				y := y1 + float64(py)*bh + (float64(iy)+0.5)*bh/float64(gh)
				xx := x1 + float64(px)*bw + (float64(ix)+0.5)*bw/float64(gw)
				terms := bilinear(plane, y, xx)
				if isMax {
					m := slices.Max(terms)
					if first || m > acc {
						acc = m
					}
					first = false
				} else {
					acc += terms[0] + terms[1] + terms[2] + terms[3]
				}
			}
		}
		if !isMax {
			acc /= float64(max(gh*gw, 1))
		}
		v[i] = acc
	}
	return rounded(out.DataType, out.Dims, v)
}
