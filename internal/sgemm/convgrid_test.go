package sgemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// gridCases are 2-D convolutions the grid path takes: the imported
// models' layers (3×3 stride 1 and 2 with padding), asymmetric pads,
// strides 3 and 4, dilations, a K past KC and an N past NC.
var gridCases = []Conv{
	{N: 1, C: 3, H: 32, W: 32, K: 8, R: 3, S: 3, PadT: 1, PadL: 1, PadB: 1, PadR: 1},
	{N: 2, C: 8, H: 16, W: 16, K: 16, R: 3, S: 3, StrideH: 2, StrideW: 2, PadT: 1, PadL: 1, PadB: 1, PadR: 1},
	{N: 2, C: 3, H: 24, W: 20, K: 8, R: 3, S: 3, StrideH: 2, StrideW: 2, PadT: 1, PadL: 1, PadB: 1, PadR: 1},
	{N: 3, C: 8, H: 12, W: 10, K: 16, R: 3, S: 3, StrideH: 2, StrideW: 2, PadT: 1, PadL: 1, PadB: 1, PadR: 1},
	{N: 2, C: 16, H: 6, W: 5, K: 4, R: 3, S: 3, PadT: 1, PadL: 1, PadB: 1, PadR: 1},
	{N: 1, C: 3, H: 8, W: 40, K: 8, R: 3, S: 3, PadT: 1, PadL: 1, PadB: 1, PadR: 1},
	{N: 1, C: 8, H: 4, W: 20, K: 16, R: 3, S: 3, PadT: 1, PadL: 1, PadB: 1, PadR: 1},
	{N: 1, C: 16, H: 2, W: 10, K: 16, R: 3, S: 3, PadT: 1, PadL: 1, PadB: 1, PadR: 1},
	{N: 2, C: 5, H: 13, W: 17, K: 7, R: 3, S: 2, StrideH: 1, StrideW: 2, PadT: 2, PadL: 0, PadB: 0, PadR: 1},
	{N: 2, C: 4, H: 19, W: 23, K: 9, R: 5, S: 5, StrideH: 3, StrideW: 3, DilH: 2, DilW: 1, PadT: 2, PadL: 2, PadB: 2, PadR: 2},
	{N: 3, C: 6, H: 17, W: 18, K: 13, R: 3, S: 3, StrideH: 4, StrideW: 2, DilH: 1, DilW: 3, PadT: 1, PadL: 3, PadB: 0, PadR: 2},
	{N: 1, C: 40, H: 9, W: 9, K: 20, R: 3, S: 3, PadT: 1, PadL: 1, PadB: 1, PadR: 1},              // K = 360 > KC
	{N: 1, C: 2, H: 60, W: 70, K: 3, R: 3, S: 3, PadT: 1, PadL: 1, PadB: 1, PadR: 1},              // N past NC
	{N: 1, C: 16, H: 12, W: 10, K: 32, R: 1, S: 1, PadT: 1, PadL: 0, PadB: 1, PadR: 0},            // 1×1 with padding
	{N: 2, C: 4, H: 10, W: 12, K: 200, R: 3, S: 3, Groups: 2, PadT: 1, PadL: 1, PadB: 1, PadR: 1}, // M past mc
}

// TestConvGridIsImplicit: the grid path computes, bit for bit, what the
// Im2col path and explicit im2col compute (with a bias, so beta = 1), on
// 1 and 2 threads, for the layers it takes.
func TestConvGridIsImplicit(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for i, p := range gridCases {
		p.defaults()
		oh, ow := p.ConvOut()
		x := randSlice(r, p.N*p.C*p.H*p.W)
		if i%3 == 0 { // an Inf reaches the grid's unused columns too, never C's
			x[r.IntN(len(x))] = float32(math.Inf(1))
		}
		w := randSlice(r, p.K*(p.C/p.Groups)*p.R*p.S)
		bias := randSlice(r, p.K)
		_, took := gridGeometry(&Call{M: p.K / p.Groups, N: oh * ow, K: p.C / p.Groups * p.R * p.S,
			B: Matrix{Im2col: &Im2col{In: [3]int{1, p.H, p.W}, Out: [3]int{1, oh, ow}, K: [3]int{1, p.R, p.S},
				Stride: [3]int{1, p.StrideH, p.StrideW}, Dil: [3]int{1, p.DilH, p.DilW}}}})
		require.True(t, took, "case %d %+v: the grid path should take it", i, p)
		explicit := make([]float32, p.N*p.K*oh*ow)
		require.NoError(t, conv2D(p, x, w, bias, explicit, true))
		gridConv = false
		implicit := make([]float32, len(explicit))
		err := Conv2D(p, x, w, bias, implicit)
		gridConv = true
		require.NoError(t, err)
		for _, threads := range []int{1, 2} {
			prev := runtime.GOMAXPROCS(threads)
			got := make([]float32, len(explicit))
			for j := range got {
				got[j] = float32(math.NaN()) // every element must be written
			}
			err := Conv2D(p, x, w, bias, got)
			runtime.GOMAXPROCS(prev)
			require.NoError(t, err)
			for j := range got {
				if got[j] != got[j] && implicit[j] != implicit[j] && explicit[j] != explicit[j] {
					continue // NaN (Inf - Inf) in all three
				}
				if math.Float32bits(got[j]) != math.Float32bits(implicit[j]) || math.Float32bits(got[j]) != math.Float32bits(explicit[j]) {
					t.Fatalf("case %d %+v threads=%d: y[%d] = %v, Im2col path %v, explicit %v", i, p, threads, j, got[j], implicit[j], explicit[j])
				}
			}
		}
	}
}

