package ge

import sg "github.com/ascend-go/cann/internal/sgemm"

// Direct convolution for groups of one input channel (depthwise
// convolution, MobileNet's 3×3 group=C layers, with any channel
// multiplier). Through the implicit GEMM such a group is a 1-row product
// with a K of 9, all packing and no arithmetic; here each tap adds its
// weight times a shifted input row to the output rows it reaches, the
// valid output range of every tap computed once so the inner loop has no
// bounds tests. Each output accumulates its taps in float32 in kernel
// order, as the reference does.

// tapRange returns the indices o in [0, n) whose source o·s + off lies in
// [0, limit).
func tapRange(n, limit, s, off int) (lo, hi int) {
	if off < 0 {
		lo = (-off + s - 1) / s
	}
	if limit-1-off < 0 {
		return lo, lo
	}
	hi = min(n, (limit-1-off)/s+1)
	return lo, max(hi, lo)
}

// depthwiseConv computes out (m planes of w.out) from x (groups planes of
// w.in, one per group) and wt ([m, 1, k...]): output channel oc reads
// input plane oc/(m/groups). out is overwritten. Each output row gets its
// taps one kernel row at a time: inside the row's interior, where every
// tap of the kernel row reads the input, the taps of the row are summed
// together (3 unrolled for the common 3-wide kernel); at the edges each
// tap adds over its own valid range.
func depthwiseConv(w *window, groups, m int, x, wt, out []float32) {
	mg := m / groups
	pin, pout, ks := w.inSize(), w.outSize(), w.kSize()
	kw, s2, d2, pb2 := w.k[2], w.s[2], w.d[2], w.pb[2]
	// The interior [a, b) of an output row: all kw taps inside the input.
	a, _ := tapRange(w.out[2], w.in[2], s2, -pb2)
	_, b := tapRange(w.out[2], w.in[2], s2, (kw-1)*d2-pb2)
	for oc := range m {
		xp := x[(oc/mg)*pin : (oc/mg+1)*pin]
		op := out[oc*pout : (oc+1)*pout]
		wk := wt[oc*ks : (oc+1)*ks]
		clear(op)
		for k0 := range w.k[0] {
			lo0, hi0 := tapRange(w.out[0], w.in[0], w.s[0], k0*w.d[0]-w.pb[0])
			for k1 := range w.k[1] {
				lo1, hi1 := tapRange(w.out[1], w.in[1], w.s[1], k1*w.d[1]-w.pb[1])
				wr := wk[(k0*w.k[1]+k1)*kw : (k0*w.k[1]+k1+1)*kw]
				for o0 := lo0; o0 < hi0; o0++ {
					i0 := o0*w.s[0] + k0*w.d[0] - w.pb[0]
					for o1 := lo1; o1 < hi1; o1++ {
						i1 := o1*w.s[1] + k1*w.d[1] - w.pb[1]
						orow := op[(o0*w.out[1]+o1)*w.out[2] : (o0*w.out[1]+o1+1)*w.out[2]]
						xrow := xp[(i0*w.in[1]+i1)*w.in[2] : (i0*w.in[1]+i1+1)*w.in[2]]
						dwRow(orow, xrow, wr, a, b, s2, d2, pb2, w.in[2])
					}
				}
			}
		}
	}
}

// dwRow adds one kernel row's taps wr into an output row from one input
// row (see depthwiseConv; a, b: the interior).
func dwRow(orow, xrow, wr []float32, a, b, s2, d2, pb2, in2 int) {
	kw := len(wr)
	if a >= b {
		for k2, wv := range wr {
			off := k2*d2 - pb2
			lo, hi := tapRange(len(orow), in2, s2, off)
			for o := lo; o < hi; o++ {
				orow[o] += wv * xrow[o*s2+off]
			}
		}
		return
	}
	// Edges, tap by tap.
	for k2, wv := range wr {
		off := k2*d2 - pb2
		lo, hi := tapRange(len(orow), in2, s2, off)
		for o := lo; o < min(a, hi); o++ {
			orow[o] += wv * xrow[o*s2+off]
		}
		for o := max(b, lo); o < hi; o++ {
			orow[o] += wv * xrow[o*s2+off]
		}
	}
	// Interior, the kernel row's taps together.
	base := a*s2 - pb2
	if kw == 3 && s2 == 1 {
		w0, w1, w2 := wr[0], wr[1], wr[2]
		o := orow[a:b]
		x0 := xrow[base : base+len(o)]
		x1 := xrow[base+d2 : base+d2+len(o)]
		x2 := xrow[base+2*d2 : base+2*d2+len(o)]
		for i := range o {
			o[i] += w0*x0[i] + w1*x1[i] + w2*x2[i]
		}
		return
	}
	for o := a; o < b; o++ {
		var acc float32
		xi := xrow[o*s2-pb2:]
		for k2, wv := range wr {
			acc += wv * xi[k2*d2]
		}
		orow[o] += acc
	}
}

