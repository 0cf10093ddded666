package floatx

import "math"

// Float8 bit patterns of note.
const (
	E4M3FNNaN  uint8 = 0x7f // the e4m3fn NaN (0xff with the sign bit)
	E4M3FNMax  uint8 = 0x7e // 448, largest finite e4m3fn
	E5M2PosInf uint8 = 0x7c
	E5M2NaN    uint8 = 0x7e // canonical quiet e5m2 NaN
	E5M2Max    uint8 = 0x7b // 57344, largest finite e5m2
)

// F32ToE4M3FN converts f to float8 e4m3fn, rounding to nearest even,
// non-saturating: NaN, ±Inf and values whose magnitude rounds above 448
// (|f| > 464) become NaN with f's sign.
func F32ToE4M3FN(f float32) uint8 {
	b := math.Float32bits(f)
	sign := uint8(b>>24) & 0x80
	abs := b & 0x7fffffff
	if abs >= 0x7f800000 {
		return sign | 0x7f
	}
	c := roundMag(abs, 3, 7)
	if c > uint32(E4M3FNMax) {
		return sign | 0x7f
	}
	return sign | uint8(c)
}

// F32ToE4M3FNSat converts f to float8 e4m3fn, rounding to nearest even and
// saturating: finite overflow and ±Inf become ±448, NaN stays NaN.
func F32ToE4M3FNSat(f float32) uint8 {
	b := math.Float32bits(f)
	sign := uint8(b>>24) & 0x80
	abs := b & 0x7fffffff
	switch {
	case abs > 0x7f800000:
		return sign | 0x7f
	case abs == 0x7f800000:
		return sign | E4M3FNMax
	}
	c := roundMag(abs, 3, 7)
	if c > uint32(E4M3FNMax) {
		return sign | E4M3FNMax
	}
	return sign | uint8(c)
}

// F32ToE5M2 converts f to float8 e5m2 (IEEE-like: it has Inf and NaN),
// rounding to nearest even; finite overflow (|f| ≥ 61440) becomes ±Inf and a
// NaN becomes the quiet NaN with f's sign.
func F32ToE5M2(f float32) uint8 {
	b := math.Float32bits(f)
	sign := uint8(b>>24) & 0x80
	abs := b & 0x7fffffff
	switch {
	case abs > 0x7f800000:
		return sign | E5M2NaN
	case abs == 0x7f800000:
		return sign | E5M2PosInf
	}
	c := roundMag(abs, 2, 15)
	if c > uint32(E5M2Max) {
		return sign | E5M2PosInf
	}
	return sign | uint8(c)
}

// F32ToE5M2Sat converts f to float8 e5m2, rounding to nearest even and
// saturating: finite overflow and ±Inf become ±57344, NaN stays NaN.
func F32ToE5M2Sat(f float32) uint8 {
	b := math.Float32bits(f)
	sign := uint8(b>>24) & 0x80
	abs := b & 0x7fffffff
	switch {
	case abs > 0x7f800000:
		return sign | E5M2NaN
	case abs == 0x7f800000:
		return sign | E5M2Max
	}
	c := roundMag(abs, 2, 15)
	if c > uint32(E5M2Max) {
		return sign | E5M2Max
	}
	return sign | uint8(c)
}

// Decoding tables: every 8-bit code maps to its exact float32 value.
var (
	e4m3fnTable [256]float32
	e5m2Table   [256]float32
)

func init() {
	for i := range 256 {
		c := uint32(i & 0x7f)
		neg := i&0x80 != 0
		var v4, v5 float64
		if c == 0x7f {
			v4 = math.NaN()
		} else {
			v4 = decodeMag(c, 3, 7)
		}
		switch {
		case c > 0x7c:
			v5 = math.NaN()
		case c == 0x7c:
			v5 = math.Inf(1)
		default:
			v5 = decodeMag(c, 2, 15)
		}
		if neg {
			v4, v5 = -v4, -v5
		}
		e4m3fnTable[i] = float32(v4)
		e5m2Table[i] = float32(v5)
	}
}

// E4M3FNToF32 converts float8 e4m3fn bits to float32 exactly.
func E4M3FNToF32(v uint8) float32 { return e4m3fnTable[v] }

// E5M2ToF32 converts float8 e5m2 bits to float32 exactly.
func E5M2ToF32(v uint8) float32 { return e5m2Table[v] }