// TestConvGemmEpilogue: ConvGemm with an epilogue (per-row bias and an
// activation, beta 0, C rows strided) gives Gemm's bits on the same call.
func TestConvGemmEpilogue(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	p := gridCases[1]
	p.defaults()
	oh, ow := p.ConvOut()
	kk := p.C * p.R * p.S
	x, w, bias := randSlice(r, p.C*p.H*p.W), randSlice(r, p.K*kk), randSlice(r, p.K)
	ldc := oh*ow + 3
	call := func(c []float32) Call {
		return Call{M: p.K, N: oh * ow, K: kk, Alpha: 1, A: Matrix{F32: w, Stride: kk},
			B: Matrix{Im2col: &Im2col{X: x, C: p.C, In: [3]int{1, p.H, p.W}, Out: [3]int{1, oh, ow}, K: [3]int{1, p.R, p.S},
				Stride: [3]int{1, p.StrideH, p.StrideW}, Dil: [3]int{1, 1, 1}, Pad: [3]int{0, p.PadT, p.PadL}}},
			C: c, LDC: ldc, Epi: Epilogue{Bias: bias, BiasPerRow: true, Act: ActRelu}}
	}
	want, got := make([]float32, p.K*ldc), make([]float32, p.K*ldc)
	for j := range got {
		want[j], got[j] = 7, 7 // the gaps between rows stay untouched
	}
	c := call(want)
	require.NoError(t, Gemm(&c))
	c = call(got)
	_, took := gridGeometry(&c)
	require.True(t, took)
	require.NoError(t, ConvGemm(&c))
	for j := range got {
		require.Equal(t, math.Float32bits(want[j]), math.Float32bits(got[j]), "y[%d]", j)
	}
	c.LDC = ow // too short
	require.ErrorIs(t, ConvGemm(&c), ErrShape)
}

// TestGridOperandChecked: a grid operand whose rows overrun its image is
// refused.
func TestGridOperandChecked(t *testing.T) {
	im := &Im2col{X: make([]float32, 10), rowOff: []int32{0, 4}, gridN: 6}
	require.NoError(t, im.check(2, 6))
	im.rowOff[1] = 5
	require.ErrorIs(t, im.check(2, 6), ErrShape)
	require.ErrorIs(t, im.check(3, 6), ErrShape)
	// The slack at the end of X is not part of any row.
	im = &Im2col{X: make([]float32, 14), rowOff: []int32{0, 4}, gridN: 6, slack: 4}
	require.NoError(t, im.check(2, 6))
	im.slack = 5
	require.ErrorIs(t, im.check(2, 6), ErrShape)
	im.slack = 15
	require.ErrorIs(t, im.check(2, 6), ErrShape)
}

// modelConvs are the 3×3 layers of the imported models that were slower
// than ONNX Runtime (cnn, ocr_det_db, ocr_rec_crnn), one image each, and
// two ResNet layers.
var modelConvs = []struct {
	name string
	p    Conv
}{
	{"cnn1", gridCases[0]}, {"cnn2", gridCases[1]},
	{"det1", gridCases[2]}, {"det2", gridCases[3]}, {"det3", gridCases[4]},
	{"rec1", gridCases[5]}, {"rec2", gridCases[6]}, {"rec3", gridCases[7]},
	// ResNet layers, for scale: the grid path is the faster one there too.
	{"resnet3x3", Conv{N: 1, C: 64, H: 56, W: 56, K: 64, R: 3, S: 3, PadT: 1, PadL: 1, PadB: 1, PadR: 1}},
	{"resnet7x7s2", Conv{N: 1, C: 3, H: 224, W: 224, K: 64, R: 7, S: 7, StrideH: 2, StrideW: 2, PadT: 3, PadL: 3, PadB: 3, PadR: 3}},
}

