package onnx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	pb "github.com/ascend-go/cann/ge/onnx/internal/onnxpb"
)

// The opsets of the default domain this importer reads: 7 to 21, 6 (the
// PyTorch-exported models of ONNX's own test data) with its legacy
// broadcast attributes, and 1 to 5 for the ops whose form did not change
// before opset 6 but for the consumed_inputs hint (legacyOps).
const (
	MinOpset = 1
	MaxOpset = 21
)

// legacyOps are the ops imported from models of opsets 1 to 5: their
// definitions there equal opset 6's once consumed_inputs (a memory-reuse
// hint without effect on results, dropped in opset 6) is set aside.
var legacyOps = map[string]bool{
	"Abs": true, "Ceil": true, "Elu": true, "Exp": true, "Floor": true, "GlobalAveragePool": true,
	"GlobalLpPool": true, "GlobalMaxPool": true, "HardSigmoid": true, "LeakyRelu": true, "Log": true,
	"Neg": true, "Not": true, "And": true, "Or": true, "Xor": true, "Reciprocal": true, "Relu": true,
	"Selu": true, "Sigmoid": true, "Softplus": true, "Softsign": true, "Sqrt": true, "Tanh": true,
	"Identity": true, "Transpose": true, "MatMul": true, "Softmax": true, "LogSoftmax": true,
	"Hardmax": true, "Flatten": true, "Constant": true, "Size": true, "Shape": true,
	"ReduceMax": true, "ReduceMin": true, "ReduceMean": true, "ReduceSum": true, "ReduceProd": true,
	"ReduceL1": true, "ReduceL2": true, "ReduceLogSum": true, "ReduceLogSumExp": true, "ReduceSumSquare": true,
	"ArgMax": true, "ArgMin": true, "Equal": true, "Less": true, "Greater": true,
}

// Option adjusts Import. Options are immutable closures, safe for
// concurrent use and reuse.
type Option func(*config)

type config struct {
	dir    string
	shapes map[string][]int64
	values map[string]ge.HostTensor
	gears  []int64 // WithDynamicBatch
	batch  int64   // the gear being imported, 0 for a static import
	// Model's options.
	maxPlans int
	memLimit int64
	other    map[string]*value // sequence and optional inputs of a run
	ranges   map[string][][2]int64
}

// WithDynamicBatch imports a model whose graph inputs have a symbolic
// batch (dim 0) with these batch gears, as ATC does with
// --dynamic_batch_size "1,2,4,8": CompileBatch then builds one compiled
// model per gear and a runtime picks the gear per execution. Every graph
// input must have a symbolic dim 0. Only CompileBatch takes this option.
func WithDynamicBatch(gears []int) Option {
	return func(c *config) {
		c.gears = c.gears[:0]
		for _, g := range gears {
			c.gears = append(c.gears, int64(g))
		}
	}
}

// withBatch imports one gear.
func withBatch(b int64) Option { return func(c *config) { c.batch = b } }

// WithInputValue freezes the named graph input to a constant: it is no
// longer a model input, and what depends only on it folds. This is how a
// model whose shape-like inputs (Reshape's shape, Slice's starts) are graph
// inputs becomes static, as ATC needs them fixed too.
func WithInputValue(name string, v ge.HostTensor) Option {
	return func(c *config) { c.values[name] = v }
}

// WithExternalDataDir reads tensors stored outside the model (ONNX
// external data) from files under dir; a location outside dir is refused.
func WithExternalDataDir(dir string) Option { return func(c *config) { c.dir = dir } }

// WithInputShape fixes the dims of the named graph input, replacing
// symbolic dims (dim_param) or unknown ones; known dims must agree.
func WithInputShape(name string, dims []int64) Option {
	return func(c *config) { c.shapes[name] = append([]int64(nil), dims...) }
}

