package ge

import (
	"encoding/binary"
	"math"

	"github.com/ascend-go/cann/acl"
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
