//go:build !amd64

package vmath

var hasAVX2 = false

func expAVX2(dst, src *float32, n int)                                        { panic("unreachable") }
func sigmoidAVX2(dst, src *float32, n int)                                    { panic("unreachable") }
func siluAVX2(dst, src *float32, n int)                                       { panic("unreachable") }
func geluAVX2(dst, src *float32, n int)                                       { panic("unreachable") }
func expShiftAVX2(dst, src *float32, n int, shift float64, lanes *[8]float64) { panic("unreachable") }
func divAVX2(x *float32, n int, s float32)                                    { panic("unreachable") }

var hasAVX512 = false

func sigmoidAVX512(dst, src *float32, n int)                                    { panic("unreachable") }
func siluAVX512(dst, src *float32, n int)                                       { panic("unreachable") }
func geluAVX512(dst, src *float32, n int)                                       { panic("unreachable") }
func expShiftAVX512(dst, src *float32, n int, shift float64, lanes *[8]float64) { panic("unreachable") }
func reluAVX2(dst, src *float32, n int)                                         { panic("unreachable") }
func reluAVX512(dst, src *float32, n int)                                       { panic("unreachable") }
func normOutAVX512(dst, src, gamma, beta *float32, n int, mean, inv float64) {
	panic("unreachable")
}
func scaleOutAVX512(dst, src, gamma, beta *float32, n int, mean, inv float64) {
	panic("unreachable")
}
func maxLanesAVX512(src *float32, n int, lanes *[16]float32) { panic("unreachable") }
func divAVX512(x *float32, n int, s float32)                 { panic("unreachable") }

func hardSigmoidAVX2(dst, src *float32, n int, alpha, beta float32)   { panic("unreachable") }
func hardSwishAVX2(dst, src *float32, n int, alpha, beta float32)     { panic("unreachable") }
func hardSigmoidAVX512(dst, src *float32, n int, alpha, beta float32) { panic("unreachable") }
func hardSwishAVX512(dst, src *float32, n int, alpha, beta float32)   { panic("unreachable") }
func clipAVX2(dst, src *float32, n int, lo, hi float32)               { panic("unreachable") }
func clipAVX512(dst, src *float32, n int, lo, hi float32)             { panic("unreachable") }
