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
			saved := hasAVX512F
			hasAVX512F = false
			want := Sum(x)
			hasAVX512F = saved
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
	saved := hasAVX512F
	hasAVX512F = false
	want := Sum(negZeros)
	hasAVX512F = saved
	if math.Float32bits(got) != math.Float32bits(want) {
		t.Fatalf("sum of -0s: %v (bits %x), Go order %x", got, math.Float32bits(got), math.Float32bits(want))
	}
}

// TestMaxPairsIsGoMax: the assembly row of 2×2 max pooling gives the
// builtin max's result at every position — the value and the sign of
// zero exactly, NaN wherever a NaN is among the four — for lengths around
// the vector width, with ±0, ±Inf and NaN among the inputs.
func TestMaxPairsIsGoMax(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	negZero := float32(math.Copysign(0, -1))
	specials := []float32{0, negZero, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1}
	for _, n := range []int{1, 15, 16, 17, 31, 32, 50} {
		for range 20 {
			r0, r1 := randSlice(r, 2*n), randSlice(r, 2*n)
			for range n / 2 {
				for _, row := range [][]float32{r0, r1} {
					row[r.IntN(2*n)] = specials[r.IntN(len(specials))]
				}
			}
			if n >= 16 { // a window of zeros of both signs, one of -0s only
				r0[0], r0[1], r1[0], r1[1] = negZero, 0, negZero, negZero
				r0[2], r0[3], r1[2], r1[3] = negZero, negZero, negZero, negZero
			}
			got := make([]float32, n)
			MaxPairs(got, r0, r1)
			for i := range got {
				want := max(r0[2*i], r0[2*i+1], r1[2*i], r1[2*i+1])
				if want != want {
					if got[i] == got[i] {
						t.Fatalf("n=%d [%d]: %v, want NaN", n, i, got[i])
					}
					continue
				}
				if math.Float32bits(got[i]) != math.Float32bits(want) {
					t.Fatalf("n=%d [%d]: max(%v, %v, %v, %v) = %v, want %v", n, i, r0[2*i], r0[2*i+1], r1[2*i], r1[2*i+1], got[i], want)
				}
			}
		}
	}
}
