package sgemm

import "github.com/ascend-go/cann/floatx"

// rowSeg returns n elements of stored row r from column c0 as float32: in
// place for float32 data, widened into buf for half data.
func (x *Matrix) rowSeg(buf []float32, r, c0, n int) []float32 {
	off := r*x.Stride + c0
	switch x.Kind {
	case F32:
		return x.F32[off : off+n]
	case F16:
		floatx.DecodeF16(buf[:n], x.Half[2*off:2*(off+n)])
	default:
		floatx.DecodeBF16(buf[:n], x.Half[2*off:2*(off+n)])
	}
	return buf[:n]
}

// packA packs rows [i0,i0+mb) and columns [p0,p0+kb) of op(A) into panels
// of mr rows: dst[ip·mr·kb + p·mr + i]. Rows past mb are zero. buf is
// scratch of at least mr·kb elements for widening half data.
func packA(dst []float32, a *Matrix, i0, mb, p0, kb, mr int, buf []float32) {
	for ip := 0; ip*mr < mb; ip++ {
		d := dst[ip*mr*kb : (ip+1)*mr*kb]
		rows := min(mr, mb-ip*mr)
		if a.Trans { // stored [K,M]: a stored row holds this panel's rows at one p
			for p := range kb {
				seg := a.rowSeg(buf, p0+p, i0+ip*mr, rows)
				dp := d[p*mr : p*mr+mr]
				copy(dp, seg)
				clear(dp[rows:])
			}
			continue
		}
		// Stored [M,K]: interleave the panel's rows.
		var segs [maxNR][]float32
		for i := range rows {
			segs[i] = a.rowSeg(buf[i*kb:(i+1)*kb], i0+ip*mr+i, p0, kb)
		}
		interleave(d, segs[:mr], rows, kb)
	}
}

// interleave writes d[p·w+i] = segs[i][p] for p < kb and i < w = len(segs),
// with zeros for i ≥ rows: one element of each stored row per p, so the
// writes are sequential and each row is read as a stream.
func interleave(d []float32, segs [][]float32, rows, kb int) {
	for i := rows; i < len(segs); i++ {
		segs[i] = zeros[:kb]
	}
	w := len(segs)
	switch w {
	case 12:
		interleave12(d, (*[12][]float32)(segs), kb)
		return
	case 6:
		interleave6(d, (*[6][]float32)(segs), kb)
		return
	}
	for p := range kb {
		dp := d[p*w : p*w+w]
		for i := range dp {
			dp[i] = segs[i][p]
		}
	}
}

// interleave12 and interleave6 are interleave for the AVX-512 and AVX2
// kernels' mr: one row slice per variable, so the loop is loads and stores
// without the generic loop's indirection and bounds checks.
func interleave12(d []float32, segs *[12][]float32, kb int) {
	s0, s1, s2, s3 := segs[0][:kb], segs[1][:kb], segs[2][:kb], segs[3][:kb]
	s4, s5, s6, s7 := segs[4][:kb], segs[5][:kb], segs[6][:kb], segs[7][:kb]
	s8, s9, s10, s11 := segs[8][:kb], segs[9][:kb], segs[10][:kb], segs[11][:kb]
	d = d[:12*kb]
	for p := range kb {
		dp := (*[12]float32)(d[12*p:])
		dp[0], dp[1], dp[2], dp[3] = s0[p], s1[p], s2[p], s3[p]
		dp[4], dp[5], dp[6], dp[7] = s4[p], s5[p], s6[p], s7[p]
		dp[8], dp[9], dp[10], dp[11] = s8[p], s9[p], s10[p], s11[p]
	}
}

func interleave6(d []float32, segs *[6][]float32, kb int) {
	s0, s1, s2, s3, s4, s5 := segs[0][:kb], segs[1][:kb], segs[2][:kb], segs[3][:kb], segs[4][:kb], segs[5][:kb]
	d = d[:6*kb]
	for p := range kb {
		dp := (*[6]float32)(d[6*p:])
		dp[0], dp[1], dp[2], dp[3], dp[4], dp[5] = s0[p], s1[p], s2[p], s3[p], s4[p], s5[p]
	}
}

// maxNR bounds every kernel's mr and nr; zeros pads past a matrix's edge.
const maxNR = 32

var zeros [KC]float32

// packBPanel packs rows [p0,p0+kb) and columns [j0,j0+cols) of op(B) into
// one panel of nr columns: d[p·nr + j]. Columns past cols are zero. buf is
// scratch of at least nr·kb elements for widening half data.
func packBPanel(d []float32, b *Matrix, p0, kb, j0, cols, nr int, buf []float32) {
	if b.Im2col != nil {
		b.Im2col.pack(d, p0, kb, j0, cols, nr)
		return
	}
	if b.PackedNR != 0 {
		b.packFromPacked(d, p0, kb, j0, cols, nr)
		return
	}
	if !b.Trans { // stored [K,N]: a stored row holds the panel's columns at one p
		if b.Kind == F32 && cols == nr && nr == 32 && kb > 0 {
			// A whole AVX-512 panel (nr 32 is only the AVX-512 kernel's).
			_ = d[kb*32-1]
			_ = b.F32[(p0+kb-1)*b.Stride+j0+31]
			packRows32(&d[0], &b.F32[p0*b.Stride+j0], b.Stride, kb)
			return
		}
		for p := range kb {
			seg := b.rowSeg(buf, p0+p, j0, cols)
			dp := d[p*nr : p*nr+nr]
			copy(dp, seg)
			clear(dp[cols:])
		}
		return
	}
	var segs [maxNR][]float32
	for j := range cols {
		segs[j] = b.rowSeg(buf[j*kb:(j+1)*kb], j0+j, p0, kb)
	}
	interleave(d, segs[:nr], cols, kb)
}
