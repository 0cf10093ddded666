package ge

import "math"

// fuseScale turns MatMul → Mul(constant scalar) into FusedMatMul with the
// scale as the GEMM's alpha (attention's 1/√d, Gemm's alpha). Each K block
// of KC is scaled as it is folded into C, so a product with K ≤ KC is
// bit-identical to the unfused pair and a longer one is within a rounding
// per block.
func (f *fuser) fuseScale() {
	for _, n := range f.live {
		if n.op != OpMul || !f.plain(n) || !isF32(n.outs[0]) {
			continue
		}
		for side := range 2 {
			t, c := n.inputs[side], n.inputs[1-side]
			p := t.node
			v := constF32(c)
			if p.op != OpMatMul || !f.plain(p) || f.sole(t) != n || len(v) != 1 || !dimsEqual(t.desc.Dims, n.outs[0].desc.Dims) {
				continue
			}
			a := p.attrs.Clone()
			a[AttrScale] = FloatAttr(v[0])
			if f.morph(n, OpFusedMatMul, []*Tensor{p.inputs[0], p.inputs[1]}, a) {
				break
			}
		}
	}
}

// fuseBias turns MatMul → Add(bias) into FusedMatMul when the bias
// broadcasts along the rows: dims [..., 1, N] or [N]; and Conv without a
// bias → Add of a per-channel bias ([M, 1, 1] as exporters write it)
// into Conv with that bias.
func (f *fuser) fuseBias() {
	for _, n := range f.live {
		if n.op != OpAdd || !f.plain(n) || !isF32(n.outs[0]) {
			continue
		}
		for side := range 2 {
			t, b := n.inputs[side], n.inputs[1-side]
			p := t.node
			noAct := p.attrs.Int(AttrActivation, 0) == 0
			mm := p.op == OpMatMul || (p.op == OpFusedMatMul && len(p.inputs) == 2 && noAct && p.attrs.Int(AttrPackedB, 0) == 0)
			conv := (p.op == OpConv || p.op == OpFusedConv) && len(p.inputs) == 2 && noAct
			if !(mm || conv) || !f.plain(p) || f.sole(t) != n || !isF32(b) || !dimsEqual(t.desc.Dims, n.outs[0].desc.Dims) {
				continue
			}
			d := t.desc.Dims
			if conv {
				// A channel bias [M, 1, ...] (or with leading 1s) is the
				// Conv's own bias.
				if !channelBias(b.desc.Dims, d) {
					continue
				}
				if len(b.desc.Dims) != 1 {
					r := f.g.addOp(OpReshape, []*Tensor{b}, Attrs{AttrShape: IntsAttr([]int64{d[1]})})
					f.anchor[r] = b.node
					b = r.outs[0]
				}
				if f.morph(n, p.op, []*Tensor{p.inputs[0], p.inputs[1], b}, p.attrs.Clone()) {
					break
				}
				continue
			}
			nn := d[len(d)-1]
			if !rowBias(b.desc.Dims, nn) {
				continue
			}
			if len(b.desc.Dims) != 1 {
				r := f.g.addOp(OpReshape, []*Tensor{b}, Attrs{AttrShape: IntsAttr([]int64{nn})})
				f.anchor[r] = b.node
				b = r.outs[0]
			}
			if f.morph(n, OpFusedMatMul, []*Tensor{p.inputs[0], p.inputs[1], b}, p.attrs.Clone()) {
				break
			}
		}
	}
}

// channelBias reports whether dims broadcast against an [N, M, ...]
// output as one value per channel M: right-aligned, the dim under M is M
// and every other dim is 1.
func channelBias(dims, out []int64) bool {
	at := 1 - (len(out) - len(dims)) // index of the dim under M
	if at < 0 || len(dims) > len(out) {
		return false
	}
	for i, v := range dims {
		if (i == at && v != out[1]) || (i != at && v != 1) {
			return false
		}
	}
	return true
}

// rowBias reports whether dims are [N] or [1, ..., 1, N].
func rowBias(dims []int64, n int64) bool {
	if len(dims) == 0 || dims[len(dims)-1] != n {
		return false
	}
	for _, d := range dims[:len(dims)-1] {
		if d != 1 {
			return false
		}
	}
	return true
}

