package onnx

import (
	"container/list"
	"context"
	"errors"
	"strconv"
	"sync"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	pb "github.com/ascend-go/cann/ge/onnx/internal/onnxpb"
)

// Model is an ONNX model loaded once and run many times with input shapes
// that may change from run to run, as a device model with unknown dims
// (ATC's -1) does: the ACL model API carries each run's real shapes.
//
// Each distinct tuple of input shapes gets its own plan on first use,
// kept in a bounded cache (least recently used plans are evicted and
// counted in Stats). A plan is either compiled, when the model's shapes
// and control flow follow from the input shapes alone (Shape, Size, Range,
// Expand, Reshape from a computed shape and an If on a shape fold at that
// point), or interpreted, when they depend on the input values too
// (NonZero, TopK with a computed k, an If on data, a Loop whose trip count
// is data): then the plan is staged (staged.go): the nodes up to the one
// that needs a value are compiled, that node runs on the host with the
// run's values (If picks a branch, Loop runs its body, each compiled per
// tuple of its input shapes), and so on, under the run's context and
// memory limit; what the stages cannot express is evaluated node by node.
//
// A Model is safe for concurrent use.
type Model struct {
	mp     *pb.ModelProto
	opset  int64
	cfg    config
	inputs []Input
	outs   []ge.IODesc
	kinds  []ValueKind // of the outputs
	// valueIO: some input or output is a sequence or an optional, so the
	// model runs (interpreted) through RunValues only.
	valueIO bool

	mu    sync.Mutex
	plans map[string]*list.Element
	lru   *list.List
	stats Stats
}

// Input describes a model input: its type and dims, -1 where a dim is
// symbolic or unknown, and the dims' symbolic names ("" where fixed or
// unnamed).
type Input struct {
	Name     string
	DataType acl.DataType // a sequence's or optional's element type
	Dims     []int64      // nil for a sequence or optional
	Symbols  []string
	// Ranges gives each dim's [min, max] (max -1: no bound), as
	// aclmdlGetInputDimsRange reports them: [d, d] for a fixed dim,
	// [0, -1] for a symbolic one (ONNX allows an empty dim) unless
	// WithInputRange narrows it.
	Ranges [][2]int64
	Kind   ValueKind
}

// WithInputRange bounds the dims of the named input, as ATC's
// --input_shape_range does ("x:[1~8,3,-1,-1]"): ranges[i] is dim i's
// [min, max], max -1 for no bound. A run whose dim falls outside is refused
// with ErrShapeMismatch.
func WithInputRange(name string, ranges [][2]int64) Option {
	return func(c *config) {
		if c.ranges == nil {
			c.ranges = map[string][][2]int64{}
		}
		c.ranges[name] = append([][2]int64(nil), ranges...)
	}
}

// Stats counts what a Model's plan cache did.
type Stats struct {
	Plans       int   // plans held now
	Compiles    int64 // plans built (compiled or found to need interpretation)
	Hits        int64 // runs whose plan was cached
	Evictions   int64 // plans dropped to keep within the bound
	Interpreted int64 // runs whose plan needs values (staged or node by node)
	// Staged counts the interpreted runs that ran as compiled stages
	// (segments between host control steps) without the interpreter.
	Staged int64
}

// DefaultMaxPlans bounds a Model's plan cache unless WithMaxPlans says
// otherwise.
const DefaultMaxPlans = 16

// DefaultMemoryLimit bounds any one tensor of an interpreted run unless
// WithMemoryLimit says otherwise.
const DefaultMemoryLimit = 4 << 30

// WithMaxPlans bounds the number of shape plans a Model keeps (at least 1).
func WithMaxPlans(n int) Option { return func(c *config) { c.maxPlans = max(n, 1) } }

// WithMemoryLimit bounds the bytes any one tensor of a run may take (the
// device memory a run may use): a larger one fails the run with
// ErrOutOfMemory (ACL_ERROR_GE_MEMORY_ALLOCATION).
func WithMemoryLimit(n int64) Option { return func(c *config) { c.memLimit = n } }

// plan is the compiled model of one input-shape tuple, or nil when the
// tuple runs interpreted.
type plan struct {
	key     string
	m       *ge.CompiledModel
	scratch sync.Pool // *planScratch of m's runs
	wOnce   sync.Once
	w       []byte      // m's weights, aligned as device memory is
	kernels []ge.Kernel // m's task kernels (see runCompiled)
	// root is the first stage of an interpreted plan (nil: the
	// interpreter runs it whole); states pools its runs' *runState.
	root   *stage
	states sync.Pool
}

