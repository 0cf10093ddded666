package fallback

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

// Single-op execution (acl_op.h): an op is compiled once per signature (op
// type, input and output descriptions, attributes) into a one-node ge model
// that this NPU loads internally; each call binds the caller's buffers to
// that model's IO, so the op reads and writes them in place (zero copy), as
// ACL's single-op path runs always-zero-copy with external memory.

var _ acl.OpBackend = (*NPU)(nil)

// opTable holds tensor descriptions, op attributes and compiled ops.
type opTable struct {
	mu       sync.Mutex
	descs    map[acl.TensorDescHandle]*ge.TensorDesc
	attrs    map[acl.OpAttrHandle]ge.Attrs
	compiled map[string]*compiledOp
}

// compiledOp is a signature's loaded models: one per concurrent use, since
// one model id runs on one stream at a time.
type compiledOp struct {
	mu     sync.Mutex
	blob   []byte
	dev    int32
	models []*opModel
}

type opModel struct {
	id      acl.ModelID
	in, out acl.DatasetHandle
	inB     []acl.DataBufferHandle
	outB    []acl.DataBufferHandle
}

func (t *opTable) init() {
	if t.descs == nil {
		t.descs = map[acl.TensorDescHandle]*ge.TensorDesc{}
		t.attrs = map[acl.OpAttrHandle]ge.Attrs{}
		t.compiled = map[string]*compiledOp{}
	}
}

// CreateTensorDesc is aclCreateTensorDesc.
func (n *NPU) CreateTensorDesc(dt acl.DataType, dims []int64, format acl.Format) (acl.TensorDescHandle, error) {
	c, err := n.hostCall("aclCreateTensorDesc")
	if err != nil {
		return 0, err
	}
	defer n.exit()
	if !dt.Valid() {
		return 0, c.fail(acl.CodeInvalidParam, "data type %v is not an aclDataType", dt)
	}
	for i, d := range dims {
		if d < 0 {
			return 0, c.fail(acl.CodeInvalidParam, "dim %d is %d; static shapes only", i, d)
		}
	}
	h := acl.TensorDescHandle(n.newHandle())
	t := &n.ops
	t.mu.Lock()
	t.init()
	t.descs[h] = &ge.TensorDesc{DataType: dt, Format: format, Dims: slices.Clone(dims)}
	t.mu.Unlock()
	return h, nil
}

// DestroyTensorDesc is aclDestroyTensorDesc (void in C: an unknown handle
// is ignored there; here it is reported).
func (n *NPU) DestroyTensorDesc(d acl.TensorDescHandle) error {
	return n.opObject("aclDestroyTensorDesc", func(c *call, t *opTable) error {
		if t.descs[d] == nil {
			return c.fail(acl.CodeInvalidParam, "tensor desc 0x%x is not live", uintptr(d))
		}
		delete(t.descs, d)
		return nil
	})
}

// CreateOpAttr is aclopCreateAttr.
func (n *NPU) CreateOpAttr() (acl.OpAttrHandle, error) {
	if _, err := n.hostCall("aclopCreateAttr"); err != nil {
		return 0, err
	}
	defer n.exit()
	h := acl.OpAttrHandle(n.newHandle())
	t := &n.ops
	t.mu.Lock()
	t.init()
	t.attrs[h] = ge.Attrs{}
	t.mu.Unlock()
	return h, nil
}

// DestroyOpAttr is aclopDestroyAttr.
func (n *NPU) DestroyOpAttr(a acl.OpAttrHandle) error {
	return n.opObject("aclopDestroyAttr", func(c *call, t *opTable) error {
		if t.attrs[a] == nil {
			return c.fail(acl.CodeInvalidParam, "op attr 0x%x is not live", uintptr(a))
		}
		delete(t.attrs, a)
		return nil
	})
}

func (n *NPU) setAttr(op string, a acl.OpAttrHandle, name string, v ge.Attr) error {
	return n.opObject(op, func(c *call, t *opTable) error {
		as := t.attrs[a]
		if as == nil {
			return c.fail(acl.CodeInvalidParam, "op attr 0x%x is not live", uintptr(a))
		}
		if name == "" {
			return c.fail(acl.CodeInvalidParam, "attribute name is empty")
		}
		as[name] = v
		return nil
	})
}

// SetOpAttrBool is aclopSetAttrBool.
func (n *NPU) SetOpAttrBool(a acl.OpAttrHandle, name string, v bool) error {
	return n.setAttr("aclopSetAttrBool", a, name, ge.BoolAttr(v))
}

// SetOpAttrInt is aclopSetAttrInt.
func (n *NPU) SetOpAttrInt(a acl.OpAttrHandle, name string, v int64) error {
	return n.setAttr("aclopSetAttrInt", a, name, ge.IntAttr(v))
}

// SetOpAttrFloat is aclopSetAttrFloat.
func (n *NPU) SetOpAttrFloat(a acl.OpAttrHandle, name string, v float32) error {
	return n.setAttr("aclopSetAttrFloat", a, name, ge.FloatAttr(float64(v)))
}

