package ge

import (
	"slices"
	"sort"
	"strconv"

	"github.com/ascend-go/cann/acl"
)

// CompileOption adjusts Compile. Options are immutable closures, safe for
// concurrent use and reuse.
type CompileOption func(*compileConfig)

type compileConfig struct {
	noZeroCopy map[string]bool
	noReuse    bool
	noFuse     bool
	noPrepack  bool
}

// NoZeroCopyOps marks the named nodes as unable to take external addresses,
// as the NoZeroCopy builder option does.
func NoZeroCopyOps(names ...string) CompileOption {
	return func(c *compileConfig) {
		for _, n := range names {
			c.noZeroCopy[n] = true
		}
	}
}

// WithoutMemoryReuse gives every feature-map buffer its own block (no
// lifetime reuse): a baseline for measuring the planner.
func WithoutMemoryReuse() CompileOption { return func(c *compileConfig) { c.noReuse = true } }

// cnode and cval are the compiler's working copy of the graph, so Compile
// never mutates the caller's Graph.
type cnode struct {
	src     *Node
	name    string
	op      OpType
	attrs   Attrs
	inputs  []*cval
	outs    []*cval
	step    int // task index, -1 for nodes without a task
	inNoZC  []bool
	outNoZC []bool
}

type cval struct {
	producer  *cnode
	index     int
	desc      TensorDesc
	root      *cval // alias root (itself unless produced by an alias op)
	consumers []*cnode
	buf       int // plan index of the root's buffer
}

func (v *cval) name() string { return v.producer.name + ":" + strconv.Itoa(v.index) }

// Compile turns a graph into a CompiledModel: the fusion pass (fuse.go;
// WithoutFusion turns it off), topological order, shape and dtype
// inference, copy insertion for outputs that would share memory, feature-map
// assignment by lifetime, the zero-copy IO layout and task generation. The
// result passes the same validation as ParseModel. Errors are *acl.Error
// naming the offending node. Compile never modifies g: several compiles of
// one graph may run concurrently as long as nobody changes the graph.
func Compile(g *Graph, opts ...CompileOption) (*CompiledModel, error) {
	cfg := compileConfig{noZeroCopy: map[string]bool{}}
	for _, o := range opts {
		o(&cfg)
	}
	if g == nil {
		return nil, acl.Errorf("ge.Compile", acl.CodeInvalidParam, "nil graph")
	}
	if g.err != nil {
		return nil, g.err
	}
	if !cfg.noFuse {
		g = fuseGraph(g, &cfg)
	}
	c := &compiler{g: g, cfg: cfg}
	if err := c.order(); err != nil {
		return nil, err
	}
	if err := c.infer(); err != nil {
		return nil, err
	}
	c.fixOutputs()
	c.schedule()
	if err := c.plan(); err != nil {
		return nil, err
	}
	m := c.emit()
	if err := validateModel(m); err != nil {
		return nil, acl.Errorf("ge.Compile", acl.CodeGEInternalError, "compiled model fails validation: %v", err)
	}
	return m, nil
}

type compiler struct {
	g        *Graph
	cfg      compileConfig
	topo     []*Node
	nodes    []*cnode
	vals     map[*Tensor]*cval
	data     []*cnode // by input index
	netout   *cnode
	outs     []*cval // model outputs after copy insertion
	copies   []*cnode
	outNames []string
	wsBase   map[*cnode]int
	tasks    []*cnode
	plan_    []Buffer
	memory   int64
	zcSize   int64
	weight   int64
}

// order sorts the graph topologically (Kahn, ties by creation order), drops
// nodes that cannot reach NetOutput (Data nodes are kept: they are model
// inputs) and checks the boundary nodes.
func (c *compiler) order() error {
	g := c.g
	var netout *Node
	for _, n := range g.nodes {
		if n.op == OpNetOutput {
			if netout != nil {
				return g.nodeErr(n, acl.CodeGEParamInvalid, "graph already has NetOutput %q", netout.name)
			}
			netout = n
		}
	}
	if netout == nil {
		return acl.Errorf("ge.Compile", acl.CodeGEParamInvalid, "graph %q has no NetOutput", g.name)
	}
	for _, n := range g.nodes {
		for i, t := range n.inputs {
			if t == nil || t.node == nil || t.node.g != g {
				return g.nodeErr(n, acl.CodeGEParamInvalid, "input %d is nil or belongs to another graph", i)
			}
			if t.index >= len(t.node.outs) {
				return g.nodeErr(n, acl.CodeGEParamInvalid, "input %d refers to missing output %d of %q", i, t.index, t.node.name)
			}
		}
	}
	live := map[*Node]bool{}
	stack := []*Node{netout}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if live[n] {
			continue
		}
		live[n] = true
		for _, t := range n.inputs {
			stack = append(stack, t.node)
		}
	}
	indeg := map[*Node]int{}
	users := map[*Node][]*Node{}
	var keep []*Node
	for _, n := range g.nodes {
		if live[n] || n.op == OpData {
			keep = append(keep, n)
			indeg[n] = len(n.inputs)
			for _, t := range n.inputs {
				users[t.node] = append(users[t.node], n)
			}
		}
	}
	// Kahn's algorithm with a ready list ordered by creation id.
	var ready []*Node
	for _, n := range keep {
		if indeg[n] == 0 {
			ready = append(ready, n)
		}
	}
	for len(ready) > 0 {
		n := ready[0]
		ready = ready[1:]
		c.topo = append(c.topo, n)
		for _, u := range users[n] {
			indeg[u]--
			if indeg[u] == 0 {
				i := sort.Search(len(ready), func(i int) bool { return ready[i].id > u.id })
				ready = slices.Insert(ready, i, u)
			}
		}
	}
	if len(c.topo) != len(keep) {
		for _, n := range keep {
			if indeg[n] > 0 {
				return g.nodeErr(n, acl.CodeGEParamInvalid, "graph has a cycle through this node")
			}
		}
	}
	// Model inputs: indexes 0..n-1, each once.
	var data []*Node
	for _, n := range c.topo {
		if n.op == OpData {
			data = append(data, n)
		}
	}
	slots := make([]*Node, len(data))
	for _, n := range data {
		i := n.attrs.Int(AttrIndex, -1)
		if i < 0 || i >= int64(len(data)) {
			return g.nodeErr(n, acl.CodeGEParamInvalid, "input index %d out of range [0, %d)", i, len(data))
		}
		if slots[i] != nil {
			return g.nodeErr(n, acl.CodeGEParamInvalid, "input index %d already used by node %q", i, slots[i].name)
		}
		slots[i] = n
	}
	return nil
}