// Load reads an ONNX model for Run. It refuses what no run could import:
// a malformed model, an op (in the graph or any subgraph) without a
// converter, a graph input without a shape. A model whose input shapes
// are all fixed is compiled now, so its conversion errors show at load.
func Load(data []byte, opts ...Option) (*Model, error) {
	cfg := newConfig(opts)
	if len(cfg.gears) > 0 {
		return nil, modelError(ErrDynamicShape, "WithDynamicBatch builds one model per gear: use CompileBatch")
	}
	mp, opset, err := parseModel(data)
	if err != nil {
		return nil, err
	}
	if err := checkOps(mp.GetGraph(), opset, 0); err != nil {
		return nil, err
	}
	m := &Model{mp: mp, opset: opset, cfg: cfg, plans: map[string]*list.Element{}, lru: list.New()}
	if err := m.describe(); err != nil {
		return nil, err
	}
	if m.Static() {
		descs := make([]ge.TensorDesc, len(m.inputs))
		for i, in := range m.inputs {
			descs[i] = ge.TensorDesc{DataType: in.DataType, Format: acl.FormatND, Dims: in.Dims}
		}
		if _, err := m.plan(descs); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// checkOps refuses nodes no converter handles, in gp and its subgraphs.
func checkOps(gp *pb.GraphProto, opset int64, depth int) error {
	if depth > maxSubgraphDepth {
		return modelError(ErrInvalidModel, "subgraphs nest deeper than %d", maxSubgraphDepth)
	}
	for i, n := range gp.GetNode() {
		key := n.GetOpType()
		switch d := n.GetDomain(); d {
		case "", "ai.onnx":
		case "ai.onnx.ml", trainingDomain:
			key = d + "/" + key
		default:
			return newError(nodeName(i, n), n.GetOpType(), opset, ErrUnsupportedOp, "domain %q is not supported", d)
		}
		if converters[key] == nil {
			return newError(nodeName(i, n), n.GetOpType(), opset, ErrUnsupportedOp, "op type %s is not supported", key)
		}
		for _, a := range n.GetAttribute() {
			if g := a.GetG(); g != nil {
				if err := checkOps(g, opset, depth+1); err != nil {
					return err
				}
			}
			for _, g := range a.GetGraphs() {
				if err := checkOps(g, opset, depth+1); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func nodeName(i int, n *pb.NodeProto) string {
	if n.GetName() != "" {
		return n.GetName()
	}
	if outs := n.GetOutput(); len(outs) > 0 && outs[0] != "" {
		return outs[0]
	}
	return n.GetOpType() + "_" + strconv.Itoa(i)
}

// describe reads the graph's inputs and outputs.
func (m *Model) describe() error {
	gp := m.mp.GetGraph()
	init := map[string]bool{}
	for _, t := range gp.GetInitializer() {
		init[t.GetName()] = true
	}
	for _, in := range gp.GetInput() {
		nm := in.GetName()
		if init[nm] {
			continue
		}
		if _, ok := m.cfg.values[nm]; ok {
			continue
		}
		tt := in.GetType().GetTensorType()
		if tt == nil {
			k, dt, err := otherKind(nm, in.GetType())
			if err != nil {
				return err
			}
			m.inputs = append(m.inputs, Input{Name: nm, DataType: dt, Kind: k})
			m.valueIO = true
			continue
		}
		dt, ok := aclType(tt.GetElemType())
		if !ok {
			return modelError(ErrUnsupportedDataType, "graph input %q has element type %s", nm, typeName(tt.GetElemType()))
		}
		fixed, hasFixed := m.cfg.shapes[nm]
		if tt.GetShape() == nil {
			if !hasFixed {
				return modelError(ErrDynamicShape, "graph input %q has no shape (not even a rank); give one with WithInputShape", nm)
			}
			m.inputs = append(m.inputs, Input{Name: nm, DataType: dt, Dims: fixed, Symbols: make([]string, len(fixed))})
			continue
		}
		pd := tt.GetShape().GetDim()
		if hasFixed && len(fixed) != len(pd) {
			return modelError(ErrInvalidModel, "WithInputShape gives %q rank %d, the model says %d", nm, len(fixed), len(pd))
		}
		in := Input{Name: nm, DataType: dt, Dims: make([]int64, len(pd)), Symbols: make([]string, len(pd))}
		for i, d := range pd {
			_, known := d.GetValue().(*pb.TensorShapeProto_Dimension_DimValue)
			switch {
			case known && hasFixed && fixed[i] != d.GetDimValue():
				return modelError(ErrInvalidModel, "WithInputShape gives %q dim %d = %d, the model says %d", nm, i, fixed[i], d.GetDimValue())
			case known:
				in.Dims[i] = d.GetDimValue()
			case hasFixed:
				in.Dims[i] = fixed[i]
			default:
				in.Dims[i], in.Symbols[i] = -1, d.GetDimParam()
			}
		}
		in.Ranges = make([][2]int64, len(in.Dims))
		for i, d := range in.Dims {
			in.Ranges[i] = [2]int64{d, d}
			if d < 0 {
				in.Ranges[i] = [2]int64{0, -1}
			}
		}
		if r, ok := m.cfg.ranges[nm]; ok {
			if len(r) != len(in.Dims) {
				return modelError(ErrInvalidModel, "WithInputRange gives %q %d ranges, the input has rank %d", nm, len(r), len(in.Dims))
			}
			for i, x := range r {
				if x[0] < 0 || x[1] >= 0 && x[1] < x[0] || in.Dims[i] >= 0 && (x[0] > in.Dims[i] || x[1] >= 0 && x[1] < in.Dims[i]) {
					return modelError(ErrInvalidModel, "WithInputRange gives %q dim %d the range %v, which is empty or excludes its fixed value %d", nm, i, x, in.Dims[i])
				}
				if in.Dims[i] < 0 {
					in.Ranges[i] = x
				}
			}
		}
		m.inputs = append(m.inputs, in)
	}
	for nm := range m.cfg.ranges {
		if !m.hasInput(nm) {
			return modelError(ErrInvalidModel, "WithInputRange names %q, which is not a graph input", nm)
		}
	}
	for nm := range m.cfg.values {
		if init[nm] || !m.hasInput(nm) {
			return modelError(ErrInvalidModel, "WithInputValue names %q, which is not a graph input", nm)
		}
	}
	for nm := range m.cfg.shapes {
		if !m.hasInput(nm) {
			return modelError(ErrInvalidModel, "WithInputShape names %q, which is not a graph input", nm)
		}
	}
	for _, o := range gp.GetOutput() {
		d := ge.IODesc{Name: o.GetName(), Format: acl.FormatND}
		kind := KindTensor
		if tp := o.GetType(); tp != nil && tp.GetTensorType() == nil && tp.GetValue() != nil {
			k, dt, err := otherKind(o.GetName(), tp)
			if err != nil {
				return err
			}
			kind, d.DataType, m.valueIO = k, dt, true
		}
		m.kinds = append(m.kinds, kind)
		if tt := o.GetType().GetTensorType(); tt != nil {
			d.DataType, _ = aclType(tt.GetElemType())
			if sh := tt.GetShape(); sh != nil {
				for _, x := range sh.GetDim() {
					v := int64(-1)
					if _, ok := x.GetValue().(*pb.TensorShapeProto_Dimension_DimValue); ok {
						v = x.GetDimValue()
					}
					d.Dims = append(d.Dims, v)
				}
			} else {
				d.Dims = []int64{-2} // unknown rank, as GE's UNKNOWN_RANK
			}
		}
		m.outs = append(m.outs, d)
	}
	if len(m.outs) == 0 {
		return modelError(ErrInvalidModel, "graph has no outputs")
	}
	return nil
}

// otherKind reads a sequence or optional type.
func otherKind(name string, tp *pb.TypeProto) (ValueKind, acl.DataType, error) {
	switch {
	case tp.GetSequenceType() != nil:
		return KindSequence, elemTypeOf(tp), nil
	case tp.GetOptionalType() != nil:
		return KindOptional, elemTypeOf(tp.GetOptionalType().GetElemType()), nil
	}
	return 0, 0, modelError(ErrUnsupportedDataType, "%q is neither a tensor, a sequence nor an optional", name)
}

// OutputKinds returns each output's kind.
func (m *Model) OutputKinds() []ValueKind {
	if m == nil {
		return nil
	}
	return append([]ValueKind(nil), m.kinds...)
}

func (m *Model) hasInput(name string) bool {
	for _, in := range m.mp.GetGraph().GetInput() {
		if in.GetName() == name {
			return true
		}
	}
	return false
}

// Inputs returns the model inputs (copies).
func (m *Model) Inputs() []Input {
	if m == nil {
		return nil
	}
	out := make([]Input, len(m.inputs))
	for i, in := range m.inputs {
		out[i] = in
		out[i].Dims, out[i].Symbols = append([]int64(nil), in.Dims...), append([]string(nil), in.Symbols...)
		out[i].Ranges = append([][2]int64(nil), in.Ranges...)
	}
	return out
}

// Outputs returns the model outputs as the graph declares them: -1 for a
// dim known only at run time, [-2] for an unknown rank.
func (m *Model) Outputs() []ge.IODesc {
	if m == nil {
		return nil
	}
	out := make([]ge.IODesc, len(m.outs))
	for i, o := range m.outs {
		out[i] = o
		out[i].Dims = append([]int64(nil), o.Dims...)
	}
	return out
}

// Static reports whether every input dim is fixed (and every input and
// output a tensor).
func (m *Model) Static() bool {
	if m == nil {
		return false
	}
	if m.valueIO {
		return false
	}
	for _, in := range m.inputs {
		for _, d := range in.Dims {
			if d < 0 {
				return false
			}
		}
	}
	return true
}

// Stats returns the plan cache's counters.
func (m *Model) Stats() Stats {
	if m == nil {
		return Stats{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.stats
	s.Plans = m.lru.Len()
	return s
}

// CheckShapes checks a run's input descriptions against the model: count,
// data types, ranks, fixed dims, and that one symbolic name has one value
// across the inputs. Errors match ErrShapeMismatch (or
// ErrUnsupportedDataType) and name the inputs at fault.
func (m *Model) CheckShapes(in []ge.TensorDesc) error {
	if m == nil {
		return acl.NilHandle("onnx.Model.CheckShapes", "model")
	}
	if len(in) != len(m.inputs) {
		return modelError(ErrShapeMismatch, "%d inputs given, the model has %d", len(in), len(m.inputs))
	}
	type seen struct {
		v     int64
		input string
		dim   int
	}
	syms := map[string]seen{}
	for i, want := range m.inputs {
		got := in[i]
		if got.DataType != want.DataType {
			return modelError(ErrShapeMismatch, "input %q is %s, the model takes %s", want.Name, got.DataType, want.DataType)
		}
		if len(got.Dims) != len(want.Dims) {
			return modelError(ErrShapeMismatch, "input %q has rank %d (dims %v), the model takes rank %d %v", want.Name, len(got.Dims), got.Dims, len(want.Dims), want.Dims)
		}
		for k, d := range got.Dims {
			switch {
			case d < 0:
				return modelError(ErrShapeMismatch, "input %q dim %d is %d: dims must be at least 0", want.Name, k, d)
			case want.Dims[k] >= 0 && d != want.Dims[k]:
				return modelError(ErrShapeMismatch, "input %q dim %d is %d, the model fixes it at %d", want.Name, k, d, want.Dims[k])
			case want.Ranges != nil && (d < want.Ranges[k][0] || want.Ranges[k][1] >= 0 && d > want.Ranges[k][1]):
				return modelError(ErrShapeMismatch, "input %q dim %d is %d, outside its range [%d, %d]", want.Name, k, d, want.Ranges[k][0], want.Ranges[k][1])
			}
			if s := want.Symbols[k]; s != "" {
				if prev, ok := syms[s]; ok && prev.v != d {
					return modelError(ErrShapeMismatch, "symbolic dim %q is %d in input %q (dim %d) but %d in input %q (dim %d)", s, prev.v, prev.input, prev.dim, d, want.Name, k)
				} else if !ok {
					syms[s] = seen{d, want.Name, k}
				}
			}
		}
		if err := checkShape(got.Dims, got.DataType); err != nil {
			return modelError(ErrShapeMismatch, "input %q: %v", want.Name, err)
		}
		if got.Size() > m.memLimit() {
			return modelError(ErrOutOfMemory, "input %q is %d bytes, over the %d a run's tensor may hold", want.Name, got.Size(), m.memLimit())
		}
	}
	return nil
}

func (m *Model) memLimit() int64 {
	if m.cfg.memLimit > 0 {
		return m.cfg.memLimit
	}
	return DefaultMemoryLimit
}

func shapeKey(in []ge.TensorDesc) string {
	var key []byte
	for _, d := range in {
		key = appendDescKey(key, d)
	}
	return string(key)
}

// appendDescKey appends one input's part of a plan key: its data type and
// dims (a plan exists only for a tuple CheckShapes accepted, so finding
// one by this key stands for the check).
func appendDescKey(key []byte, d ge.TensorDesc) []byte {
	key = strconv.AppendInt(key, int64(d.DataType), 10)
	key = append(key, ':')
	for _, x := range d.Dims {
		key = strconv.AppendInt(key, x, 10)
		key = append(key, ',')
	}
	return append(key, ';')
}

// cachedPlan finds the plan of these inputs' shapes without allocating,
// or returns nil.
func (m *Model) cachedPlan(in []ge.HostTensor) *plan {
	var kb [256]byte
	key := kb[:0]
	for _, t := range in {
		key = appendDescKey(key, t.Desc)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.plans[string(key)]
	if !ok {
		return nil
	}
	m.lru.MoveToFront(e)
	m.stats.Hits++
	return e.Value.(*plan)
}

// Plan returns the compiled model for these input shapes, building it on
// first use, or nil when the shapes run interpreted (their model needs
// the input values). The descriptions are checked as CheckShapes does.
func (m *Model) Plan(in []ge.TensorDesc) (*ge.CompiledModel, error) {
	if err := m.CheckShapes(in); err != nil {
		return nil, err
	}
	p, err := m.plan(in)
	if err != nil {
		return nil, err
	}
	return p.m, nil
}

func (m *Model) plan(in []ge.TensorDesc) (*plan, error) {
	key := shapeKey(in)
	m.mu.Lock()
	if e, ok := m.plans[key]; ok {
		m.lru.MoveToFront(e)
		m.stats.Hits++
		m.mu.Unlock()
		return e.Value.(*plan), nil
	}
	m.mu.Unlock()
	p, err := m.build(key, in)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.plans[key]; ok { // a concurrent run built it first
		return e.Value.(*plan), nil
	}
	m.stats.Compiles++
	m.plans[key] = m.lru.PushFront(p)
	limit := m.cfg.maxPlans
	if limit <= 0 {
		limit = DefaultMaxPlans
	}
	for m.lru.Len() > limit {
		old := m.lru.Back()
		m.lru.Remove(old)
		delete(m.plans, old.Value.(*plan).key)
		m.stats.Evictions++
	}
	return p, nil
}

// build imports the model at these shapes and compiles it; a model that
// needs values to import gets an interpreted plan.
func (m *Model) build(key string, in []ge.TensorDesc) (*plan, error) {
	for _, d := range in {
		if d.NumElements() == 0 {
			return &plan{key: key}, nil // an empty input is a value only
		}
	}
	cfg := m.cfg
	cfg.shapes = map[string][]int64{}
	for k, v := range m.cfg.shapes {
		cfg.shapes[k] = v
	}
	for i, d := range in {
		cfg.shapes[m.inputs[i].Name] = d.Dims
	}
	im := newImporter(m.mp, m.opset, cfg)
	g, err := im.run(m.mp.GetGraph())
	if err != nil {
		if needsValues(err) {
			return m.stagedPlan(key, in), nil
		}
		return nil, err
	}
	cm, err := ge.Compile(g)
	if err != nil {
		return nil, asError(err)
	}
	return &plan{key: key, m: cm}, nil
}

// needsValues reports whether an import failed only because a node needs
// a value computed at run time.
func needsValues(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == ErrDynamicShape && e.Op != ""
}

// asError keeps an *Error as is and makes anything else one.
func asError(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	k := kindOf(err)
	if acl.CodeOf(err) == acl.CodeUnsupportedDataType {
		k = ErrUnsupportedDataType
	}
	return modelError(k, "%s", unwrapKind(err))
}

// RunValues is Run for models with sequence or optional inputs or
// outputs (it runs any model): every run of such a model is interpreted.
func (m *Model) RunValues(ctx context.Context, in []Value) ([]Value, error) {
	if m == nil {
		return nil, acl.NilHandle("onnx.Model.RunValues", "model")
	}
	if !m.valueIO {
		ts := make([]ge.HostTensor, len(in))
		for i, v := range in {
			if v.Kind != KindTensor {
				return nil, modelError(ErrShapeMismatch, "input %d is a %s, the model takes a tensor", i, v.Kind)
			}
			ts[i] = v.Tensor
		}
		out, err := m.run(ctx, ts, nil)
		if err != nil {
			return nil, err
		}
		vs := make([]Value, len(out))
		for i, t := range out {
			vs[i] = Value{Tensor: t}
		}
		return vs, nil
	}
	if len(in) != len(m.inputs) {
		return nil, modelError(ErrShapeMismatch, "%d inputs given, the model has %d", len(in), len(m.inputs))
	}
	for i, want := range m.inputs {
		if in[i].Kind != want.Kind {
			return nil, modelError(ErrShapeMismatch, "input %q is a %s, the model takes a %s", want.Name, in[i].Kind, want.Kind)
		}
		var ts []ge.HostTensor
		switch in[i].Kind {
		case KindTensor:
			ts = []ge.HostTensor{in[i].Tensor}
		case KindSequence:
			ts = in[i].Seq
		case KindOptional:
			if e := in[i].Elem; e != nil && e.Kind == KindSequence {
				ts = e.Seq
			} else if e != nil {
				ts = []ge.HostTensor{e.Tensor}
			}
		}
		for _, t := range ts {
			if err := checkShape(t.Desc.Dims, t.Desc.DataType); err != nil {
				return nil, modelError(ErrShapeMismatch, "input %q: %v", want.Name, err)
			}
			if int64(len(t.Data)) < t.Desc.Size() || t.Desc.Size() > m.memLimit() {
				return nil, modelError(ErrShapeMismatch, "input %q holds %d bytes for %s", want.Name, len(t.Data), t.Desc)
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, modelError(ErrCanceled, "run not started: %v", err)
	}
	m.mu.Lock()
	m.stats.Interpreted++
	m.mu.Unlock()
	return m.interpret(ctx, in)
}

// interpret imports the model with every input a value, so every node
// folds: the import is the evaluation. What cannot fold (a random op)
// remains a graph, compiled and run once.
func (m *Model) interpret(ctx context.Context, in []Value) ([]Value, error) {
	cfg := m.cfg
	cfg.values = map[string]ge.HostTensor{}
	cfg.other = map[string]*value{}
	for k, v := range m.cfg.values {
		cfg.values[k] = v
	}
	for i, v := range in {
		if v.Kind == KindTensor {
			cfg.values[m.inputs[i].Name] = v.Tensor
		} else {
			cfg.other[m.inputs[i].Name] = fromValue(v, m.inputs[i].DataType)
		}
	}
	im := newImporter(m.mp, m.opset, cfg)
	im.eval, im.foldLimit, im.ctx = true, m.memLimit(), ctx
	gp := m.mp.GetGraph()
	if err := im.sources(gp); err != nil {
		return nil, err
	}
	if err := im.nodes(gp); err != nil {
		return nil, err
	}
	out := make([]Value, len(gp.GetOutput()))
	rest := false
	for i, o := range gp.GetOutput() {
		v := im.sc.get(o.GetName())
		if v == nil {
			return nil, modelError(ErrInvalidModel, "graph output %q is produced by no node", o.GetName())
		}
		if v.kind != m.kinds[i] && !(m.kinds[i] == KindTensor && v.kind != KindTensor && o.GetType().GetValue() == nil) {
			return nil, modelError(ErrInvalidModel, "graph output %q is declared a %s but computes a %s", o.GetName(), m.kinds[i], v.kind)
		}
		x, ok := toValue(v)
		if !ok {
			if v.kind != KindTensor {
				return nil, modelError(ErrUnsupportedOp, "graph output %q is a %s of values computed on the device", o.GetName(), v.kind)
			}
			rest = true
			break
		}
		out[i] = x
	}
	if !rest {
		return out, nil
	}
	g, err := im.outputs(gp)
	if err != nil {
		return nil, err
	}
	cm, err := ge.Compile(g)
	if err != nil {
		return nil, asError(err)
	}
	ts, err := (&plan{m: cm}).run(nil, nil)
	if err != nil {
		return nil, err
	}
	for i, t := range ts {
		out[i] = Value{Tensor: t}
	}
	return out, nil
}
