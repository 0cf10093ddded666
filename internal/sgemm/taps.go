package sgemm

// Taps sets dst[i] = Σ_t w[t]·src[i+off[t]] for i < len(dst): a small
// kernel (a depthwise convolution's taps, each at its offset into a
// zero-padded plane) applied over a whole plane in one pass. Each output
// adds its taps in order t = 0, 1, … to a zero start, every product
// rounded to float32 before its add, so the bits are those of one Axpy
// pass per tap over a cleared dst, whatever the path (AVX-512 assembly or
// Go). Offsets must keep every read inside src.
func Taps(dst, src []float32, off []int32, w []float32) {
	n := len(dst)
	if n == 0 {
		return
	}
	w = w[:len(off)]
	vec := 0
	if hasAVX512F && len(off) > 0 {
		vec = n
		for _, o := range off {
			if o < 0 || int(o)+n > len(src) {
				vec = 0 // the Go loop reports the bad offset
				break
			}
		}
		if vec > 0 {
			taps512(&dst[0], &src[0], &off[0], &w[0], len(off), vec)
		}
	}
	for i := vec; i < n; i++ {
		var acc float32
		for t, o := range off {
			acc += float32(w[t] * src[int(o)+i]) // the conversion forbids fusing into an FMA
		}
		dst[i] = acc
	}
}
