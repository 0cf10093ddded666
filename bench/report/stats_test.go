package main

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rankMedian is the median by definition, without sorting: the value with
// as many values below it as above (the mean of the two middle ones for an
// even count).
func rankMedian(xs []float64) float64 {
	kth := func(k int) float64 {
		for i, x := range xs {
			below, equal := 0, 0
			for j, y := range xs {
				if y < x || y == x && j < i {
					below++
				}
				if y == x {
					equal++
				}
			}
			if below == k {
				return x
			}
		}
		panic("unreachable")
	}
	n := len(xs)
	if n%2 == 1 {
		return kth(n / 2)
	}
	return (kth(n/2-1) + kth(n/2)) / 2
}

func TestSummarizeRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	for range 200 {
		n := 1 + r.IntN(12)
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = r.NormFloat64()*100 + 1000
			if r.IntN(4) == 0 && i > 0 {
				xs[i] = xs[r.IntN(i)] // ties
			}
		}
		orig := append([]float64(nil), xs...)
		s := summarize(xs)
		require.Equal(t, orig, xs, "summarize must not reorder its input")
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, x := range xs {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
		med := rankMedian(xs)
		assert.Equal(t, n, s.n)
		assert.InDelta(t, med, s.median, 1e-9)
		assert.Equal(t, lo, s.min)
		assert.Equal(t, hi, s.max)
		if n == 1 {
			assert.Zero(t, s.spreadPct())
		} else {
			assert.InDelta(t, 100*math.Max(hi-med, med-lo)/math.Abs(med), s.spreadPct(), 1e-9)
		}
	}
}

func TestSummarizeEdges(t *testing.T) {
	assert.Equal(t, summary{}, summarize(nil))
	assert.Zero(t, summarize([]float64{0, 0, 0}).spreadPct(), "a zero median has no relative spread")
	s := summarize([]float64{4, 1, 3, 2})
	assert.Equal(t, 2.5, s.median)
	assert.InDelta(t, 60, s.spreadPct(), 1e-12) // (4-2.5)/2.5
}
