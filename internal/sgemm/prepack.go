package sgemm

import "fmt"

// Pre-packed B. A constant B operand (a layer's weights) is packed once,
// at compile or load time, into the layout the kernels read — for each K
// block of KC rows, panels of NR columns, each row of a panel contiguous
// and the last panel zero-padded — so the products skip packing B, which
// for an inference-sized A (a few rows) costs as much as the arithmetic.
// The layout is the kernel's when NR is PanelWidth(); a B packed for
// another width (a model compiled on another machine) is read element by
// element into the running kernel's panels instead: slower, the same
// numbers. Either way the product is bit-identical to the unpacked one.

// PanelWidth is the panel width (the kernel's nr) a B packed for this
// machine's fastest kernel should have.
func PanelWidth() int { return best.nr }

// Unpacked reports whether a float32 product of this size runs without
// packing at all (plain dot products): a B packed ahead would only have
// to be unpacked again, so a compiler should leave it as stored.
func Unpacked(m, n, k int) bool { return m*n*k <= smallWork }

// PackedSize is the number of float32 a K×N operand packed with panels of
// nr columns holds: K rows of N rounded up to a multiple of nr.
func PackedSize(k, n, nr int) int { return k * ((n + nr - 1) / nr * nr) }

// Packed returns the Matrix of a B packed by PackB for a K-row product.
func Packed(data []float32, k, n, nr int) Matrix {
	return Matrix{F32: data, Stride: (n + nr - 1) / nr * nr, PackedNR: nr, PackedK: k, PackedN: n}
}

// PackB packs op(b), K×N, into dst (PackedSize(k, n, nr) elements) with
// panels of nr columns (1 to 32).
func PackB(dst []float32, b Matrix, k, n, nr int) error {
	if nr < 1 || nr > maxNR || k < 0 || n < 0 {
		return fmt.Errorf("%w: pack %d×%d with panel width %d", ErrShape, k, n, nr)
	}
	if b.PackedNR != 0 || b.Im2col != nil {
		return fmt.Errorf("%w: B to pack must be a plain matrix", ErrShape)
	}
	if err := b.check("B", k, n); err != nil {
		return err
	}
	if len(dst) < PackedSize(k, n, nr) {
		return fmt.Errorf("%w: packed B holds %d elements, needs %d", ErrShape, len(dst), PackedSize(k, n, nr))
	}
	npad := (n + nr - 1) / nr * nr
	wb := packedAPool.get(maxNR * min(KC, max(k, 1))) // pooled: a recurrent layer packs R every run
	defer packedAPool.put(wb)
	for pc := 0; pc < k; pc += KC {
		kb := min(KC, k-pc)
		for j := 0; j < n; j += nr {
			packBPanel(dst[pc*npad+j*kb:], &b, pc, kb, j, min(nr, n-j), nr, *wb)
		}
	}
	return nil
}

// packedView returns the panels of a B packed for width nr from column j0
// in the K block at row pc, or nil when B is not packed for nr.
func (x *Matrix) packedView(pc, kb, j0, nr int) []float32 {
	if x.PackedNR != nr {
		return nil
	}
	return x.F32[pc*x.Stride+j0*kb:]
}

// packedAt returns element (p, j) of a packed B.
func (x *Matrix) packedAt(p, j int) float32 {
	nr := x.PackedNR
	pc := p / KC * KC
	kb := min(KC, x.PackedK-pc)
	return x.F32[pc*x.Stride+j/nr*kb*nr+(p-pc)*nr+j%nr]
}

// packFromPacked is packBPanel for a B packed with another panel width.
func (x *Matrix) packFromPacked(d []float32, p0, kb, j0, cols, nr int) {
	for p := range kb {
		dp := d[p*nr : p*nr+nr]
		for j := range cols {
			dp[j] = x.packedAt(p0+p, j0+j)
		}
		clear(dp[cols:])
	}
}

// checkPacked validates a packed B for a rows×cols operand.
func (x *Matrix) checkPacked(name string, rows, cols int) error {
	nr := x.PackedNR
	switch {
	case name != "B" || x.Trans || x.Kind != F32 || x.Im2col != nil:
		return fmt.Errorf("%w: a packed operand must be B, float32, not transposed", ErrShape)
	case nr < 1 || nr > maxNR || x.PackedK != rows || x.PackedN != cols || x.Stride != (cols+nr-1)/nr*nr:
		return fmt.Errorf("%w: B packed as K=%d, width %d, stride %d does not fit %d×%d", ErrShape, x.PackedK, nr, x.Stride, rows, cols)
	case len(x.F32) < rows*x.Stride:
		return fmt.Errorf("%w: packed B holds %d elements, %d×%d needs %d", ErrShape, len(x.F32), rows, cols, rows*x.Stride)
	}
	return nil
}

// unpackSmall writes a small packed B (K·N ≤ smallWork) out row-major
// and runs small on it, as smallIm2col does for an implicit operand.
func unpackSmall(c *Call) {
	var buf [smallWork]float32
	k, n := c.K, c.N
	for p := range k {
		for j := range n {
			buf[p*n+j] = c.B.packedAt(p, j)
		}
	}
	d := *c
	d.B = Matrix{F32: buf[:k*n], Stride: n}
	small(&d)
}
