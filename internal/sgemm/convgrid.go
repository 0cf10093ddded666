package sgemm

import (
	"fmt"
	"runtime"
	"sync"
)

// The grid path of a 2-D implicit GEMM. Packing an Im2col operand
// gathers each panel row from short runs of the image (one per output row
// the panel spans), testing every run against the padding: for the small
// feature maps of imported models (10 to 40 columns) that costs many
// times the FMAs. The grid path instead rearranges the image once per
// call into zero-padded phase planes — for strides sh×sw, plane (py, px)
// holds xpad[y·sh+py][i·sw+px] — on which every kernel tap (c, r, s) is
// one contiguous row: output position (oy, ox) of tap (c, r, s) reads
// plane ((r·dh) mod sh, (s·dw) mod sw) of channel c at
// [oy + r·dh/sh][ox + s·dw/sw]. Laid out on the plane's grid of Lq
// columns, the receptive fields of all outputs of a tap are then the
// plane's elements from one offset on, so B's row p is X[off[p]:] and a
// panel row is one 32-float copy. The product is computed on the grid
// (Lq ≥ OW columns per output row; the extra columns are discarded) and
// compacted into C.
//
// Each valid output is the dot product of the same weights with the same
// values in the same order, cut at the same K blocks, as on the Im2col
// path, so the result is bit-identical to it (and to explicit im2col).

// gridConv switches the grid path on; the benchmarks turn it off to
// measure the Im2col path in the same run.
var gridConv = true

// gridWork keeps a convolution on the Im2col path: a product this small
// takes the plain dot-product path (smallWork), with its own rounding.
const gridWork = smallWork

// gridBufs is the scratch of one grid convolution, kept for the next:
// the operand description (the GEMM keeps a pointer to it), the row
// offsets, the phase planes and the product on the grid.
type gridBufs struct {
	im    Im2col
	off   []int32
	plane []float32
	out   []float32
}

// gridFree keeps a few gridBufs across garbage collections (a sync.Pool
// is emptied by them, and the next convolution would allocate its planes
// again): a run of a model then allocates nothing once warm.
var gridFree struct {
	sync.Mutex
	list []*gridBufs
}

const gridFreeMax = 8

func getGrid() *gridBufs {
	gridFree.Lock()
	defer gridFree.Unlock()
	if n := len(gridFree.list); n > 0 {
		b := gridFree.list[n-1]
		gridFree.list = gridFree.list[:n-1]
		return b
	}
	return new(gridBufs)
}

func putGrid(b *gridBufs) {
	gridFree.Lock()
	defer gridFree.Unlock()
	if gridFree.list == nil {
		gridFree.list = make([]*gridBufs, 0, gridFreeMax)
	}
	if len(gridFree.list) < gridFreeMax {
		gridFree.list = append(gridFree.list, b)
	}
}

// ConvGemm computes c, whose B is usually an Im2col operand, as Gemm
// does, bit for bit, on the fastest path for its geometry: the grid path
// for 2-D convolutions, else the implicit GEMM.
func ConvGemm(c *Call) error { return ConvGemmImages(c, 1, 0, 0) }

// ConvGemmImages is ConvGemm for images convolutions with the same
// weights: c is the first image's product (B an Im2col operand), image i
// reads the Im2col image from X[i·xStride:] and writes C[i·cStride:].
// On the grid path all images share one product (their plane rows side
// by side on the grid, one packing of the weights, fuller panels); each
// image's result is what ConvGemm gives for it alone, bit for bit.
func ConvGemmImages(c *Call, images, xStride, cStride int) error {
	if err := c.validate(); err != nil {
		return err
	}
	if images < 1 || xStride < 0 || cStride < 0 {
		return fmt.Errorf("%w: %d images, strides %d and %d", ErrShape, images, xStride, cStride)
	}
	im := c.B.Im2col
	if images > 1 {
		if im == nil || im.rowOff != nil {
			return fmt.Errorf("%w: images of a product whose B is not an im2col operand", ErrShape)
		}
		last := images - 1
		if need := last*xStride + im.C*im.In[0]*im.In[1]*im.In[2]; len(im.X) < need {
			return fmt.Errorf("%w: %d images %d apart need %d image elements, have %d", ErrShape, images, xStride, need, len(im.X))
		}
		if c.M > 0 && c.N > 0 {
			if need := last*cStride + (c.M-1)*c.LDC + c.N; len(c.C) < need {
				return fmt.Errorf("%w: %d images %d apart need %d elements of C, have %d", ErrShape, images, cStride, need, len(c.C))
			}
		}
	}
	threads := runtime.GOMAXPROCS(0)
	if g, ok := gridGeometry(c); ok {
		g.images, g.xStride, g.cStride = images, xStride, cStride
		if gridGemm(c, g, threads) {
			return nil
		}
	}
	// Image by image on the caller's operand (no copy of it escapes).
	cBase := c.C
	var xBase []float32
	if images > 1 { // then im is an Im2col operand (checked above)
		xBase = im.X
	}
	for i := range images {
		if i > 0 {
			c.C, im.X = cBase[i*cStride:], xBase[i*xStride:]
		}
		run(c, best, threads)
	}
	if images > 1 {
		c.C, im.X = cBase, xBase
	}
	return nil
}

