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
