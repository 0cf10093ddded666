package vmath

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSoftmaxMatchesFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 7, 8, 9, 31, 257, 1000} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * 10)
		}
		y := make([]float32, n)
		Softmax(y, x)
		mx := math.Inf(-1)
		for _, v := range x {
			mx = math.Max(mx, float64(v))
		}
		var s float64
		for _, v := range x {
			s += math.Exp(float64(v) - mx)
		}
		for i, v := range x {
			want := math.Exp(float64(v)-mx) / s
			if want < 1e-30 {
				assert.InDelta(t, want, y[i], 1e-37)
				continue
			}
			assert.LessOrEqual(t, ulps(y[i], want), 4.0, "n=%d i=%d x=%g", n, i, v)
		}
		Softmax(x, x) // in place
		assert.Equal(t, y, x)
	}
	// NaN or +Inf anywhere poisons the row; -Inf entries get 0.
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1))} {
		y := make([]float32, 3)
		Softmax(y, []float32{1, bad, 2})
		for _, v := range y {
			assert.True(t, math.IsNaN(float64(v)))
		}
	}
	y := make([]float32, 3)
	Softmax(y, []float32{0, float32(math.Inf(-1)), 0})
	assert.Equal(t, []float32{0.5, 0, 0.5}, y)
}

func TestNormsMatchFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 3, 64, 255} {
		x, g, b := make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], g[i], b[i] = float32(r.NormFloat64()*3+1), float32(r.NormFloat64()), float32(r.NormFloat64())
		}
		var mean, sq, ms float64
		for _, v := range x {
			mean += float64(v)
			ms += float64(v) * float64(v)
		}
		mean /= float64(n)
		for _, v := range x {
			sq += (float64(v) - mean) * (float64(v) - mean)
		}
		ln, rms := make([]float32, n), make([]float32, n)
		LayerNorm(ln, x, g, b, 1e-5)
		RMSNorm(rms, x, g, 1e-6)
		for i, v := range x {
			wantLN := (float64(v)-mean)/math.Sqrt(sq/float64(n)+1e-5)*float64(g[i]) + float64(b[i])
			wantRMS := float64(v) / math.Sqrt(ms/float64(n)+1e-6) * float64(g[i])
			assert.InDelta(t, wantLN, ln[i], 1e-6*(1+math.Abs(wantLN)), "LayerNorm n=%d i=%d", n, i)
			assert.InDelta(t, wantRMS, rms[i], 1e-6*(1+math.Abs(wantRMS)), "RMSNorm n=%d i=%d", n, i)
		}
	}
	y := make([]float32, 2)
	LayerNorm(y, []float32{1, float32(math.NaN())}, []float32{1, 1}, []float32{0, 0}, 1e-5)
	assert.True(t, math.IsNaN(float64(y[0])) && math.IsNaN(float64(y[1])))
}

// Softmax's assembly and its scalar tail perform the same operations, and
// the lane sums do not depend on where the vector part ends: a row gives
// the same bits computed whole, in place, or with AVX2 off.
func TestSoftmaxVectorMatchesScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{1, 7, 8, 9, 16, 17, 24, 127, 128, 1001} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * 20)
		}
		if n > 8 {
			x[3] = float32(math.Inf(-1))
		}
		want := make([]float32, n)
		Softmax(want, x)
		// AVX2 without AVX-512, then portable Go, where the CPU has them.
		for _, c := range []struct{ avx512, avx2 bool }{{false, hasAVX2}, {false, false}} {
			s512, s2 := hasAVX512, hasAVX2
			hasAVX512, hasAVX2 = c.avx512, c.avx2
			got := make([]float32, n)
			Softmax(got, x)
			hasAVX512, hasAVX2 = s512, s2
			assert.Equal(t, bits(want), bits(got), "n=%d avx2=%v", n, c.avx2)
		}
		in := append([]float32(nil), x...)
		Softmax(in, in)
		assert.Equal(t, bits(want), bits(in), "n=%d in place", n)
	}
}

func bits(f []float32) []uint32 {
	b := make([]uint32, len(f))
	for i, v := range f {
		b[i] = math.Float32bits(v)
	}
	return b
}

// LayerNorm's and RMSNorm's AVX-512 output loop performs the Go loop's
// operations: the same bits with and without it, at any row length.
func TestNormsVectorMatchesScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, n := range []int{1, 7, 8, 9, 256, 300} {
		x, g, b := make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], g[i], b[i] = float32(r.NormFloat64()*5+2), float32(r.NormFloat64()), float32(r.NormFloat64())
		}
		var want, got [2][]float32
		for k, wide := range []bool{hasAVX512, false} {
			saved := hasAVX512
			hasAVX512 = wide
			ln, rms := make([]float32, n), make([]float32, n)
			LayerNorm(ln, x, g, b, 1e-5)
			RMSNorm(rms, x, g, 1e-6)
			hasAVX512 = saved
			if k == 0 {
				want = [2][]float32{ln, rms}
			} else {
				got = [2][]float32{ln, rms}
			}
		}
		assert.Equal(t, bits(want[0]), bits(got[0]), "LayerNorm n=%d", n)
		assert.Equal(t, bits(want[1]), bits(got[1]), "RMSNorm n=%d", n)
	}
}