// infer re-runs inference over the ordered graph (it may have been rewired
// since the builder inferred it) and builds the working copy.
func (c *compiler) infer() error {
	c.vals = map[*Tensor]*cval{}
	for _, n := range c.topo {
		cn := &cnode{src: n, name: n.name, op: n.op, attrs: n.attrs, step: -1}
		in := make([]TensorDesc, len(n.inputs))
		for i, t := range n.inputs {
			v := c.vals[t]
			cn.inputs = append(cn.inputs, v)
			v.consumers = append(v.consumers, cn)
			in[i] = v.desc
		}
		var out []TensorDesc
		switch n.op {
		case OpData, OpConst:
			d := n.outs[0].desc
			if err := checkDesc(d); err != nil {
				return inferErr(n.name, n.op, err)
			}
			out = []TensorDesc{d}
		default:
			var err error
			if out, err = inferOp(n.op, in, n.attrs); err != nil {
				return inferErr(n.name, n.op, err)
			}
		}
		if len(out) != len(n.outs) && n.op != OpNetOutput {
			return c.g.nodeErr(n, acl.CodeGEInternalError, "inference gives %d outputs, node has %d", len(out), len(n.outs))
		}
		cn.inNoZC = zcFlags(n.noZeroCopy || c.cfg.noZeroCopy[n.name], n.inZC, len(in))
		cn.outNoZC = zcFlags(n.noZeroCopy || c.cfg.noZeroCopy[n.name], n.outZC, len(out))
		collectiveNoZeroCopy(n.op, n.attrs, cn.inNoZC, cn.outNoZC)
		for i, d := range out {
			v := &cval{producer: cn, index: i, desc: d}
			v.root = v
			if n.op.IsAlias() {
				v.root = cn.inputs[0].root
			}
			cn.outs = append(cn.outs, v)
			c.vals[n.outs[i]] = v
		}
		c.nodes = append(c.nodes, cn)
		switch n.op {
		case OpData:
			c.data = append(c.data, cn)
		case OpNetOutput:
			c.netout = cn
		}
	}
	sort.SliceStable(c.data, func(i, j int) bool {
		return c.data[i].attrs.Int(AttrIndex, 0) < c.data[j].attrs.Int(AttrIndex, 0)
	})
	return nil
}

// zcFlags turns capability flags into per-address "no zero copy" flags.
func zcFlags(all bool, caps []bool, n int) []bool {
	f := make([]bool, n)
	for i := range f {
		f[i] = all || (caps != nil && i < len(caps) && !caps[i])
	}
	return f
}

// fixOutputs gives every model output its own block. An output whose memory
// would be a model input, a weight or another output's (directly or through
// aliases) gets a Memcpy task, as GE inserts a memcpy.
func (c *compiler) fixOutputs() {
	claimed := map[*cval]bool{}
	for j, v := range c.netout.inputs {
		outName := v.name()
		if n := c.netout.attrs.String(outputNameAttr(j)); n != "" {
			outName = n
		}
		c.outNames = append(c.outNames, outName)
		r := v.root
		if r.producer.op != OpData && r.producer.op != OpConst && !claimed[r] {
			claimed[r] = true
			c.outs = append(c.outs, v)
			continue
		}
		name := c.netout.name + "_copy" + strconv.Itoa(j)
		for c.g.names[name] != nil {
			name += "_"
		}
		cp := &cnode{name: name, op: OpMemcpy, inputs: []*cval{v}, step: -1, inNoZC: []bool{false}, outNoZC: []bool{false}}
		nv := &cval{producer: cp, desc: cloneDesc(v.desc), consumers: []*cnode{c.netout}}
		nv.root = nv
		cp.outs = []*cval{nv}
		v.consumers = append(v.consumers, cp)
		c.netout.inputs[j] = nv
		claimed[nv] = true
		c.outs = append(c.outs, nv)
		c.copies = append(c.copies, cp)
	}
}

// schedule numbers the task nodes in execution order.
func (c *compiler) schedule() {
	// Copies run last, just before the outputs are read.
	for _, n := range append(c.nodes, c.copies...) {
		if n.op.HasTask() {
			n.step = len(c.tasks)
			c.tasks = append(c.tasks, n)
		}
	}
}
