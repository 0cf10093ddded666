package sgemm

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/floatx"
)

// operand is a random stored matrix in one kind, with its values widened
// to float64 for the reference.
type operand struct {
	Matrix
	rows, cols int       // stored shape
	val        []float64 // stored values, row-major with stride cols
}

func newOperand(r *rand.Rand, kind Kind, rows, cols, pad int, trans bool) operand {
	o := operand{Matrix: Matrix{Kind: kind, Stride: cols + pad, Trans: trans}, rows: rows, cols: cols}
	n := 0
	if rows > 0 && cols > 0 {
		n = (rows-1)*o.Stride + cols
	}
	o.val = make([]float64, rows*cols)
	f := make([]float32, n)
	for i := range f {
		f[i] = float32(r.NormFloat64())
	}
	switch kind {
	case F32:
		o.F32 = f
	case F16, BF16:
		o.Half = make([]byte, 2*n)
		for i, v := range f {
			h := floatx.F32ToF16(v)
			if kind == BF16 {
				h = floatx.F32ToBF16(v)
			}
			binary.LittleEndian.PutUint16(o.Half[2*i:], h)
		}
	}
	for i := range rows {
		for j := range cols {
			o.val[i*cols+j] = o.at(i*o.Stride + j)
		}
	}
	return o
}

func (o *operand) at(off int) float64 {
	switch o.Kind {
	case F16:
		return float64(floatx.F16ToF32(binary.LittleEndian.Uint16(o.Half[2*off:])))
	case BF16:
		return float64(floatx.BF16ToF32(binary.LittleEndian.Uint16(o.Half[2*off:])))
	}
	return float64(o.F32[off])
}

// set stores v at stored (i,j) in both representations (F32 only).
func (o *operand) set(i, j int, v float32) {
	o.F32[i*o.Stride+j] = v
	o.val[i*o.cols+j] = float64(v)
}

// op returns op(X)[i,j] in float64.
func (o *operand) op(i, j int) float64 {
	if o.Trans {
		i, j = j, i
	}
	return o.val[i*o.cols+j]
}

type problem struct {
	Call
	a, b operand
	c0   []float32 // C before the call
	ref  []float64 // op(A)·op(B) in float64, and the sum of |terms|
	mag  []float64
}

func newProblem(r *rand.Rand, kind Kind, m, n, k int, ta, tb bool, pad int, alpha, beta float32) *problem {
	p := &problem{}
	ar, ac := m, k
	if ta {
		ar, ac = k, m
	}
	br, bc := k, n
	if tb {
		br, bc = n, k
	}
	p.a = newOperand(r, kind, ar, ac, pad, ta)
	p.b = newOperand(r, kind, br, bc, pad, tb)
	ldc := n + pad
	p.c0 = make([]float32, max(0, (m-1)*ldc+n))
	for i := range p.c0 {
		p.c0[i] = float32(r.NormFloat64())
	}
	p.Call = Call{M: m, N: n, K: k, Alpha: alpha, Beta: beta, A: p.a.Matrix, B: p.b.Matrix, LDC: ldc}
	p.reset()
	return p
}

func (p *problem) reset() { p.C = append(p.C[:0], p.c0...) }

// dot returns op(A)·op(B) at (i,j) in float64 and the sum of the terms
// magnitudes, computed once per problem.
func (p *problem) dot(i, j int) (float64, float64) {
	if p.ref == nil {
		p.ref, p.mag = make([]float64, p.M*p.N), make([]float64, p.M*p.N)
		for i := range p.M {
			for j := range p.N {
				var s, mag float64
				for q := range p.K {
					v := p.a.op(i, q) * p.b.op(q, j)
					s += v
					mag += math.Abs(v)
				}
				p.ref[i*p.N+j], p.mag[i*p.N+j] = s, mag
			}
		}
	}
	return p.ref[i*p.N+j], p.mag[i*p.N+j]
}

