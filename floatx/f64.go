package floatx

import "math"

// f64ToF32Odd rounds x to float32 with round-to-odd: exact values are kept,
// inexact ones are truncated toward zero and get their last significand bit
// set. A following round-to-nearest-even into a format with at least two
// fewer significand bits then yields the correctly rounded value of x, which
// plain float32(x) followed by a second rounding would not (double rounding).
func f64ToF32Odd(x float64) float32 {
	f := float32(x)
	if float64(f) == x || x != x {
		return f
	}
	if math.Abs(float64(f)) > math.Abs(x) {
		f = math.Nextafter32(f, 0) // also turns an overflowing ±Inf into ±max
	}
	return math.Float32frombits(math.Float32bits(f) | 1)
}

// F64ToF16 converts x to float16 bits with a single correct rounding.
func F64ToF16(x float64) uint16 { return F32ToF16(f64ToF32Odd(x)) }

// F64ToBF16 converts x to bfloat16 bits with a single correct rounding.
func F64ToBF16(x float64) uint16 { return F32ToBF16(f64ToF32Odd(x)) }

// F64ToE4M3FN converts x to e4m3fn (non-saturating) with a single correct
// rounding.
func F64ToE4M3FN(x float64) uint8 { return F32ToE4M3FN(f64ToF32Odd(x)) }

// F64ToE4M3FNSat converts x to e4m3fn (saturating) with a single correct
// rounding.
func F64ToE4M3FNSat(x float64) uint8 { return F32ToE4M3FNSat(f64ToF32Odd(x)) }

// F64ToE5M2 converts x to e5m2 with a single correct rounding.
func F64ToE5M2(x float64) uint8 { return F32ToE5M2(f64ToF32Odd(x)) }
