package sgemm

// Axpy sets dst[i] += a·src[i] for i < len(dst) (src at least as long),
// the product rounded to float32 before the add at every element whatever
// the path (AVX2 assembly on amd64, Go elsewhere), so results never
// depend on position or machine. Convolution kernels outside GEMM (ge's
// depthwise convolution) use it as their vector loop.
func Axpy(dst, src []float32, a float32) {
	n := len(dst)
	if n == 0 {
		return
	}
	src = src[:n]
	if hasAXPY && n >= 8 {
		axpyAVX2(&dst[0], &src[0], n, a)
		return
	}
	for i := range dst {
		dst[i] += float32(a * src[i]) // the conversion forbids fusing into an FMA
	}
}