// Compile imports the ONNX model and compiles it with ge.Compile.
func Compile(data []byte, opts ...Option) (*ge.CompiledModel, error) {
	if cfg := newConfig(opts); len(cfg.gears) > 0 {
		return nil, modelError(ErrDynamicShape, "WithDynamicBatch builds one model per gear: use CompileBatch")
	}
	g, err := Import(data, opts...)
	if err != nil {
		return nil, err
	}
	return ge.Compile(g)
}

// CompileBatch imports the ONNX model once per gear of WithDynamicBatch
// (required) with the graph inputs' batch dim set to the gear, and
// compiles the gears into one ge.BatchModel, whose MarshalBinary bytes
// the fallback loads as a dynamic-batch model.
func CompileBatch(data []byte, opts ...Option) (*ge.BatchModel, error) {
	cfg := newConfig(opts)
	if len(cfg.gears) == 0 {
		return nil, modelError(ErrDynamicShape, "CompileBatch needs WithDynamicBatch")
	}
	bm, err := ge.CompileBatch(cfg.gears, func(b int64) (*ge.Graph, error) {
		return Import(data, append(slices.Clip(opts), withBatch(b))...)
	})
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, e
		}
		return nil, modelError(ErrInvalidModel, "dynamic batch %v: %v", cfg.gears, err)
	}
	return bm, nil
}

