package sgemm

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestPackedBSameBits: a product with B packed once by PackB gives the
// bits of the same product with B stored (small products: within
// rounding, see PackB), for float32 and float16 B,
// transposed or not, K across a KC block boundary, N with a partial
// panel, M from one row (a recurrent step) to several tiles; and PackB
// refuses a short buffer.
func TestPackedBSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), 12))
	for _, c := range []struct {
		m, n, k int
		kind    Kind
		trans   bool
	}{
		{1, 96, 64, F32, true}, {3, 768, 256, F32, true}, {2, 37, 300, F32, false},
		{20, 50, 70, F16, true}, {5, 33, 9, F32, false}, {1, 8, 1, BF16, false},
	} {
		rows, cols := c.k, c.n
		if c.trans {
			rows, cols = c.n, c.k
		}
		a := newOperand(rng, F32, c.m, c.k, 1, false)
		b := newOperand(rng, c.kind, rows, cols, 2, c.trans)
		want := make([]float32, c.m*c.n)
		if err := GemmThreads(&Call{M: c.m, N: c.n, K: c.k, Alpha: 1, A: a.Matrix, B: b.Matrix, C: want, LDC: c.n}, 1); err != nil {
			t.Fatal(err)
		}
		nr := PanelWidth()
		if err := PackB(make([]float32, PackedSize(c.k, c.n, nr)-1), b.Matrix, c.k, c.n, nr); !errors.Is(err, ErrShape) {
			t.Fatalf("PackB into a short buffer: %v", err)
		}
		buf := make([]float32, PackedSize(c.k, c.n, nr))
		if err := PackB(buf, b.Matrix, c.k, c.n, nr); err != nil {
			t.Fatal(err)
		}
		pb := Packed(buf, c.k, c.n, nr)
		for _, threads := range []int{1, 2} {
			got := make([]float32, c.m*c.n)
			for i := range got {
				got[i] = float32(math.NaN()) // beta 0: C is not read
			}
			if err := GemmThreads(&Call{M: c.m, N: c.n, K: c.k, Alpha: 1, A: a.Matrix, B: pb, C: got, LDC: c.n}, threads); err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if c.m*c.n*c.k <= smallWork { // stored: dot products; packed: the FMA kernels
					if d := math.Abs(float64(got[i] - want[i])); d > 1e-5*(1+math.Abs(float64(want[i]))) {
						t.Fatalf("%+v: element %d = %g, stored B gives %g", c, i, got[i], want[i])
					}
					continue
				}
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%+v threads %d: element %d = %g, stored B gives %g", c, threads, i, got[i], want[i])
				}
			}
		}
		if err := Gemm(&Call{M: c.m, N: c.n + 1, K: c.k, Alpha: 1, A: a.Matrix, B: pb, C: make([]float32, c.m*(c.n+1)), LDC: c.n + 1}); !errors.Is(err, ErrShape) {
			t.Fatalf("packed B used for another N: %v", err)
		}
	}
}

// BenchmarkRecurrentStep: one GRU step's recurrent product (batch 2,
// hidden 256: [2,256]·Rᵀ with R [768,256]) with R packed once, against
// packing R inside every call; x_vs_repack is the speed-up, same run.
func BenchmarkRecurrentStep(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const m, h, gh = 2, 256, 768
	a := newOperand(rng, F32, m, h, 0, false)
	r := newOperand(rng, F32, gh, h, 0, true)
	buf := make([]float32, PackedSize(h, gh, PanelWidth()))
	err := PackB(buf, r.Matrix, h, gh, PanelWidth())
	pb := Packed(buf, h, gh, PanelWidth())
	if err != nil {
		b.Fatal(err)
	}
	c := make([]float32, m*gh)
	var tp, tr int64
	b.ReportAllocs()
	for b.Loop() {
		t0 := nanotime()
		_ = GemmThreads(&Call{M: m, N: gh, K: h, Alpha: 1, A: a.Matrix, B: pb, C: c, LDC: gh}, 1)
		t1 := nanotime()
		_ = GemmThreads(&Call{M: m, N: gh, K: h, Alpha: 1, A: a.Matrix, B: r.Matrix, C: c, LDC: gh}, 1)
		tp, tr = tp+t1-t0, tr+nanotime()-t1
	}
	b.ReportMetric(float64(tr)/float64(tp), "x_vs_repack")
}

func nanotime() int64 { return time.Now().UnixNano() }
