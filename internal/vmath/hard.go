package vmath

// HardSigmoid sets dst[i] = max(0, min(1, alpha·x + beta)) for x = src[i],
// in float32 (alpha·x rounded, then + beta rounded: no FMA, so every
// path gives the same bits). NaN stays NaN. dst may be src.
func HardSigmoid(dst, src []float32, alpha, beta float32) { hard(dst, src, alpha, beta, false) }

// HardSwish sets dst[i] = x · HardSigmoid(x) with alpha 1/6, beta 1/2, the
// float32 operations of HardSigmoid followed by one multiply.
func HardSwish(dst, src []float32) { hard(dst, src, 1.0/6, 0.5, true) }

func hard(dst, src []float32, alpha, beta float32, swish bool) {
	dst = dst[:len(src)]
	n := 0
	switch {
	case hasAVX512 && len(src) >= 32:
		n = len(src) &^ 31
		if swish {
			hardSwishAVX512(&dst[0], &src[0], n, alpha, beta)
		} else {
			hardSigmoidAVX512(&dst[0], &src[0], n, alpha, beta)
		}
	case hasAVX2 && len(src) >= 16:
		n = len(src) &^ 15
		if swish {
			hardSwishAVX2(&dst[0], &src[0], n, alpha, beta)
		} else {
			hardSigmoidAVX2(&dst[0], &src[0], n, alpha, beta)
		}
	}
	for i := n; i < len(src); i++ {
		h := hardSigmoid1(src[i], alpha, beta)
		if swish {
			h *= src[i]
		}
		dst[i] = h
	}
}

// hardSigmoid1 is the scalar form; the vector kernels perform the same
// operations lane by lane.
func hardSigmoid1(x, alpha, beta float32) float32 {
	h := float32(alpha*x) + beta
	if h < 0 {
		h = 0
	}
	if h > 1 {
		h = 1
	}
	return h
}

// GeluErf sets dst[i] = x/2 · (1 + erf(x/√2)) for x = src[i] (the exact
// GELU), through Erf a chunk at a time from a stack buffer, so dst may
// alias src.
func GeluErf(dst, src []float32) {
	const invSqrt2 = 0.70710678118654752440
	dst = dst[:len(src)]
	var buf [chunk]float32
	for off := 0; off < len(src); off += len(buf) {
		xs := src[off:min(off+len(buf), len(src))]
		b := buf[:len(xs)]
		for i, v := range xs {
			b[i] = v * invSqrt2
		}
		Erf(b, b)
		o := dst[off : off+len(xs)]
		for i, v := range xs {
			o[i] = 0.5 * v * (1 + b[i])
		}
	}
}

// Clip sets dst[i] = lo where src[i] < lo, hi where src[i] > hi, else
// src[i]: NaN and -0 pass through. dst may be src.
func Clip(dst, src []float32, lo, hi float32) {
	dst = dst[:len(src)]
	n := 0
	switch {
	case hasAVX512 && len(src) >= 64:
		n = len(src) &^ 63
		clipAVX512(&dst[0], &src[0], n, lo, hi)
	case hasAVX2 && len(src) >= 32:
		n = len(src) &^ 31
		clipAVX2(&dst[0], &src[0], n, lo, hi)
	}
	for i := n; i < len(src); i++ {
		dst[i] = clip1(src[i], lo, hi)
	}
}

func clip1(x, lo, hi float32) float32 {
	if x < lo {
		x = lo
	}
	if x > hi {
		x = hi
	}
	return x
}
