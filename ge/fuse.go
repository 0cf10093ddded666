package ge

import (
	"encoding/binary"
	"math"

	"github.com/ascend-go/cann/acl"
	sg "github.com/ascend-go/cann/internal/sgemm"
)

// The fusion pass: graph rewrites Compile applies before everything else,
// the work ONNX Runtime does at its default level (ORT_ENABLE_BASIC and
// the common extended fusions), on a copy of the graph:
//
//   - Identity, a Reshape to the same dims, a Cast to the same type and a
//     Cast pair through a wider type (x → f32 → f16 back) are bypassed;
//   - MatMul then Add of a bias [N] becomes FusedMatMul with the bias in
//     the GEMM epilogue;
//   - BatchNorm after a Conv or MatMul with constant weights is folded
//     into the weights and bias (computed in float64, rounded once);
//   - x · HardSigmoid(x) (alpha 1/6, beta 1/2) becomes HardSwish(x);
//   - an activation after a MatMul or Conv becomes the GEMM epilogue
//     (FusedMatMul, FusedConv);
//   - a chain of element-wise ops becomes one ElemChain pass;
//   - the constant weights of a MatMul are packed once into the panels
//     the GEMM kernel reads (FusedMatMul with packed_b), so no run packs
//     them again.
//
// Only float32 tensors are fused, and only where the intermediate tensor
// has no other consumer and is not a model output, and no node involved
// has zero-copy restrictions, so the model's IO, names and zero-copy
// behaviour are those of the unfused graph. The fused node takes the name
// (and output tensor) of the last node of its pattern. Bias and
// activation epilogues and element-wise chains of Relu, Gelu, Silu and the
// four arithmetic ops compute bit-identical results; BatchNorm folding
// rounds differently (see docs/model-format.md for the bounds the tests
// hold it to).

// WithoutFusion compiles the graph as built, without the fusion pass: a
// baseline for measuring it, or for debugging a model op by op.
func WithoutFusion() CompileOption { return func(c *compileConfig) { c.noFuse = true } }

// WithoutPrepack keeps the fusion pass but leaves constant MatMul
// weights as stored (a baseline for measuring the pre-packing).
func WithoutPrepack() CompileOption { return func(c *compileConfig) { c.noPrepack = true } }

// fuser holds the pass's view of the graph copy: which node reads each
// tensor, counting only nodes that reach NetOutput.
type fuser struct {
	g      *Graph
	cfg    *compileConfig
	uses   map[*Tensor][]use
	live   []*Node
	anchor map[*Node]*Node // a node the pass added → the node it derives from
}

type use struct {
	n *Node
	i int
}

// fuseGraph returns a fused copy of g (g itself is never changed).
func fuseGraph(g *Graph, cfg *compileConfig) *Graph {
	f := &fuser{g: g.clone(), cfg: cfg, anchor: map[*Node]*Node{}}
	defer f.renumber()
	for _, pass := range []func(){f.simplify, f.fuseScale, f.fuseBias, f.foldBatchNorm, f.fuseHardSwish, f.fuseActivation, f.fuseChains, f.prepack} {
		if !f.scan() {
			break
		}
		pass()
	}
	return f.g
}

// renumber puts each node the pass added right after the node it derives
// from and numbers the nodes in that order. Compile breaks ties in its
// topological order by this number, so the fused model's tasks run in
// the unfused graph's order: a new weight must not make its reader wait
// until every older node has run (a runtime that lets an output reuse an
// input's memory relies on the order).
func (f *fuser) renumber() {
	after := map[*Node][]*Node{}
	for _, n := range f.g.nodes {
		if a, ok := f.anchor[n]; ok {
			for f.anchor[a] != nil { // a Reshape of a new constant
				a = f.anchor[a]
			}
			after[a] = append(after[a], n)
		}
	}
	order := make([]*Node, 0, len(f.g.nodes))
	for _, n := range f.g.nodes {
		if _, added := f.anchor[n]; added {
			continue
		}
		order = append(order, n)
		order = append(order, after[n]...)
	}
	for i, n := range order {
		n.id = i
	}
	f.g.nodes = order
}

