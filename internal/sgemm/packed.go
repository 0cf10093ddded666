package sgemm

import "fmt"

// Packed B operands: a weight matrix used by many products (a recurrent
// layer's R, once per time step) is packed into the kernel's panel layout
// once, and each product reads the panels instead of packing B again.
// The panels are exactly what packing B inside Gemm writes, so a product
// with the packed operand gives the same bits as with the stored one,
// except a small one (M·N·K ≤ smallWork), which Gemm computes with a
// stored B as plain dot products and with a packed B on the kernels (FMA).
//
// Layout: for each K block of KC rows (pc = 0, KC, ...), the N/nr panels
// (the last zero-padded to nr columns), each kb×nr with element (p, j) at
// p·nr + j; block pc starts at pc·panels·nr.

// SmallWork is the M·N·K up to which Gemm computes a product with a
// stored B as plain dot products (packing would cost more than it saves);
// a caller packs B only for products above it.
const SmallWork = smallWork

// PackedSize is the number of floats PackB writes for a K×N operand.
func PackedSize(k, n int) int {
	nr := best.nr
	return (n + nr - 1) / nr * nr * k
}

// PackB packs b, an operand whose op() is K×N (float32, float16 or
// bfloat16, transposed or not; not an im2col operand), into dst (at least
// PackedSize(k, n) floats) and returns the packed operand, to be used as B
// of products with that K and N.
func PackB(dst []float32, b Matrix, k, n int) (Matrix, error) {
	if b.Im2col != nil || b.Kind == Packed {
		return Matrix{}, fmt.Errorf("%w: PackB takes a stored matrix", ErrShape)
	}
	if err := b.check("B", k, n); err != nil {
		return Matrix{}, err
	}
	size := PackedSize(k, n)
	if len(dst) < size {
		return Matrix{}, fmt.Errorf("%w: PackB needs %d floats, dst holds %d", ErrShape, size, len(dst))
	}
	nr := best.nr
	pn := (n + nr - 1) / nr
	wb := packedAPool.get(maxNR * min(KC, max(k, 1)))
	defer packedAPool.put(wb)
	for pc := 0; pc < k; pc += KC {
		kb := min(KC, k-pc)
		for jp := range pn {
			off := pc*pn*nr + jp*nr*kb
			packBPanel(dst[off:off+nr*kb], &b, pc, kb, jp*nr, min(nr, n-jp*nr), nr, *wb)
		}
	}
	return Matrix{Kind: Packed, F32: dst[:size], Stride: n}, nil
}

// packedPanel returns panel jp of K block pc (kb rows) of a packed B.
func packedPanel(b *Matrix, n, nr, pc, kb, jp int) []float32 {
	pn := (n + nr - 1) / nr
	off := pc*pn*nr + jp*nr*kb
	return b.F32[off : off+nr*kb]
}

// checkPacked validates a packed B for a K×N product.
func (x *Matrix) checkPacked(rows, cols int) error {
	if x.Stride != cols || len(x.F32) != PackedSize(rows, cols) || x.Trans {
		return fmt.Errorf("%w: packed B of %d floats for N %d is not PackB's for %d×%d", ErrShape, len(x.F32), x.Stride, rows, cols)
	}
	return nil
}

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