// SetOpAttrString is aclopSetAttrString.
func (n *NPU) SetOpAttrString(a acl.OpAttrHandle, name string, v string) error {
	return n.setAttr("aclopSetAttrString", a, name, ge.StringAttr(v))
}

// SetOpAttrListInt is aclopSetAttrListInt.
func (n *NPU) SetOpAttrListInt(a acl.OpAttrHandle, name string, v []int64) error {
	return n.setAttr("aclopSetAttrListInt", a, name, ge.IntsAttr(v))
}

// opObject runs f with the op table locked.
func (n *NPU) opObject(op string, f func(c *call, t *opTable) error) error {
	c, err := n.hostCall(op)
	if err != nil {
		return err
	}
	defer n.exit()
	t := &n.ops
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	return f(&c, t)
}

// CompileAndExecuteV2 is aclopCompileAndExecuteV2.
func (n *NPU) CompileAndExecuteV2(opType string, inDesc []acl.TensorDescHandle, in []acl.DataBufferHandle,
	outDesc []acl.TensorDescHandle, out []acl.DataBufferHandle, attr acl.OpAttrHandle,
	engine acl.OpEngineType, compile acl.OpCompileType, opPath string, s acl.StreamHandle) error {
	c, err := n.begin("aclopCompileAndExecuteV2", true)
	if err != nil {
		return err
	}
	defer n.exit()
	if opType == "" {
		return c.fail(acl.CodeInvalidParam, "opType is NULL")
	}
	if len(inDesc) != len(in) || len(outDesc) != len(out) {
		return c.fail(acl.CodeInvalidParam, "%d input descs for %d input buffers, %d output descs for %d output buffers",
			len(inDesc), len(in), len(outDesc), len(out))
	}
	if engine < acl.OpEngineSys || engine > acl.OpEngineVector {
		return c.fail(acl.CodeInvalidParam, "engine type %d is not an aclopEngineType", engine)
	}
	if compile < acl.OpCompileSys || compile > acl.OpCompileUnregistered {
		return c.fail(acl.CodeInvalidParam, "compile type %d is not an aclopCompileType", compile)
	}
	if _, err := c.stream(s); err != nil {
		return err
	}
	ins, outs, attrs, err := n.opArgs(&c, inDesc, outDesc, attr)
	if err != nil {
		return err
	}
	t, ok := ge.OpByName(opType)
	if !ok {
		return c.fail(acl.CodeOpNotFound, "op type %q is not supported", opType)
	}
	inferred, err := ge.CheckOpCall(t, ins, attrs)
	switch {
	case errors.Is(err, ge.ErrOpAttrs):
		return c.fail(acl.CodeOpAttrNotMatch, "%v", err)
	case err != nil:
		return c.fail(acl.CodeOpInputNotMatch, "%v", err)
	}
	if len(inferred) != len(outs) {
		return c.fail(acl.CodeOpOutputNotMatch, "op %s has %d outputs, %d given", opType, len(inferred), len(outs))
	}
	for i, o := range outs {
		w := inferred[i]
		if o.DataType != w.DataType || !slices.Equal(o.Dims, w.Dims) {
			return c.fail(acl.CodeOpOutputNotMatch, "output %d of %s is %v%v, the op produces %v%v", i, opType, o.DataType, o.Dims, w.DataType, w.Dims)
		}
	}
	for _, b := range [...]struct {
		what  string
		descs []ge.TensorDesc
		bufs  []acl.DataBufferHandle
	}{{"input", ins, in}, {"output", outs, out}} {
		for i, h := range b.bufs {
			if h == 0 {
				return c.fail(acl.CodeInvalidParam, "%s buffer %d is NULL", b.what, i)
			}
			need := b.descs[i].NumElements() * int64(b.descs[i].DataType.Bits()) / 8
			if size := n.GetDataBufferSizeV2(h); uint64(size) < uint64(need) {
				return c.fail(acl.CodeInvalidParam, "%s buffer %d holds %d bytes, the tensor needs %d", b.what, i, size, need)
			}
		}
	}
	co, err := n.compileOp(&c, opType, t, ins, attrs)
	if err != nil {
		return err
	}
	return n.launchOp(&c, co, in, out, s)
}

// opArgs resolves descriptions and attributes under the table lock.
func (n *NPU) opArgs(c *call, inDesc, outDesc []acl.TensorDescHandle, attr acl.OpAttrHandle) (ins, outs []ge.TensorDesc, attrs ge.Attrs, err error) {
	t := &n.ops
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	get := func(what string, hs []acl.TensorDescHandle) ([]ge.TensorDesc, error) {
		ds := make([]ge.TensorDesc, len(hs))
		for i, h := range hs {
			d := t.descs[h]
			if d == nil {
				return nil, c.fail(acl.CodeInvalidParam, "%s desc %d (0x%x) is not a live aclTensorDesc", what, i, uintptr(h))
			}
			ds[i] = *d
		}
		return ds, nil
	}
	if ins, err = get("input", inDesc); err != nil {
		return
	}
	if outs, err = get("output", outDesc); err != nil {
		return
	}
	if attr != 0 {
		a := t.attrs[attr]
		if a == nil {
			return nil, nil, nil, c.fail(acl.CodeInvalidParam, "op attr 0x%x is not live", uintptr(attr))
		}
		attrs = a.Clone()
	}
	return
}

