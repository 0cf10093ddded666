package onnx

import (
	"encoding/binary"
	"slices"
	"strconv"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	pb "github.com/ascend-go/cann/ge/onnx/internal/onnxpb"
)

// Control flow. A subgraph is imported into the parent's ge graph in a
// child scope, so its memory is planned with the parent's: If imports the
// branch its condition selects, Loop and Scan import their body once per
// iteration (unrolled). That needs the condition, the trip count and each
// iteration's continue flag as constants. When one is computed from the
// model's inputs, the converter refuses with ErrDynamicShape, and Model
// runs that input-shape tuple interpreted: every graph input is then a
// value, everything folds, and the loop runs for as many iterations as its
// data says, ending early only by the run's context or memory limit.

// Limits on what control flow may build.
const (
	// maxSubgraphDepth bounds the nesting of subgraphs (If in Loop in ...).
	maxSubgraphDepth = 32
	// maxUnroll bounds the iterations a compiled (not interpreted) import
	// unrolls; a longer loop runs interpreted.
	maxUnroll = 1024
)

func init() {
	converters["If"] = convIf
	converters["Loop"] = convLoop
	converters["Scan"] = convScan
}

// graphAttr returns a required graph attribute.
func (c *nodeCtx) graphAttr(name string) (*pb.GraphProto, error) {
	a := c.attr(name)
	if a == nil || a.GetG() == nil {
		return nil, c.errf(ErrInvalidModel, "attribute %q (a graph) is required", name)
	}
	return a.GetG(), nil
}

// subgraph imports gp in a child scope with its formal inputs bound to
// ins and returns its outputs. Names gp does not define resolve in the
// enclosing scopes (outer-scope references).
func (c *nodeCtx) subgraph(gp *pb.GraphProto, ins []*value) ([]*value, error) {
	im := c.im
	if im.depth >= maxSubgraphDepth {
		return nil, c.errf(ErrInvalidModel, "subgraphs nest deeper than %d", maxSubgraphDepth)
	}
	if got := len(gp.GetInput()); got != len(ins) {
		return nil, c.errf(ErrInvalidModel, "subgraph %q declares %d inputs, the op binds %d", gp.GetName(), got, len(ins))
	}
	parent := im.sc
	im.sc = newScope(parent)
	im.depth++
	defer func() { im.sc, im.depth = parent, im.depth-1 }()
	for _, t := range gp.GetInitializer() {
		h, err := decodeTensor(t, im.cfg.dir)
		if err != nil {
			return nil, c.errf(kindOf(err), "subgraph %q initializer %q: %v", gp.GetName(), t.GetName(), unwrapKind(err))
		}
		im.sc.set(t.GetName(), &value{desc: h.Desc, c: &h})
	}
	for i, in := range gp.GetInput() {
		if tt := in.GetType().GetTensorType(); tt != nil && tt.GetElemType() != 0 {
			if dt, ok := aclType(tt.GetElemType()); ok && dt != ins[i].desc.DataType {
				return nil, c.errf(ErrInvalidModel, "subgraph %q input %q is declared %s, bound to %s", gp.GetName(), in.GetName(), typeName(tt.GetElemType()), ins[i].desc)
			}
		}
		im.sc.set(in.GetName(), ins[i])
	}
	if err := im.nodes(gp); err != nil {
		return nil, err
	}
	outs := make([]*value, len(gp.GetOutput()))
	for i, o := range gp.GetOutput() {
		v := im.sc.get(o.GetName())
		if v == nil {
			return nil, c.errf(ErrInvalidModel, "subgraph %q output %q is produced by no node", gp.GetName(), o.GetName())
		}
		outs[i] = v
	}
	return outs, nil
}

// constBool reads a constant boolean scalar (If's cond, Loop's flags).
func (c *nodeCtx) constBool(v *value, what string) (bool, error) {
	if v.c == nil {
		return false, c.errf(ErrDynamicShape, "%s is computed at run time", what)
	}
	if v.desc.NumElements() != 1 {
		return false, c.errf(ErrInvalidModel, "%s must hold one value, has %s", what, v.desc)
	}
	switch v.desc.DataType {
	case acl.Bool, acl.Uint8, acl.Int8:
		return v.c.Data[0] != 0, nil
	}
	f, err := c.constFloat(v, what)
	return f != 0, err
}

