package ge

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ascend-go/cann/acl"
)

// Graph is a dataflow graph under construction. Builder methods infer each
// new node's output descriptors immediately; the first failure is kept and
// returned by Err and Compile, and later builder calls keep returning usable
// (but invalid) tensors, so a chain of calls needs one error check at the end.
// A Graph is not safe for concurrent use.
type Graph struct {
	name  string
	nodes []*Node
	names map[string]*Node
	seq   int
	err   error
}

// Node is one operator of a Graph. Like its Graph, it is not safe for
// concurrent use.
type Node struct {
	g      *Graph
	id     int
	name   string
	op     OpType
	attrs  Attrs
	inputs []*Tensor
	outs   []*Tensor
	value  []byte // Const contents
	// Zero-copy capability of the op's addresses (GE's input/output
	// zero-copy flags): noZeroCopy turns all off; inZC/outZC, when set,
	// give one flag per input/output (true = can take an external address).
	noZeroCopy  bool
	inZC, outZC []bool
}

// Tensor is an output of a Node: the edge type of the graph. Its methods
// only read; they are safe to call concurrently while the graph is not
// being modified.
type Tensor struct {
	node  *Node
	index int
	desc  TensorDesc
}

// NewGraph returns an empty graph.
func NewGraph(name string) *Graph { return &Graph{name: name, names: map[string]*Node{}} }

// Name returns the graph's name (the compiled model's name).
func (g *Graph) Name() string {
	if g == nil {
		return ""
	}
	return g.name
}

// Err returns the first error a builder call recorded, or nil.
func (g *Graph) Err() error {
	if g == nil {
		return acl.NilHandle("ge.Graph", "graph")
	}
	return g.err
}

// Nodes returns the nodes in creation order.
func (g *Graph) Nodes() []*Node {
	if g == nil {
		return nil
	}
	return append([]*Node(nil), g.nodes...)
}

// Node returns the node with the given name, or nil.
func (g *Graph) Node(name string) *Node {
	if g == nil {
		return nil
	}
	return g.names[name]
}

// Name returns the node's unique name.
func (n *Node) Name() string {
	if n == nil {
		return ""
	}
	return n.name
}

// Op returns the node's operator.
func (n *Node) Op() OpType {
	if n == nil {
		return 0
	}
	return n.op
}

// Attrs returns a copy of the node's attributes.
func (n *Node) Attrs() Attrs {
	if n == nil {
		return nil
	}
	return n.attrs.Clone()
}

// Inputs returns the node's inputs.
func (n *Node) Inputs() []*Tensor {
	if n == nil {
		return nil
	}
	return append([]*Tensor(nil), n.inputs...)
}

// Value returns a copy of a Const node's bytes (nil for other ops).
func (n *Node) Value() []byte {
	if n == nil {
		return nil
	}
	if n.value == nil {
		return nil
	}
	return append([]byte(nil), n.value...)
}

// NumOutputs returns the number of outputs.
func (n *Node) NumOutputs() int {
	if n == nil {
		return 0
	}
	return len(n.outs)
}

// Output returns output i, or nil when out of range.
func (n *Node) Output(i int) *Tensor {
	if n == nil {
		return nil
	}
	if i < 0 || i >= len(n.outs) {
		return nil
	}
	return n.outs[i]
}

// SetInput rewires input i to t (graph surgery). Inference is not rerun
// here; Compile re-infers the whole graph and reports cycles.
func (n *Node) SetInput(i int, t *Tensor) error {
	if n == nil {
		return acl.NilHandle("ge.Node.SetInput", "node")
	}
	if i < 0 || i >= len(n.inputs) {
		return n.g.nodeErr(n, acl.CodeGEParamInvalid, "input index %d out of range [0, %d)", i, len(n.inputs))
	}
	if t == nil || t.node == nil || t.node.g != n.g {
		return n.g.nodeErr(n, acl.CodeGEParamInvalid, "input %d is nil or belongs to another graph", i)
	}
	n.inputs[i] = t
	return nil
}

// Desc returns the tensor's inferred descriptor (a copy).
func (t *Tensor) Desc() TensorDesc {
	if t == nil {
		return TensorDesc{}
	}
	return cloneDesc(t.desc)
}

// Node returns the producing node.
func (t *Tensor) Node() *Node {
	if t == nil {
		return nil
	}
	return t.node
}

// Index returns which output of its node the tensor is.
func (t *Tensor) Index() int {
	if t == nil {
		return 0
	}
	return t.index
}

// Name returns "node:index".
func (t *Tensor) Name() string {
	if t == nil || t.node == nil {
		return ""
	}
	return t.node.name + ":" + strconv.Itoa(t.index)
}

func nodeLabel(name string, op OpType) string { return fmt.Sprintf("node %q (%s)", name, op) }

// nodeErr builds the error for a node; builder errors are also recorded.
func (g *Graph) nodeErr(n *Node, code acl.Code, format string, args ...any) error {
	return acl.Errorf("ge", code, "%s: %s", nodeLabel(n.name, n.op), fmt.Sprintf(format, args...))
}

func (g *Graph) record(err error) {
	if g == nil {
		return
	}
	if g.err == nil {
		g.err = err
	}
}

// inferErr wraps an inference failure with the node's name and the code
// its cause calls for.
func inferErr(name string, op OpType, err error) error {
	code := acl.CodeGEParamInvalid
	if _, ok := err.(*dtypeError); ok {
		code = acl.CodeUnsupportedDataType
	}
	return acl.Errorf("ge", code, "%s: %v", nodeLabel(name, op), err)
}

