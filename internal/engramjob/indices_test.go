package engramjob

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Zipf(s) for any s > 0 follows the Zipf law (issue 26 item 4): the
// histogram of 400,000 draws over m rows, mapped back through the hash to
// ranks, against the exact law k^−s / Σ j^−s by Pearson's χ². The bound
// df + 7·√(2·df) is passed by chance with probability < 1e-7 under the
// law. On c5af455 s = 1 gave one row only (the inverse CDF divided by
// 1 − s) and s < 1 the continuous approximation, whose head is off by
// tens of standard deviations.
func TestZipfHistogram(t *testing.T) {
	for _, k := range []struct {
		s float64
		m int64
	}{{0.3, 40}, {0.8, 200}, {1, 200}, {1, 5000}, {1.05, 300}, {1.5, 100}, {2, 60}, {3.5, 20}} {
		const n = 400000
		rng := rand.New(rand.NewPCG(uint64(k.m), math.Float64bits(k.s)))
		idx := Zipf(rng, n, k.m, k.s)
		rankOf := make(map[int32]int64, k.m)
		for r := int64(1); r <= k.m; r++ {
			rankOf[int32(((r-1)*2654435761+12345)%k.m)] = r
		}
		require.Len(t, rankOf, int(k.m), "the hash is a bijection of [0, m)")
		hist := make([]float64, k.m+1)
		for _, g := range idx {
			r, ok := rankOf[g]
			require.True(t, ok, "index %d outside [0, %d)", g, k.m)
			hist[r]++
		}
		norm := 0.0
		for r := int64(1); r <= k.m; r++ {
			norm += math.Pow(float64(r), -k.s)
		}
		// Pool the tail so that every cell expects ≥ 20 draws.
		chi2, df := 0.0, -1
		obs, exp := 0.0, 0.0
		for r := int64(1); r <= k.m; r++ {
			obs += hist[r]
			exp += n * math.Pow(float64(r), -k.s) / norm
			if exp >= 20 || r == k.m {
				chi2 += (obs - exp) * (obs - exp) / exp
				df++
				obs, exp = 0, 0
			}
		}
		bound := float64(df) + 7*math.Sqrt(2*float64(df))
		assert.Less(t, chi2, bound, "s %v m %d: χ² %.1f with %d degrees of freedom", k.s, k.m, chi2, df)
		// And the share of the head, which the example prints.
		top := hist[1] / n
		assert.InDelta(t, ZipfShare(k.s, 1, k.m), top, 0.01, "s %v m %d: share of the top row", k.s, k.m)
	}
}

func TestZipfShare(t *testing.T) {
	assert.InDelta(t, 1/(1+0.5+1.0/3), ZipfShare(1, 1, 3), 1e-12)
	assert.InDelta(t, 1.0, ZipfShare(0.7, 9, 9), 1e-12)
	// A table beyond the directly summed terms: the integral tail.
	h := 0.0
	for k := 1; k <= 1<<23; k++ {
		h += 1 / float64(k)
	}
	assert.InDelta(t, 1/h, ZipfShare(1, 1, 1<<23), 1e-9)
}

// The out-of-range share: about Bad of the positions past the own rows,
// alternately negative and ≥ W·E, the same on every call.
func TestIndicesBad(t *testing.T) {
	j := Job{Ranks: 3, Entries: 100, T: 20000, Zipf: 1, Bad: 0.1, Seed: 5}
	idx := Indices(j, 1)
	assert.Equal(t, idx, Indices(j, 1))
	neg, high := 0, 0
	for _, g := range idx[2:] {
		switch {
		case g < 0:
			neg++
		case g >= 300:
			high++
		}
	}
	assert.InDelta(t, 0.1*float64(len(idx)-2), float64(neg+high), 200)
	assert.LessOrEqual(t, neg-high, 1)
	assert.True(t, InRange(idx[0], 300) && idx[0]/100 == 1 && idx[1] == idx[0], "an own row, twice")
}
