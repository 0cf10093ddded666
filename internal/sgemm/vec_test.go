package sgemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestVecIsGoArithmetic: Vec, VecScalar and ScalarVec give the bits of
// the Go expression at every length and position (vector body and tail),
// special values included.
func TestVecIsGoArithmetic(t *testing.T) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), 13))
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e-40, -3e38}
	for n := range 80 {
		a, b := make([]float32, n), make([]float32, n)
		for i := range a {
			a[i], b[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
			if rng.IntN(6) == 0 {
				a[i] = special[rng.IntN(len(special))]
			}
			if rng.IntN(6) == 0 {
				b[i] = special[rng.IntN(len(special))]
			}
		}
		s := float32(rng.NormFloat64())
		for op := VecAdd; op <= VecDiv; op++ {
			got := make([]float32, n)
			check := func(form string, want func(i int) float32) {
				t.Helper()
				for i := range got {
					if w := want(i); math.Float32bits(got[i]) != math.Float32bits(w) && !(got[i] != got[i] && w != w) {
						t.Fatalf("%s op %d n=%d element %d: %g, want %g", form, op, n, i, got[i], w)
					}
				}
			}
			Vec(op, got, a, b)
			check("Vec", func(i int) float32 { return scalarOp(op, a[i], b[i]) })
			VecScalar(op, got, a, s)
			check("VecScalar", func(i int) float32 { return scalarOp(op, a[i], s) })
			ScalarVec(op, got, s, b)
			check("ScalarVec", func(i int) float32 { return scalarOp(op, s, b[i]) })
		}
	}
}
