package onnx

import (
	"errors"
	"slices"
	"sync"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	pb "github.com/ascend-go/cann/ge/onnx/internal/onnxpb"
)

// Staged runs. A model whose import needs a value computed at run time
// (an If on data, a Loop whose trip count is an input, a Reshape to a
// computed shape) used to be imported again on every run with every input
// a constant, so every node folded: correct, but each run paid the
// importer, the scope maps and a fresh tensor per node. A staged plan does
// that work once per shape tuple instead:
//
//   - the nodes before the first one that needs a value are imported with
//     the live values as graph inputs and compiled into one segment, run
//     with buffers kept from run to run;
//   - that node is a control step run on the host: If picks one of its
//     branches, Loop runs its body once per iteration, each branch and body
//     itself a staged graph compiled once per tuple of its input shapes;
//     any other node is folded alone, as the interpreter would;
//   - the rest of the graph is the next stage, chosen (and built on first
//     use) by the shapes the step produced.
//
// Anything the stages cannot express (an empty tensor between stages, a
// sequence, a value over the memory limit, an error) makes the run fall
// back to the interpreter, which gives the result or the error the model
// always gave.

// errFallback ends a staged run that the interpreter has to redo.
var errFallback = errors.New("onnx: the run falls back to the interpreter")

// maxStageVariants bounds the shape variants one stage cache keeps; a
// cache that keeps missing (a shape that changes every run) stops building
// and sends its runs to the interpreter.
const maxStageVariants = 16

// slotIn is one live-in value of a stage under construction: a constant
// (h holds the data) or dynamic (h.Desc only; the data comes each run).
type slotIn struct {
	name string
	h    ge.HostTensor
	dyn  bool
}

// stage is one graph from one node on, for one tuple of live-in shapes.
// Its values live in an environment of slots: [0, nIn) the live-ins, then
// constants, segment outputs and the control step's outputs. A stage is
// immutable once built but for its caches, which lock.
type stage struct {
	gp      *pb.GraphProto
	cut     int // the node of the control step (len(nodes): none)
	nIn     int
	dyn     []bool          // per live-in
	consts  []constSlot     // slots preset from build-time constants
	envN    int             // slots
	seg     *segment        // nil: nothing to compile before the cut
	ctrl    ctrlStep        // nil: the graph ends in this stage
	outs    []int           // ctrl == nil: slots of the graph's outputs
	live    []string        // ctrl != nil: names the continuation takes
	liveOut []int           // their slots
	liveDyn []bool          // whether each is dynamic
	next    stageCache      // the continuation, by the shapes of liveOut
	m       *Model          // for building continuations
	consOf  map[int]bool    // slots holding constants (build time)
	descs   []ge.TensorDesc // build-time descs (dynamic ones unknown after the cut)
}

type constSlot struct {
	slot int
	h    ge.HostTensor
}

// segment is the compiled part of a stage.
type segment struct {
	cm      *ge.CompiledModel
	kernels []ge.Kernel // per task
	w       []byte
	in      []int // slot of each cm input
	out     []int // slot of each cm output
}

// ctrlStep runs the node at a stage's cut.
type ctrlStep interface {
	run(rs *runState, env []ge.HostTensor) error
}

// stageCache holds the stages built from one point for the shape tuples
// met so far, found without allocating.
type stageCache struct {
	mu      sync.Mutex
	entries []cacheEntry
	builds  int
}

type cacheEntry struct {
	dts  []acl.DataType
	dims [][]int64
	st   *stage // nil: this tuple runs interpreted
}

// get returns the stage for the dynamic values of vals (dyn marks them),
// building it with build on a miss.
func (c *stageCache) get(vals []ge.HostTensor, dyn []bool, build func() (*stage, error)) (*stage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
next:
	for _, e := range c.entries {
		k := 0
		for i, v := range vals {
			if !dyn[i] {
				continue
			}
			if e.dts[k] != v.Desc.DataType || !slices.Equal(e.dims[k], v.Desc.Dims) {
				continue next
			}
			k++
		}
		if e.st == nil {
			return nil, errFallback
		}
		return e.st, nil
	}
	if c.builds >= 2*maxStageVariants {
		return nil, errFallback
	}
	c.builds++
	st, err := build()
	if err != nil && !errors.Is(err, errFallback) {
		st = nil
	}
	e := cacheEntry{st: st}
	for i, v := range vals {
		if dyn[i] {
			e.dts = append(e.dts, v.Desc.DataType)
			e.dims = append(e.dims, slices.Clone(v.Desc.Dims))
		}
	}
	if len(c.entries) >= maxStageVariants {
		c.entries = slices.Delete(c.entries, 0, 1)
	}
	c.entries = append(c.entries, e)
	if st == nil {
		return nil, errFallback
	}
	return st, nil
}

