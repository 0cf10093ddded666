package sgemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSumIsGoOrder: the assembly Sum gives the bits of the Go loop that
// documents its order, for lengths around the vector widths, with -0,
// Inf and NaN among the inputs; and it stays within float32 rounding of
// the float64 sum.
func TestSumIsGoOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 30))
	for _, n := range []int{0, 1, 7, 15, 16, 17, 63, 64, 65, 120, 129, 1000} {
		x := randSlice(r, n)
		for _, special := range []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.NaN())} {
			if n > 0 && special != 0 {
				x[r.IntN(n)] = special
			}
			got := Sum(x)
			saved := hasTaps
			hasTaps = false
			want := Sum(x)
			hasTaps = saved
			if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
				t.Fatalf("n=%d: Sum %v, the Go order gives %v", n, got, want)
			}
		}
		y := randSlice(r, n)
		var ref, mag float64
		for _, v := range y {
			ref += float64(v)
			mag += math.Abs(float64(v))
		}
		if d := math.Abs(float64(Sum(y)) - ref); d > float64(n+1)*0x1p-23*mag+1e-30 {
			t.Fatalf("n=%d: Sum %v, float64 sum %v", n, Sum(y), ref)
		}
	}
	negZeros := make([]float32, 20)
	for i := range negZeros {
		negZeros[i] = float32(math.Copysign(0, -1))
	}
	got := Sum(negZeros)
	saved := hasTaps
	hasTaps = false
	want := Sum(negZeros)
	hasTaps = saved
	if math.Float32bits(got) != math.Float32bits(want) {
		t.Fatalf("sum of -0s: %v (bits %x), Go order %x", got, math.Float32bits(got), math.Float32bits(want))
	}
}
