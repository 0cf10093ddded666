package sgemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// A product with an epilogue is bit-identical to the product without one
// followed by the epilogue's operations on the whole of C, on every path
// (tiny, short, blocked, split over threads, several K blocks, half
// operands, an implicit-GEMM operand) and for every activation and bias
// layout; and the epilogue's activations agree with their float64
// definitions.
func TestEpilogueIsProductThenEpilogue(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 3))
	shapes := [][3]int{{3, 5, 7}, {4, 300, 40}, {150, 70, 300}, {200, 190, 530}, {7, 2100, 20}}
	if raceBuild {
		shapes = [][3]int{{3, 5, 7}, {4, 300, 40}, {50, 40, 300}}
	}
	for _, kern := range kernels {
		for _, s := range shapes {
			for act := ActNone; act < numActs; act++ {
				m, n, k := s[0], s[1], s[2]
				p := newProblem(r, Kind(r.IntN(3)), m, n, k, r.IntN(2) == 1, r.IntN(2) == 1, r.IntN(3), 1, float32(r.IntN(2)))
				epi := Epilogue{Act: act, Alpha: 0.1, Beta: 0.6}
				if act == ActClip {
					epi.Alpha, epi.Beta = -0.5, 0.75
				}
				if r.IntN(3) > 0 {
					epi.BiasPerRow = r.IntN(2) == 0
					epi.Bias = randSlice(r, max(m, n))
				}
				for _, th := range []int{1, 3} {
					p.reset()
					run(&p.Call, kern, th)
					want := append([]float32(nil), p.C...)
					epi.apply(want, p.LDC, 0, 0, m, n)
					p.reset()
					c := p.Call
					c.Epi = epi
					require.NoError(t, c.validate())
					run(&c, kern, th)
					require.Equal(t, bits(want), bits(c.C), "%s %v act %d threads %d", kern.name, s, act, th)
				}
			}
		}
	}
	// The implicit-GEMM operand (a convolution) with a per-row bias.
	x := randSlice(r, 3*9*9)
	w := randSlice(r, 8*3*3*3)
	im := &Im2col{X: x, C: 3, In: [3]int{1, 9, 9}, Out: [3]int{1, 7, 7}, K: [3]int{1, 3, 3}, Stride: [3]int{1, 1, 1}, Dil: [3]int{1, 1, 1}}
	base := Call{M: 8, N: 49, K: 27, Alpha: 1, A: Matrix{F32: w, Stride: 27}, B: Matrix{Im2col: im}, C: make([]float32, 8*49), LDC: 49}
	require.NoError(t, Gemm(&base))
	epi := Epilogue{Bias: randSlice(r, 8), BiasPerRow: true, Act: ActRelu}
	want := append([]float32(nil), base.C...)
	epi.apply(want, 49, 0, 0, 8, 49)
	fused := base
	fused.C, fused.Epi = make([]float32, 8*49), epi
	require.NoError(t, Gemm(&fused))
	require.Equal(t, bits(want), bits(fused.C))
}

func TestEpilogueActivations(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 4))
	erf := func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	defs := map[Act]func(float64) float64{
		ActNone:        func(x float64) float64 { return x },
		ActRelu:        func(x float64) float64 { return math.Max(x, 0) },
		ActLeakyRelu:   func(x float64) float64 { return map[bool]float64{true: x, false: float64(float32(0.1)) * x}[x >= 0] },
		ActClip:        func(x float64) float64 { return math.Min(math.Max(x, 0.1), 0.6) },
		ActSigmoid:     sig,
		ActTanh:        math.Tanh,
		ActHardSigmoid: func(x float64) float64 { return math.Max(0, math.Min(1, 0.1*x+0.6)) },
		ActHardSwish:   func(x float64) float64 { return x * math.Max(0, math.Min(1, x/6+0.5)) },
		ActGelu:        func(x float64) float64 { return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x))) },
		ActGeluErf:     erf,
		ActSilu:        func(x float64) float64 { return x * sig(x) },
	}
	require.Len(t, defs, int(numActs))
	for act, f := range defs {
		x := make([]float32, 500)
		for i := range x {
			x[i] = float32(r.NormFloat64() * 4)
		}
		got := append([]float32(nil), x...)
		e := Epilogue{Act: act, Alpha: 0.1, Beta: 0.6}
		e.act(got)
		for i, v := range x {
			want := f(float64(v))
			require.InDelta(t, want, float64(got[i]), 4e-7*math.Max(1, math.Abs(want)), fmt.Sprintf("act %d at %v", act, v))
		}
	}
}

func TestEpilogueRejectsBadShapes(t *testing.T) {
	c := Call{M: 2, N: 3, K: 1, Alpha: 1, A: Matrix{F32: make([]float32, 2), Stride: 1}, B: Matrix{F32: make([]float32, 3), Stride: 3},
		C: make([]float32, 6), LDC: 3}
	c.Epi = Epilogue{Bias: make([]float32, 2)} // per column needs 3
	require.ErrorIs(t, Gemm(&c), ErrShape)
	c.Epi = Epilogue{Bias: make([]float32, 1), BiasPerRow: true} // per row needs 2
	require.ErrorIs(t, Gemm(&c), ErrShape)
	c.Epi = Epilogue{Act: numActs}
	require.ErrorIs(t, Gemm(&c), ErrShape)
	c.Epi = Epilogue{Bias: make([]float32, 2), BiasPerRow: true, Act: ActRelu}
	require.NoError(t, Gemm(&c))
}
