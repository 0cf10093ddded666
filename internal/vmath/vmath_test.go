package vmath

import (
	"flag"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var exhaustive = flag.Bool("vmath.exhaustive", false, "check every float32 input, not a stride of them")

// ulps returns |got-want| in units in the last place of float32 at want;
// NaN must give NaN and an infinite or overflowing want the same infinity,
// else the error is +Inf.
func ulps(got float32, want float64) float64 {
	g := float64(got)
	switch {
	case math.IsNaN(want) || math.IsNaN(g):
		if math.IsNaN(want) && math.IsNaN(g) {
			return 0
		}
		return math.Inf(1)
	case math.Abs(want) >= math.MaxFloat32*(1+0x1p-25) || math.IsInf(g, 0):
		if float32(want) == got {
			return 0
		}
		return math.Inf(1)
	}
	ulp := 0x1p-149
	if a := math.Abs(want); a >= 0x1p-126 {
		_, e := math.Frexp(a)
		ulp = math.Ldexp(1, e-24)
	}
	return math.Abs(g-want) / ulp
}

type fn struct {
	name string
	f32  func(dst, src []float32)
	f64  func(float64) float64
	max  float64 // documented bound in ulp (package doc)
}

var fns = []fn{
	{"Exp", Exp, math.Exp, 1},
	{"Sigmoid", Sigmoid, func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }, 3},
	{"Tanh", Tanh, math.Tanh, 2},
	{"Erf", Erf, math.Erf, 3},
}

// inputs returns float32 values over the whole range: every stride-th bit
// pattern (every one with -vmath.exhaustive), then ±0, ±Inf, NaNs, the
// smallest and largest subnormals and normals.
func inputs(yield func([]float32) bool) {
	stride := uint64(1021)
	if raceBuild {
		stride = 65521
	}
	if *exhaustive {
		stride = 1
	}
	buf := make([]float32, 0, 1<<16)
	for b := uint64(0); b < 1<<32; b += stride {
		buf = append(buf, math.Float32frombits(uint32(b)))
		if len(buf) == cap(buf) {
			if !yield(buf) {
				return
			}
			buf = buf[:0]
		}
	}
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.NaN()), math.Float32frombits(0xffc00001), math.Float32frombits(1), math.Float32frombits(0x007fffff),
		math.Float32frombits(0x80000001), 0x1p-126, -0x1p-126, math.MaxFloat32, -math.MaxFloat32,
		88.72, 88.73, -87.3, -103.9, -104, 0.625, -0.625, 1, -1, 4, -4, 3.99}
	buf = append(buf, special...)
	yield(buf)
}

func TestMaxULP(t *testing.T) {
	for _, f := range fns {
		t.Run(f.name, func(t *testing.T) {
			worst, at := 0.0, float32(0)
			out := make([]float32, 1<<16+64)
			for in := range inputs {
				f.f32(out, in)
				for i, x := range in {
					if e := ulps(out[i], f.f64(float64(x))); e > worst || math.IsNaN(e) {
						worst, at = e, x
					}
				}
			}
			t.Logf("%s: max error %.3f ulp at %g", f.name, worst, at)
			assert.LessOrEqual(t, worst, f.max, "%s(%g) (bits %#x)", f.name, at, math.Float32bits(at))
		})
	}
}

// Composite activations: error against the float64 formula, in ulp where
// the result is not tiny.
func TestActivations(t *testing.T) {
	// 0.5·x·(1+tanh(u)) written as x/(1+e^-2u): the same function without
	// the cancellation of 1+tanh(u) for negative u.
	gelu := func(x float64) float64 { return x / (1 + math.Exp(-2*0.7978845608028654*(x+0.044715*x*x*x))) }
	silu := func(x float64) float64 { return x / (1 + math.Exp(-x)) }
	r := rand.New(rand.NewPCG(1, 2))
	src := make([]float32, 100000)
	for i := range src {
		src[i] = float32(r.NormFloat64() * 6)
	}
	src = append(src, 0, 1e-30, -1e-30, 30, -30, 1e6, float32(math.NaN()), float32(math.Inf(1)))
	for _, c := range []struct {
		name string
		f    func(dst, src []float32)
		ref  func(float64) float64
		max  float64
	}{{"Gelu", Gelu, gelu, 4}, {"Silu", Silu, silu, 4}} {
		out := make([]float32, len(src))
		c.f(out, src)
		worst := 0.0
		for i, x := range src {
			want := c.ref(float64(x))
			if math.Abs(want) < 1e-20 && !math.IsNaN(want) {
				assert.InDelta(t, want, out[i], 1e-20, "%s(%g)", c.name, x)
				continue
			}
			worst = max(worst, ulps(out[i], want))
		}
		t.Logf("%s: max error %.3f ulp", c.name, worst)
		assert.LessOrEqual(t, worst, c.max, c.name)
	}
}