// grid is the layout of a grid convolution.
type grid struct {
	sh, sw int // strides: phase planes per channel sh·sw
	hq, lq int // phase plane rows and columns
	n      int // product columns on the grid for one image: (OH-1)·Lq + OW
	// images side by side: a plane row holds row y of every image's
	// plane, Lq columns each, so the grid's rows are images·Lq wide and
	// image i's columns of a row start i·Lq in.
	images, xStride, cStride int
}

// gridGeometry returns c's grid layout, and whether the grid path takes
// it: a float32 2-D convolution past smallWork whose grid wastes less
// than half again the columns, with a bias (if any) per row.
func gridGeometry(c *Call) (grid, bool) {
	im := c.B.Im2col
	if !gridConv || im == nil || im.rowOff != nil || c.A.Kind != F32 || c.work() <= gridWork {
		return grid{}, false
	}
	if im.In[0] != 1 || im.K[0] != 1 || im.Out[0] != 1 || (c.Epi.Bias != nil && !c.Epi.BiasPerRow) {
		return grid{}, false
	}
	sh, sw := im.Stride[1], im.Stride[2]
	if sh > 4 || sw > 4 {
		return grid{}, false
	}
	oh, ow := im.Out[1], im.Out[2]
	hNeed := (oh-1)*sh + (im.K[1]-1)*im.Dil[1] + 1
	wNeed := (ow-1)*sw + (im.K[2]-1)*im.Dil[2] + 1
	g := grid{sh: sh, sw: sw, hq: (hNeed + sh - 1) / sh, lq: (wNeed + sw - 1) / sw}
	g.n = (oh-1)*g.lq + ow
	if 2*g.n > 3*oh*ow {
		return grid{}, false
	}
	return g, true
}