// liveNames lists, in first-use order, the names the nodes read (their
// subgraphs' reads included) and then extra.
func liveNames(nodes []*pb.NodeProto, extra []*pb.ValueInfoProto) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	var walk func(nodes []*pb.NodeProto)
	sub := func(g *pb.GraphProto) {
		walk(g.GetNode())
		for _, o := range g.GetOutput() {
			add(o.GetName())
		}
	}
	walk = func(nodes []*pb.NodeProto) {
		for _, n := range nodes {
			for _, in := range n.GetInput() {
				add(in)
			}
			for _, a := range n.GetAttribute() {
				if g := a.GetG(); g != nil {
					sub(g)
				}
				for _, g := range a.GetGraphs() {
					sub(g)
				}
			}
		}
	}
	walk(nodes)
	for _, o := range extra {
		add(o.GetName())
	}
	return out
}

// stageConfig is the importer configuration of a stage: the model's, with
// the root's input shapes.
func (m *Model) stageConfig(root []ge.HostTensor) config {
	cfg := m.cfg
	cfg.shapes = map[string][]int64{}
	for k, v := range m.cfg.shapes {
		cfg.shapes[k] = v
	}
	for i, h := range root {
		cfg.shapes[m.inputs[i].Name] = h.Desc.Dims
	}
	return cfg
}

// importTo imports gp's nodes [from, stop) with the live-ins bound (root:
// the model's inputs through sources). It returns the importer, the
// Data input slots by node name, and the index of a node that failed.
func (m *Model) importTo(gp *pb.GraphProto, from, stop int, root bool, in []slotIn) (*importer, map[string]int, int, error) {
	var rootIn []ge.HostTensor
	if root {
		for _, s := range in {
			rootIn = append(rootIn, s.h)
		}
	}
	im := newImporter(m.mp, m.opset, m.stageConfig(rootIn))
	dataSlot := map[string]int{}
	if root {
		if err := im.sources(gp); err != nil {
			return nil, nil, -1, err
		}
		for i, s := range in {
			dataSlot[s.name] = i
		}
	} else {
		if from == 0 {
			for _, t := range gp.GetInitializer() {
				h, err := decodeTensor(t, im.cfg.dir)
				if err != nil {
					return nil, nil, -1, err
				}
				im.sc.set(t.GetName(), &value{desc: h.Desc, c: &h})
			}
		}
		idx := 0
		for k, s := range in {
			if !s.dyn {
				h := s.h
				im.sc.set(s.name, &value{desc: h.Desc, c: &h})
				continue
			}
			name := im.uniq(s.name)
			t := im.g.Data(name, idx, s.h.Desc.DataType, s.h.Desc.Dims)
			if err := im.g.Err(); err != nil {
				return nil, nil, -1, err
			}
			idx++
			dataSlot[name] = k
			im.sc.set(s.name, &value{desc: t.Desc(), t: t})
		}
	}
	nodes := gp.GetNode()
	for j := from; j < stop; j++ {
		if err := im.node(j, nodes[j]); err != nil {
			return im, dataSlot, j, err
		}
	}
	return im, dataSlot, -1, nil
}