func newConfig(opts []Option) config {
	cfg := config{shapes: map[string][]int64{}, values: map[string]ge.HostTensor{}}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// CompileFile reads and compiles an ONNX file; external data is read from
// the file's directory unless WithExternalDataDir says otherwise.
func CompileFile(path string, opts ...Option) (*ge.CompiledModel, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Compile(data, append([]Option{WithExternalDataDir(filepath.Dir(path))}, opts...)...)
}

// LooksLikeONNX reports whether data decodes as an ONNX ModelProto with a
// graph and a default-domain opset: how a loader tells ONNX bytes from
// other model formats.
func LooksLikeONNX(data []byte) bool {
	var m pb.ModelProto
	if err := (proto.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(data, &m); err != nil {
		return false
	}
	if m.GetGraph() == nil || m.GetIrVersion() <= 0 {
		return false
	}
	_, ok := defaultOpset(&m)
	return ok
}

func defaultOpset(m *pb.ModelProto) (int64, bool) {
	for _, o := range m.GetOpsetImport() {
		if d := o.GetDomain(); d == "" || d == "ai.onnx" {
			return o.GetVersion(), true
		}
	}
	return 0, false
}

// maxFoldBytes bounds what constant folding materialises at import time.
const maxFoldBytes = 16 << 20

// value is an ONNX tensor during import: a graph tensor, a constant, or
// both (a constant materialised as a Const node).
type value struct {
	desc ge.TensorDesc
	t    *ge.Tensor
	c    *ge.HostTensor
	// A sequence or an optional (kind) holds no tensor of its own: elems
	// are a sequence's elements, or an optional's element (none when
	// empty); elem is the element type a sequence or optional declares.
	kind  ValueKind
	elems []*value
	elem  acl.DataType
}

// scope maps ONNX names to values. A subgraph (If's branches, Loop's and
// Scan's bodies) gets a child scope: its own names shadow the outer ones,
// and a name it does not define is looked up outward, as ONNX's outer-scope
// references are.
type scope struct {
	vals   map[string]*value
	parent *scope
}

func newScope(parent *scope) *scope { return &scope{vals: map[string]*value{}, parent: parent} }

func (s *scope) get(name string) *value {
	for ; s != nil; s = s.parent {
		if v, ok := s.vals[name]; ok {
			return v
		}
	}
	return nil
}

func (s *scope) set(name string, v *value) { s.vals[name] = v }

type importer struct {
	g     *ge.Graph
	opset int64
	cfg   config
	sc    *scope
	used  map[string]bool
	// eval is set when every graph input is a value (Model.Run's
	// interpreted plans): everything folds, and foldLimit bounds each
	// tensor a fold makes (the device memory a run may use).
	eval      bool
	foldLimit int64
	ctx       context.Context
	depth     int // subgraph nesting
}

// Import decodes an ONNX model and builds its ge graph. Graph inputs keep
// their names and order (initializers that are also listed as inputs are
// constants); graph outputs are the model outputs under their ONNX names.
func Import(data []byte, opts ...Option) (*ge.Graph, error) {
	cfg := newConfig(opts)
	if len(cfg.gears) > 0 && cfg.batch == 0 {
		return nil, modelError(ErrDynamicShape, "WithDynamicBatch builds one graph per gear: use CompileBatch")
	}
	m, opset, err := parseModel(data)
	if err != nil {
		return nil, err
	}
	im := newImporter(m, opset, cfg)
	return im.run(m.GetGraph())
}

// parseModel decodes a ModelProto and checks what every import needs: a
// graph and a default-domain opset in range.
func parseModel(data []byte) (*pb.ModelProto, int64, error) {
	var m pb.ModelProto
	if err := proto.Unmarshal(data, &m); err != nil {
		return nil, 0, modelError(ErrInvalidModel, "not a valid ONNX model (the bytes do not decode as a ModelProto: %v)", err)
	}
	if m.GetGraph() == nil {
		return nil, 0, modelError(ErrInvalidModel, "not a valid ONNX model: it has no graph")
	}
	training, err := trainingOpset(&m)
	if err != nil {
		return nil, 0, err
	}
	opset, ok := defaultOpset(&m)
	if !ok && training {
		return &m, 0, nil // training ops only: opset 0 refuses default-domain nodes
	}
	if !ok {
		var domains []string
		for _, o := range m.GetOpsetImport() {
			domains = append(domains, o.GetDomain())
		}
		return nil, 0, modelError(ErrUnsupportedOp, "model imports no opset of the default domain (only %q)", domains)
	}
	if opset < MinOpset || opset > MaxOpset {
		return nil, 0, modelError(ErrUnsupportedOp, "opset %d is outside the supported range [%d, %d]", opset, MinOpset, MaxOpset)
	}
	return &m, opset, nil
}

func newImporter(m *pb.ModelProto, opset int64, cfg config) *importer {
	name := m.GetGraph().GetName()
	if name == "" {
		name = "onnx"
	}
	return &importer{g: ge.NewGraph(name), opset: opset, cfg: cfg, sc: newScope(nil), used: map[string]bool{},
		foldLimit: maxFoldBytes, ctx: context.Background()}
}

// run imports the main graph: sources, nodes, outputs.
func (im *importer) run(gp *pb.GraphProto) (*ge.Graph, error) {
	if err := im.sources(gp); err != nil {
		return nil, err
	}
	if err := im.nodes(gp); err != nil {
		return nil, err
	}
	return im.outputs(gp)
}

// nodes converts a graph's nodes in order into the current scope.
func (im *importer) nodes(gp *pb.GraphProto) error {
	for i, n := range gp.GetNode() {
		if err := im.ctx.Err(); err != nil {
			return modelError(ErrCanceled, "run ended at node %d (%s): %v", i, n.GetOpType(), err)
		}
		if err := im.node(i, n); err != nil {
			return err
		}
	}
	return nil
}

// sources adds the initializers (constants) and the graph inputs (Data).
func (im *importer) sources(gp *pb.GraphProto) error {
	for _, t := range gp.GetInitializer() {
		h, err := decodeTensor(t, im.cfg.dir)
		if err != nil {
			return modelError(kindOf(err), "initializer: %v", unwrapKind(err))
		}
		if t.GetName() == "" {
			return modelError(ErrInvalidModel, "initializer without a name")
		}
		im.sc.set(t.GetName(), &value{desc: h.Desc, c: &h})
	}
	if len(gp.GetSparseInitializer()) > 0 {
		return modelError(ErrUnsupportedDataType, "sparse initializers are not supported")
	}
	index := 0
	for _, in := range gp.GetInput() {
		nm := in.GetName()
		if im.sc.get(nm) != nil {
			continue // an initializer listed as input: a constant here
		}
		tt := in.GetType().GetTensorType()
		if tt == nil {
			v, ok := im.cfg.other[nm]
			if !ok {
				return modelError(ErrUnsupportedDataType, "graph input %q is not a tensor (a sequence or optional input runs with Model.RunValues)", nm)
			}
			im.sc.set(nm, v)
			continue
		}
		if h, ok := im.cfg.values[nm]; ok {
			if dt, _ := aclType(tt.GetElemType()); dt != h.Desc.DataType || int64(len(h.Data)) < h.Desc.Size() {
				return modelError(ErrInvalidModel, "WithInputValue gives %q as %s, the model says %s", nm, h, typeName(tt.GetElemType()))
			}
			if err := checkShape(h.Desc.Dims, h.Desc.DataType); err != nil {
				return modelError(kindOf(err), "WithInputValue %q: %v", nm, err)
			}
			c := h
			c.Data = aligned(append([]byte(nil), h.Data[:h.Desc.Size()]...))
			im.sc.set(nm, &value{desc: c.Desc, c: &c})
			continue
		}
		dt, ok := aclType(tt.GetElemType())
		if !ok {
			return modelError(ErrUnsupportedDataType, "graph input %q has element type %s", nm, typeName(tt.GetElemType()))
		}
		dims, err := im.inputDims(nm, tt)
		if err != nil {
			return err
		}
		t := im.g.Data(nm, index, dt, dims)
		if err := im.g.Err(); err != nil {
			return modelError(ErrInvalidModel, "graph input %q: %v", nm, err)
		}
		index++
		im.used[nm] = true
		im.sc.set(nm, &value{desc: t.Desc(), t: t})
	}
	for nm := range im.cfg.values {
		if v := im.sc.get(nm); v == nil || v.c == nil {
			return modelError(ErrInvalidModel, "WithInputValue names %q, which is not a graph input", nm)
		}
	}
	for nm := range im.cfg.shapes {
		if v := im.sc.get(nm); v == nil || v.t == nil {
			return modelError(ErrInvalidModel, "WithInputShape names %q, which is not a graph input", nm)
		}
	}
	return nil
}

func (im *importer) inputDims(name string, tt *pb.TypeProto_Tensor) ([]int64, error) {
	fixed, hasFixed := im.cfg.shapes[name]
	if tt.GetShape() == nil {
		if hasFixed {
			return fixed, nil
		}
		return nil, modelError(ErrDynamicShape, "graph input %q has no shape; give one with WithInputShape", name)
	}
	pd := tt.GetShape().GetDim()
	if hasFixed && len(fixed) != len(pd) {
		return nil, modelError(ErrInvalidModel, "WithInputShape gives %q rank %d, the model says %d", name, len(fixed), len(pd))
	}
	dims := make([]int64, len(pd))
	for i, d := range pd {
		_, known := d.GetValue().(*pb.TensorShapeProto_Dimension_DimValue)
		switch {
		case i == 0 && im.cfg.batch > 0 && (known || hasFixed):
			return nil, modelError(ErrDynamicShape, "graph input %q has a fixed batch dim: WithDynamicBatch needs dim 0 of every graph input symbolic", name)
		case i == 0 && im.cfg.batch > 0:
			dims[i] = im.cfg.batch
		case known && hasFixed && fixed[i] != d.GetDimValue():
			return nil, modelError(ErrInvalidModel, "WithInputShape gives %q dim %d = %d, the model says %d", name, i, fixed[i], d.GetDimValue())
		case known:
			dims[i] = d.GetDimValue()
		case hasFixed:
			dims[i] = fixed[i]
		default:
			sym := d.GetDimParam()
			if sym == "" {
				sym = "?"
			}
			return nil, modelError(ErrDynamicShape, "graph input %q dim %d is symbolic (%s); fix it with WithInputShape", name, i, sym)
		}
	}
	dt, _ := aclType(tt.GetElemType())
	if err := checkDims(dims, dt); err != nil {
		if errors.Is(err, ErrEmptyTensor) {
			return nil, modelError(ErrEmptyTensor, "graph input %q has dims %v", name, dims)
		}
		return nil, modelError(ErrInvalidModel, "graph input %q: %v", name, err)
	}
	return dims, nil
}

// outputs adds NetOutput with the graph outputs under their ONNX names.
func (im *importer) outputs(gp *pb.GraphProto) (*ge.Graph, error) {
	var names []string
	var ts []*ge.Tensor
	for _, o := range gp.GetOutput() {
		v := im.sc.get(o.GetName())
		if v == nil {
			return nil, modelError(ErrInvalidModel, "graph output %q is produced by no node", o.GetName())
		}
		if v.kind != KindTensor {
			return nil, modelError(ErrUnsupportedDataType, "graph output %q is a %s: the model runs with Model.RunValues", o.GetName(), v.kind)
		}
		if tt := o.GetType().GetTensorType(); tt != nil && tt.GetElemType() != 0 {
			if dt, ok := aclType(tt.GetElemType()); ok && dt != v.desc.DataType {
				return nil, modelError(ErrInvalidModel, "graph output %q is declared %s but computes %s", o.GetName(), typeName(tt.GetElemType()), v.desc)
			}
		}
		t, err := im.tensor(v, o.GetName())
		if err != nil {
			return nil, err
		}
		names = append(names, o.GetName())
		ts = append(ts, t)
	}
	if len(ts) == 0 {
		return nil, modelError(ErrInvalidModel, "graph has no outputs")
	}
	im.g.OutputNamed(names, ts...)
	if err := im.g.Err(); err != nil {
		return nil, modelError(ErrInvalidModel, "outputs: %v", err)
	}
	return im.g, nil
}

// tensor returns v as a graph tensor, adding a Const node for a constant.
func (im *importer) tensor(v *value, hint string) (*ge.Tensor, error) {
	if v.t != nil {
		return v.t, nil
	}
	if v.kind != KindTensor {
		return nil, modelError(ErrInvalidModel, "%q is a %s where a tensor is needed", hint, v.kind)
	}
	if v.c.Desc.NumElements() == 0 {
		return nil, modelError(ErrEmptyTensor, "%q is an empty tensor (dims %v)", hint, v.c.Desc.Dims)
	}
	v.t = im.g.Const(im.uniq(hint), v.c.Desc.DataType, v.c.Desc.Dims, v.c.Data)
	if err := im.g.Err(); err != nil {
		return nil, modelError(ErrInvalidModel, "constant %q: %v", hint, err)
	}
	return v.t, nil
}

// uniq returns a node name not used yet, based on hint.
func (im *importer) uniq(hint string) string {
	if hint == "" {
		hint = "node"
	}
	name := hint
	for i := 1; im.used[name] || im.g.Node(name) != nil; i++ {
		name = hint + "_" + strconv.Itoa(i)
	}
	im.used[name] = true
	return name
}

// node converts one NodeProto.
func (im *importer) node(i int, n *pb.NodeProto) error {
	c := &nodeCtx{im: im, n: n, op: n.GetOpType(), name: n.GetName(), attrs: map[string]*pb.AttributeProto{}, read: map[string]bool{}}
	if c.name == "" {
		c.name = n.GetOpType() + "_" + strconv.Itoa(i)
		if outs := n.GetOutput(); len(outs) > 0 && outs[0] != "" {
			c.name = outs[0]
		}
	}
	key := c.op
	switch d := n.GetDomain(); d {
	case "", "ai.onnx":
		if im.opset == 0 {
			return c.errf(ErrInvalidModel, "the model imports no opset of the default domain")
		}
	case "ai.onnx.ml", trainingDomain:
		key = d + "/" + c.op
	default:
		return c.errf(ErrUnsupportedOp, "domain %q is not supported", d)
	}
	for _, a := range n.GetAttribute() {
		if a.GetRefAttrName() != "" {
			return c.errf(ErrUnsupportedAttr, "attribute %q refers to a function attribute", a.GetName())
		}
		c.attrs[a.GetName()] = a
	}
	if im.opset < 6 && n.GetDomain() != trainingDomain {
		if !legacyOps[c.op] || key != c.op {
			return c.errf(ErrUnsupportedOp, "the opset %d form of %s is not supported (opset 6 and later are)", im.opset, key)
		}
		c.ignore("consumed_inputs")
	}
	conv := converters[key]
	if conv == nil {
		return c.errf(ErrUnsupportedOp, "op type %s is not supported", key)
	}
	for _, in := range n.GetInput() {
		if in == "" {
			c.ins = append(c.ins, nil)
			continue
		}
		v := im.sc.get(in)
		if v == nil {
			return c.errf(ErrInvalidModel, "input %q is produced by no earlier node (nor by an enclosing graph)", in)
		}
		if v.kind != KindTensor && !takesAnyKind[key] {
			return c.errf(ErrInvalidModel, "input %q is a %s; %s takes tensors", in, v.kind, key)
		}
		c.ins = append(c.ins, v)
	}
	var outs []*value
	var err error
	if key == "Identity" && len(c.ins) == 1 && c.ins[0] != nil && c.ins[0].kind != KindTensor {
		outs = c.ins // a sequence or optional passes through
	} else {
		outs, err = conv(c)
	}
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return err
		}
		return c.wrap(err)
	}
	for k := range c.attrs {
		if !c.read[k] {
			return c.errf(ErrUnsupportedAttr, "attribute %q is not supported", k)
		}
	}
	names := n.GetOutput()
	for j, nm := range names {
		if nm == "" {
			continue
		}
		if j >= len(outs) || outs[j] == nil {
			return c.errf(ErrUnsupportedAttr, "optional output %d (%q) is not supported", j, nm)
		}
		im.sc.set(nm, outs[j])
	}
	return nil
}

