package vmath

import "math"

// Constants of exp1 (Cephes expf: Cody–Waite reduction by ln 2 split in
// two, a degree-6 polynomial on [-ln2/2, ln2/2]); asmgen.go copies them.
const (
	expHi    = 88.8 // exp overflows above ln(MaxFloat32) ≈ 88.72
	expLo    = -104 // and is 0 below ln(2^-150) ≈ -103.97
	expLog2e = 1.44269504088896341
	expC1    = 0.693359375 // ln 2 = C1 + C2, C1 exact in 9 bits
	expC2    = -2.12194440e-4
)

// exp1 is e^x for one float32, performing exactly the float32 operations
// of the assembly, in the same order (each product rounded on its own, so
// no FMA contraction changes the result).
func exp1(x float32) float32 {
	if x != x {
		return x
	}
	x = max(min(x, expHi), expLo)
	t := float32(math.RoundToEven(float64(float32(x * expLog2e))))
	r := x - float32(t*expC1)
	r -= float32(t * expC2)
	z := float32(r * r)
	y := float32(1.9875691500e-4)
	y = float32(y*r) + 1.3981999507e-3
	y = float32(y*r) + 8.3334519073e-3
	y = float32(y*r) + 4.1665795894e-2
	y = float32(y*r) + 1.6666665459e-1
	y = float32(y*r) + 5.0000001201e-1
	y = float32(float32(y*z)+r) + 1
	// 2^n as two normal factors so that results down to 2^-149 (subnormal)
	// and up to overflow are reached with one rounding at the end.
	n := int32(t)
	n1 := n >> 1
	n2 := n - n1
	return float32(y*math.Float32frombits(uint32(n1+127)<<23)) * math.Float32frombits(uint32(n2+127)<<23)
}

// Exp sets dst[i] = e^src[i] for i < len(src); dst may be src. Maximum
// error: see the package doc. It panics if dst is shorter than src.
func Exp(dst, src []float32) {
	dst = dst[:len(src)]
	n := len(src) &^ 7
	if hasAVX2 && n > 0 {
		expAVX2(&dst[0], &src[0], n)
	} else {
		n = 0
	}
	if n == len(src) {
		return
	}
	if !hasAVX2 {
		for i := n; i < len(src); i++ {
			dst[i] = exp1(src[i])
		}
		return
	}
	// The tail goes through the vector code too, so a value's result never
	// depends on where it sits in the slice.
	var buf [8]float32
	k := copy(buf[:], src[n:])
	expAVX2(&buf[0], &buf[0], 8)
	copy(dst[n:], buf[:k])
}
