package floatx

import "math"

// BFloat16 bit patterns of note.
const (
	BF16PosInf uint16 = 0x7f80 // +Inf
	BF16NegInf uint16 = 0xff80 // -Inf
	BF16NaN    uint16 = 0x7fc0 // canonical quiet NaN
	BF16Max    uint16 = 0x7f7f // largest finite, about 3.39e38
)

// F32ToBF16 converts f to bfloat16 bits, rounding to nearest even. A NaN
// keeps its sign and top payload bits and is made quiet, so it never turns
// into an Inf by truncation.
func F32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40
	}
	// bfloat16 is float32 with the low 16 bits rounded away; the carry from
	// rounding propagates into the exponent (and to Inf) by itself.
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// BF16ToF32 converts bfloat16 bits to float32 exactly.
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }
