package vmath

import "math"

// chunk is how many elements go through the vector exp at a time, from a
// stack buffer, so dst may alias src.
const chunk = 256

// Polynomial coefficients, least-squares fits on Chebyshev nodes of
// [0, 0.625²] (tanh(x)/x in x²), [0, 1] (erf(x)/x in x²) and [1, 4]
// (ln erfc(x) in x), evaluated in float32 by Horner's rule.
var (
	tanhP = [...]float32{0.9999999961636119, -0.3333326164181061, 0.13331150161463354, -0.05372267934636181, 0.020595679966986045, -0.00566477536280901}
	erfP  = [...]float32{1.1283791273927481, -0.3761234978454122, 0.11280364408030648, -0.026716385096572037, 0.004923277665131597, -0.0005654105859358771}
	erfcQ = [...]float32{0.000400500502380586, -1.1306044693986967, -0.6310888680078264, -0.11090741703809767, 0.026999497123217808, -0.005021044763208988, 0.0006733375517422153, -6.006879629794038e-05, 3.0952047010485198e-06, -6.582858184770017e-08}
)

func horner(c []float32, t float32) float32 {
	r := c[len(c)-1]
	for i := len(c) - 2; i >= 0; i-- {
		r = float32(r*t) + c[i]
	}
	return r
}

// Relu sets dst[i] = 0 where src[i] < 0, else src[i]: NaN and -0 pass
// through unchanged. dst may be src.
func Relu(dst, src []float32) {
	dst = dst[:len(src)]
	n := 0
	if n64 := len(src) &^ 63; hasAVX512 && n64 > 0 {
		reluAVX512(&dst[0], &src[0], n64)
		n = n64
	} else if n32 := len(src) &^ 31; hasAVX2 && n32 > 0 {
		reluAVX2(&dst[0], &src[0], n32)
		n = n32
	}
	for i := n; i < len(src); i++ {
		dst[i] = relu1(src[i])
	}
}

func relu1(x float32) float32 {
	if x < 0 {
		return 0
	}
	return x
}

// Sigmoid sets dst[i] = 1/(1+e^-src[i]). With e = e^-|x| (never
// overflows): 1/(1+e) for x ≥ 0, e/(1+e) for x < 0, which keeps the
// relative accuracy down to the subnormal results of very negative x.
func Sigmoid(dst, src []float32) { logistic(dst, src, kindSigmoid) }

// Silu sets dst[i] = x·sigmoid(x) for x = src[i].
func Silu(dst, src []float32) { logistic(dst, src, kindSilu) }

// Gelu sets dst[i] to the tanh approximation of GELU that the Ascend Gelu
// operator computes, 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), as the
// equal x·sigmoid(v), v = 2·√(2/π)·(x + 0.044715·x³). v is formed in
// float64 and split into float32 hi + lo, and e^-|v| taken as
// e^hi·(1+lo): the error of rounding v alone would grow with |v| (to
// about 90 ulp at x = -10).
func Gelu(dst, src []float32) { logistic(dst, src, kindGelu) }

type logisticKind uint8

const (
	kindSigmoid logisticKind = iota
	kindSilu
	kindGelu
)

// logistic runs a whole multiple of 8 elements through the AVX2 code and
// the tail through it too, from a buffer, so a value's result never
// depends on where it sits; without AVX2 the scalar functions, which
// perform the same operations. Direct calls, not a func value, so that
// buf stays on the stack.
func logistic(dst, src []float32, kind logisticKind) {
	dst = dst[:len(src)]
	if !hasAVX2 {
		for i, x := range src {
			switch kind {
			case kindSigmoid:
				dst[i] = sigmoid1(x)
			case kindSilu:
				dst[i] = silu1(x)
			default:
				dst[i] = gelu1(x)
			}
		}
		return
	}
	vec := func(d, s *float32, n int) {
		switch kind {
		case kindSigmoid:
			sigmoidAVX2(d, s, n)
		case kindSilu:
			siluAVX2(d, s, n)
		default:
			geluAVX2(d, s, n)
		}
	}
	n := 0
	if n16 := len(src) &^ 15; hasAVX512 && n16 > 0 {
		switch kind {
		case kindSigmoid:
			sigmoidAVX512(&dst[0], &src[0], n16)
		case kindSilu:
			siluAVX512(&dst[0], &src[0], n16)
		default:
			geluAVX512(&dst[0], &src[0], n16)
		}
		n = n16
	}
	if n8 := len(src) &^ 7; n8 > n {
		vec(&dst[n], &src[n], n8-n)
		n = n8
	}
	if n == len(src) {
		return
	}
	var buf [8]float32
	k := copy(buf[:], src[n:])
	vec(&buf[0], &buf[0], 8)
	copy(dst[n:], buf[:k])
}