// clone copies the graph's nodes and tensors; constant bytes are shared
// (nothing writes them).
func (g *Graph) clone() *Graph {
	ng := &Graph{name: g.name, names: make(map[string]*Node, len(g.names)), seq: g.seq, err: g.err}
	tm := make(map[*Tensor]*Tensor)
	for _, n := range g.nodes {
		nn := &Node{g: ng, id: n.id, name: n.name, op: n.op, attrs: n.attrs.Clone(), value: n.value,
			noZeroCopy: n.noZeroCopy, inZC: n.inZC, outZC: n.outZC}
		for _, t := range n.outs {
			nt := &Tensor{node: nn, index: t.index, desc: t.desc}
			nn.outs = append(nn.outs, nt)
			tm[t] = nt
		}
		ng.nodes = append(ng.nodes, nn)
		if g.names[n.name] == n {
			ng.names[n.name] = nn
		}
	}
	for i, n := range g.nodes {
		nn := ng.nodes[i]
		nn.inputs = make([]*Tensor, len(n.inputs))
		for j, t := range n.inputs {
			if nt, ok := tm[t]; ok {
				nn.inputs[j] = nt
			} else {
				nn.inputs[j] = t // nil or foreign: Compile reports it
			}
		}
	}
	return ng
}

// scan finds the live nodes and their uses. It reports false (fuse
// nothing) for a graph Compile will refuse anyway.
func (f *fuser) scan() bool {
	var out *Node
	for _, n := range f.g.nodes {
		if n.op == OpNetOutput {
			if out != nil {
				return false
			}
			out = n
		}
	}
	if out == nil {
		return false
	}
	f.uses, f.live = map[*Tensor][]use{}, nil
	seen := map[*Node]bool{}
	stack := []*Node{out}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[n] {
			continue
		}
		seen[n] = true
		for _, t := range n.inputs {
			if t == nil || t.node == nil || t.node.g != f.g || t.index >= len(t.node.outs) {
				return false
			}
			stack = append(stack, t.node)
		}
	}
	indeg := map[*Node]int{}
	for _, n := range f.g.nodes { // creation order, so rewrites are deterministic
		if !seen[n] {
			continue
		}
		f.live = append(f.live, n)
		indeg[n] = len(n.inputs)
		for i, t := range n.inputs {
			f.uses[t] = append(f.uses[t], use{n, i})
		}
	}
	// A cycle (made with SetInput) is Compile's to report, on the graph as built.
	var ready []*Node
	for _, n := range f.live {
		if indeg[n] == 0 {
			ready = append(ready, n)
		}
	}
	done := 0
	for len(ready) > 0 {
		n := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		done++
		for _, t := range n.outs {
			for _, u := range f.uses[t] {
				if indeg[u.n]--; indeg[u.n] == 0 {
					ready = append(ready, u.n)
				}
			}
		}
	}
	return done == len(f.live)
}

// sole returns the one node reading t, or nil when t has several readers
// or is a model output.
func (f *fuser) sole(t *Tensor) *Node {
	u := f.uses[t]
	if len(u) != 1 || u[0].n.op == OpNetOutput {
		return nil
	}
	return u[0].n
}

// plain reports whether a node may take part in a fusion: one output, no
// zero-copy restriction (fusing would move its inputs or outputs to a
// task without it).
func (f *fuser) plain(n *Node) bool {
	return len(n.outs) == 1 && !n.noZeroCopy && n.inZC == nil && n.outZC == nil && !f.cfg.noZeroCopy[n.name]
}

func isF32(t *Tensor) bool { return t.desc.DataType == acl.Float32 }