// check compares C with a float64 reference within the float32 error bound
// of a K-term dot product; NaN and ±Inf must match the reference exactly.
func (p *problem) check(t testing.TB, what string) {
	t.Helper()
	bad := 0
	for i := range p.M {
		for j := range p.N {
			s, mag := p.dot(i, j)
			want := float64(p.Alpha) * s
			if p.Alpha == 0 || p.K == 0 {
				want, mag = 0, 0
			}
			mag *= math.Abs(float64(p.Alpha))
			if p.Beta != 0 {
				bc := float64(p.Beta) * float64(p.c0[i*p.LDC+j])
				want += bc
				mag += math.Abs(bc)
			}
			got := float64(p.C[i*p.LDC+j])
			tol := float64(p.K+3)*0x1p-23*mag + 1e-30
			ok := math.Abs(got-want) <= tol
			if math.IsNaN(want) || math.IsInf(want, 0) || math.IsInf(mag, 0) {
				ok = math.IsNaN(want) == math.IsNaN(got) && (math.IsNaN(want) || got == want)
				if math.IsInf(mag, 0) && !math.IsNaN(want) && !math.IsInf(want, 0) {
					ok = true // the float64 sum cancelled infinities the reference saw as finite
				}
			}
			if !ok {
				if bad < 5 {
					t.Errorf("%s: C[%d,%d] = %v, want %v ± %g", what, i, j, got, want, tol)
				}
				bad++
			}
		}
	}
	// Padding between rows of C is never written.
	for i := 0; i+1 < p.M; i++ {
		for j := p.N; j < p.LDC; j++ {
			if math.Float32bits(p.C[i*p.LDC+j]) != math.Float32bits(p.c0[i*p.LDC+j]) {
				t.Fatalf("%s: C padding at [%d,%d] written", what, i, j)
			}
		}
	}
}

var sizes = []int{1, 2, 3, 5, 7, 12, 13, 16, 17, 31, 32, 33, 97, 257}

func TestGemmMatchesFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, kern := range kernels {
		t.Run(kern.name, func(t *testing.T) {
			iters := 120
			if raceBuild {
				iters = 20
			}
			for it := range iters {
				m, n, k := sizes[r.IntN(len(sizes))], sizes[r.IntN(len(sizes))], sizes[r.IntN(len(sizes))]
				kind := Kind(r.IntN(3))
				ta, tb := r.IntN(2) == 1, r.IntN(2) == 1
				alpha := []float32{1, -0.5, 2.25}[r.IntN(3)]
				beta := []float32{0, 1, 0.75}[r.IntN(3)]
				p := newProblem(r, kind, m, n, k, ta, tb, r.IntN(3), alpha, beta)
				run(&p.Call, kern, 1+r.IntN(3))
				p.check(t, fmt.Sprintf("#%d kind=%d %dx%dx%d ta=%v tb=%v α=%v β=%v", it, kind, m, n, k, ta, tb, alpha, beta))
			}
		})
	}
}

func TestGemmLarge(t *testing.T) {
	if testing.Short() || raceBuild {
		t.Skip("large shapes")
	}
	r := rand.New(rand.NewPCG(3, 4))
	// Several K blocks, several mc blocks, and (second case) several NC blocks.
	for _, s := range [][3]int{{150, 133, 600}, {7, NC + 45, KC + 1}} {
		p := newProblem(r, F32, s[0], s[1], s[2], false, true, 1, 1.5, 0.5)
		for _, kern := range kernels {
			p.reset()
			run(&p.Call, kern, 2)
			p.check(t, fmt.Sprintf("%s %v", kern.name, s))
		}
	}
}

func TestGemmSpecialValues(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, kern := range kernels {
		p := newProblem(r, F32, 29, 37, 300, false, false, 0, 1, 0)
		inf := float32(math.Inf(1))
		p.a.set(3, 7, float32(math.NaN())) // row 3 of C is NaN
		p.b.set(11, 5, inf)                // column 5: ±Inf, or NaN where row 3
		p.a.set(20, 280, inf)              // row 20 (second K block): ±Inf
		p.b.set(280, 9, 0)                 // ... except 0·Inf = NaN at column 9
		for i := range p.c0 {
			p.c0[i] = float32(math.NaN()) // beta = 0: never read
		}
		p.reset()
		p.Call.A, p.Call.B = p.a.Matrix, p.b.Matrix
		run(&p.Call, kern, 1)
		p.check(t, kern.name)
		assert.True(t, math.IsNaN(float64(p.C[3*p.LDC+0])), kern.name)
		assert.True(t, math.IsNaN(float64(p.C[20*p.LDC+9])), kern.name)
		assert.True(t, math.IsInf(float64(p.C[0*p.LDC+5]), 0), kern.name)
		assert.False(t, math.IsNaN(float64(p.C[1*p.LDC+1])), kern.name)
	}
}