// The assembly performs exactly exp1's operations; a value's result does
// not depend on its place in the slice, and dst may be src.
func TestExpVectorMatchesScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	src := make([]float32, 1003)
	for i := range src {
		src[i] = math.Float32frombits(r.Uint32())
		if i%3 == 0 {
			src[i] = float32(r.NormFloat64() * 40)
		}
	}
	out := make([]float32, len(src))
	Exp(out, src)
	for i, x := range src {
		require.Equal(t, math.Float32bits(exp1(x)), math.Float32bits(out[i]), "exp(%g)", x)
	}
	for _, f := range fns {
		for _, n := range []int{0, 1, 7, 8, 9, 255, 256, 257} {
			in := append([]float32(nil), src[:n]...)
			whole := make([]float32, len(src))
			f.f32(whole, src)
			f.f32(in, in)
			for i := range n {
				require.Equal(t, math.Float32bits(whole[i]), math.Float32bits(in[i]), "%s n=%d i=%d", f.name, n, i)
			}
		}
	}
}

// The logistic functions' assembly performs exactly sigmoid1's, silu1's
// and gelu1's operations: the same bits for every input class, at any
// position and length.
func TestLogisticVectorMatchesScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	src := make([]float32, 4099)
	for i := range src {
		switch i % 3 {
		case 0:
			src[i] = math.Float32frombits(r.Uint32()) // any class: NaN, Inf, subnormal, huge
		case 1:
			src[i] = float32(r.NormFloat64() * 8)
		default:
			src[i] = float32(r.NormFloat64() * 0.01)
		}
	}
	src = append(src, 0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.NaN()), math.Float32frombits(1), math.Float32frombits(0x80000001), math.MaxFloat32, -math.MaxFloat32, -9.5, 10)
	for _, c := range []struct {
		name string
		vec  func(dst, src []float32)
		one  func(float32) float32
	}{{"Sigmoid", Sigmoid, sigmoid1}, {"Silu", Silu, silu1}, {"Gelu", Gelu, gelu1}} {
		// With AVX-512 (where the CPU has it), then with AVX2 alone.
		for _, wide := range []bool{hasAVX512, false} {
			saved := hasAVX512
			hasAVX512 = wide
			out := make([]float32, len(src))
			c.vec(out, src)
			hasAVX512 = saved
			for i, x := range src {
				require.Equal(t, math.Float32bits(c.one(x)), math.Float32bits(out[i]), "%s(%g) avx512=%v", c.name, x, wide)
			}
		}
	}
}

// Relu zeroes exactly the elements below 0 (not -0, not NaN), with the
// same bits on the vector paths and the scalar tail, at any length.
func TestRelu(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	src := make([]float32, 1000)
	for i := range src {
		src[i] = math.Float32frombits(r.Uint32())
	}
	src = append(src, 0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(-1)), -1e-45)
	for _, wide := range []bool{hasAVX512, false} {
		saved := hasAVX512
		hasAVX512 = wide
		for _, n := range []int{0, 1, 31, 32, 33, 64, 65, 127, len(src)} {
			out := make([]float32, n)
			Relu(out, src[:n])
			for i, x := range src[:n] {
				want := x
				if x < 0 {
					want = 0
				}
				require.Equal(t, math.Float32bits(want), math.Float32bits(out[i]), "Relu(%g) n=%d avx512=%v", x, n, wide)
			}
		}
		hasAVX512 = saved
	}
}
