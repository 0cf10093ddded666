package sgemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTapsIsAxpyPasses: Taps gives, bit for bit, one Axpy pass per tap
// over a cleared dst (the depthwise convolution's former loop), for
// lengths around the vector widths, 1 to 25 taps, NaN and Inf among the
// inputs; with an offset past the end of src it panics in the Go loop
// rather than reading outside src.
func TestTapsIsAxpyPasses(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	for _, n := range []int{1, 15, 16, 17, 63, 64, 65, 130, 142, 300} {
		for _, nt := range []int{1, 3, 9, 25} {
			src := randSlice(r, n+40)
			w := randSlice(r, nt)
			src[r.IntN(len(src))] = []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}[r.IntN(3)]
			off := make([]int32, nt)
			for i := range off {
				off[i] = int32(r.IntN(41))
			}
			want, got := make([]float32, n), make([]float32, n)
			for i := range off {
				Axpy(want, src[off[i]:], w[i])
			}
			for i := range got {
				got[i] = 7
			}
			Taps(got, src, off, w)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
					t.Fatalf("n=%d taps=%d: dst[%d] = %v, Axpy passes give %v", n, nt, i, got[i], want[i])
				}
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("an offset past src was not refused")
		}
	}()
	Taps(make([]float32, 32), make([]float32, 40), []int32{0, 9}, []float32{1, 1})
}
