//go:build !amd64

package sgemm

func archKernels() []kernel { return nil }

// PeakLoop returns nil: there is no assembly FMA loop on this architecture.
func PeakLoop() (loop func(n int), flopsPerIter int) { return nil, 0 }

func kern512(k int, a, b, c *float32, ldc int, alpha, beta float32) { panic("no assembly kernels") }
func kern512r4(k int, a, b, c *float32, ldc int, alpha, beta float32) {
	panic("no assembly kernels")
}
func kern512r8(k int, a, b, c *float32, ldc int, alpha, beta float32) {
	panic("no assembly kernels")
}
func kern256(k int, a, b, c *float32, ldc int, alpha, beta float32) { panic("no assembly kernels") }
func packRows32(dst, src *float32, ld, kb int)                      { panic("no assembly kernels") }
func packRowsIdx32(dst, src *float32, off *int32, kb int)           { panic("no assembly kernels") }
func axpyAVX2(dst, src *float32, n int, a float32)                  { panic("no assembly kernels") }

var hasAXPY = false

func vecVV(op VecOp, dst, a, b *float32, n int)         { panic("no assembly kernels") }
func vecVS(op VecOp, dst, a *float32, n int, s float32) { panic("no assembly kernels") }
func vecSV(op VecOp, dst, a *float32, n int, s float32) { panic("no assembly kernels") }

var hasAVX512F = false

func sum512(x *float32, n int) float32 { panic("no assembly kernels") }

func maxPairs512(dst, r0, r1 *float32, n int) { panic("no assembly kernels") }

func copyRows512(dst, src *float32, n, rows, ldd, lds int) { panic("no assembly kernels") }

func interleaveAdd512(dst, a, c *float32, n int, b float32) { panic("no assembly kernels") }

func copyRowsAdd512(dst, src *float32, n, rows, ldd, lds int, b float32) {
	panic("no assembly kernels")
}

func taps512(dst, src *float32, off *int32, w *float32, ntaps, n int) { panic("no assembly kernels") }