// The result is bit-identical whatever the number of threads or GOMAXPROCS.
func TestGemmDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	shapes := [][3]int{{200, 190, 530}, {5, 700, 300}, {700, 5, 300}, {64, 1024, 257}}
	big := 300
	if raceBuild { // still several K blocks and both split directions
		shapes, big = [][3]int{{50, 40, 300}, {6, 300, 300}, {300, 6, 300}}, 100
	}
	for _, kern := range kernels {
		for _, s := range shapes {
			p := newProblem(r, F32, s[0], s[1], s[2], r.IntN(2) == 1, r.IntN(2) == 1, 0, 0.5, 0.25)
			run(&p.Call, kern, 1)
			want := append([]float32(nil), p.C...)
			for _, th := range []int{2, 3, 4, 7} {
				p.reset()
				run(&p.Call, kern, th)
				require.Equal(t, bits(want), bits(p.C), "%s %v threads=%d", kern.name, s, th)
			}
		}
	}
	p := newProblem(r, F32, big, big, big, false, false, 0, 1, 0)
	var first []uint32
	for _, procs := range []int{1, 2, 5} {
		old := runtime.GOMAXPROCS(procs)
		p.reset()
		require.NoError(t, Gemm(&p.Call))
		runtime.GOMAXPROCS(old)
		if first == nil {
			first = bits(p.C)
		}
		require.Equal(t, first, bits(p.C), "GOMAXPROCS=%d", procs)
	}
}

func bits(f []float32) []uint32 {
	b := make([]uint32, len(f))
	for i, v := range f {
		b[i] = math.Float32bits(v)
	}
	return b
}

func TestGemmBatch(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	var ps []*problem
	var calls []Call
	for range 9 {
		p := newProblem(r, Kind(r.IntN(3)), 1+r.IntN(40), 1+r.IntN(40), 1+r.IntN(60), r.IntN(2) == 1, false, 0, 1, 0)
		ps = append(ps, p)
		calls = append(calls, p.Call)
	}
	require.NoError(t, GemmBatch(calls))
	for i, p := range ps {
		p.C = calls[i].C
		p.check(t, fmt.Sprintf("batch %d", i))
	}
}

func TestGemmRejectsBadShapes(t *testing.T) {
	a := Matrix{F32: make([]float32, 12), Stride: 4}
	b := Matrix{F32: make([]float32, 12), Stride: 3}
	ok := Call{M: 3, N: 3, K: 4, A: a, B: b, C: make([]float32, 9), LDC: 3, Alpha: 1}
	require.NoError(t, Gemm(&ok))
	for name, mut := range map[string]func(c *Call){
		"negative":     func(c *Call) { c.M = -1 },
		"A stride":     func(c *Call) { c.A.Stride = 3 },
		"A short":      func(c *Call) { c.K = 5; c.B.F32 = make([]float32, 15) },
		"B short":      func(c *Call) { c.B.F32 = c.B.F32[:11] },
		"C short":      func(c *Call) { c.C = c.C[:8] },
		"LDC":          func(c *Call) { c.LDC = 2 },
		"half short":   func(c *Call) { c.A = Matrix{Kind: F16, Half: make([]byte, 23), Stride: 4} },
		"unknown kind": func(c *Call) { c.A.Kind = 9 },
		"trans short":  func(c *Call) { c.A.Trans = true },
	} {
		c := ok
		mut(&c)
		assert.ErrorIs(t, Gemm(&c), ErrShape, name)
	}
	// Empty products are valid and touch nothing; K = 0 scales C by beta.
	c := Call{M: 2, N: 2, K: 0, Beta: 0.5, C: []float32{2, 4, 6, 8}, LDC: 2}
	require.NoError(t, Gemm(&c))
	assert.Equal(t, []float32{1, 2, 3, 4}, c.C)
}

