package ge

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// sgemm on strided, transposed operands matches a float64 product.
func TestSgemmEntryPoint(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 1))
	for _, s := range [][3]int{{1, 1, 1}, {3, 5, 7}, {40, 33, 70}} {
		m, n, k := s[0], s[1], s[2]
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				lda, ldb, ldc := k+1, n+2, n+3
				if ta {
					lda = m + 1
				}
				if tb {
					ldb = k + 2
				}
				a := make([]float32, 2*lda*max(m, k))
				b := make([]float32, 2*ldb*max(n, k))
				for i := range a {
					a[i] = float32(r.NormFloat64())
				}
				for i := range b {
					b[i] = float32(r.NormFloat64())
				}
				c := make([]float32, m*ldc)
				for i := range c {
					c[i] = 1
				}
				at := func(i, p int) float64 {
					if ta {
						return float64(a[p*lda+i])
					}
					return float64(a[i*lda+p])
				}
				bt := func(p, j int) float64 {
					if tb {
						return float64(b[j*ldb+p])
					}
					return float64(b[p*ldb+j])
				}
				sgemm(ta, tb, m, n, k, 2, a, lda, b, ldb, 0.5, c, ldc)
				for i := range m {
					for j := range n {
						var want, mag float64
						for p := range k {
							want += at(i, p) * bt(p, j)
							mag += math.Abs(at(i, p) * bt(p, j))
						}
						want = 2*want + 0.5
						assert.InDelta(t, want, c[i*ldc+j], float64(k+2)*0x1p-22*(2*mag+1), "%v ta=%v tb=%v [%d,%d]", s, ta, tb, i, j)
					}
				}
			}
		}
	}
	assert.Panics(t, func() {
		sgemm(false, false, 2, 2, 2, 1, make([]float32, 3), 2, make([]float32, 4), 2, 0, make([]float32, 4), 2)
	})
}