// buildStage builds gp from node from on for these live-ins; root is the
// model's graph from its start (live-ins: the model inputs).
func (m *Model) buildStage(gp *pb.GraphProto, from int, root bool, in []slotIn) (*stage, error) {
	nodes := gp.GetNode()
	im, dataSlot, failed, err := m.importTo(gp, from, len(nodes), root, in)
	cut := len(nodes)
	if err != nil {
		if failed < 0 || !needsValues(err) {
			return nil, errFallback
		}
		cut = failed
		if im, dataSlot, _, err = m.importTo(gp, from, cut, root, in); err != nil {
			return nil, errFallback
		}
	}
	st := &stage{gp: gp, cut: cut, nIn: len(in), m: m, consOf: map[int]bool{}}
	names := map[string]int{}
	for k, s := range in {
		names[s.name] = k
		st.dyn = append(st.dyn, s.dyn)
		st.descs = append(st.descs, s.h.Desc)
		if !s.dyn {
			st.consOf[k] = true
			st.consts = append(st.consts, constSlot{k, s.h})
		}
	}
	b := &stageBuilder{m: m, st: st, names: names}
	newSlot := b.newSlot
	// The values the rest of the graph reads: constants, live-ins or
	// outputs of the segment.
	extra := gp.GetOutput()
	segSlot := map[*ge.Tensor]int{}
	var segNames []string
	var segTs []*ge.Tensor
	var segSlots []int
	for _, name := range liveNames(nodes[cut:], extra) {
		if _, ok := names[name]; ok {
			continue
		}
		v := im.sc.get(name)
		if v == nil {
			continue // defined later, or inside a subgraph
		}
		if v.kind != KindTensor {
			return nil, errFallback
		}
		switch {
		case v.c != nil:
			s := newSlot(v.c.Desc)
			st.consOf[s] = true
			st.consts = append(st.consts, constSlot{s, *v.c})
			names[name] = s
		case v.t.Node().Op() == ge.OpData:
			k, ok := dataSlot[v.t.Node().Name()]
			if !ok {
				return nil, errFallback
			}
			names[name] = k
		default:
			if s, ok := segSlot[v.t]; ok {
				names[name] = s
				continue
			}
			s := newSlot(v.desc)
			segSlot[v.t] = s
			names[name] = s
			segNames = append(segNames, name)
			segTs = append(segTs, v.t)
			segSlots = append(segSlots, s)
		}
	}
	if len(segTs) > 0 {
		if st.seg, err = b.compile(im, dataSlot, segNames, segTs, segSlots); err != nil {
			return nil, err
		}
	}
	if cut == len(nodes) {
		for _, o := range gp.GetOutput() {
			s, ok := names[o.GetName()]
			if !ok {
				return nil, errFallback
			}
			if tt := o.GetType().GetTensorType(); tt != nil && tt.GetElemType() != 0 {
				if dt, ok := aclType(tt.GetElemType()); ok && dt != st.descs[s].DataType {
					return nil, errFallback
				}
			}
			st.outs = append(st.outs, s)
		}
		st.envN = len(st.descs)
		return st, nil
	}
	ctrl, err := b.control(nodes[cut], cut)
	if err != nil {
		return nil, err
	}
	st.ctrl = ctrl
	for _, name := range liveNames(nodes[cut+1:], gp.GetOutput()) {
		if s, ok := names[name]; ok {
			st.live = append(st.live, name)
			st.liveOut = append(st.liveOut, s)
			st.liveDyn = append(st.liveDyn, !st.consOf[s])
		}
	}
	st.envN = len(st.descs)
	return st, nil
}

func firstInput(n *pb.NodeProto) string {
	if ins := n.GetInput(); len(ins) > 0 {
		return ins[0]
	}
	return ""
}

// constVal returns the constant a slot holds at build time.
func constVal(st *stage, slot int) ge.HostTensor {
	for _, c := range st.consts {
		if c.slot == slot {
			return c.h
		}
	}
	return ge.HostTensor{}
}

// continuation builds the stage after st's cut for these values.
func (st *stage) continuation(vals []ge.HostTensor) (*stage, error) {
	in := make([]slotIn, len(st.live))
	for i, name := range st.live {
		in[i] = slotIn{name: name, dyn: st.liveDyn[i]}
		if st.liveDyn[i] {
			in[i].h = ge.HostTensor{Desc: cloneDesc(vals[i].Desc)}
		} else {
			in[i].h = constVal(st, st.liveOut[i])
		}
	}
	return st.m.buildStage(st.gp, st.cut+1, false, in)
}

func cloneDesc(d ge.TensorDesc) ge.TensorDesc {
	d.Dims = slices.Clone(d.Dims)
	d.Format = acl.FormatND
	return d
}

// stageBuilder is a stage under construction: its slots by name.
type stageBuilder struct {
	m     *Model
	st    *stage
	names map[string]int
}

func (b *stageBuilder) newSlot(d ge.TensorDesc) int {
	b.st.descs = append(b.st.descs, d)
	return len(b.st.descs) - 1
}

// slotOf is the slot of a name: -1 for an absent optional input ("" ),
// -2 for a name no slot holds.
func (b *stageBuilder) slotOf(name string) int {
	if name == "" {
		return -1
	}
	if s, ok := b.names[name]; ok {
		return s
	}
	return -2
}

// outSlots gives n's outputs new slots (-1 for an omitted one).
func (b *stageBuilder) outSlots(n *pb.NodeProto) []int {
	var outs []int
	for _, o := range n.GetOutput() {
		if o == "" {
			outs = append(outs, -1)
			continue
		}
		s := b.newSlot(ge.TensorDesc{})
		b.names[o] = s
		outs = append(outs, s)
	}
	return outs
}

// freeOf lists the values of the stage a subgraph reads from outside
// itself: their names, slots and whether each is dynamic.
func (b *stageBuilder) freeOf(g *pb.GraphProto) ([]string, []int, []bool) {
	defined := map[string]bool{}
	for _, in := range g.GetInput() {
		defined[in.GetName()] = true
	}
	for _, t := range g.GetInitializer() {
		defined[t.GetName()] = true
	}
	for _, x := range g.GetNode() {
		for _, o := range x.GetOutput() {
			defined[o] = true
		}
	}
	var fn []string
	var fs []int
	var fd []bool
	for _, name := range liveNames(g.GetNode(), g.GetOutput()) {
		if defined[name] {
			continue
		}
		if s, ok := b.names[name]; ok {
			fn, fs, fd = append(fn, name), append(fs, s), append(fd, !b.st.consOf[s])
		}
	}
	return fn, fs, fd
}

