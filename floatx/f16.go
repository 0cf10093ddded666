package floatx

import "math"

// Float16 bit patterns of note.
const (
	F16PosInf uint16 = 0x7c00 // +Inf
	F16NegInf uint16 = 0xfc00 // -Inf
	F16NaN    uint16 = 0x7e00 // canonical quiet NaN
	F16Max    uint16 = 0x7bff // 65504, largest finite
)

// F32ToF16 converts f to IEEE binary16 bits, rounding to nearest even.
func F32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	abs := b & 0x7fffffff
	switch {
	case abs > 0x7f800000: // NaN: keep the top payload bits, force quiet
		return sign | 0x7e00 | uint16(abs>>13)&0x3ff
	case abs == 0x7f800000:
		return sign | 0x7c00
	}
	c := roundMag(abs, 10, 15)
	if c >= 0x7c00 {
		return sign | 0x7c00
	}
	return sign | uint16(c)
}

// F16ToF32 converts IEEE binary16 bits to float32 exactly.
func F16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	e := uint32(h>>10) & 0x1f
	m := uint32(h & 0x3ff)
	switch {
	case e == 0x1f: // Inf or NaN: widen the payload
		return math.Float32frombits(sign | 0x7f800000 | m<<13)
	case e != 0:
		return math.Float32frombits(sign | (e+112)<<23 | m<<13)
	case m == 0:
		return math.Float32frombits(sign)
	}
	// Subnormal: normalise the mantissa into a float32 normal.
	e = 113
	for m&0x400 == 0 {
		m <<= 1
		e--
	}
	return math.Float32frombits(sign | e<<23 | (m&0x3ff)<<13)
}
