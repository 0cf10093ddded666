package ge

// chainStep describes how node n would join an element-wise chain: which
// input carries the chain's value and which (if any) is the operand.
func (f *fuser) chainStep(n *Node, acc *Tensor) (main int, ok bool) {
	if !f.plain(n) || !isF32(n.outs[0]) {
		return 0, false
	}
	od := n.outs[0].desc.Dims
	switch {
	case chainUnary[n.op] && len(n.inputs) == 1:
		return 0, isF32(n.inputs[0]) && (acc == nil || n.inputs[0] == acc)
	case chainBinary[n.op] && len(n.inputs) == 2:
		for i := range 2 {
			x, y := n.inputs[i], n.inputs[1-i]
			if (acc == nil || x == acc) && y != x && isF32(x) && isF32(y) &&
				dimsEqual(x.desc.Dims, od) && trailingDims(y.desc.Dims, od) {
				return i, true
			}
		}
	}
	return 0, false
}

// next returns the node that continues a chain after n, or nil.
func (f *fuser) next(n *Node) *Node {
	u := f.sole(n.outs[0])
	if u == nil {
		return nil
	}
	if _, ok := f.chainStep(u, n.outs[0]); !ok {
		return nil
	}
	return u
}

// fuseChains turns each maximal run of two or more element-wise nodes,
// each the only reader of the one before, into one ElemChain.
func (f *fuser) fuseChains() {
	cont := map[*Node]bool{}
	for _, n := range f.live {
		if _, ok := f.chainStep(n, nil); ok {
			if u := f.next(n); u != nil {
				cont[u] = true
			}
		}
	}
	for _, h := range f.live {
		main, ok := f.chainStep(h, nil)
		if !ok || cont[h] {
			continue
		}
		chain := []*Node{h}
		for u := f.next(h); u != nil && len(chain) < maxChain; u = f.next(u) {
			chain = append(chain, u)
		}
		if len(chain) < 2 {
			continue
		}
		x0 := h.inputs[main]
		inputs := []*Tensor{x0}
		index := map[*Tensor]int{x0: 0}
		var ops, args, swap []int64
		acc := (*Tensor)(nil)
		for _, n := range chain {
			m, _ := f.chainStep(n, acc)
			acc = n.outs[0]
			ops = append(ops, int64(n.op))
			if len(n.inputs) == 1 {
				args, swap = append(args, -1), append(swap, 0)
				continue
			}
			y := n.inputs[1-m]
			k, ok := index[y]
			if !ok {
				k = len(inputs)
				index[y] = k
				inputs = append(inputs, y)
			}
			args, swap = append(args, int64(k)), append(swap, int64(m))
		}
		last := chain[len(chain)-1]
		f.morph(last, OpElemChain, inputs, Attrs{AttrChainOps: IntsAttr(ops), AttrChainArgs: IntsAttr(args), AttrChainSwap: IntsAttr(swap)})
	}
}
