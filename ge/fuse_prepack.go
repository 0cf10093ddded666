package ge

import sg "github.com/ascend-go/cann/internal/sgemm"

// prepack packs the constant float32 B [K, N] (or [N, K] transposed) of a
// MatMul or FusedMatMul once, for the panel width of this machine's GEMM
// kernel. The product is bit-identical; a machine whose kernel has
// another width re-packs from the packed copy at run time.
func (f *fuser) prepack() {
	if f.cfg.noPrepack {
		return
	}
	nr := sg.PanelWidth()
	for _, n := range f.live {
		if (n.op != OpMatMul && n.op != OpFusedMatMul) || !f.plain(n) || !isF32(n.outs[0]) ||
			n.attrs.Int(AttrPackedB, 0) != 0 || len(n.inputs) < 2 {
			continue
		}
		a, b := n.inputs[0], n.inputs[1]
		if !isF32(a) || len(a.desc.Dims) < 2 || len(b.desc.Dims) != 2 {
			continue
		}
		v := constF32(b)
		if v == nil {
			continue
		}
		tb := n.attrs.Bool(AttrTransposeB)
		k, cols := int(b.desc.Dims[0]), int(b.desc.Dims[1])
		nn := cols
		if tb {
			k, nn = cols, k
		}
		ad := a.desc.Dims
		m := ad[len(ad)-2]
		if n.attrs.Bool(AttrTransposeA) {
			m = ad[len(ad)-1]
		}
		if sg.Unpacked(int(m), nn, k) {
			continue // a product this small never packs B
		}
		w := make([]float32, len(v))
		for i, x := range v {
			w[i] = float32(x)
		}
		packed := make([]float32, sg.PackedSize(k, nn, nr))
		if sg.PackB(packed, sg.Matrix{F32: w, Stride: cols, Trans: tb}, k, nn, nr) != nil {
			continue
		}
		pv := make([]float64, len(packed))
		for i, x := range packed {
			pv[i] = float64(x)
		}
		pc := f.newConst(b.node, b.node.name+"_packed", []int64{int64(len(pv))}, pv)
		attrs := n.attrs.Clone()
		delete(attrs, AttrTransposeB)
		attrs[AttrPackedB], attrs[AttrPackedN] = IntAttr(int64(nr)), IntAttr(int64(nn))
		inputs := append([]*Tensor{a, pc}, n.inputs[2:]...)
		f.morph(n, OpFusedMatMul, inputs, attrs)
	}
}
