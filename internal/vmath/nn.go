package vmath

import "math"

// Softmax sets dst = e^(x-max)/Σe^(x-max) over the row src: the exps are
// exp1's, the sum is accumulated in float64 in a fixed order (the same
// bits on every run, thread count and vector width), each output is one
// float32 division. A NaN or +Inf in the row makes every output NaN, as the
// float64 formula does. dst may be src.
func Softmax(dst, src []float32) {
	if len(src) == 0 {
		return
	}
	dst = dst[:len(src)]
	// A NaN is skipped here but poisons the sum below, as +Inf does
	// (Inf-Inf), so either still makes every output NaN. Where a row's
	// maximum is 0 the lanes may pick +0 or -0; x - (±0) gives the same
	// exponentials either way.
	mx := float32(math.Inf(-1))
	m := 0
	if n16 := len(src) &^ 15; hasAVX512 && n16 > 0 {
		var lanes [16]float32
		for i := range lanes {
			lanes[i] = mx
		}
		maxLanesAVX512(&src[0], n16, &lanes)
		for _, v := range lanes {
			if v > mx {
				mx = v
			}
		}
		m = n16
	}
	for _, v := range src[m:] {
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
	if n16 := len(src) &^ 15; hasAVX512 && n16 > 0 {
		expShiftAVX512(&dst[0], &src[0], n16, float64(mx), &lanes)
		n = n16
	}
	if n8 := len(src) &^ 7; hasAVX2 && n8 > n {
		expShiftAVX2(&dst[n], &src[n], n8-n, float64(mx), &lanes)
		n = n8
	}
	for i := n; i < len(src); i++ {
		e := softmaxExp1(src[i], float64(mx))
		dst[i] = e
		lanes[i%8] += float64(e)
	}
	sum := ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]))
	s := float32(sum)
	switch {
	case hasAVX512 && n >= 16:
		n &^= 15
		divAVX512(&dst[0], n, s)
	case hasAVX2 && n > 0:
		divAVX2(&dst[0], n, s)
	default:
		n = 0
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
// dst = x/√(mean(x²)+eps)·gamma. Sums are float64 in 4 lanes (see sum); each
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
		mean = sum(src) / float64(l)
	}
	inv := 1 / math.Sqrt(sumSq(src, mean)/float64(l)+eps)
	// The output loop: 8 lanes in AVX-512, the tail (or everything
	// elsewhere) in Go with the same operations, each rounded on its own.
	n := 0
	if n8 := l &^ 7; hasAVX512 && n8 > 0 {
		if beta == nil {
			scaleOutAVX512(&dst[0], &src[0], &gamma[0], nil, n8, mean, inv)
		} else {
			_ = beta[l-1]
			normOutAVX512(&dst[0], &src[0], &gamma[0], &beta[0], n8, mean, inv)
		}
		n = n8
	}
	if beta == nil {
		for j := n; j < l; j++ {
			dst[j] = float32(float64(float64(src[j])-mean) * inv * float64(gamma[j]))
		}
		return
	}
	beta = beta[:l]
	for j := n; j < l; j++ {
		dst[j] = float32(float64(float64(float64(src[j])-mean)*inv*float64(gamma[j])) + float64(beta[j]))
	}
}

// sum and sumSq add in float64 over 4 lanes, element i into lane i%4 in
// index order, then the lanes in a fixed tree: the same bits on every run
// and machine, and four independent add chains instead of one.
func sum(x []float32) float64 {
	var a0, a1, a2, a3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		q := (*[4]float32)(x[i:])
		a0 += float64(q[0])
		a1 += float64(q[1])
		a2 += float64(q[2])
		a3 += float64(q[3])
	}
	for ; i < len(x); i++ {
		switch i % 4 {
		case 0:
			a0 += float64(x[i])
		case 1:
			a1 += float64(x[i])
		default:
			a2 += float64(x[i])
		}
	}
	return (a0 + a1) + (a2 + a3)
}

// sumSq is Σ (x-mean)², in sum's order; each square is rounded before
// the add (no FMA contraction).
func sumSq(x []float32, mean float64) float64 {
	var a0, a1, a2, a3 float64
	sq := func(v float32) float64 {
		d := float64(v) - mean
		return float64(d * d)
	}
	i := 0
	for ; i+4 <= len(x); i += 4 {
		q := (*[4]float32)(x[i:])
		a0 += sq(q[0])
		a1 += sq(q[1])
		a2 += sq(q[2])
		a3 += sq(q[3])
	}
	for ; i < len(x); i++ {
		switch i % 4 {
		case 0:
			a0 += sq(x[i])
		case 1:
			a1 += sq(x[i])
		default:
			a2 += sq(x[i])
		}
	}
	return (a0 + a1) + (a2 + a3)
}
