package sgemm

// CopyRows copies rows rows of n floats from src (rows lds apart) to dst
// (rows ldd apart): the row copies of small planes (a zero-padded copy of
// an image, the compaction of a product computed at padded width), in
// one AVX-512 loop rather than a memmove call per row. The operands must
// hold every row.
func CopyRows(dst []float32, ldd int, src []float32, lds int, rows, n int) {
	if rows <= 0 || n <= 0 {
		return
	}
	dst = dst[:(rows-1)*ldd+n]
	src = src[:(rows-1)*lds+n]
	if hasAVX512F && ldd >= n && lds >= 0 {
		copyRows512(&dst[0], &src[0], n, rows, ldd, lds)
		return
	}
	for r := range rows {
		copy(dst[r*ldd:r*ldd+n], src[r*lds:r*lds+n])
	}
}

// CopyRowsAdd is CopyRows storing src + b, one float32 add per element
// (the bits of the Go loop): a per-row bias added while compacting.
func CopyRowsAdd(dst []float32, ldd int, src []float32, lds int, rows, n int, b float32) {
	if rows <= 0 || n <= 0 {
		return
	}
	dst = dst[:(rows-1)*ldd+n]
	src = src[:(rows-1)*lds+n]
	if hasAVX512F && ldd >= n && lds >= 0 {
		copyRowsAdd512(&dst[0], &src[0], n, rows, ldd, lds, b)
		return
	}
	for r := range rows {
		d, s := dst[r*ldd:r*ldd+n], src[r*lds:r*lds+n]
		for i, v := range s {
			d[i] = v + b
		}
	}
}

// InterleaveAdd sets dst[2i] = (0 + a[i]) + b and dst[2i+1] = (0 + c[i])
// + b for i < len(a): two rows of a transposed convolution's columns
// written into the alternate columns of the output row they tile (kernel
// width 2 = stride), with the bias — the float32 adds of scattering them
// into a cleared output and adding the bias after, so the same bits
// (0 + v turns -0 into +0; b = +0 when there is no bias). c must be as
// long as a, dst twice as long.
func InterleaveAdd(dst, a, c []float32, b float32) {
	n := len(a)
	if n == 0 {
		return
	}
	c, dst = c[:n], dst[:2*n]
	if hasAVX512F {
		interleaveAdd512(&dst[0], &a[0], &c[0], n, b)
		return
	}
	for i := range a {
		dst[2*i] = (0 + a[i]) + b
		dst[2*i+1] = (0 + c[i]) + b
	}
}