func boolConst(b bool) *value {
	var x byte
	if b {
		x = 1
	}
	return konst(acl.Bool, nil, []byte{x})
}

func int64Const(i int64) *value {
	return konst(acl.Int64, nil, binary.LittleEndian.AppendUint64(nil, uint64(i)))
}

// convIf imports the branch the (constant) condition selects.
func convIf(c *nodeCtx) ([]*value, error) {
	if err := c.need(1, 1); err != nil {
		return nil, err
	}
	then, err := c.graphAttr("then_branch")
	if err != nil {
		return nil, err
	}
	els, err := c.graphAttr("else_branch")
	if err != nil {
		return nil, err
	}
	b, err := c.constBool(c.in(0), "the condition")
	if err != nil {
		return nil, err
	}
	g := els
	if b {
		g = then
	}
	outs, err := c.subgraph(g, nil)
	if err != nil {
		return nil, err
	}
	if len(outs) != len(c.n.GetOutput()) {
		return nil, c.errf(ErrInvalidModel, "branch %q has %d outputs, the node %d", g.GetName(), len(outs), len(c.n.GetOutput()))
	}
	return outs, nil
}

// convLoop runs Loop's body while the trip count and the condition allow,
// carrying the loop-carried values and stacking the scan outputs.
func convLoop(c *nodeCtx) ([]*value, error) {
	body, err := c.graphAttr("body")
	if err != nil {
		return nil, err
	}
	if len(c.ins) < 2 {
		return nil, c.errf(ErrInvalidModel, "takes at least 2 inputs (M, cond, which may be empty), got %d", len(c.ins))
	}
	carried := append([]*value(nil), c.ins[2:]...)
	for i, v := range carried {
		if v == nil {
			return nil, c.errf(ErrInvalidModel, "loop-carried input %d is missing", i)
		}
	}
	nScan := len(body.GetOutput()) - 1 - len(carried)
	if nScan < 0 || len(body.GetInput()) != 2+len(carried) {
		return nil, c.errf(ErrInvalidModel, "body has %d inputs and %d outputs for %d loop-carried values", len(body.GetInput()), len(body.GetOutput()), len(carried))
	}
	trip := int64(-1) // no bound
	if m := c.in(0); m != nil {
		v, err := c.constInts(m, "the trip count M")
		if err != nil {
			return nil, err
		}
		if len(v) != 1 {
			return nil, c.errf(ErrInvalidModel, "the trip count M must hold one value, has %d", len(v))
		}
		trip = max(v[0], 0)
	}
	cond := true
	if cv := c.in(1); cv != nil {
		if cond, err = c.constBool(cv, "the loop condition"); err != nil {
			return nil, err
		}
	}
	if !c.im.eval && (trip < 0 || trip > maxUnroll) && c.in(1) == nil {
		return nil, c.errf(ErrDynamicShape, "a loop of %d iterations runs interpreted", trip)
	}
	scans := make([][]*value, nScan)
	var scanBytes int64
	for i := int64(0); cond && (trip < 0 || i < trip); i++ {
		if err := c.im.ctx.Err(); err != nil {
			return nil, c.errf(ErrCanceled, "ended after %d iterations: %v", i, err)
		}
		if !c.im.eval && i >= maxUnroll {
			return nil, c.errf(ErrDynamicShape, "a loop of more than %d iterations runs interpreted", maxUnroll)
		}
		outs, err := c.subgraph(body, append([]*value{int64Const(i), boolConst(cond)}, carried...))
		if err != nil {
			return nil, err
		}
		if cond, err = c.constBool(outs[0], "the body's condition output"); err != nil {
			return nil, err
		}
		for k, v := range outs[1 : 1+len(carried)] {
			if v.desc.DataType != carried[k].desc.DataType {
				return nil, c.errf(ErrInvalidModel, "loop-carried value %d changes type from %s to %s", k, carried[k].desc, v.desc)
			}
		}
		copy(carried, outs[1:1+len(carried)])
		for k, v := range outs[1+len(carried):] {
			scanBytes += v.desc.Size()
			if c.im.eval && scanBytes > c.im.foldLimit {
				return nil, c.errf(ErrOutOfMemory, "scan outputs exceed %d bytes after %d iterations", c.im.foldLimit, i+1)
			}
			scans[k] = append(scans[k], v)
		}
	}
	outs := carried
	for k, s := range scans {
		v, err := c.stack(s, 0, "scan output "+strconv.Itoa(k))
		if err != nil {
			return nil, err
		}
		outs = append(outs, v)
	}
	return outs, nil
}

