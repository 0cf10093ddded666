package ge

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
// input plane oc/(m/groups). out is overwritten.
func depthwiseConv(w *window, groups, m int, x, wt, out []float32) {
	mg := m / groups
	pin, pout, ks := w.inSize(), w.outSize(), w.kSize()
	for oc := range m {
		xp := x[(oc/mg)*pin : (oc/mg+1)*pin]
		op := out[oc*pout : (oc+1)*pout]
		wk := wt[oc*ks : (oc+1)*ks]
		clear(op)
		tap := 0
		for k0 := range w.k[0] {
			lo0, hi0 := tapRange(w.out[0], w.in[0], w.s[0], k0*w.d[0]-w.pb[0])
			for k1 := range w.k[1] {
				lo1, hi1 := tapRange(w.out[1], w.in[1], w.s[1], k1*w.d[1]-w.pb[1])
				for k2 := range w.k[2] {
					off2 := k2*w.d[2] - w.pb[2]
					lo2, hi2 := tapRange(w.out[2], w.in[2], w.s[2], off2)
					wv := wk[tap]
					tap++
					if lo2 >= hi2 {
						continue
					}
					for o0 := lo0; o0 < hi0; o0++ {
						i0 := o0*w.s[0] + k0*w.d[0] - w.pb[0]
						for o1 := lo1; o1 < hi1; o1++ {
							i1 := o1*w.s[1] + k1*w.d[1] - w.pb[1]
							orow := op[(o0*w.out[1]+o1)*w.out[2]:][lo2:hi2]
							xrow := xp[(i0*w.in[1]+i1)*w.in[2]:]
							if s2 := w.s[2]; s2 == 1 {
								xr := xrow[lo2+off2 : hi2+off2]
								for i := range orow {
									orow[i] += wv * xr[i]
								}
							} else {
								base := lo2*s2 + off2
								for i := range orow {
									orow[i] += wv * xrow[base+i*s2]
								}
							}
						}
					}
				}
			}
		}
	}
}
