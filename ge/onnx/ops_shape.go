package onnx

import (
	"encoding/binary"
	"math"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

func init() {
	converters["Identity"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(1, 1); err != nil {
			return nil, err
		}
		return one(c.emit(ge.OpIdentity, nil, c.ins[0]))
	}
	converters["Dropout"] = convDropout
	converters["Cast"] = convCast
	converters["Reshape"] = convReshape
	converters["Flatten"] = convFlatten
	converters["Squeeze"] = convSqueeze
	converters["Unsqueeze"] = convUnsqueeze
	converters["Transpose"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(1, 1); err != nil {
			return nil, err
		}
		a := ge.Attrs{}
		if p, ok := c.intsAttr("perm"); ok {
			a[ge.AttrPerm] = ge.IntsAttr(p)
		}
		return one(c.emit(ge.OpTranspose, a, c.ins[0]))
	}
	converters["Concat"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(1, 1<<20); err != nil {
			return nil, err
		}
		for _, v := range c.ins {
			if v == nil {
				return nil, c.errf(ErrInvalidModel, "variadic inputs cannot be omitted")
			}
		}
		return one(c.emit(ge.OpConcat, ge.Attrs{ge.AttrAxis: ge.IntAttr(c.intAttr("axis", 0))}, c.ins...))
	}
	converters["Split"] = convSplit
	converters["Slice"] = convSlice
	converters["Gather"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(2, 2); err != nil {
			return nil, err
		}
		return one(c.emit(ge.OpGather, ge.Attrs{ge.AttrAxis: ge.IntAttr(c.intAttr("axis", 0)),
			ge.AttrNegativeIndices: ge.BoolAttr(true)}, c.ins[0], c.ins[1]))
	}
	converters["Expand"] = func(c *nodeCtx) ([]*value, error) {
		if err := c.need(2, 2); err != nil {
			return nil, err
		}
		shape, err := c.constInts(c.ins[1], "shape")
		if err != nil {
			return nil, err
		}
		return one(c.emit(ge.OpExpand, ge.Attrs{ge.AttrShape: ge.IntsAttr(shape)}, c.ins[0]))
	}
	converters["Pad"] = convPad
	converters["Shape"] = convShape
	converters["Constant"] = convConstant
	converters["ConstantOfShape"] = convConstantOfShape
	converters["Range"] = convRange
}

func convDropout(c *nodeCtx) ([]*value, error) {
	if err := c.need(1, 3); err != nil {
		return nil, err
	}
	c.ignore("seed", "ratio", "is_test")
	if v := c.in(2); v != nil {
		if v.c == nil {
			return nil, c.errf(ErrDynamicShape, "training_mode must be a constant")
		}
		if v.c.Data[0] != 0 {
			return nil, c.errf(ErrUnsupportedAttr, "training_mode true (only inference is supported)")
		}
	}
	y, err := c.emit(ge.OpIdentity, nil, c.ins[0])
	if err != nil {
		return nil, err
	}
	// The mask of an inference Dropout keeps every element.
	ones := make([]byte, y.desc.NumElements())
	for i := range ones {
		ones[i] = 1
	}
	return []*value{y, konst(acl.Bool, y.desc.Dims, ones)}, nil
}

func convCast(c *nodeCtx) ([]*value, error) {
	if err := c.need(1, 1); err != nil {
		return nil, err
	}
	c.ignore("saturate") // affects float8 targets only, which are refused
	to := int32(c.intAttr("to", 0))
	dt, ok := aclType(to)
	if !ok {
		return nil, c.errf(ErrUnsupportedDataType, "cast to %s", typeName(to))
	}
	return one(c.emit(ge.OpCast, ge.Attrs{ge.AttrDstType: ge.IntAttr(int64(dt))}, c.ins[0]))
}

// convReshape resolves 0 (copy the input dim, unless allowzero) and -1.
func convReshape(c *nodeCtx) ([]*value, error) {
	if err := c.need(2, 2); err != nil {
		return nil, err
	}
	shape, err := c.constInts(c.ins[1], "shape")
	if err != nil {
		return nil, err
	}
	allowZero := c.intAttr("allowzero", 0) != 0
	x := c.ins[0].desc.Dims
	for i, d := range shape {
		if d == 0 && !allowZero {
			if i >= len(x) {
				return nil, c.errf(ErrInvalidModel, "shape %v copies dim %d of a rank-%d input", shape, i, len(x))
			}
			shape[i] = x[i]
		} else if d == 0 {
			return nil, c.errf(ErrEmptyTensor, "shape %v has a zero dim", shape)
		}
	}
	return one(c.reshape(c.ins[0], shape))
}

func convFlatten(c *nodeCtx) ([]*value, error) {
	if err := c.need(1, 1); err != nil {
		return nil, err
	}
	x := c.ins[0].desc.Dims
	axis := c.intAttr("axis", 1)
	if axis < 0 {
		axis += int64(len(x))
	}
	if axis < 0 || axis > int64(len(x)) {
		return nil, c.errf(ErrInvalidModel, "axis %d out of range for rank %d", axis, len(x))
	}
	return one(c.reshape(c.ins[0], []int64{prod(x[:axis]), prod(x[axis:])}))
}

// axesOf returns the axes of Squeeze/Unsqueeze/Split-like ops: an
// attribute before opset 13, an optional constant input from 13.
func (c *nodeCtx) axesOf(input int) ([]int64, bool, error) {
	if c.im.opset < 13 {
		v, ok := c.intsAttr("axes")
		return v, ok, nil
	}
	v := c.in(input)
	if v == nil {
		return nil, false, nil
	}
	a, err := c.constInts(v, "axes")
	return a, true, err
}

func convSqueeze(c *nodeCtx) ([]*value, error) {
	if err := c.need(1, 2); err != nil {
		return nil, err
	}
	x := c.ins[0].desc.Dims
	axes, ok, err := c.axesOf(1)
	if err != nil {
		return nil, err
	}
	drop := make([]bool, len(x))
	for i, d := range x {
		drop[i] = !ok && d == 1
	}
	for _, a := range axes {
		i, err := c.normAxis(a, len(x))
		if err != nil {
			return nil, err
		}
		if x[i] != 1 {
			return nil, c.errf(ErrInvalidModel, "cannot squeeze dim %d of size %d", i, x[i])
		}
		drop[i] = true
	}
	out := []int64{}
	for i, d := range x {
		if !drop[i] {
			out = append(out, d)
		}
	}
	return one(c.reshape(c.ins[0], out))
}

func convUnsqueeze(c *nodeCtx) ([]*value, error) {
	if err := c.need(1, 2); err != nil {
		return nil, err
	}
	x := c.ins[0].desc.Dims
	axes, _, err := c.axesOf(1)
	if err != nil {
		return nil, err
	}
	r := len(x) + len(axes)
	ins := make([]bool, r)
	for _, a := range axes {
		i, err := c.normAxis(a, r)
		if err != nil {
			return nil, err
		}
		if ins[i] {
			return nil, c.errf(ErrInvalidModel, "axis %d repeated", a)
		}
		ins[i] = true
	}
	out := make([]int64, 0, r)
	j := 0
	for i := range r {
		if ins[i] {
			out = append(out, 1)
		} else {
			out = append(out, x[j])
			j++
		}
	}
	return one(c.reshape(c.ins[0], out))
}

// convSplit slices the outputs along axis; the sizes come from the split
// attribute (before 13) or input (from 13), else equal parts (the last
// smaller with num_outputs, opset 18).
func convSplit(c *nodeCtx) ([]*value, error) {
	if err := c.need(1, 2); err != nil {
		return nil, err
	}
	x := c.ins[0].desc.Dims
	axis, err := c.normAxis(c.intAttr("axis", 0), max(len(x), 1))
	if err != nil {
		return nil, err
	}
	var split []int64
	if c.im.opset < 13 {
		split, _ = c.intsAttr("split")
	} else if v := c.in(1); v != nil {
		if split, err = c.constInts(v, "split"); err != nil {
			return nil, err
		}
	}
	nOut := len(c.n.GetOutput())
	if split == nil {
		n := c.intAttr("num_outputs", int64(nOut))
		if n < 1 {
			return nil, c.errf(ErrInvalidModel, "num_outputs %d", n)
		}
		part := (x[axis] + n - 1) / n
		for left := x[axis]; left > 0; left -= part {
			split = append(split, min(part, left))
		}
	}
	var sum int64
	for _, s := range split {
		sum += s
	}
	if sum != x[axis] || len(split) != nOut {
		return nil, c.errf(ErrInvalidModel, "split %v does not divide dim %d (%d) into %d outputs", split, axis, x[axis], nOut)
	}
	outs := make([]*value, len(split))
	var at int64
	for i, s := range split {
		starts, ends, steps := make([]int64, len(x)), append([]int64{}, x...), make([]int64, len(x))
		for j := range steps {
			steps[j] = 1
		}
		starts[axis], ends[axis] = at, at+s
		at += s
		if outs[i], err = c.emit(ge.OpStridedSlice, ge.Attrs{ge.AttrStarts: ge.IntsAttr(starts),
			ge.AttrEnds: ge.IntsAttr(ends), ge.AttrSteps: ge.IntsAttr(steps)}, c.ins[0]); err != nil {
			return nil, err
		}
	}
	return outs, nil
}

// convSlice builds full-rank starts/ends/steps from the listed axes:
// attributes before opset 10, constant inputs from 10.
func convSlice(c *nodeCtx) ([]*value, error) {
	var starts, ends, axes, steps []int64
	var err error
	if c.im.opset < 10 {
		if err := c.need(1, 1); err != nil {
			return nil, err
		}
		starts, _ = c.intsAttr("starts")
		ends, _ = c.intsAttr("ends")
		axes, _ = c.intsAttr("axes")
	} else {
		if err := c.need(3, 5); err != nil {
			return nil, err
		}
		if starts, err = c.constInts(c.ins[1], "starts"); err != nil {
			return nil, err
		}
		if ends, err = c.constInts(c.ins[2], "ends"); err != nil {
			return nil, err
		}
		if v := c.in(3); v != nil {
			if axes, err = c.constInts(v, "axes"); err != nil {
				return nil, err
			}
		}
		if v := c.in(4); v != nil {
			if steps, err = c.constInts(v, "steps"); err != nil {
				return nil, err
			}
		}
	}
	x := c.ins[0].desc.Dims
	if axes == nil {
		for i := range starts {
			axes = append(axes, int64(i))
		}
	}
	if steps == nil {
		for range starts {
			steps = append(steps, 1)
		}
	}
	if len(ends) != len(starts) || len(axes) != len(starts) || len(steps) != len(starts) {
		return nil, c.errf(ErrInvalidModel, "starts %v, ends %v, axes %v and steps %v differ in length", starts, ends, axes, steps)
	}
	fs, fe, fst := make([]int64, len(x)), make([]int64, len(x)), make([]int64, len(x))
	for i := range x {
		fs[i], fe[i], fst[i] = 0, math.MaxInt64, 1
	}
	seen := make([]bool, len(x))
	for i, a := range axes {
		j, err := c.normAxis(a, len(x))
		if err != nil {
			return nil, err
		}
		if seen[j] {
			return nil, c.errf(ErrInvalidModel, "axis %d repeated", a)
		}
		seen[j] = true
		fs[j], fe[j], fst[j] = starts[i], ends[i], steps[i]
	}
	return one(c.emit(ge.OpStridedSlice, ge.Attrs{ge.AttrStarts: ge.IntsAttr(fs), ge.AttrEnds: ge.IntsAttr(fe), ge.AttrSteps: ge.IntsAttr(fst)}, c.ins[0]))
}

// convPad supports mode "constant": pads and value are attributes before
// opset 11 and inputs from 11 (with optional axes from 18).
func convPad(c *nodeCtx) ([]*value, error) {
	if mode := c.strAttr("mode", "constant"); mode != "constant" {
		return nil, c.errf(ErrUnsupportedAttr, "mode %q (only constant padding is supported)", mode)
	}
	x := c.ins[0].desc.Dims
	var pads []int64
	val := 0.0
	var err error
	if c.im.opset < 11 {
		if err := c.need(1, 1); err != nil {
			return nil, err
		}
		pads, _ = c.intsAttr("pads")
		val = c.floatAttr("value", 0)
	} else {
		if err := c.need(2, 4); err != nil {
			return nil, err
		}
		if pads, err = c.constInts(c.ins[1], "pads"); err != nil {
			return nil, err
		}
		if v := c.in(2); v != nil {
			if val, err = c.constFloat(v, "constant_value"); err != nil {
				return nil, err
			}
		}
		if v := c.in(3); v != nil {
			axes, err := c.constInts(v, "axes")
			if err != nil {
				return nil, err
			}
			if len(pads) != 2*len(axes) {
				return nil, c.errf(ErrInvalidModel, "pads %v for axes %v", pads, axes)
			}
			full := make([]int64, 2*len(x))
			for i, a := range axes {
				j, err := c.normAxis(a, len(x))
				if err != nil {
					return nil, err
				}
				full[j], full[len(x)+j] = pads[i], pads[len(axes)+i]
			}
			pads = full
		}
	}
	return one(c.emit(ge.OpPad, ge.Attrs{ge.AttrPads: ge.IntsAttr(pads), ge.AttrValue: ge.FloatAttr(val)}, c.ins[0]))
}

// convShape folds to the input's (static) dims; start and end (opset 15)
// select a range.
func convShape(c *nodeCtx) ([]*value, error) {
	if err := c.need(1, 1); err != nil {
		return nil, err
	}
	x := c.ins[0].desc.Dims
	r := int64(len(x))
	start, end := c.intAttr("start", 0), c.intAttr("end", r)
	if start < 0 {
		start += r
	}
	if end < 0 {
		end += r
	}
	start, end = min(max(start, 0), r), min(max(end, 0), r)
	if start >= end {
		return nil, c.errf(ErrEmptyTensor, "shape range [%d, %d) is empty", start, end)
	}
	return []*value{int64s(x[start:end])}, nil
}

func convConstant(c *nodeCtx) ([]*value, error) {
	if err := c.need(0, 0); err != nil {
		return nil, err
	}
	if len(c.attrs) != 1 {
		return nil, c.errf(ErrInvalidModel, "Constant needs exactly one value attribute, has %d", len(c.attrs))
	}
	switch {
	case c.has("value"):
		return one(c.tensorOf(c.attr("value").GetT()))
	case c.has("value_float"):
		v, err := scalar(acl.Float32, nil, c.floatAttr("value_float", 0))
		return one(v, c.maybeWrap(err))
	case c.has("value_floats"):
		fs := c.attr("value_floats").GetFloats()
		b := make([]byte, 4*len(fs))
		for i, f := range fs {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
		}
		if len(fs) == 0 {
			return nil, c.errf(ErrEmptyTensor, "value_floats is empty")
		}
		return []*value{konst(acl.Float32, []int64{int64(len(fs))}, b)}, nil
	case c.has("value_int"):
		return []*value{konst(acl.Int64, nil, binary.LittleEndian.AppendUint64(nil, uint64(c.intAttr("value_int", 0))))}, nil
	case c.has("value_ints"):
		v, _ := c.intsAttr("value_ints")
		if len(v) == 0 {
			return nil, c.errf(ErrEmptyTensor, "value_ints is empty")
		}
		return []*value{int64s(v)}, nil
	}
	for k := range c.attrs {
		return nil, c.errf(ErrUnsupportedAttr, "constant attribute %q is not supported", k)
	}
	return nil, nil
}

func (c *nodeCtx) maybeWrap(err error) error {
	if err == nil {
		return nil
	}
	return c.wrap(err)
}

func convConstantOfShape(c *nodeCtx) ([]*value, error) {
	if err := c.need(1, 1); err != nil {
		return nil, err
	}
	shape, err := c.constInts(c.ins[0], "shape")
	if err != nil {
		return nil, err
	}
	fill := konst(acl.Float32, nil, make([]byte, 4))
	if a := c.attr("value"); a != nil {
		if fill, err = c.tensorOf(a.GetT()); err != nil {
			return nil, err
		}
		if fill.desc.NumElements() != 1 {
			return nil, c.errf(ErrInvalidModel, "value must hold one element, has %s", fill.desc)
		}
		if fill, err = c.reshape(fill, []int64{}); err != nil {
			return nil, err
		}
	}
	for _, d := range shape {
		if d == 0 {
			return nil, c.errf(ErrEmptyTensor, "shape %v", shape)
		}
	}
	if len(shape) == 0 {
		return []*value{fill}, nil
	}
	return one(c.emit(ge.OpExpand, ge.Attrs{ge.AttrShape: ge.IntsAttr(shape)}, fill))
}

// convRange computes start, start+delta, ... below limit on the host; the
// three inputs must fold to constants.
func convRange(c *nodeCtx) ([]*value, error) {
	if err := c.need(3, 3); err != nil {
		return nil, err
	}
	dt := c.ins[0].desc.DataType
	var v [3]float64
	for i, nm := range []string{"start", "limit", "delta"} {
		f, err := c.constFloat(c.ins[i], nm)
		if err != nil {
			return nil, err
		}
		v[i] = f
	}
	if v[2] == 0 {
		return nil, c.errf(ErrInvalidModel, "delta is 0")
	}
	n := math.Ceil((v[1] - v[0]) / v[2])
	if !(n >= 1) {
		return nil, c.errf(ErrEmptyTensor, "range [%v, %v) by %v is empty", v[0], v[1], v[2])
	}
	if n > maxFoldBytes/8 {
		return nil, c.errf(ErrInvalidModel, "range of %v elements is too large to fold", n)
	}
	vals := make([]byte, 8*int(n))
	for i := range int(n) {
		binary.LittleEndian.PutUint64(vals[8*i:], math.Float64bits(v[0]+float64(i)*v[2]))
	}
	if isIntType(dt) {
		// Integer ranges are exact: compute them in int64.
		s, d := int64(v[0]), int64(v[2])
		for i := range int(n) {
			binary.LittleEndian.PutUint64(vals[8*i:], uint64(s+int64(i)*d))
		}
		return one(c.emit(ge.OpCast, ge.Attrs{ge.AttrDstType: ge.IntAttr(int64(dt))}, konst(acl.Int64, []int64{int64(n)}, vals)))
	}
	return one(c.emit(ge.OpCast, ge.Attrs{ge.AttrDstType: ge.IntAttr(int64(dt))}, konst(acl.Float64, []int64{int64(n)}, vals)))
}

func isIntType(dt acl.DataType) bool {
	switch dt {
	case acl.Int8, acl.Int16, acl.Int32, acl.Int64, acl.Uint8, acl.Uint16, acl.Uint32, acl.Uint64:
		return true
	}
	return false
}
