package vmath

import "math"

// Softmax sets dst = e^(x-max)/Σe^(x-max) over the row src: the exps come
// from Exp, the sum is accumulated in float64 in index order (the same
// bits on every run and thread count), each output is one float32
// division. A NaN or +Inf in the row makes every output NaN, as the
// float64 formula does. dst may be src.
func Softmax(dst, src []float32) {
	if len(src) == 0 {
		return
	}
	dst = dst[:len(src)]
	// A NaN is skipped here but poisons the sum below, as +Inf does
	// (Inf-Inf), so either still makes every output NaN.
	mx := float32(math.Inf(-1))
	for _, v := range src {
		if v > mx {
			mx = v
		}
	}
	// x - max is formed in float64 and fed to Exp as hi + lo (e^hi·(1+lo)):
	// rounding it to float32 alone would cost up to |x-max|·2^-24 relative.
	// The sum runs in 8 float64 lanes, element i into lane i%8 in index
	// order, the lanes added in a fixed tree: the same bits every run, on
	// every machine, and no add waits for the one before it.
	var lanes [8]float64
	n := 0
	if hasAVX2 {
		n = len(src) &^ 7
		if n > 0 {
			expShiftAVX2(&dst[0], &src[0], n, float64(mx), &lanes)
		}
	}
	for i := n; i < len(src); i++ {
		e := softmaxExp1(src[i], float64(mx))
		dst[i] = e
		lanes[i%8] += float64(e)
	}
	sum := ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]))
	s := float32(sum)
	if n > 0 {
		divAVX2(&dst[0], n, s)
	}
	for i := n; i < len(dst); i++ {
		dst[i] /= s
	}
}

// softmaxExp1 is e^(x-shift) for one element, the operations of
// expShiftAVX2.
func softmaxExp1(x float32, shift float64) float32 {
	h, lo := split(float64(x) - shift)
	e := exp1(h)
	return e + float32(e*lo)
}

// LayerNorm sets dst = (x-mean)/√(var+eps)·gamma + beta over the row src
// with the population variance; RMSNorm (beta nil, no mean) sets
// dst = x/√(mean(x²)+eps)·gamma. Sums are float64 in index order; each
// output is rounded once from float64.
func LayerNorm(dst, src, gamma, beta []float32, eps float64) {
	norm(dst, src, gamma, beta, eps, true)
}

// RMSNorm: see LayerNorm.
func RMSNorm(dst, src, gamma []float32, eps float64) {
	norm(dst, src, gamma, nil, eps, false)
}

func norm(dst, src, gamma, beta []float32, eps float64, center bool) {
	l := len(src)
	if l == 0 {
		return
	}
	dst, gamma = dst[:l], gamma[:l]
	var mean float64
	if center {
		for _, v := range src {
			mean += float64(v)
		}
		mean /= float64(l)
	}
	var sq float64
	for _, v := range src {
		d := float64(v) - mean
		sq += d * d
	}
	inv := 1 / math.Sqrt(sq/float64(l)+eps)
	if beta == nil {
		for j, v := range src {
			dst[j] = float32((float64(v) - mean) * inv * float64(gamma[j]))
		}
		return
	}
	beta = beta[:l]
	for j, v := range src {
		dst[j] = float32((float64(v)-mean)*inv*float64(gamma[j]) + float64(beta[j]))
	}
}
