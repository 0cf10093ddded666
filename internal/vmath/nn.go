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
	mx := src[0]
	for _, v := range src[1:] {
		mx = max(mx, v)
	}
	// x - max is formed in float64 and fed to Exp as hi + lo (e^hi·(1+lo)):
	// rounding it to float32 alone would cost up to |x-max|·2^-24 relative.
	var lo [chunk]float32
	for off := 0; off < len(src); off += chunk {
		s := src[off:min(off+chunk, len(src))]
		d := dst[off : off+len(s)]
		for i, v := range s {
			x := float64(v) - float64(mx)
			h := float32(x)
			lo[i] = 0
			if !math.IsInf(float64(h), 0) {
				lo[i] = float32(x - float64(h))
			}
			d[i] = h
		}
		Exp(d, d)
		for i, e := range d {
			d[i] = e + e*lo[i]
		}
	}
	var sum float64
	for _, v := range dst {
		sum += float64(v)
	}
	s := float32(sum)
	for i, v := range dst {
		dst[i] = v / s
	}
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