// stack joins equal-shaped values along a new axis.
func (c *nodeCtx) stack(vs []*value, axis int, what string) (*value, error) {
	if len(vs) == 0 {
		return nil, c.errf(ErrEmptyTensor, "%s has no iterations", what)
	}
	d := vs[0].desc
	if axis < 0 {
		axis += len(d.Dims) + 1
	}
	if axis < 0 || axis > len(d.Dims) {
		return nil, c.errf(ErrInvalidModel, "%s: axis out of range for rank %d", what, len(d.Dims))
	}
	dims := append(append(append([]int64(nil), d.Dims[:axis]...), 1), d.Dims[axis:]...)
	pieces := make([]*value, len(vs))
	for i, v := range vs {
		if v.desc.DataType != d.DataType || !slices.Equal(v.desc.Dims, d.Dims) {
			return nil, c.errf(ErrInvalidModel, "%s is %s in iteration %d, %s in iteration 0", what, v.desc, i, d)
		}
		p, err := c.reshape(v, dims)
		if err != nil {
			return nil, err
		}
		pieces[i] = p
	}
	if len(pieces) == 1 {
		return pieces[0], nil
	}
	return c.emit(ge.OpConcat, ge.Attrs{ge.AttrAxis: ge.IntAttr(int64(axis))}, pieces...)
}

// take returns x's slice i along axis, without that axis.
func (c *nodeCtx) take(x *value, axis int, i int64) (*value, error) {
	d := x.desc.Dims
	begin := make([]int64, len(d))
	size := append([]int64(nil), d...)
	begin[axis], size[axis] = i, 1
	s, err := c.emit(ge.OpSlice, ge.Attrs{ge.AttrBegin: ge.IntsAttr(begin), ge.AttrSize: ge.IntsAttr(size)}, x)
	if err != nil {
		return nil, err
	}
	return c.reshape(s, append(append([]int64(nil), d[:axis]...), d[axis+1:]...))
}