// nodeCtx is one node under conversion: its inputs (nil for an omitted
// optional input), attributes (each read one marked), and the helpers that
// emit or fold ops.
type nodeCtx struct {
	im    *importer
	n     *pb.NodeProto
	op    string
	name  string
	ins   []*value
	attrs map[string]*pb.AttributeProto
	read  map[string]bool
	seq   int
}

func (c *nodeCtx) errf(kind error, format string, args ...any) *Error {
	return newError(c.name, c.op, c.im.opset, kind, format, args...)
}

// wrap turns a ge or decoding failure into the node's Error.
func (c *nodeCtx) wrap(err error) *Error {
	kind := ErrInvalidModel
	switch {
	case errors.Is(err, ErrUnsupportedDataType), acl.CodeOf(err) == acl.CodeUnsupportedDataType:
		kind = ErrUnsupportedDataType
	case errors.Is(err, ErrEmptyTensor), strings.Contains(err.Error(), "empty tensors are not supported"):
		kind = ErrEmptyTensor
	case errors.Is(err, ErrDynamicShape):
		kind = ErrDynamicShape
	case errors.Is(err, ErrUnsupportedAttr):
		kind = ErrUnsupportedAttr
	case errors.Is(err, ErrCanceled):
		kind = ErrCanceled
	case errors.Is(err, ErrOutOfMemory):
		kind = ErrOutOfMemory
	}
	return c.errf(kind, "%v", unwrapKind(err))
}

