package sgemm

import "fmt"

// Im2col is a B operand that is not stored: the receptive fields of an
// image, as im2col would lay them out (implicit GEMM). Row p of op(B) is
// (channel, kernel position) = (c, k0, k1, k2), column j the output
// position (o0, o1, o2); the element is X[c][i0][i1][i2] with
// i = o·Stride + k·Dil − Pad in each dim, 0 outside the image. Packing
// reads the image directly into the kernel's panels, so the K×N matrix
// is never written out. Unused leading spatial dims have size 1 (In, K,
// Out 1; Stride, Dil 1; Pad 0).
type Im2col struct {
	X        []float32 // C channels of In[0]·In[1]·In[2] elements
	C        int
	In, Out  [3]int
	K        [3]int
	Stride   [3]int
	Dil, Pad [3]int
	// rowOff, set by the grid path only (convgrid.go), makes the operand
	// a matrix of len(rowOff) rows of gridN columns, row p X[rowOff[p]:],
	// with the last slack elements of X past every row.
	rowOff []int32
	gridN  int
	slack  int
}

func (im *Im2col) rows() int { return im.C * im.K[0] * im.K[1] * im.K[2] }
func (im *Im2col) cols() int { return im.Out[0] * im.Out[1] * im.Out[2] }

func (im *Im2col) check(rows, cols int) error {
	if im.rowOff != nil {
		return im.checkOff(rows, cols)
	}
	for i := range 3 {
		if im.In[i] < 1 || im.Out[i] < 1 || im.K[i] < 1 || im.Stride[i] < 1 || im.Dil[i] < 1 || im.Pad[i] < 0 {
			return fmt.Errorf("%w: im2col geometry %+v", ErrShape, *im)
		}
	}
	if im.C < 0 || rows != im.rows() || cols != im.cols() {
		return fmt.Errorf("%w: im2col of %d channels, kernel %v, output %v is %d×%d, the call wants %d×%d",
			ErrShape, im.C, im.K, im.Out, im.rows(), im.cols(), rows, cols)
	}
	if need := im.C * im.In[0] * im.In[1] * im.In[2]; len(im.X) < need {
		return fmt.Errorf("%w: im2col image holds %d elements, needs %d", ErrShape, len(im.X), need)
	}
	return nil
}

// pack writes rows [p0,p0+kb) and columns [j0,j0+cols) of the virtual
// matrix into one panel of nr columns, d[p·nr + j], zero past cols: the
// values explicit im2col and packBPanel would write.
func (im *Im2col) pack(d []float32, p0, kb, j0, cols, nr int) {
	if im.rowOff != nil {
		im.packOff(d, p0, kb, j0, cols, nr)
		return
	}
	k1n, k2n := im.K[1], im.K[2]
	in0, in1, in2 := im.In[0], im.In[1], im.In[2]
	o1n, o2n := im.Out[1], im.Out[2]
	s0, s1, s2 := im.Stride[0], im.Stride[1], im.Stride[2]
	plane := in0 * in1 * in2
	// The output position of column j0.
	c2 := j0 % o2n
	c1 := (j0 / o2n) % o1n
	c0 := j0 / (o2n * o1n)
	// The (channel, kernel position) of row p0, then stepped row by row
	// (no divisions per row).
	q2 := p0 % k2n
	t := p0 / k2n
	q1 := t % k1n
	t /= k1n
	q0 := t % im.K[0]
	ch := t / im.K[0]
	for p := range kb {
		if p > 0 {
			if q2++; q2 == k2n {
				q2 = 0
				if q1++; q1 == k1n {
					q1 = 0
					if q0++; q0 == im.K[0] {
						q0 = 0
						ch++
					}
				}
			}
		}
		img := im.X[ch*plane : (ch+1)*plane]
		b0 := q0*im.Dil[0] - im.Pad[0]
		b1 := q1*im.Dil[1] - im.Pad[1]
		b2 := q2*im.Dil[2] - im.Pad[2]
		dp := d[p*nr : p*nr+nr]
		a0, a1, a2 := c0, c1, c2
		for j := 0; j < cols; {
			i0, i1 := a0*s0+b0, a1*s1+b1
			// The run of columns left in this output row (o2 varies).
			run := min(o2n-a2, cols-j)
			row := dp[j : j+run]
			if uint(i0) >= uint(in0) || uint(i1) >= uint(in1) {
				clear(row)
			} else {
				src := img[(i0*in1+i1)*in2:][:in2]
				// Positions x of the run read src[i2 + x·s2]; those in
				// [lo, hi) are inside the row, the rest are padding.
				i2 := a2*s2 + b2
				lo, hi := 0, run
				if i2 < 0 {
					lo = min(run, (-i2+s2-1)/s2)
				}
				if last := i2 + (run-1)*s2; last >= in2 {
					hi = max(lo, min(run, (in2-i2+s2-1)/s2))
				}
				if lo > 0 {
					clear(row[:lo])
				}
				if lo >= hi {
					// all padding
				} else if s2 == 1 {
					copy(row[lo:hi], src[i2+lo:])
				} else {
					for x, at := lo, i2+lo*s2; x < hi; x, at = x+1, at+s2 {
						row[x] = src[at]
					}
				}
				if hi < run {
					clear(row[hi:])
				}
			}
			j += run
			a2 += run
			if a2 == o2n {
				a2 = 0
				if a1++; a1 == o1n {
					a1 = 0
					a0++
				}
			}
		}
		if cols < nr {
			clear(dp[cols:])
		}
	}
}