// BenchmarkConvModels runs each model layer (one image, bias and Relu as
// ge runs it) on the grid path and on the Im2col path in turn, so both
// see the same machine load; x_im2col is the Im2col path's median time
// over the grid path's.
func BenchmarkConvModels(b *testing.B) {
	for _, mc := range modelConvs {
		p := mc.p
		p.defaults()
		oh, ow := p.ConvOut()
		kk := p.C * p.R * p.S
		r := rand.New(rand.NewPCG(1, 2))
		x, w, bias := randSlice(r, p.C*p.H*p.W), randSlice(r, p.K*kk), randSlice(r, p.K)
		y := make([]float32, p.K*oh*ow)
		im := &Im2col{X: x, C: p.C, In: [3]int{1, p.H, p.W}, Out: [3]int{1, oh, ow}, K: [3]int{1, p.R, p.S},
			Stride: [3]int{1, p.StrideH, p.StrideW}, Dil: [3]int{1, 1, 1}, Pad: [3]int{0, p.PadT, p.PadL}}
		b.Run(fmt.Sprintf("%s/%dx%dx%d-%d", mc.name, p.C, p.H, p.W, p.K), func(b *testing.B) {
			c := Call{M: p.K, N: oh * ow, K: kk, Alpha: 1, A: Matrix{F32: w, Stride: kk}, B: Matrix{Im2col: im},
				C: y, LDC: oh * ow, Epi: Epilogue{Bias: bias, BiasPerRow: true, Act: ActRelu}}
			var tg, ti []float64
			b.ReportAllocs()
			for b.Loop() {
				t0 := nowNS()
				_ = ConvGemm(&c)
				t1 := nowNS()
				gridConv = false
				_ = ConvGemm(&c)
				gridConv = true
				tg, ti = append(tg, t1-t0), append(ti, nowNS()-t1)
			}
			b.ReportMetric(medianF(tg), "grid_ns")
			b.ReportMetric(medianF(ti)/medianF(tg), "x_im2col")
		})
	}
}

var benchStart = time.Now()

func nowNS() float64 { return float64(time.Since(benchStart).Nanoseconds()) }

func medianF(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestConvGemmImagesChecked: ConvGemmImages refuses image counts, strides
// and operands that do not fit, before computing anything.
func TestConvGemmImagesChecked(t *testing.T) {
	p := gridCases[3]
	p.defaults()
	oh, ow := p.ConvOut()
	kk := p.C * p.R * p.S
	chw := p.C * p.H * p.W
	call := func(x, y []float32) Call {
		return Call{M: p.K, N: oh * ow, K: kk, Alpha: 1, A: Matrix{F32: make([]float32, p.K*kk), Stride: kk},
			B: Matrix{Im2col: &Im2col{X: x, C: p.C, In: [3]int{1, p.H, p.W}, Out: [3]int{1, oh, ow}, K: [3]int{1, p.R, p.S},
				Stride: [3]int{1, p.StrideH, p.StrideW}, Dil: [3]int{1, 1, 1}, Pad: [3]int{0, p.PadT, p.PadL}}},
			C: y, LDC: oh * ow}
	}
	x, y := make([]float32, 2*chw), make([]float32, 2*p.K*oh*ow)
	c := call(x, y)
	require.NoError(t, ConvGemmImages(&c, 2, chw, p.K*oh*ow))
	for name, bad := range map[string]func() error{
		"no images": func() error { c := call(x, y); return ConvGemmImages(&c, 0, chw, p.K*oh*ow) },
		"negative":  func() error { c := call(x, y); return ConvGemmImages(&c, 2, -1, p.K*oh*ow) },
		"short x":   func() error { c := call(x[:2*chw-1], y); return ConvGemmImages(&c, 2, chw, p.K*oh*ow) },
		"short y":   func() error { c := call(x, y[:len(y)-1]); return ConvGemmImages(&c, 2, chw, p.K*oh*ow) },
		"not im2col": func() error {
			c := call(x, y)
			c.B = Matrix{F32: x, Stride: oh * ow}
			return ConvGemmImages(&c, 2, chw, 0)
		},
	} {
		require.ErrorIs(t, bad(), ErrShape, name)
	}
}
