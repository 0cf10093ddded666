package floatx

import "math"

// roundMag rounds a finite, non-negative float32 (given as its bits without
// the sign) to a format with mbits stored mantissa bits and exponent bias
// bias, to nearest with ties to even. It returns the magnitude code
// exponent<<mbits | mantissa, which may exceed the format's largest finite
// code when the value overflows; callers decide what overflow means.
func roundMag(abs uint32, mbits, bias int) uint32 {
	exp := int(abs >> 23)
	man := abs & 0x7fffff
	if exp == 0 {
		// A float32 subnormal is below 2^-126, far under half the smallest
		// subnormal of every format rounded here (at worst 2^-25 for fp16).
		return 0
	}
	man |= 1 << 23 // value = man · 2^(exp-150)
	te := exp - 127 + bias
	shift := 23 - mbits
	if te < 1 {
		// Subnormal in the target: the significand loses 1-te more bits.
		shift += 1 - te
		te = 1
	}
	if shift > 25 {
		return 0 // man < 2^24 ≤ 2^(shift-2): below a quarter of the smallest step
	}
	q := man >> shift
	rem := man & (1<<shift - 1)
	half := uint32(1) << (shift - 1)
	if rem > half || (rem == half && q&1 == 1) {
		q++
	}
	// q carries the implicit bit (for normals), so adding it to (te-1)<<mbits
	// yields the encoded exponent; a rounding carry bumps the exponent.
	return uint32(te-1)<<mbits + q
}

// decodeMag is the value of magnitude code c of a format with mbits mantissa
// bits and bias bias, for codes that are finite in that format.
func decodeMag(c uint32, mbits, bias int) float64 {
	e := int(c >> mbits)
	m := float64(c & (1<<mbits - 1))
	if e == 0 {
		return math.Ldexp(m, 1-bias-mbits)
	}
	return math.Ldexp(m+float64(uint32(1)<<mbits), e-bias-mbits)
}