// opKey names a signature: op, input descriptions and attributes (outputs
// follow from them).
func opKey(dev int32, opType string, ins []ge.TensorDesc, a ge.Attrs) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(int(dev)))
	b.WriteByte('|')
	b.WriteString(opType)
	for _, d := range ins {
		fmt.Fprintf(&b, "|%d/%d/%v", d.DataType, d.Format, d.Dims)
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range a {
			if !yield(k) {
				return
			}
		}
	})
	for _, k := range keys {
		fmt.Fprintf(&b, "|%s=%+v", k, a[k])
	}
	return b.String()
}

// compileOp returns the compiled op of a signature, compiling it once.
func (n *NPU) compileOp(c *call, opType string, t ge.OpType, ins []ge.TensorDesc, attrs ge.Attrs) (*compiledOp, error) {
	dev := c.ctx.dev.id
	key := opKey(dev, opType, ins, attrs)
	tab := &n.ops
	tab.mu.Lock()
	co := tab.compiled[key]
	tab.mu.Unlock()
	if co != nil {
		return co, nil
	}
	g := ge.NewGraph("op_" + opType)
	var args []*ge.Tensor
	for i, d := range ins {
		args = append(args, g.Data("x"+strconv.Itoa(i), i, d.DataType, d.Dims))
	}
	node := g.AddOp(t, args, attrs)
	var res []*ge.Tensor
	for i := range node.NumOutputs() {
		res = append(res, node.Output(i))
	}
	g.Output(res...)
	m, err := ge.Compile(g)
	if err != nil {
		return nil, c.fail(acl.CodeOpLoadFailed, "compile %s: %v", opType, err)
	}
	blob, err := m.MarshalBinary()
	if err != nil {
		return nil, c.fail(acl.CodeOpLoadFailed, "compile %s: %v", opType, err)
	}
	co = &compiledOp{blob: blob, dev: dev}
	tab.mu.Lock()
	if have := tab.compiled[key]; have != nil {
		co = have
	} else {
		tab.compiled[key] = co
	}
	tab.mu.Unlock()
	return co, nil
}

// launchOp binds the caller's buffers to a free instance of the compiled
// op and queues it on s.
func (n *NPU) launchOp(c *call, co *compiledOp, in, out []acl.DataBufferHandle, s acl.StreamHandle) error {
	co.mu.Lock()
	defer co.mu.Unlock()
	for _, om := range co.models {
		err := n.runOpModel(om, in, out, s)
		if acl.CodeOf(err) != acl.CodeRTModelExecute { // busy on another stream: try the next
			return err
		}
	}
	om, err := n.loadOpModel(co, len(in), len(out))
	if err != nil {
		return c.fail(acl.CodeOpLoadFailed, "load: %v", err)
	}
	co.models = append(co.models, om)
	return n.runOpModel(om, in, out, s)
}

func (n *NPU) loadOpModel(co *compiledOp, nIn, nOut int) (*opModel, error) {
	id, err := n.LoadFromMem(unsafe.Pointer(&co.blob[0]), uintptr(len(co.blob)))
	if err != nil {
		return nil, err
	}
	n.models.mu.Lock()
	n.models.models[id].internal = true
	n.models.mu.Unlock()
	om := &opModel{id: id}
	mk := func(k int) (acl.DatasetHandle, []acl.DataBufferHandle, error) {
		ds, err := n.CreateDataset()
		if err != nil {
			return 0, nil, err
		}
		bs := make([]acl.DataBufferHandle, k)
		for i := range bs {
			if bs[i], err = n.CreateDataBuffer(nil, 0); err != nil {
				return 0, nil, err
			}
			if err = n.AddDatasetBuffer(ds, bs[i]); err != nil {
				return 0, nil, err
			}
		}
		return ds, bs, nil
	}
	if om.in, om.inB, err = mk(nIn); err == nil {
		om.out, om.outB, err = mk(nOut)
	}
	return om, err
}

func (n *NPU) runOpModel(om *opModel, in, out []acl.DataBufferHandle, s acl.StreamHandle) error {
	for _, p := range [...]struct{ src, dst []acl.DataBufferHandle }{{in, om.inB}, {out, om.outB}} {
		for i, h := range p.src {
			if err := n.UpdateDataBuffer(p.dst[i], n.GetDataBufferAddr(h), n.GetDataBufferSizeV2(h)); err != nil {
				return err
			}
		}
	}
	return n.ExecuteAsync(om.id, om.in, om.out, s)
}

// dropOps forgets the compiled ops of device dev (every device for -1):
// their models are released with the device's models, without a leak
// report.
func (n *NPU) dropOps(dev int32) {
	t := &n.ops
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, co := range t.compiled {
		if dev < 0 || co.dev == dev {
			delete(t.compiled, k)
		}
	}
}