// foldBatchNorm folds an inference BatchNorm into the Conv, ConvTranspose
// or 2-D MatMul before it: with s = scale/√(var+eps), W' = W·s per output channel and
// b' = (b − mean)·s + bias. The weights, the layer's bias and the
// BatchNorm's parameters must all be constants.
func (f *fuser) foldBatchNorm() {
	for _, n := range f.live {
		if n.op != OpBatchNorm || !f.plain(n) || !isF32(n.outs[0]) {
			continue
		}
		t := n.inputs[0]
		p := t.node
		if !f.plain(p) || f.sole(t) != n || p.attrs.Int(AttrActivation, 0) != 0 {
			continue
		}
		var prm [4][]float64
		for i := range prm {
			if prm[i] = constF32(n.inputs[1+i]); prm[i] == nil {
				break
			}
		}
		if prm[3] == nil {
			continue
		}
		eps := n.attrs.Float(AttrEpsilon, 1e-5)
		ch := len(prm[0])
		s, shift := make([]float64, ch), make([]float64, ch)
		for c := range ch {
			s[c] = prm[0][c] / math.Sqrt(prm[3][c]+eps)
			shift[c] = prm[1][c] - prm[2][c]*s[c]
		}
		var w []float64
		if len(p.inputs) >= 2 {
			w = constF32(p.inputs[1])
		}
		if w == nil {
			continue
		}
		bias := make([]float64, ch)
		if len(p.inputs) == 3 {
			b := constF32(p.inputs[2])
			if len(b) != ch {
				continue
			}
			copy(bias, b)
		}
		wd := p.inputs[1].desc.Dims
		var op OpType
		switch p.op {
		case OpConv, OpFusedConv:
			// W is [M, C/groups, k...]: channel m owns a contiguous run.
			per := len(w) / ch
			for i := range w {
				w[i] *= s[i/per]
			}
			op = p.op
		case OpConvTranspose:
			// W is [C, M/groups, k...]: input channel c of group c/(C/g)
			// feeds output channels (c/(C/g))·(M/g) + j.
			groups := int(p.attrs.Int(AttrGroups, 1))
			if groups < 1 || int(wd[0])%groups != 0 || ch%groups != 0 {
				continue
			}
			cg, mg := int(wd[0])/groups, ch/groups
			ks := len(w) / (int(wd[0]) * mg)
			for i := range w {
				c, j := i/(mg*ks), i/ks%mg
				w[i] *= s[c/cg*mg+j]
			}
			op = p.op
		case OpMatMul, OpFusedMatMul:
			// Only [M, N] outputs, whose channel dim 1 is the column.
			if len(t.desc.Dims) != 2 || len(wd) != 2 {
				continue
			}
			cols := int(wd[1])
			tb := p.attrs.Bool(AttrTransposeB)
			for i := range w {
				if tb { // W is [N, K]
					w[i] *= s[i/cols]
				} else { // W is [K, N]
					w[i] *= s[i%cols]
				}
			}
			op = OpFusedMatMul
		default:
			continue
		}
		for c := range ch {
			bias[c] = bias[c]*s[c] + shift[c]
		}
		wn := p.inputs[1].node
		wc := f.newConst(wn, wn.name+"_bn_folded", wd, w)
		bc := f.newConst(wn, n.name+"_bn_bias", []int64{int64(ch)}, bias)
		f.morph(n, op, []*Tensor{p.inputs[0], wc, bc}, p.attrs.Clone())
	}
}

// fuseHardSwish turns x · HardSigmoid(x) with alpha 1/6 and beta 1/2 (how
// exporters before opset 14 write HardSwish) into HardSwish(x), which the
// next pass can then fuse into a Conv or MatMul. The unfused pair rounds
// twice, HardSwish once: they differ by at most a unit in the last place.
func (f *fuser) fuseHardSwish() {
	for _, n := range f.live {
		if n.op != OpMul || !f.plain(n) || !isF32(n.outs[0]) {
			continue
		}
		for side := range 2 {
			x, h := n.inputs[side], n.inputs[1-side]
			p := h.node
			if p.op != OpHardSigmoid || !f.plain(p) || f.sole(h) != n || p.inputs[0] != x ||
				math.Abs(p.attrs.Float(AttrAlpha, 0.2)-1.0/6) > 1e-7 || p.attrs.Float(AttrBeta, 0.5) != 0.5 {
				continue
			}
			if f.morph(n, OpHardSwish, []*Tensor{x}, Attrs{}) {
				break
			}
		}
	}
}

// fuseActivation makes an activation after a MatMul or Conv (fused or
// not, without an activation yet) the GEMM's epilogue.
func (f *fuser) fuseActivation() {
	for _, n := range f.live {
		if _, ok := epilogueActs[n.op]; !ok || !f.plain(n) || !isF32(n.outs[0]) {
			continue
		}
		t := n.inputs[0]
		p := t.node
		if !f.plain(p) || f.sole(t) != n || p.attrs.Int(AttrActivation, 0) != 0 {
			continue
		}
		var op OpType
		switch p.op {
		case OpMatMul, OpFusedMatMul:
			op = OpFusedMatMul
		case OpConv, OpFusedConv:
			op = OpFusedConv
		default:
			continue
		}
		a := p.attrs.Clone()
		a[AttrActivation] = IntAttr(int64(n.op))
		for _, k := range []string{AttrAlpha, AttrBeta, AttrMin, AttrMax} {
			if v, ok := n.attrs[k]; ok {
				a[k] = v
			}
		}
		f.morph(n, op, append([]*Tensor(nil), p.inputs...), a)
	}
}