// opConfig collects OpOptions.
type opConfig struct {
	name        string
	attrs       Attrs
	format      acl.Format
	formatSet   bool
	noZeroCopy  bool
	inZC, outZC []bool
}

// OpOption adjusts a node being built. Options are immutable closures,
// safe for concurrent use and reuse.
type OpOption func(*opConfig)

// Name sets the node's name (default: the op name and a sequence number).
func Name(name string) OpOption { return func(c *opConfig) { c.name = name } }

// TransposeA makes MatMul use the transpose of its first input.
func TransposeA() OpOption { return WithAttr(AttrTransposeA, BoolAttr(true)) }

// TransposeB makes MatMul use the transpose of its second input.
func TransposeB() OpOption { return WithAttr(AttrTransposeB, BoolAttr(true)) }

// WithFormat sets the format label of a Data or Const tensor (default ND).
func WithFormat(f acl.Format) OpOption {
	return func(c *opConfig) { c.format, c.formatSet = f, true }
}

// WithAttr sets an attribute on the node.
func WithAttr(key string, v Attr) OpOption {
	return func(c *opConfig) {
		if c.attrs == nil {
			c.attrs = Attrs{}
		}
		c.attrs[key] = v
	}
}

// NoZeroCopy marks the op as unable to take external addresses: a model
// input it reads or output it writes is not given a zero-copy block, and
// the runtime copies it instead. On a Data node it makes that input
// copy-only.
func NoZeroCopy() OpOption { return func(c *opConfig) { c.noZeroCopy = true } }

// ZeroCopyFlags gives the op's per-input and per-output zero-copy
// capability (true = can take an external address), as GE's HCCL
// input/output zero-copy flags. Lengths must match the op's inputs and
// outputs.
func ZeroCopyFlags(in, out []bool) OpOption {
	return func(c *opConfig) {
		c.inZC, c.outZC = append([]bool(nil), in...), append([]bool(nil), out...)
	}
}

// AddOp adds a node of any op type with the given inputs and attributes and
// infers its outputs. The typed builder methods are shorthands for it; Data
// and Const nodes carry a descriptor and contents and must be made with
// Graph.Data and Graph.Const.
func (g *Graph) AddOp(op OpType, inputs []*Tensor, attrs Attrs, opts ...OpOption) *Node {
	n := g.addOp(op, inputs, attrs, opts...)
	if op == OpData || op == OpConst {
		g.record(g.nodeErr(n, acl.CodeGEParamInvalid, "create %s nodes with Graph.%s", op, op))
	}
	return n
}

func (g *Graph) addOp(op OpType, inputs []*Tensor, attrs Attrs, opts ...OpOption) *Node {
	if g == nil {
		g = NewGraph("") // a nil graph's nodes go nowhere; its Err reports it
	}
	cfg := opConfig{attrs: attrs.Clone()}
	if cfg.attrs == nil {
		cfg.attrs = Attrs{}
	}
	for _, o := range opts {
		o(&cfg)
	}
	n := &Node{g: g, id: len(g.nodes), op: op, attrs: cfg.attrs, inputs: append([]*Tensor(nil), inputs...),
		noZeroCopy: cfg.noZeroCopy, inZC: cfg.inZC, outZC: cfg.outZC}
	n.name = cfg.name
	if n.name == "" {
		for {
			g.seq++
			n.name = strings.ToLower(op.String()) + "_" + strconv.Itoa(g.seq)
			if g.names[n.name] == nil {
				break
			}
		}
	}
	g.nodes = append(g.nodes, n)
	if g.names[n.name] != nil {
		g.record(g.nodeErr(n, acl.CodeGEParamInvalid, "duplicate node name"))
		n.outs = []*Tensor{{node: n}}
		return n
	}
	g.names[n.name] = n
	if !op.Known() || op == OpData || op == OpConst {
		if !op.Known() {
			g.record(g.nodeErr(n, acl.CodeGEParamInvalid, "unknown op type"))
		}
		n.outs = []*Tensor{{node: n}}
		return n
	}
	in := make([]TensorDesc, len(inputs))
	for i, t := range inputs {
		if t == nil || t.node == nil || t.node.g != g {
			g.record(g.nodeErr(n, acl.CodeGEParamInvalid, "input %d is nil or belongs to another graph", i))
			n.outs = []*Tensor{{node: n}}
			return n
		}
		in[i] = t.desc
	}
	if cfg.inZC != nil && len(cfg.inZC) != len(inputs) {
		g.record(g.nodeErr(n, acl.CodeGEParamInvalid, "%d input zero-copy flags for %d inputs", len(cfg.inZC), len(inputs)))
	}
	out, err := inferOp(op, in, n.attrs)
	if err != nil {
		g.record(inferErr(n.name, op, err))
		n.outs = []*Tensor{{node: n}}
		return n
	}
	if cfg.outZC != nil && len(cfg.outZC) != len(out) {
		g.record(g.nodeErr(n, acl.CodeGEParamInvalid, "%d output zero-copy flags for %d outputs", len(cfg.outZC), len(out)))
	}
	n.outs = make([]*Tensor, len(out))
	for i, d := range out {
		n.outs[i] = &Tensor{node: n, index: i, desc: d}
	}
	return n
}

// single adds a one-output op and returns its output.
func (g *Graph) single(op OpType, inputs []*Tensor, attrs Attrs, opts []OpOption) *Tensor {
	n := g.addOp(op, inputs, attrs, opts...)
	return n.outs[0]
}
