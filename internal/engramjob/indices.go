package engramjob

import (
	"math"
	"math/rand/v2"
)

// Indices are the indices rank r fetches: Zipf or uniform over the whole
// table, (T ≥ 2) an own row twice, and then a share job.Bad of the
// positions past those two replaced by out-of-range indices, alternately
// negative and ≥ W·E. Every rank (and the launcher) can compute any
// rank's.
func Indices(job Job, r int) []int32 {
	rng := rand.New(rand.NewPCG(job.Seed, uint64(r)))
	global := int64(job.Ranks) * job.Entries
	var idx []int32
	if job.Zipf > 0 {
		idx = Zipf(rng, job.T, global, job.Zipf)
	} else {
		idx = Uniform(rng, job.T, global)
	}
	if job.T >= 2 && job.Entries > 0 { // an own row, twice
		idx[0] = int32(int64(r)*job.Entries + rng.Int64N(job.Entries))
		idx[1] = idx[0]
	}
	if job.Bad > 0 {
		n := 0
		for i := min(2, len(idx)); i < len(idx); i++ {
			if rng.Float64() < job.Bad {
				idx[i] = outOfRange(n, global)
				n++
			}
		}
	}
	return idx
}

// outOfRange is the n-th out-of-range index of a table of global rows:
// −1, global, −2, global+1, … (clamped to the int32 range).
func outOfRange(n int, global int64) int32 {
	if n%2 == 0 {
		return int32(-1 - n/2%(1<<30))
	}
	return int32(min(global+int64(n/2), math.MaxInt32))
}

// InRange reports whether g is a row of a table of global rows.
func InRange(g int32, global int64) bool { return g >= 0 && int64(g) < global }

// Uniform draws n indices uniformly over [0, m).
func Uniform(rng *rand.Rand, n int, m int64) []int32 {
	out := make([]int32, n)
	for i := range out {
		if m > 0 {
			out[i] = int32(rng.Int64N(m))
		}
	}
	return out
}

// Zipf draws n indices over [0, m) whose ranks k = 1..m follow the Zipf
// law P(k) ∝ k^−s for any s > 0 (s ≤ 1 included, where no normalising
// series converges and a continuous inverse CDF divides by 1 − s), the
// hot ranks spread over the table by a multiplicative hash (a bijection
// of [0, m): 2654435761 is a prime larger than any m here).
func Zipf(rng *rand.Rand, n int, m int64, s float64) []int32 {
	out := make([]int32, n)
	if m == 0 {
		return out
	}
	z := NewZipfRanks(s, m)
	for i := range out {
		out[i] = int32(((z.Rank(rng)-1)*2654435761 + 12345) % m)
	}
	return out
}

// ZipfRanks draws ranks k in [1, m] with P(k) = k^−s / Σ_{j≤m} j^−s
// exactly, for any exponent s > 0, by rejection-inversion (W. Hörmann,
// G. Derflinger, "Rejection-inversion to generate variates from monotone
// discrete distributions", ACM TOMACS 6(3), 1996): invert the integral H
// of the hat h(x) = x^−s over [k−½, k+½] and accept k when the draw
// falls under the bar of height h(k); H(x) = ((x^(1−s)) − 1)/(1 − s),
// which tends to log x at s = 1, is evaluated through expm1 and log1p so
// that s = 1 and s near 1 are neither singular nor imprecise.
type ZipfRanks struct {
	s, m            float64
	hX1, hN, square float64
}

// NewZipfRanks is the sampler of exponent s > 0 over [1, m], m ≥ 1.
func NewZipfRanks(s float64, m int64) ZipfRanks {
	z := ZipfRanks{s: s, m: float64(m)}
	z.hX1 = z.hIntegral(1.5) - 1
	z.hN = z.hIntegral(z.m + 0.5)
	z.square = 2 - z.hIntegralInverse(z.hIntegral(2.5)-z.h(2))
	return z
}

// Rank draws one rank in [1, m].
func (z ZipfRanks) Rank(rng *rand.Rand) int64 {
	for {
		u := z.hN + rng.Float64()*(z.hX1-z.hN)
		x := z.hIntegralInverse(u)
		k := math.Floor(x + 0.5)
		k = max(1, min(k, z.m))
		if k-x <= z.square || u >= z.hIntegral(k+0.5)-z.h(k) {
			return int64(k)
		}
	}
}

func (z ZipfRanks) h(x float64) float64 { return math.Exp(-z.s * math.Log(x)) }

func (z ZipfRanks) hIntegral(x float64) float64 {
	lx := math.Log(x)
	return expm1x((1-z.s)*lx) * lx
}

func (z ZipfRanks) hIntegralInverse(x float64) float64 {
	t := max(x*(1-z.s), -1)
	return math.Exp(log1px(t) * x)
}

// log1px is log(1+x)/x, 1 at x = 0.
func log1px(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(0.5-x*(1.0/3-0.25*x))
}

// expm1x is (e^x − 1)/x, 1 at x = 0.
func expm1x(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x*0.5*(1+x/3*(1+0.25*x))
}

// ZipfShare is the Zipf law's probability of the n most likely of m
// ranks, Σ_{k≤n} k^−s / Σ_{k≤m} k^−s (at most 2^22 terms are summed; a
// larger m is summed to that many, the tail estimated by the integral).
func ZipfShare(s float64, n, m int64) float64 {
	sum := func(to int64) float64 {
		const direct = 1 << 22
		t := 0.0
		for k := int64(1); k <= min(to, direct); k++ {
			t += math.Pow(float64(k), -s)
		}
		if to > direct { // ∫ x^−s over [direct+½, to+½]
			a, b := float64(direct)+0.5, float64(to)+0.5
			if s == 1 {
				t += math.Log(b / a)
			} else {
				t += (math.Pow(b, 1-s) - math.Pow(a, 1-s)) / (1 - s)
			}
		}
		return t
	}
	if m <= 0 || s < 0 {
		return 0
	}
	return sum(min(n, m)) / sum(m)
}
