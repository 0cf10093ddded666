package vmath

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// HardSigmoid and HardSwish give the same bits on the AVX-512, AVX2 and
// scalar paths at every length (vector body and tail), keep NaN, and
// agree with the float64 definitions to within the two float32 roundings
// of alpha·x + beta (and the product).
func TestHardSigmoidSwish(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	src := make([]float32, 2000)
	for i := range src {
		if i%4 == 0 {
			src[i] = math.Float32frombits(r.Uint32()) // any class: NaN, Inf, subnormal, huge
		} else {
			src[i] = float32(r.NormFloat64() * 5)
		}
	}
	src = append(src, 0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
		-3, 3, -2.5, 2.5, 6, -6)
	alpha, beta := float32(r.Float64()*0.4+0.05), float32(r.Float64())
	for _, wide := range []bool{hasAVX512, false} {
		for _, vec := range []bool{hasAVX2, false} {
			saved, saved2 := hasAVX512, hasAVX2
			hasAVX512, hasAVX2 = wide && vec, vec
			for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 100, len(src)} {
				sig, sw := make([]float32, n), make([]float32, n)
				HardSigmoid(sig, src[:n], alpha, beta)
				HardSwish(sw, src[:n])
				for i, x := range src[:n] {
					h := hardSigmoid1(x, alpha, beta)
					require.Equal(t, math.Float32bits(h), math.Float32bits(sig[i]), "HardSigmoid(%g) n=%d avx512=%v avx2=%v", x, n, wide, vec)
					s := hardSigmoid1(x, 1.0/6, 0.5) * x
					require.Equal(t, math.Float32bits(s), math.Float32bits(sw[i]), "HardSwish(%g) n=%d avx512=%v avx2=%v", x, n, wide, vec)
					f := float64(x)
					wantSig := math.Max(0, math.Min(1, float64(alpha)*f+float64(beta)))
					wantSw := f * math.Max(0, math.Min(1, f/6+0.5))
					if math.IsNaN(f) {
						require.True(t, math.IsNaN(float64(sig[i])) && math.IsNaN(float64(sw[i])), "NaN in, NaN out")
						continue
					}
					require.InDelta(t, wantSig, float64(sig[i]), 3e-7*math.Max(1, math.Abs(float64(beta)))+1e-45)
					if !math.IsInf(f, 0) {
						require.InDelta(t, wantSw, float64(sw[i]), 4e-7*math.Max(1, math.Abs(wantSw))+1e-45, "HardSwish(%g)", x)
					}
				}
			}
			hasAVX512, hasAVX2 = saved, saved2
		}
	}
}

func BenchmarkHardSwish(b *testing.B) {
	x := make([]float32, 4096)
	for i := range x {
		x[i] = float32(i%97-48) * 0.17
	}
	out := make([]float32, len(x))
	b.SetBytes(int64(4 * len(x)))
	for b.Loop() {
		HardSwish(out, x)
	}
}

// Clip gives clip1's bits on every path and length, NaN and -0 kept.
func TestClip(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	src := make([]float32, 1000)
	for i := range src {
		if i%3 == 0 {
			src[i] = math.Float32frombits(r.Uint32())
		} else {
			src[i] = float32(r.NormFloat64() * 3)
		}
	}
	src = append(src, 0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)))
	for _, b := range [][2]float32{{-1, 1}, {0, 6}, {float32(math.Inf(-1)), 0.5}, {-2, float32(math.Inf(1))}} {
		for _, wide := range []bool{hasAVX512, false} {
			for _, vec := range []bool{hasAVX2, false} {
				saved, saved2 := hasAVX512, hasAVX2
				hasAVX512, hasAVX2 = wide && vec, vec
				for _, n := range []int{0, 1, 31, 32, 33, 64, 65, 127, len(src)} {
					out := make([]float32, n)
					Clip(out, src[:n], b[0], b[1])
					for i, x := range src[:n] {
						want := x
						if x < b[0] {
							want = b[0]
						} else if x > b[1] {
							want = b[1]
						}
						require.Equal(t, math.Float32bits(want), math.Float32bits(out[i]), "Clip(%g, %g, %g) n=%d", x, b[0], b[1], n)
					}
				}
				hasAVX512, hasAVX2 = saved, saved2
			}
		}
	}
}