// depthwise2D is depthwiseConv for one or two spatial dims (w.k[0] = 1,
// one plane deep). Each input plane is first copied into a zero-padded
// plane (pad is scratch of dwPadSize floats), so no tap ever needs a
// bounds test. With stride 1 the output is computed at the padded width
// over the whole plane in one vector pass over all taps (sgemm.Taps) —
// every output (o1, o2) reads padded element (o1+k1·d1)·Wp + o2 + k2·d2,
// linear in o1·Wp + o2 — into tmp (dwTmpSize floats), and the rows are
// then compacted; otherwise row by row.
func depthwise2D(w *window, groups, m int, x, wt, out, pad, tmp []float32) {
	mg := m / groups
	pin, pout, ks := w.inSize(), w.outSize(), w.kSize()
	H, W, OH, OW := w.in[1], w.in[2], w.out[1], w.out[2]
	hp, wp := dwPadDims(w)
	kh, kw := w.k[1], w.k[2]
	s1, s2, d1, d2 := w.s[1], w.s[2], w.d[1], w.d[2]
	pad = pad[:hp*wp]
	clear(pad)
	// Tap (k1, k2) of a stride-1 pass reads the padded plane from
	// k1·d1·Wp + k2·d2 on.
	var offBuf [dwMaxTaps]int32
	off := offBuf[:0]
	pass := s1 == 1 && s2 == 1
	if pass && kh*kw <= dwMaxTaps && hp*wp < 1<<31 { // offsets fit in int32
		for k1 := range kh {
			for k2 := range kw {
				off = append(off, int32(k1*d1*wp+k2*d2))
			}
		}
	}
	last := -1
	for oc := range m {
		if ic := oc / mg; ic != last {
			last = ic
			xp := x[ic*pin : (ic+1)*pin]
			sg.CopyRows(pad[w.pb[1]*wp+w.pb[2]:], wp, xp, W, H, W)
		}
		op := out[oc*pout : (oc+1)*pout]
		wk := wt[oc*ks : (oc+1)*ks]
		if pass {
			l := (OH-1)*wp + OW
			t := tmp[:l]
			if len(off) > 0 {
				sg.Taps(t, pad, off, wk)
			} else { // a kernel of more than dwMaxTaps: one pass per tap, the same bits
				clear(t)
				for k1 := range kh {
					for k2, wv := range wk[k1*kw : (k1+1)*kw] {
						o := k1*d1*wp + k2*d2
						sg.Axpy(t, pad[o:o+l], wv)
					}
				}
			}
			sg.CopyRows(op, OW, t, wp, OH, OW)
			continue
		}
		for o1 := range OH {
			orow := op[o1*OW : (o1+1)*OW]
			clear(orow)
			for k1 := range kh {
				wr := wk[k1*kw : (k1+1)*kw]
				prow := pad[(o1*s1+k1*d1)*wp:]
				for o2 := range orow {
					xi := prow[o2*s2:]
					var acc float32
					for k2, wv := range wr {
						acc += wv * xi[k2*d2]
					}
					orow[o2] += acc
				}
			}
		}
	}
}

// dwMaxTaps bounds the kernels whose stride-1 pass takes all taps at
// once (8×8 and below; larger ones make one Axpy pass per tap).
const dwMaxTaps = 64

// dwPadDims is the padded plane depthwise2D reads: the input plus its
// pads, and at least as far as the last window reaches.
func dwPadDims(w *window) (hp, wp int) {
	hp = max(w.in[1]+w.pb[1]+w.pe[1], (w.out[1]-1)*w.s[1]+w.effK(1))
	wp = max(w.in[2]+w.pb[2]+w.pe[2], (w.out[2]-1)*w.s[2]+w.effK(2))
	return hp, wp
}

// dwTmpSize is the stride-1 pass's buffer: output rows at padded width.
func dwTmpSize(w *window) int {
	_, wp := dwPadDims(w)
	return w.out[1] * wp
}
