package onnx

import (
	"encoding/binary"
	"slices"
	"strings"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

// Index ops: ArgMax/ArgMin, the gathers and scatters, OneHot, CumSum,
// Tile, Trilu, EyeLike, DepthToSpace/SpaceToDepth, ReverseSequence,
// Compress, Hardmax, TopK, NonZero, Unique, Size, Det and Einsum.
//
// The ops whose output shape depends on input values (NonZero, Unique,
// Compress's condition, TopK's k) need those inputs constant at import:
// the converter reads them (or computes the count with
// ge.ValueDependentCount) and emits a static-shape op, which folds when
// its data input is constant too; otherwise the import fails with
// ErrDynamicShape.

func init() {
	converters["ArgMax"] = convArg(ge.OpArgMax)
	converters["ArgMin"] = convArg(ge.OpArgMin)
	converters["Hardmax"] = convSoftmax(ge.OpHardmax)
	converters["GatherElements"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(2, 2); err != nil {
			return nil, err
		}
		return one(c.emit(ge.OpGatherElements, ge.Attrs{ge.AttrAxis: ge.IntAttr(c.intAttr("axis", 0))}, c.ins[0], c.ins[1]))
	}
	converters["GatherND"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(2, 2); err != nil {
			return nil, err
		}
		return one(c.emit(ge.OpGatherND, ge.Attrs{ge.AttrBatchDims: ge.IntAttr(c.intAttr("batch_dims", 0))}, c.ins[0], c.ins[1]))
	}
	converters["Scatter"] = convScatterElements
	converters["ScatterElements"] = convScatterElements
	converters["ScatterND"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(3, 3); err != nil {
			return nil, err
		}
		return one(c.emit(ge.OpScatterND, ge.Attrs{ge.AttrReduction: ge.StringAttr(c.strAttr("reduction", "none"))}, c.ins...))
	}
	converters["OneHot"] = convOneHot
	converters["CumSum"] = convCumSum
	converters["Tile"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(2, 2); err != nil {
			return nil, err
		}
		rep, err := c.constInts(c.ins[1], "repeats")
		if err != nil {
			return nil, err
		}
		for _, r := range rep {
			if r == 0 {
				return nil, c.errf(ErrEmptyTensor, "repeats %v has a 0", rep)
			}
		}
		return one(c.emit(ge.OpTile, ge.Attrs{ge.AttrRepeats: ge.IntsAttr(rep)}, c.ins[0]))
	}
	converters["Trilu"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(1, 2); err != nil {
			return nil, err
		}
		k := int64(0)
		if v := c.in(1); v != nil {
			ks, err := c.constInts(v, "k")
			if err != nil {
				return nil, err
			}
			if len(ks) != 1 {
				return nil, c.errf(ErrInvalidModel, "k must hold one value, has %d", len(ks))
			}
			k = ks[0]
		}
		return one(c.emit(ge.OpTrilu, ge.Attrs{ge.AttrUpper: ge.BoolAttr(c.intAttr("upper", 1) != 0), ge.AttrK: ge.IntAttr(k)}, c.ins[0]))
	}
	converters["EyeLike"] = convEyeLike
	converters["DepthToSpace"] = convDepthToSpace
	converters["SpaceToDepth"] = convSpaceToDepth
	converters["ReverseSequence"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(2, 2); err != nil {
			return nil, err
		}
		return one(c.emit(ge.OpReverseSequence, ge.Attrs{ge.AttrBatchAxis: ge.IntAttr(c.intAttr("batch_axis", 1)),
			ge.AttrTimeAxis: ge.IntAttr(c.intAttr("time_axis", 0))}, c.ins[0], c.ins[1]))
	}
	converters["Compress"] = convCompress
	converters["TopK"] = convTopK
	converters["NonZero"] = convNonZero
	converters["Unique"] = convUnique
	converters["Size"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(1, 1); err != nil {
			return nil, err
		}
		return []*value{konst(acl.Int64, nil, binary.LittleEndian.AppendUint64(nil, uint64(c.ins[0].desc.NumElements())))}, nil
	}
	converters["Det"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(1, 1); err != nil {
			return nil, err
		}
		return one(c.emit(ge.OpDet, nil, c.ins[0]))
	}
	converters["Einsum"] = convEinsum
}

// convArg: keepdims defaults to 1; select_last_index arrives in opset 12.
func convArg(op ge.OpType) converter {
	return func(c *nodeCtx) ([]*value, error) {
		if err := c.need(1, 1); err != nil {
			return nil, err
		}
		return one(c.emit(op, ge.Attrs{ge.AttrAxis: ge.IntAttr(c.intAttr("axis", 0)),
			ge.AttrKeepDims:        ge.BoolAttr(c.intAttr("keepdims", 1) != 0),
			ge.AttrSelectLastIndex: ge.BoolAttr(c.intAttr("select_last_index", 0) != 0)}, c.ins[0]))
	}
}

// convScatterElements serves Scatter (opsets 9–10, no reduction) and
// ScatterElements (reduction add/mul from 16, max/min from 18).
func convScatterElements(c *nodeCtx) ([]*value, error) {
	if err := c.need(3, 3); err != nil {
		return nil, err
	}
	a := ge.Attrs{ge.AttrAxis: ge.IntAttr(c.intAttr("axis", 0))}
	if c.op == "ScatterElements" {
		a[ge.AttrReduction] = ge.StringAttr(c.strAttr("reduction", "none"))
	}
	return one(c.emit(ge.OpScatterElements, a, c.ins...))
}

// convOneHot reads depth (a constant of any numeric type) and keeps
// values [off, on] as an input; negative indices count from depth from
// opset 11 (before, they select nothing).
func convOneHot(c *nodeCtx) ([]*value, error) {
	if err := c.need(3, 3); err != nil {
		return nil, err
	}
	depth, err := c.constFloat(c.ins[1], "depth")
	if err != nil {
		return nil, err
	}
	if !(depth >= 1 && depth <= 1<<40) {
		return nil, c.errf(ErrInvalidModel, "depth %v must be at least 1", depth)
	}
	vals := c.ins[2]
	if vals.desc.NumElements() != 2 {
		return nil, c.errf(ErrInvalidModel, "values must hold [off_value, on_value], has %s", vals.desc)
	}
	if len(vals.desc.Dims) != 1 {
		if vals, err = c.reshape(vals, []int64{2}); err != nil {
			return nil, err
		}
	}
	return one(c.emit(ge.OpOneHot, ge.Attrs{ge.AttrDepth: ge.IntAttr(int64(depth)), ge.AttrAxis: ge.IntAttr(c.intAttr("axis", -1)),
		ge.AttrNegativeIndices: ge.BoolAttr(c.im.opset >= 11)}, c.ins[0], vals))
}

func convCumSum(c *nodeCtx) ([]*value, error) {
	if err := c.need(2, 2); err != nil {
		return nil, err
	}
	ax, err := c.constInts(c.ins[1], "axis")
	if err != nil {
		return nil, err
	}
	if len(ax) != 1 {
		return nil, c.errf(ErrInvalidModel, "axis must hold one value, has %d", len(ax))
	}
	return one(c.emit(ge.OpCumSum, ge.Attrs{ge.AttrAxis: ge.IntAttr(ax[0]),
		ge.AttrExclusive: ge.BoolAttr(c.intAttr("exclusive", 0) != 0),
		ge.AttrReverse:   ge.BoolAttr(c.intAttr("reverse", 0) != 0)}, c.ins[0]))
}

// convEyeLike builds the identity-like matrix as a constant: it depends
// only on the input's (static) shape.
func convEyeLike(c *nodeCtx) ([]*value, error) {
	if err := c.need(1, 1); err != nil {
		return nil, err
	}
	d := c.ins[0].desc.Dims
	if len(d) != 2 {
		return nil, c.errf(ErrInvalidModel, "input must be 2-D, is %v", d)
	}
	dt := c.ins[0].desc.DataType
	if c.has("dtype") {
		var ok bool
		if dt, ok = aclType(int32(c.intAttr("dtype", 0))); !ok {
			return nil, c.errf(ErrUnsupportedDataType, "dtype %s", typeName(int32(c.intAttr("dtype", 0))))
		}
	}
	k := c.intAttr("k", 0)
	n := d[0] * d[1]
	if n*8 > maxFoldBytes {
		return nil, c.errf(ErrInvalidModel, "a %v identity is too large to materialise", d)
	}
	b := make([]byte, 8*n)
	for i := range d[0] {
		if j := i + k; j >= 0 && j < d[1] {
			binary.LittleEndian.PutUint64(b[8*(i*d[1]+j):], 1)
		}
	}
	return one(c.emit(ge.OpCast, ge.Attrs{ge.AttrDstType: ge.IntAttr(int64(dt))}, konst(acl.Int64, cloneInts(d), b)))
}

func cloneInts(d []int64) []int64 { return append([]int64{}, d...) }

// blockRearrange is DepthToSpace/SpaceToDepth: a reshape to 6-D, a
// transpose, and a reshape to the result (the reshapes are free).
func (c *nodeCtx) blockRearrange(x *value, six, perm, out []int64) ([]*value, error) {
	y, err := c.reshape(x, six)
	if err != nil {
		return nil, err
	}
	if y, err = c.emit(ge.OpTranspose, ge.Attrs{ge.AttrPerm: ge.IntsAttr(perm)}, y); err != nil {
		return nil, err
	}
	return one(c.reshape(y, out))
}

func convDepthToSpace(c *nodeCtx) ([]*value, error) {
	if err := c.need(1, 1); err != nil {
		return nil, err
	}
	x := c.ins[0]
	d := x.desc.Dims
	b := c.intAttr("blocksize", 0)
	mode := c.strAttr("mode", "DCR")
	if len(d) != 4 || b < 1 || d[1]%(b*b) != 0 {
		return nil, c.errf(ErrInvalidModel, "blocksize %d for input %v", b, d)
	}
	n, ch, h, w := d[0], d[1]/(b*b), d[2], d[3]
	out := []int64{n, ch, h * b, w * b}
	switch mode {
	case "DCR":
		return c.blockRearrange(x, []int64{n, b, b, ch, h, w}, []int64{0, 3, 4, 1, 5, 2}, out)
	case "CRD":
		return c.blockRearrange(x, []int64{n, ch, b, b, h, w}, []int64{0, 1, 4, 2, 5, 3}, out)
	}
	return nil, c.errf(ErrUnsupportedAttr, "mode %q", mode)
}

func convSpaceToDepth(c *nodeCtx) ([]*value, error) {
	if err := c.need(1, 1); err != nil {
		return nil, err
	}
	x := c.ins[0]
	d := x.desc.Dims
	b := c.intAttr("blocksize", 0)
	if len(d) != 4 || b < 1 || d[2]%b != 0 || d[3]%b != 0 {
		return nil, c.errf(ErrInvalidModel, "blocksize %d for input %v", b, d)
	}
	n, ch, h, w := d[0], d[1], d[2]/b, d[3]/b
	return c.blockRearrange(x, []int64{n, ch, h, b, w, b}, []int64{0, 3, 5, 1, 2, 4}, []int64{n, ch * b * b, h, w})
}

// convCompress gathers the positions where the (constant) condition is
// true, along axis or over the flattened input.
func convCompress(c *nodeCtx) ([]*value, error) {
	if err := c.need(2, 2); err != nil {
		return nil, err
	}
	x, cond := c.ins[0], c.ins[1]
	if cond.c == nil {
		return nil, c.errf(ErrDynamicShape, "condition must be a constant (the output shape depends on it)")
	}
	h, err := ge.EvalOp(ge.OpCast, ge.Attrs{ge.AttrDstType: ge.IntAttr(int64(acl.Bool))}, []ge.HostTensor{*cond.c})
	if err != nil {
		return nil, c.wrap(err)
	}
	axis := 0
	if c.has("axis") {
		if axis, err = c.normAxis(c.intAttr("axis", 0), len(x.desc.Dims)); err != nil {
			return nil, err
		}
	} else if x, err = c.reshape(x, []int64{x.desc.NumElements()}); err != nil {
		return nil, err
	}
	var idx []int64
	for i, b := range h[0].Data {
		if b != 0 {
			if int64(i) >= x.desc.Dims[axis] {
				return nil, c.errf(ErrInvalidModel, "condition selects position %d of a dim of %d", i, x.desc.Dims[axis])
			}
			idx = append(idx, int64(i))
		}
	}
	if len(idx) == 0 {
		return nil, c.errf(ErrEmptyTensor, "condition selects nothing")
	}
	return one(c.emit(ge.OpGather, ge.Attrs{ge.AttrAxis: ge.IntAttr(int64(axis))}, x, int64s(idx)))
}

// convTopK: k is an attribute before opset 10 and a constant input from
// 10; largest and sorted arrive in 11.
func convTopK(c *nodeCtx) ([]*value, error) {
	var k int64
	if c.im.opset < 10 {
		if err := c.need(1, 1); err != nil {
			return nil, err
		}
		k = c.intAttr("k", 0)
	} else {
		if err := c.need(2, 2); err != nil {
			return nil, err
		}
		ks, err := c.constInts(c.ins[1], "K")
		if err != nil {
			return nil, err
		}
		if len(ks) != 1 {
			return nil, c.errf(ErrInvalidModel, "K must hold one value, has %d", len(ks))
		}
		k = ks[0]
	}
	if k == 0 {
		return nil, c.errf(ErrEmptyTensor, "k is 0")
	}
	return c.emitN(ge.OpTopK, ge.Attrs{ge.AttrK: ge.IntAttr(k), ge.AttrAxis: ge.IntAttr(c.intAttr("axis", -1)),
		ge.AttrLargest: ge.BoolAttr(c.intAttr("largest", 1) != 0), ge.AttrSorted: ge.BoolAttr(c.intAttr("sorted", 1) != 0)}, c.ins[0])
}

// valueCount computes the value-dependent count of NonZero/Unique from a
// constant input.
func (c *nodeCtx) valueCount(op ge.OpType, a ge.Attrs) (int64, error) {
	x := c.ins[0]
	if x.c == nil {
		return 0, c.errf(ErrDynamicShape, "the input must be a constant (the output shape depends on its values)")
	}
	n, err := ge.ValueDependentCount(op, a, []ge.HostTensor{*x.c})
	if err != nil {
		return 0, c.wrap(err)
	}
	if n == 0 {
		return 0, c.errf(ErrEmptyTensor, "the output is empty")
	}
	return n, nil
}

func convNonZero(c *nodeCtx) ([]*value, error) {
	if err := c.need(1, 1); err != nil {
		return nil, err
	}
	n, err := c.valueCount(ge.OpNonZero, nil)
	if err != nil {
		return nil, err
	}
	return one(c.emit(ge.OpNonZero, ge.Attrs{ge.AttrCount: ge.IntAttr(n)}, c.ins[0]))
}

func convUnique(c *nodeCtx) ([]*value, error) {
	if err := c.need(1, 1); err != nil {
		return nil, err
	}
	a := ge.Attrs{ge.AttrSorted: ge.BoolAttr(c.intAttr("sorted", 1) != 0)}
	if c.has("axis") {
		a[ge.AttrAxis] = ge.IntAttr(c.intAttr("axis", 0))
	}
	n, err := c.valueCount(ge.OpUnique, a)
	if err != nil {
		return nil, err
	}
	a[ge.AttrCount] = ge.IntAttr(n)
	return c.emitN(ge.OpUnique, a, c.ins[0])
}

// convEinsum emits a pure permutation ("ij->ji") as Transpose, a batched
// matrix product as MatMul (float32, float16, bfloat16) and everything
// else as the general Einsum kernel.
func convEinsum(c *nodeCtx) ([]*value, error) {
	if err := c.need(1, 1<<10); err != nil {
		return nil, err
	}
	for _, v := range c.ins {
		if v == nil {
			return nil, c.errf(ErrInvalidModel, "variadic inputs cannot be omitted")
		}
	}
	eq := strings.ReplaceAll(c.strAttr("equation", ""), " ", "")
	if perm, ok := einsumTranspose(eq); ok && len(c.ins) == 1 && len(perm) == len(c.ins[0].desc.Dims) {
		return one(c.emit(ge.OpTranspose, ge.Attrs{ge.AttrPerm: ge.IntsAttr(perm)}, c.ins[0]))
	}
	if len(c.ins) == 2 {
		a, b := c.ins[0].desc, c.ins[1].desc
		if ta, tb, ok := einsumMatMul(eq); ok && a.DataType == b.DataType && isMatMulType(a.DataType) &&
			len(a.Dims) == len(b.Dims) && len(a.Dims) == len(strings.Split(eq, ",")[0]) &&
			slices.Equal(a.Dims[:len(a.Dims)-2], b.Dims[:len(b.Dims)-2]) {
			return one(c.emit(ge.OpMatMul, ge.Attrs{ge.AttrTransposeA: ge.BoolAttr(ta), ge.AttrTransposeB: ge.BoolAttr(tb)}, c.ins[0], c.ins[1]))
		}
	}
	return one(c.emit(ge.OpEinsum, ge.Attrs{ge.AttrEquation: ge.StringAttr(eq)}, c.ins...))
}

// einsumTranspose recognizes a one-operand permutation of distinct
// letters ("abc->cab") and returns the Transpose perm.
func einsumTranspose(eq string) ([]int64, bool) {
	in, out, ok := strings.Cut(eq, "->")
	if !ok || len(in) != len(out) || strings.ContainsAny(eq, ".,") {
		return nil, false
	}
	perm := make([]int64, len(out))
	for i := range len(out) {
		j := strings.IndexByte(in, out[i])
		if j < 0 || strings.Count(in, in[j:j+1]) != 1 {
			return nil, false
		}
		perm[i] = int64(j)
	}
	return perm, true
}

func isMatMulType(dt acl.DataType) bool {
	return dt == acl.Float32 || dt == acl.Float16 || dt == acl.BFloat16
}

// einsumMatMul recognizes "<batch>mk,<batch>kn-><batch>mn" with distinct
// labels, either operand's matrix possibly transposed ("km", "nk"), and
// returns MatMul's transpose flags.
func einsumMatMul(eq string) (ta, tb, ok bool) {
	lhs, out, has := strings.Cut(eq, "->")
	terms := strings.Split(lhs, ",")
	if !has || strings.Contains(eq, ".") || len(terms) != 2 {
		return false, false, false
	}
	a, b := terms[0], terms[1]
	nb := len(a) - 2
	if nb < 0 || len(b) != len(a) || len(out) != len(a) || a[:nb] != b[:nb] || out[:nb] != a[:nb] {
		return false, false, false
	}
	m, n := out[nb], out[nb+1]
	var k byte
	switch {
	case a[nb] == m:
		k = a[nb+1]
	case a[nb+1] == m:
		k, ta = a[nb], true
	default:
		return false, false, false
	}
	switch b[nb:] {
	case string([]byte{k, n}):
	case string([]byte{n, k}):
		tb = true
	default:
		return false, false, false
	}
	seen := map[rune]bool{}
	for _, l := range a[:nb] + string([]byte{m, n, k}) {
		if seen[l] {
			return false, false, false
		}
		seen[l] = true
	}
	return ta, tb, true
}