// sel is the numerator factor of the logistic functions: e for x < 0
// (x·e/(1+e) = x/(1+e^|x|)), else 1.
func sel(x, e float32) float32 {
	if x < 0 {
		return e
	}
	return 1
}

// sigmoid1, silu1 and gelu1 are one element of Sigmoid, Silu and Gelu:
// exactly the operations of the assembly, each rounding explicit so that
// no FMA contraction changes a result.
func sigmoid1(x float32) float32 {
	e := exp1(-abs(x))
	return sel(x, e) / (1 + e)
}

func silu1(x float32) float32 {
	e := exp1(-abs(x))
	return float32(x*sel(x, e)) / (1 + e)
}

const (
	geluK  = 0.044715
	geluC2 = 2 * 0.7978845608028654 // 2·√(2/π)
)

func gelu1(x float32) float32 {
	f := float64(x)
	t := float64(geluK * f)
	t = float64(t * f)
	t = float64(t * f)
	h, lo := split(-math.Abs(float64(geluC2 * float64(f+t))))
	e := exp1(h)
	e += float32(e * lo)
	return float32(x*sel(x, e)) / (1 + e)
}

// split returns a ≈ h + lo in float32: h = float32(a) and the rounding
// error lo (0 where h overflows to infinity).
func split(a float64) (h, lo float32) {
	h = float32(a)
	if !math.IsInf(float64(h), 0) {
		lo = float32(a - float64(h))
	}
	return h, lo
}

// Tanh sets dst[i] = tanh(src[i]): an odd polynomial below |x| = 0.625,
// else ±(1-e)/(1+e) with e = e^-2|x| (no overflow, no cancellation).
func Tanh(dst, src []float32) {
	dst = dst[:len(src)]
	var buf [chunk]float32
	for off := 0; off < len(src); off += chunk {
		s := src[off:min(off+chunk, len(src))]
		d, b := dst[off:off+len(s)], buf[:len(s)]
		for i, x := range s {
			b[i] = -2 * abs(x)
		}
		Exp(b, b)
		for i, x := range s {
			if abs(x) < 0.625 {
				d[i] = x * horner(tanhP[:], x*x)
				continue
			}
			e := b[i]
			d[i] = float32(math.Copysign(float64((1-e)/(1+e)), float64(x)))
		}
	}
}

// Erf sets dst[i] = erf(src[i]): x·P(x²) below |x| = 1, ±(1 - e^Q(|x|))
// up to 4 (Q fits ln erfc), ±1 beyond, where erf rounds to ±1 in float32.
func Erf(dst, src []float32) {
	dst = dst[:len(src)]
	var buf [chunk]float32
	for off := 0; off < len(src); off += chunk {
		s := src[off:min(off+chunk, len(src))]
		d, b := dst[off:off+len(s)], buf[:len(s)]
		for i, x := range s {
			a := abs(x)
			b[i] = 0
			if !(a < 1) && a < 4 || a != a {
				b[i] = horner(erfcQ[:], a)
			}
		}
		Exp(b, b)
		for i, x := range s {
			a := abs(x)
			var y float32
			switch {
			case a < 1:
				d[i] = x * horner(erfP[:], x*x)
				continue
			case a < 4 || a != a:
				y = 1 - b[i]
			default:
				y = 1
			}
			d[i] = float32(math.Copysign(float64(y), float64(x)))
		}
	}
}

func abs(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }
