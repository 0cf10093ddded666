package sgemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestCopyRows: CopyRows copies exactly the rows, and CopyRowsAdd adds
// its scalar to each (the Go loop's bits), for widths around the vector
// width, touching nothing between them.
func TestCopyRows(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	for _, n := range []int{1, 5, 10, 15, 16, 17, 40} {
		for _, rows := range []int{1, 3, 12} {
			ldd, lds := n+r.IntN(5), n+r.IntN(5)
			src := randSlice(r, (rows-1)*lds+n)
			dst := make([]float32, (rows-1)*ldd+n+3)
			for i := range dst {
				dst[i] = -7
			}
			for _, add := range []bool{false, true} {
				b := float32(r.NormFloat64())
				if add {
					CopyRowsAdd(dst, ldd, src, lds, rows, n, b)
				} else {
					CopyRows(dst, ldd, src, lds, rows, n)
				}
				for i, v := range dst {
					row, col := i/ldd, i%ldd
					want := float32(-7)
					if row < rows && col < n {
						want = src[row*lds+col]
						if add {
							want += b
						}
					}
					if math.Float32bits(v) != math.Float32bits(want) {
						t.Fatalf("n=%d rows=%d add=%v: dst[%d] = %v, want %v", n, rows, add, i, v, want)
					}
				}
			}
		}
	}
}

// TestInterleaveAdd: the assembly gives the Go loop's bits — -0 made +0,
// NaN kept, the bias added — for lengths around the vector width, and
// writes nothing past 2·n.
func TestInterleaveAdd(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 38))
	negZero := float32(math.Copysign(0, -1))
	for _, n := range []int{1, 5, 8, 15, 16, 17, 31, 40} {
		for _, b := range []float32{0, negZero, float32(r.NormFloat64())} {
			a, c := randSlice(r, n), randSlice(r, n)
			a[0], c[n-1] = negZero, float32(math.NaN())
			got := make([]float32, 2*n+2)
			got[2*n], got[2*n+1] = -7, -7
			InterleaveAdd(got[:2*n], a, c, b)
			for i := range n {
				for k, v := range []float32{a[i], c[i]} {
					want := (0 + v) + b
					g := got[2*i+k]
					if math.Float32bits(g) != math.Float32bits(want) && !(g != g && want != want) {
						t.Fatalf("n=%d b=%v [%d,%d]: %v, want %v", n, b, i, k, g, want)
					}
				}
			}
			if got[2*n] != -7 || got[2*n+1] != -7 {
				t.Fatalf("n=%d: wrote past 2n", n)
			}
		}
	}
}