// in returns input i, or nil when it is absent.
func (c *nodeCtx) in(i int) *value {
	if i < len(c.ins) {
		return c.ins[i]
	}
	return nil
}

// need checks the number of present inputs.
func (c *nodeCtx) need(lo, hi int) error {
	if len(c.ins) < lo || len(c.ins) > hi {
		return c.errf(ErrInvalidModel, "takes %d to %d inputs, got %d", lo, hi, len(c.ins))
	}
	for i := range lo {
		if c.ins[i] == nil {
			return c.errf(ErrInvalidModel, "input %d is required", i)
		}
	}
	return nil
}

// tensor returns v as a graph tensor.
func (c *nodeCtx) tensor(v *value) (*ge.Tensor, error) { return c.im.tensor(v, c.name+"_const") }

// emit adds op on the inputs, or folds it when they are all constant, and
// returns its outputs.
func (c *nodeCtx) emitN(op ge.OpType, attrs ge.Attrs, ins ...*value) ([]*value, error) {
	folded := true
	descs := make([]ge.TensorDesc, len(ins))
	for i, v := range ins {
		if v.c == nil {
			folded = false
		}
		descs[i] = v.desc
	}
	if folded {
		// Folding runs the kernel now; an output too large to hold at
		// import time stays an op of the model instead.
		out, err := ge.InferOp(op, attrs, descs)
		if err != nil {
			return nil, c.wrap(err)
		}
		var n int64
		for _, d := range out {
			if d.Size() > c.im.foldLimit {
				folded = false
			}
			n += d.Size()
		}
		if !folded && c.im.eval {
			return nil, c.errf(ErrOutOfMemory, "%s outputs %d bytes, over the %d a run's tensor may hold", op, n, c.im.foldLimit)
		}
	}
	if folded {
		hs := make([]ge.HostTensor, len(ins))
		for i, v := range ins {
			hs[i] = *v.c
		}
		out, err := ge.EvalOp(op, attrs, hs)
		if err != nil {
			return nil, c.wrap(err)
		}
		vs := make([]*value, len(out))
		for i := range out {
			vs[i] = &value{desc: out[i].Desc, c: &out[i]}
		}
		return vs, nil
	}
	ts := make([]*ge.Tensor, len(ins))
	for i, v := range ins {
		t, err := c.tensor(v)
		if err != nil {
			return nil, err
		}
		ts[i] = t
	}
	name := c.name
	if c.seq > 0 {
		name += "/" + strconv.Itoa(c.seq)
	}
	c.seq++
	nd := c.im.g.AddOp(op, ts, attrs, ge.Name(c.im.uniq(name)))
	if err := c.im.g.Err(); err != nil {
		return nil, c.wrap(err)
	}
	vs := make([]*value, nd.NumOutputs())
	for i := range vs {
		t := nd.Output(i)
		vs[i] = &value{desc: t.Desc(), t: t}
	}
	return vs, nil
}