// gridGemm computes c (g.images images) on the grid g (see the top of
// the file), or reports false without touching C when the planes are
// too large for 32-bit offsets.
func gridGemm(c *Call, g grid, threads int) bool {
	im := c.B.Im2col
	wq := g.images * g.lq // a plane row: every image's
	pq := g.hq * wq
	planes := im.C * g.sh * g.sw
	if planes*pq+gridSlack >= 1<<31 {
		return false
	}
	b := getGrid()
	defer putGrid(b)
	// The product's columns: output (oy, ox) of image i is column
	// oy·wq + i·Lq + ox.
	oh, ow := im.Out[1], im.Out[2]
	n := (oh-1)*wq + (g.images-1)*g.lq + ow
	b.plane = grow(b.plane, planes*pq+gridSlack)
	b.out = grow(b.out, c.M*n)
	if cap(b.off) < c.K {
		b.off = make([]int32, c.K)
	}
	b.off = b.off[:c.K]
	fillPlanes(b.plane, im, g)
	// Tap (r, s) of channel 0 reads plane (r·dh mod sh, s·dw mod sw)
	// from [r·dh/sh][s·dw/sw] on; channel c's planes follow c·sh·sw
	// planes (of every image) later.
	taps := im.K[1] * im.K[2]
	p := 0
	for r := range im.K[1] {
		ty := r * im.Dil[1]
		for s := range im.K[2] {
			tx := s * im.Dil[2]
			b.off[p] = int32(((ty%g.sh)*g.sw+tx%g.sw)*pq + ty/g.sh*wq + tx/g.sw)
			p++
		}
	}
	for ch := 1; ch < im.C; ch++ {
		step := int32(ch * g.sh * g.sw * pq)
		for t, o := range b.off[:taps] {
			b.off[ch*taps+t] = o + step
		}
	}
	b.im = Im2col{X: b.plane, rowOff: b.off, gridN: n, slack: gridSlack}
	gc := Call{M: c.M, N: n, K: c.K, Alpha: c.Alpha, Beta: c.Beta, A: c.A,
		B: Matrix{Im2col: &b.im}, C: b.out, LDC: n}
	if gc.validate() != nil { // not reached: the layout above fits
		return false
	}
	if c.Beta != 0 {
		for img := range g.images {
			cc := c.C[img*g.cStride:]
			for i := range c.M {
				for oy := range oh {
					copy(b.out[i*n+oy*wq+img*g.lq:][:ow], cc[i*c.LDC+oy*ow:])
				}
			}
		}
	}
	run(&gc, best, threads)
	// Compact the grid into C, adding a bias on the way (the float32 add
	// the epilogue would make), then the activation.
	ep := c.Epi
	bias := ep.Bias
	ep.Bias = nil
	for img := range g.images {
		cc := c.C[img*g.cStride:]
		for i := range c.M {
			dst := cc[i*c.LDC:][:c.N]
			src := b.out[i*n+img*g.lq:]
			if bias == nil {
				CopyRows(dst, ow, src, wq, oh, ow)
			} else {
				CopyRowsAdd(dst, ow, src, wq, oh, ow, bias[i])
			}
		}
		ep.Apply(cc, c.LDC, c.M, c.N)
	}
	b.im = Im2col{}
	return true
}

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// fillPlanes writes the images as g's phase planes: plane (c, py, px),
// (c·sh+py)·sw+px planes in, holds at [y][m·Lq+i] image m's element at
// row y·sh+py−PadT, column i·sw+px−PadL, zero outside it. The planes are cleared at once, then each image row that
// lands inside them is dealt out to its sw plane rows.
func fillPlanes(dst []float32, im *Im2col, g grid) {
	clear(dst)
	h, w := im.In[1], im.In[2]
	pt, pl := im.Pad[1], im.Pad[2]
	sh, sw, hq, lq := g.sh, g.sw, g.hq, g.lq
	wq := g.images * lq // a plane row
	pq := hq * wq
	pxStep := pq // from plane px to px+1
	// Image columns [0, x1) land inside the planes (padded column
	// ix+pl < sw·lq).
	x1 := min(w, sw*lq-pl)
	if x1 <= 0 {
		return
	}
	// Image row 0 is padded row pt: plane row y0 of phase py0; the rows
	// after it step through the phases (no division per row).
	py0, y0 := pt%sh, pt/sh
	px0, i0 := pl%sw, pl/sw
	for img := range g.images {
		x := im.X[img*g.xStride:]
		for ch := range im.C {
			plane := x[ch*h*w : (ch+1)*h*w]
			if sh == 1 && sw == 1 { // the rows land in consecutive plane rows
				if rows := min(h, hq-pt); rows > 0 {
					CopyRows(dst[ch*pq+pt*wq+img*lq+pl:], wq, plane, w, rows, x1)
				}
				continue
			}
			py, y := py0, y0
			for iy := range h {
				if iy > 0 {
					if py++; py == sh {
						py, y = 0, y+1
					}
				}
				if y >= hq {
					break
				}
				src := plane[iy*w : iy*w+x1]
				base := ((ch*sh+py)*sw)*pq + y*wq + img*lq
				switch sw {
				case 1:
					copy(dst[base+pl:][:len(src)], src)
				case 2:
					// Padded column t = ix+pl goes to plane t%2 at t/2.
					r0 := dst[base:][:lq]
					r1 := dst[base+pxStep:][:lq]
					t := pl
					k := 0
					if t%2 == 1 { // the first column goes to plane 1
						r1[t/2] = src[0]
						k, t = 1, t+1
					}
					for ; k+1 < len(src); k, t = k+2, t+2 {
						r0[t/2] = src[k]
						r1[t/2] = src[k+1]
					}
					if k < len(src) {
						r0[t/2] = src[k]
					}
				default:
					px, i := px0, i0
					for _, v := range src {
						dst[base+px*pxStep+i] = v
						if px++; px == sw {
							px, i = 0, i+1
						}
					}
				}
			}
		}
	}
}

// gridSlack is how far the phase planes' buffer extends past the last
// plane, so that a partial panel is still packed 32 floats a row.
const gridSlack = 32

// packOff is pack for a grid operand: row p of the matrix is
// X[rowOff[p]:][:gridN]. Past cols a panel holds whatever follows in X
// when X has the slack to read a whole panel row (they only reach the
// product's columns past cols, which the kernels never store), else zeros.
func (im *Im2col) packOff(d []float32, p0, kb, j0, cols, nr int) {
	if nr == 32 && kb > 0 && (cols == 32 || im.slack >= 32-cols) {
		// The last row's 32 floats end inside X (checkOff: every row's
		// gridN columns do, and the slack covers the rest).
		_ = d[kb*32-1]
		_ = im.rowOff[p0+kb-1]
		packRowsIdx32(&d[0], &im.X[j0], &im.rowOff[p0], kb)
		return
	}
	for p := range kb {
		dp := d[p*nr : p*nr+nr]
		o := int(im.rowOff[p0+p]) + j0
		copy(dp[:cols], im.X[o:o+cols])
		clear(dp[cols:])
	}
}

// checkOff checks a grid operand against a rows×cols call: every row's
// gridN elements lie inside X.
func (im *Im2col) checkOff(rows, cols int) error {
	if rows != len(im.rowOff) || cols != im.gridN {
		return fmt.Errorf("%w: grid operand of %d rows of %d, the call wants %d×%d", ErrShape, len(im.rowOff), im.gridN, rows, cols)
	}
	if im.slack < 0 || im.slack > len(im.X) {
		return fmt.Errorf("%w: grid slack %d of %d elements", ErrShape, im.slack, len(im.X))
	}
	for _, o := range im.rowOff {
		if o < 0 || int(o)+cols > len(im.X)-im.slack {
			return fmt.Errorf("%w: grid row at %d of %d elements overruns %d", ErrShape, o, cols, len(im.X))
		}
	}
	return nil
}
