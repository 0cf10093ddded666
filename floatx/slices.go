package floatx

import "encoding/binary"

// The bulk helpers convert min(len(dst), elements in src) values; they are
// written as plain loops so the compiler keeps them bounds-check light.

// F16ToF32Slice decodes float16 values into dst.
func F16ToF32Slice(dst []float32, src []uint16) {
	n := min(len(dst), len(src))
	for i := range n {
		dst[i] = F16ToF32(src[i])
	}
}

// F32ToF16Slice encodes dst[i] = float16(src[i]).
func F32ToF16Slice(dst []uint16, src []float32) {
	n := min(len(dst), len(src))
	for i := range n {
		dst[i] = F32ToF16(src[i])
	}
}

// BF16ToF32Slice decodes bfloat16 values into dst.
func BF16ToF32Slice(dst []float32, src []uint16) {
	n := min(len(dst), len(src))
	for i := range n {
		dst[i] = BF16ToF32(src[i])
	}
}

// F32ToBF16Slice encodes dst[i] = bfloat16(src[i]).
func F32ToBF16Slice(dst []uint16, src []float32) {
	n := min(len(dst), len(src))
	for i := range n {
		dst[i] = F32ToBF16(src[i])
	}
}

// DecodeF16 decodes little-endian float16 bytes into dst; it converts
// min(len(dst), len(src)/2) elements and returns that count.
func DecodeF16(dst []float32, src []byte) int {
	n := min(len(dst), len(src)/2)
	for i := range n {
		dst[i] = F16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
	}
	return n
}

// EncodeF16 writes src as little-endian float16 bytes into dst; it converts
// min(len(dst)/2, len(src)) elements and returns that count.
func EncodeF16(dst []byte, src []float32) int {
	n := min(len(dst)/2, len(src))
	for i := range n {
		binary.LittleEndian.PutUint16(dst[2*i:], F32ToF16(src[i]))
	}
	return n
}

// DecodeBF16 decodes little-endian bfloat16 bytes into dst; it converts
// min(len(dst), len(src)/2) elements and returns that count.
func DecodeBF16(dst []float32, src []byte) int {
	n := min(len(dst), len(src)/2)
	for i := range n {
		dst[i] = BF16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
	}
	return n
}

// EncodeBF16 writes src as little-endian bfloat16 bytes into dst; it converts
// min(len(dst)/2, len(src)) elements and returns that count.
func EncodeBF16(dst []byte, src []float32) int {
	n := min(len(dst)/2, len(src))
	for i := range n {
		binary.LittleEndian.PutUint16(dst[2*i:], F32ToBF16(src[i]))
	}
	return n
}

// DecodeE4M3FN decodes e4m3fn bytes into dst and returns the count.
func DecodeE4M3FN(dst []float32, src []byte) int {
	n := min(len(dst), len(src))
	for i := range n {
		dst[i] = e4m3fnTable[src[i]]
	}
	return n
}

// EncodeE4M3FN encodes src into e4m3fn bytes (non-saturating, see
// F32ToE4M3FN) and returns the count.
func EncodeE4M3FN(dst []byte, src []float32) int {
	n := min(len(dst), len(src))
	for i := range n {
		dst[i] = F32ToE4M3FN(src[i])
	}
	return n
}

// EncodeE4M3FNSat encodes src into e4m3fn bytes, saturating (see
// F32ToE4M3FNSat), and returns the count.
func EncodeE4M3FNSat(dst []byte, src []float32) int {
	n := min(len(dst), len(src))
	for i := range n {
		dst[i] = F32ToE4M3FNSat(src[i])
	}
	return n
}

// DecodeE5M2 decodes e5m2 bytes into dst and returns the count.
func DecodeE5M2(dst []float32, src []byte) int {
	n := min(len(dst), len(src))
	for i := range n {
		dst[i] = e5m2Table[src[i]]
	}
	return n
}

// EncodeE5M2 encodes src into e5m2 bytes (overflow to Inf) and returns the
// count.
func EncodeE5M2(dst []byte, src []float32) int {
	n := min(len(dst), len(src))
	for i := range n {
		dst[i] = F32ToE5M2(src[i])
	}
	return n
}