// TestSmallRowsIsDotOrder checks that the row-wise small path gives, bit
// for bit, the sequential dot product over p (the order the package
// promises), on random shapes including NaN and Inf entries.
func TestSmallRowsIsDotOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 200 {
		m, n, k := 1+r.IntN(8), 1+r.IntN(40), 1+r.IntN(12)
		ta := r.IntN(2) == 0
		a := make([]float32, m*k)
		b := make([]float32, k*n)
		c := make([]float32, m*n)
		for _, s := range [][]float32{a, b, c} {
			for i := range s {
				s[i] = float32(r.NormFloat64())
				if r.IntN(100) == 0 {
					s[i] = []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}[r.IntN(3)]
				}
			}
		}
		lda := k
		if ta {
			lda = m
		}
		alpha, beta := float32(r.NormFloat64()), []float32{0, 1, float32(r.NormFloat64())}[r.IntN(3)]
		call := Call{M: m, N: n, K: k, Alpha: alpha, Beta: beta,
			A: Matrix{F32: a, Stride: lda, Trans: ta}, B: Matrix{F32: b, Stride: n}, C: slices.Clone(c), LDC: n}
		smallRows(&call)
		for i := range m {
			for j := range n {
				var acc float32
				for p := range k {
					x := a[i*k+p]
					if ta {
						x = a[p*m+i]
					}
					acc += x * b[p*n+j]
				}
				want := float32(alpha * acc)
				if beta != 0 {
					want += float32(beta * c[i*n+j])
				}
				got := call.C[i*n+j]
				if math.Float32bits(got) != math.Float32bits(want) && !(want != want && got != got) {
					t.Fatalf("%dx%dx%d ta=%v: C[%d,%d] = %v, want %v", m, n, k, ta, i, j, got, want)
				}
			}
		}
	}
}

// The edge kernels (the AVX-512 kernel on the top 4 or 8 rows of its
// panels) compute each element with the full kernel's FMA chain: the
// same bits, whole tiles stored directly or partial ones folded.
func TestEdgeTilesMatchFullKernel(t *testing.T) {
	k := kernels[0]
	if k.id != idAVX512 {
		t.Skip("no AVX-512 kernel on this CPU")
	}
	r := rand.New(rand.NewPCG(11, 12))
	const kc = 77
	a, b := randSlice(r, k.mr*kc), randSlice(r, k.nr*kc)
	for _, beta := range []float32{0, 0.5} {
		for rows := 1; rows <= 8; rows++ {
			for _, cols := range []int{k.nr, 5} {
				c0 := randSlice(r, k.mr*k.nr)
				want := append([]float32(nil), c0...)
				full := make([]float32, k.mr*k.nr)
				k.call(kc, &a[0], &b[0], &full[0], k.nr, 1.5, 0)
				fold(want, k.nr, full, k.nr, rows, cols, beta)
				got := append([]float32(nil), c0...)
				k.tile(kc, rows, cols, &a[0], &b[0], got, k.nr, 1.5, beta, make([]float32, k.mr*k.nr))
				require.Equal(t, bits(want), bits(got), "rows=%d cols=%d beta=%v", rows, cols, beta)
			}
		}
	}
}

// TestAxpyIsGoLoop: the assembly row update of smallRows (and Axpy)
// gives the bits
// of the Go loop acc[j] += x*b[j] (product rounded, then the add) at every
// length, vector body and tail.
func TestAxpyIsGoLoop(t *testing.T) {
	if !hasAXPY {
		t.Skip("no AVX2")
	}
	rng := rand.New(rand.NewPCG(rand.Uint64(), 11))
	for n := range 80 {
		acc, b := make([]float32, n), make([]float32, n)
		for i := range acc {
			acc[i], b[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
		}
		x := float32(rng.NormFloat64())
		want := append([]float32(nil), acc...)
		for j := range want {
			want[j] += float32(x * b[j])
		}
		viaAxpy := append([]float32(nil), acc...)
		Axpy(viaAxpy, b, x)
		if n > 0 {
			axpyAVX2(&acc[0], &b[0], n, x)
		}
		for j := range want {
			if math.Float32bits(viaAxpy[j]) != math.Float32bits(want[j]) {
				t.Fatalf("Axpy n=%d element %d: %g, want %g", n, j, viaAxpy[j], want[j])
			}
		}
		for j := range want {
			if math.Float32bits(acc[j]) != math.Float32bits(want[j]) {
				t.Fatalf("n=%d element %d: %g, want %g", n, j, acc[j], want[j])
			}
		}
	}
}