// emit is emitN for one-output ops.
func (c *nodeCtx) emit(op ge.OpType, attrs ge.Attrs, ins ...*value) (*value, error) {
	vs, err := c.emitN(op, attrs, ins...)
	if err != nil {
		return nil, err
	}
	return vs[0], nil
}

// konst makes a constant value.
func konst(dt acl.DataType, dims []int64, data []byte) *value {
	h := ge.HostTensor{Desc: ge.TensorDesc{DataType: dt, Format: acl.FormatND, Dims: dims}, Data: aligned(data)}
	return &value{desc: h.Desc, c: &h}
}

func kindOf(err error) error {
	for _, k := range []error{ErrUnsupportedDataType, ErrEmptyTensor, ErrDynamicShape, ErrUnsupportedAttr, ErrUnsupportedOp, ErrCanceled, ErrOutOfMemory, ErrShapeMismatch} {
		if errors.Is(err, k) {
			return k
		}
	}
	return ErrInvalidModel
}

// unwrapKind strips a leading "kind: " that fmt.Errorf("%w: ...") added,
// since Error prints the kind itself.
func unwrapKind(err error) string {
	s := err.Error()
	k := kindOf(err)
	if p := k.Error() + ": "; len(s) > len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}

var _ = fmt.Sprint

// Ops returns the op types the importer converts, sorted; ops of another
// domain than the default carry it as a prefix ("ai.onnx.ml/Scaler").
func Ops() []string {
	ops := make([]string, 0, len(converters))
	for k := range converters {
		ops = append(ops, k)
	}
	slices.Sort(ops)
	return ops
}