// convScan runs Scan's body once per element of the scan inputs along
// their scan axes (opset 9 on; opset 8's batched form loops over the batch
// too).
func convScan(c *nodeCtx) ([]*value, error) {
	body, err := c.graphAttr("body")
	if err != nil {
		return nil, err
	}
	nScanIn := int(c.intAttr("num_scan_inputs", -1))
	ins := c.ins
	batched := c.im.opset < 9
	if batched {
		if len(ins) > 0 && ins[0] != nil {
			return nil, c.errf(ErrUnsupportedAttr, "sequence_lens is not supported (every sequence runs to the full length)")
		}
		if len(ins) > 0 {
			ins = ins[1:]
		}
	}
	nState := len(ins) - nScanIn
	if nScanIn < 1 || nState < 0 {
		return nil, c.errf(ErrInvalidModel, "num_scan_inputs %d for %d inputs", nScanIn, len(ins))
	}
	for i, v := range ins {
		if v == nil {
			return nil, c.errf(ErrInvalidModel, "input %d is missing", i)
		}
	}
	nScanOut := len(body.GetOutput()) - nState
	if nScanOut < 0 || len(body.GetInput()) != nState+nScanIn {
		return nil, c.errf(ErrInvalidModel, "body has %d inputs and %d outputs for %d states and %d scan inputs", len(body.GetInput()), len(body.GetOutput()), nState, nScanIn)
	}
	list := func(name string, n int) ([]int64, error) {
		v, ok := c.intsAttr(name)
		if !ok {
			return make([]int64, n), nil
		}
		if len(v) != n {
			return nil, c.errf(ErrInvalidModel, "%s has %d values, want %d", name, len(v), n)
		}
		return v, nil
	}
	key := "scan_input_directions"
	if batched {
		key = "directions"
	}
	inDir, err := list(key, nScanIn)
	if err != nil {
		return nil, err
	}
	inAxes, outAxes, outDir := make([]int64, nScanIn), make([]int64, nScanOut), make([]int64, nScanOut)
	if !batched {
		if inAxes, err = list("scan_input_axes", nScanIn); err != nil {
			return nil, err
		}
		if outAxes, err = list("scan_output_axes", nScanOut); err != nil {
			return nil, err
		}
		if outDir, err = list("scan_output_directions", nScanOut); err != nil {
			return nil, err
		}
	}
	run := func(states, xs []*value) ([]*value, error) {
		axes := make([]int, nScanIn)
		seq := int64(-1)
		for j, x := range xs {
			a, err := c.normAxis(inAxes[j], len(x.desc.Dims))
			if err != nil {
				return nil, err
			}
			axes[j] = a
			if n := x.desc.Dims[a]; seq >= 0 && n != seq {
				return nil, c.errf(ErrInvalidModel, "scan inputs have lengths %d and %d", seq, n)
			} else {
				seq = n
			}
		}
		if !c.im.eval && seq > maxUnroll {
			return nil, c.errf(ErrDynamicShape, "a scan of %d steps runs interpreted", seq)
		}
		outs := make([][]*value, nScanOut)
		for t := range seq {
			if err := c.im.ctx.Err(); err != nil {
				return nil, c.errf(ErrCanceled, "ended after %d steps: %v", t, err)
			}
			args := append([]*value(nil), states...)
			for j, x := range xs {
				i := t
				if inDir[j] == 1 {
					i = seq - 1 - t
				}
				s, err := c.take(x, axes[j], i)
				if err != nil {
					return nil, err
				}
				args = append(args, s)
			}
			res, err := c.subgraph(body, args)
			if err != nil {
				return nil, err
			}
			states = res[:nState]
			for k, v := range res[nState:] {
				outs[k] = append(outs[k], v)
			}
		}
		for k := range outs {
			if outDir[k] == 1 {
				for i, j := 0, len(outs[k])-1; i < j; i, j = i+1, j-1 {
					outs[k][i], outs[k][j] = outs[k][j], outs[k][i]
				}
			}
			v, err := c.stack(outs[k], int(outAxes[k]), "scan output "+strconv.Itoa(k))
			if err != nil {
				return nil, err
			}
			states = append(states, v)
		}
		return states, nil
	}
	if !batched {
		return run(append([]*value(nil), ins[:nState]...), ins[nState:])
	}
	// Opset 8: every input has a leading batch dim; run each batch entry
	// and stack the results.
	batch := ins[0].desc.Dims
	if len(batch) == 0 {
		return nil, c.errf(ErrInvalidModel, "opset 8 Scan inputs need a batch dim")
	}
	var per [][]*value
	for b := range batch[0] {
		var states, xs []*value
		for j, v := range ins {
			if len(v.desc.Dims) == 0 || v.desc.Dims[0] != batch[0] {
				return nil, c.errf(ErrInvalidModel, "input %d is %s: every input needs the batch dim %d", j, v.desc, batch[0])
			}
			s, err := c.take(v, 0, b)
			if err != nil {
				return nil, err
			}
			if j < nState {
				states = append(states, s)
			} else {
				xs = append(xs, s)
			}
		}
		r, err := run(states, xs)
		if err != nil {
			return nil, err
		}
		per = append(per, r)
	}
	outs := make([]*value, len(per[0]))
	for k := range outs {
		col := make([]*value, len(per))
		for b := range per {
			col[b] = per[b][k]
		}
		v, err := c.stack(col, 0, "output "+strconv.Itoa(k))
		if err != nil {
			return nil, err
		}
		outs[k] = v
	}
	return outs, nil
}