// control builds the step of the node at the cut: If and Loop run their
// subgraphs as stages, any other node is folded alone.
func (b *stageBuilder) control(n *pb.NodeProto, cut int) (ctrlStep, error) {
	key := n.GetOpType()
	if d := n.GetDomain(); d != "" && d != "ai.onnx" {
		key = d + "/" + key
	}
	switch key {
	case "If":
		var then, els *pb.GraphProto
		for _, a := range n.GetAttribute() {
			switch a.GetName() {
			case "then_branch":
				then = a.GetG()
			case "else_branch":
				els = a.GetG()
			}
		}
		cond := b.slotOf(firstInput(n))
		if then == nil || els == nil || cond < 0 || len(n.GetInput()) != 1 {
			return nil, errFallback
		}
		s := &ifStep{cond: cond}
		for i, g := range []*pb.GraphProto{then, els} {
			fn, fs, fd := b.freeOf(g)
			s.br[i].init(b.m, b.st, g, nil, fn, fs, fd)
		}
		s.outs = b.outSlots(n)
		return s, nil
	case "Loop":
		var body *pb.GraphProto
		for _, a := range n.GetAttribute() {
			if a.GetName() == "body" {
				body = a.GetG()
			}
		}
		ins := n.GetInput()
		if body == nil || len(ins) < 2 || len(body.GetInput()) != len(ins) {
			return nil, errFallback
		}
		s := &loopStep{m: b.m, trip: b.slotOf(ins[0]), cond: b.slotOf(ins[1])}
		if s.trip < -1 || s.cond < -1 {
			return nil, errFallback
		}
		for _, c := range ins[2:] {
			k := b.slotOf(c)
			if k < 0 {
				return nil, errFallback
			}
			s.carried = append(s.carried, k)
		}
		s.nScan = len(body.GetOutput()) - 1 - len(s.carried)
		if s.nScan < 0 {
			return nil, errFallback
		}
		var formal []string
		for _, f := range body.GetInput() {
			formal = append(formal, f.GetName())
		}
		fn, fs, fd := b.freeOf(body)
		s.body.init(b.m, b.st, body, formal, fn, fs, fd)
		s.outs = b.outSlots(n)
		if len(s.outs) > len(s.carried)+s.nScan {
			return nil, errFallback
		}
		return s, nil
	default:
		s := &evalStep{m: b.m, n: n, idx: cut}
		seen := map[string]bool{}
		for _, name := range liveNames([]*pb.NodeProto{n}, nil) {
			if k, ok := b.names[name]; ok && !seen[name] {
				seen[name] = true
				s.names, s.ins = append(s.names, name), append(s.ins, k)
			}
		}
		s.outNames = n.GetOutput()
		s.outs = b.outSlots(n)
		return s, nil
	}
}

// compile makes the segment of the imported nodes, whose outputs are the
// tensors ts (for the names, into the slots) the rest of the graph reads.
func (b *stageBuilder) compile(im *importer, dataSlot map[string]int, names []string, ts []*ge.Tensor, slots []int) (*segment, error) {
	im.g.OutputNamed(names, ts...)
	if im.g.Err() != nil {
		return nil, errFallback
	}
	cm, err := ge.Compile(im.g)
	if err != nil || len(cm.Outputs) != len(slots) {
		return nil, errFallback
	}
	seg := &segment{cm: cm, out: slots}
	for _, d := range cm.Inputs {
		k, ok := dataSlot[d.Name]
		if !ok {
			return nil, errFallback
		}
		seg.in = append(seg.in, k)
	}
	// The run's memory limit bounds every tensor the run makes (weights
	// are the model's): a segment making a larger one runs interpreted,
	// which refuses it.
	limit := b.m.memLimit()
	for _, d := range cm.Outputs {
		if d.Size > limit {
			return nil, errFallback
		}
	}
	for _, t := range cm.Tasks {
		for _, a := range t.Args {
			if a.Mem != ge.MemFixed && a.Size > limit {
				return nil, errFallback
			}
		}
	}
	for i := range cm.Tasks {
		seg.kernels = append(seg.kernels, ge.KernelFor(cm.Tasks[i].Op))
	}
	seg.w = aligned(make([]byte, cm.WeightSize))
	copy(seg.w, cm.Weights)
	for i, s := range slots {
		d := cm.Outputs[i]
		b.st.descs[s] = ge.TensorDesc{DataType: d.DataType, Format: acl.FormatND, Dims: d.Dims}
	}
	return seg, nil
}