// morph turns n into op with the given inputs and attributes, if the op
// accepts them and infers n's output descriptor; n keeps its name and its
// output tensor, so its readers and the model's output names are
// unchanged.
func (f *fuser) morph(n *Node, op OpType, inputs []*Tensor, attrs Attrs) bool {
	in := make([]TensorDesc, len(inputs))
	for i, t := range inputs {
		in[i] = t.desc
	}
	out, err := inferOp(op, in, attrs)
	if err != nil || len(out) != 1 || !out[0].Equal(n.outs[0].desc) {
		return false
	}
	n.op, n.inputs, n.attrs = op, inputs, attrs
	return true
}

// bypass makes the readers of from (other than NetOutput) read to.
func (f *fuser) bypass(from, to *Tensor) {
	var keep []use
	for _, u := range f.uses[from] {
		if u.n.op == OpNetOutput {
			keep = append(keep, u)
			continue
		}
		u.n.inputs[u.i] = to
		f.uses[to] = append(f.uses[to], u)
	}
	f.uses[from] = keep
}

// simplify bypasses the nodes that compute nothing.
func (f *fuser) simplify() {
	for _, n := range f.live {
		if !f.plain(n) || len(n.inputs) != 1 {
			continue
		}
		x, y := n.inputs[0], n.outs[0]
		switch n.op {
		case OpIdentity:
			f.bypass(y, x)
		case OpReshape:
			if dimsEqual(x.desc.Dims, y.desc.Dims) && x.desc.Format == y.desc.Format {
				f.bypass(y, x)
			}
		case OpCast:
			if x.desc.DataType == y.desc.DataType {
				f.bypass(y, x)
				continue
			}
			p := x.node
			if p.op == OpCast && f.plain(p) && p.inputs[0].desc.DataType == y.desc.DataType &&
				lossless(y.desc.DataType, x.desc.DataType) {
				f.bypass(y, p.inputs[0])
			}
		}
	}
}

// lossless reports whether every value of type a is exactly a value of
// type b, so that a Cast a → b → a returns its input.
func lossless(a, b acl.DataType) bool {
	wider := map[acl.DataType][]acl.DataType{
		acl.Float16:  {acl.Float32, acl.Float64},
		acl.BFloat16: {acl.Float32, acl.Float64},
		acl.Float32:  {acl.Float64},
		acl.Int8:     {acl.Int16, acl.Int32, acl.Int64, acl.Float32, acl.Float64},
		acl.Uint8:    {acl.Int16, acl.Uint16, acl.Int32, acl.Uint32, acl.Int64, acl.Uint64, acl.Float32, acl.Float64},
		acl.Int16:    {acl.Int32, acl.Int64, acl.Float32, acl.Float64},
		acl.Uint16:   {acl.Int32, acl.Uint32, acl.Int64, acl.Uint64, acl.Float32, acl.Float64},
		acl.Int32:    {acl.Int64, acl.Float64},
		acl.Uint32:   {acl.Int64, acl.Uint64, acl.Float64},
	}
	for _, w := range wider[a] {
		if w == b {
			return true
		}
	}
	return false
}

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

// constF32 returns the values of a float32 Const tensor, or nil.
func constF32(t *Tensor) []float64 {
	n := t.node
	if n.op != OpConst || t.desc.DataType != acl.Float32 || int64(len(n.value)) != t.desc.Size() {
		return nil
	}
	v := make([]float64, len(n.value)/4)
	for i := range v {
		v[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(n.value[4*i:])))
	}
	return v
}

// newConst adds a float32 constant named after base, ordered right after
// the node at (see renumber).
func (f *fuser) newConst(at *Node, base string, dims []int64, v []float64) *Tensor {
	name := base
	for f.g.names[name] != nil {
		name += "_"
	}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(x)))
	}
	t := f.g.Const(name, acl.Float32, dims, b)
	f.anchor[t.node] = at
	return t
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
