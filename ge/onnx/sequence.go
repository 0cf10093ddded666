package onnx

import (
	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	pb "github.com/ascend-go/cann/ge/onnx/internal/onnxpb"
)

// Sequences and optionals are values of the import, not of the device:
// a sequence is the list of its element tensors (each a graph tensor or a
// constant), an optional holds zero or one element. Ops on them rearrange
// that list as they are converted, so a model whose sequences have a
// length known at import compiles like any other; one whose length follows
// from the data runs interpreted. The ACL model API has no sequence IO: a
// model with sequence or optional inputs or outputs runs through
// Model.RunValues only.

// ValueKind is the ONNX type of a value: a tensor, a sequence of tensors
// or an optional.
type ValueKind uint8

// Value kinds.
const (
	KindTensor ValueKind = iota
	KindSequence
	KindOptional
)

func (k ValueKind) String() string {
	switch k {
	case KindSequence:
		return "sequence"
	case KindOptional:
		return "optional"
	}
	return "tensor"
}

// Value is a model input or output of any kind: Tensor for KindTensor,
// Seq for KindSequence; an optional holds Elem, or nothing when Elem is
// nil. Elem is a tensor or a sequence.
type Value struct {
	Kind   ValueKind
	Tensor ge.HostTensor
	Seq    []ge.HostTensor
	Elem   *Value
}

// takesAnyKind lists the ops whose inputs may be sequences or optionals.
var takesAnyKind = map[string]bool{
	"Identity": true, "If": true, "Loop": true, "SequenceInsert": true, "SequenceAt": true,
	"SequenceErase": true, "SequenceLength": true, "ConcatFromSequence": true, "SequenceMap": true,
	"Optional": true, "OptionalHasElement": true, "OptionalGetElement": true,
}

func init() {
	converters["SequenceEmpty"] = convSequenceEmpty
	converters["SequenceConstruct"] = convSequenceConstruct
	converters["SequenceInsert"] = convSequenceInsert
	converters["SequenceAt"] = convSequenceAt
	converters["SequenceErase"] = convSequenceErase
	converters["SequenceLength"] = convSequenceLength
	converters["SplitToSequence"] = convSplitToSequence
	converters["ConcatFromSequence"] = convConcatFromSequence
	converters["SequenceMap"] = convSequenceMap
	converters["Optional"] = convOptional
	converters["OptionalHasElement"] = convOptionalHasElement
	converters["OptionalGetElement"] = convOptionalGetElement
}

func seqOf(elem acl.DataType, elems []*value) *value {
	return &value{kind: KindSequence, elem: elem, elems: elems}
}

// seqIn returns input i as a sequence.
func (c *nodeCtx) seqIn(i int) (*value, error) {
	v := c.in(i)
	if v == nil || v.kind != KindSequence {
		return nil, c.errf(ErrInvalidModel, "input %d must be a sequence", i)
	}
	return v, nil
}

// tensorIn returns input i as a tensor.
func (c *nodeCtx) tensorIn(i int) (*value, error) {
	v := c.in(i)
	if v == nil || v.kind != KindTensor {
		return nil, c.errf(ErrInvalidModel, "input %d must be a tensor", i)
	}
	return v, nil
}

// position reads a sequence position (input i, an int scalar) for a
// sequence of n elements; insert allows n itself. Negative counts from
// the end.
func (c *nodeCtx) position(i, n int, insert bool) (int, error) {
	p, err := c.constInts(c.in(i), "the position")
	if err != nil {
		return 0, err
	}
	if len(p) != 1 {
		return 0, c.errf(ErrInvalidModel, "the position must hold one value, has %d", len(p))
	}
	hi := n - 1
	if insert {
		hi = n
	}
	if p[0] < int64(-n) || p[0] > int64(hi) {
		return 0, c.errf(ErrInvalidModel, "position %d is outside [%d, %d] of a sequence of %d", p[0], -n, hi, n)
	}
	if p[0] < 0 {
		return int(p[0]) + n, nil
	}
	return int(p[0]), nil
}

func convSequenceEmpty(c *nodeCtx) ([]*value, error) {
	if err := c.need(0, 0); err != nil {
		return nil, err
	}
	dt, ok := aclType(int32(c.intAttr("dtype", 1)))
	if !ok {
		return nil, c.errf(ErrUnsupportedDataType, "dtype %s", typeName(int32(c.intAttr("dtype", 1))))
	}
	return []*value{seqOf(dt, nil)}, nil
}

func convSequenceConstruct(c *nodeCtx) ([]*value, error) {
	if len(c.ins) == 0 {
		return nil, c.errf(ErrInvalidModel, "takes at least one tensor")
	}
	for i := range c.ins {
		v, err := c.tensorIn(i)
		if err != nil {
			return nil, err
		}
		if v.desc.DataType != c.ins[0].desc.DataType {
			return nil, c.errf(ErrInvalidModel, "element %d is %s, element 0 %s", i, v.desc.DataType, c.ins[0].desc.DataType)
		}
	}
	return []*value{seqOf(c.ins[0].desc.DataType, append([]*value(nil), c.ins...))}, nil
}

func convSequenceInsert(c *nodeCtx) ([]*value, error) {
	if err := c.need(2, 3); err != nil {
		return nil, err
	}
	s, err := c.seqIn(0)
	if err != nil {
		return nil, err
	}
	t, err := c.tensorIn(1)
	if err != nil {
		return nil, err
	}
	if t.desc.DataType != s.elem {
		return nil, c.errf(ErrInvalidModel, "inserting a %s into a sequence of %s", t.desc.DataType, s.elem)
	}
	at := len(s.elems)
	if c.in(2) != nil {
		if at, err = c.position(2, len(s.elems), true); err != nil {
			return nil, err
		}
	}
	elems := append(append(append([]*value(nil), s.elems[:at]...), t), s.elems[at:]...)
	return []*value{seqOf(s.elem, elems)}, nil
}

func convSequenceAt(c *nodeCtx) ([]*value, error) {
	if err := c.need(2, 2); err != nil {
		return nil, err
	}
	s, err := c.seqIn(0)
	if err != nil {
		return nil, err
	}
	at, err := c.position(1, len(s.elems), false)
	if err != nil {
		return nil, err
	}
	return []*value{s.elems[at]}, nil
}

func convSequenceErase(c *nodeCtx) ([]*value, error) {
	if err := c.need(1, 2); err != nil {
		return nil, err
	}
	s, err := c.seqIn(0)
	if err != nil {
		return nil, err
	}
	if len(s.elems) == 0 {
		return nil, c.errf(ErrInvalidModel, "erasing from an empty sequence")
	}
	at := len(s.elems) - 1
	if c.in(1) != nil {
		if at, err = c.position(1, len(s.elems), false); err != nil {
			return nil, err
		}
	}
	elems := append(append([]*value(nil), s.elems[:at]...), s.elems[at+1:]...)
	return []*value{seqOf(s.elem, elems)}, nil
}

func convSequenceLength(c *nodeCtx) ([]*value, error) {
	if err := c.need(1, 1); err != nil {
		return nil, err
	}
	s, err := c.seqIn(0)
	if err != nil {
		return nil, err
	}
	return []*value{int64Const(int64(len(s.elems)))}, nil
}

// convSplitToSequence cuts a tensor along axis into pieces of one (or the
// given) size, or into the given sizes.
func convSplitToSequence(c *nodeCtx) ([]*value, error) {
	if err := c.need(1, 2); err != nil {
		return nil, err
	}
	x, err := c.tensorIn(0)
	if err != nil {
		return nil, err
	}
	axis, err := c.normAxis(c.intAttr("axis", 0), len(x.desc.Dims))
	if err != nil {
		return nil, err
	}
	keep := c.intAttr("keepdims", 1) != 0
	n := x.desc.Dims[axis]
	var sizes []int64
	if sp := c.in(1); sp != nil {
		v, err := c.constInts(sp, "split")
		if err != nil {
			return nil, err
		}
		if len(sp.desc.Dims) == 0 { // one size: equal pieces, the last may be smaller
			if v[0] < 1 {
				return nil, c.errf(ErrInvalidModel, "split size %d", v[0])
			}
			for r := n; r > 0; r -= v[0] {
				sizes = append(sizes, min(v[0], r))
			}
		} else {
			sizes = v
		}
		keep = true // keepdims applies only without split
	} else {
		for range n {
			sizes = append(sizes, 1)
		}
	}
	var sum int64
	for _, s := range sizes {
		if s < 1 {
			return nil, c.errf(ErrEmptyTensor, "split sizes %v", sizes)
		}
		sum += s
	}
	if sum != n {
		return nil, c.errf(ErrInvalidModel, "split sizes %v do not add up to dim %d (%d)", sizes, axis, n)
	}
	var elems []*value
	var at int64
	for _, s := range sizes {
		begin := make([]int64, len(x.desc.Dims))
		size := append([]int64(nil), x.desc.Dims...)
		begin[axis], size[axis] = at, s
		at += s
		p, err := c.emit(ge.OpSlice, ge.Attrs{ge.AttrBegin: ge.IntsAttr(begin), ge.AttrSize: ge.IntsAttr(size)}, x)
		if err != nil {
			return nil, err
		}
		if !keep {
			d := x.desc.Dims
			if p, err = c.reshape(p, append(append([]int64(nil), d[:axis]...), d[axis+1:]...)); err != nil {
				return nil, err
			}
		}
		elems = append(elems, p)
	}
	return []*value{seqOf(x.desc.DataType, elems)}, nil
}

func convConcatFromSequence(c *nodeCtx) ([]*value, error) {
	if err := c.need(1, 1); err != nil {
		return nil, err
	}
	s, err := c.seqIn(0)
	if err != nil {
		return nil, err
	}
	if len(s.elems) == 0 {
		return nil, c.errf(ErrEmptyTensor, "concatenating an empty sequence")
	}
	a := c.attr("axis")
	if a == nil {
		return nil, c.errf(ErrInvalidModel, "attribute \"axis\" is required")
	}
	if c.intAttr("new_axis", 0) != 0 {
		return one(c.stack(s.elems, int(a.GetI()), "the sequence"))
	}
	axis, err := c.normAxis(a.GetI(), len(s.elems[0].desc.Dims))
	if err != nil {
		return nil, err
	}
	if len(s.elems) == 1 {
		return []*value{s.elems[0]}, nil
	}
	return one(c.emit(ge.OpConcat, ge.Attrs{ge.AttrAxis: ge.IntAttr(int64(axis))}, s.elems...))
}

// convSequenceMap applies the body to each element of the first input
// (and of every other sequence input; tensor inputs are passed whole).
func convSequenceMap(c *nodeCtx) ([]*value, error) {
	body, err := c.graphAttr("body")
	if err != nil {
		return nil, err
	}
	s, err := c.seqIn(0)
	if err != nil {
		return nil, err
	}
	for i, v := range c.ins {
		if v == nil || v.kind == KindOptional || v.kind == KindSequence && len(v.elems) != len(s.elems) {
			return nil, c.errf(ErrInvalidModel, "input %d must be a tensor or a sequence of %d", i, len(s.elems))
		}
	}
	outs := make([][]*value, len(body.GetOutput()))
	for k := range s.elems {
		args := make([]*value, len(c.ins))
		for i, v := range c.ins {
			args[i] = v
			if v.kind == KindSequence {
				args[i] = v.elems[k]
			}
		}
		res, err := c.subgraph(body, args)
		if err != nil {
			return nil, err
		}
		for j, r := range res {
			if r.kind != KindTensor {
				return nil, c.errf(ErrInvalidModel, "body output %d is a %s", j, r.kind)
			}
			outs[j] = append(outs[j], r)
		}
	}
	vs := make([]*value, len(outs))
	for j, o := range outs {
		dt := acl.Float32
		if len(o) > 0 {
			dt = o[0].desc.DataType
		} else if tt := body.GetOutput()[j].GetType().GetTensorType(); tt != nil {
			dt, _ = aclType(tt.GetElemType())
		}
		vs[j] = seqOf(dt, o)
	}
	return vs, nil
}

func convOptional(c *nodeCtx) ([]*value, error) {
	if err := c.need(0, 1); err != nil {
		return nil, err
	}
	if v := c.in(0); v != nil {
		c.attr("type")
		return []*value{{kind: KindOptional, elems: []*value{v}, elem: v.desc.DataType}}, nil
	}
	a := c.attr("type")
	if a == nil || a.GetTp() == nil {
		return nil, c.errf(ErrInvalidModel, "an empty Optional needs its \"type\" attribute")
	}
	return []*value{{kind: KindOptional, elem: elemTypeOf(a.GetTp())}}, nil
}

// elemTypeOf is the element type of a tensor or sequence type.
func elemTypeOf(tp *pb.TypeProto) acl.DataType {
	if s := tp.GetSequenceType(); s != nil {
		tp = s.GetElemType()
	}
	dt, _ := aclType(tp.GetTensorType().GetElemType())
	return dt
}

func convOptionalHasElement(c *nodeCtx) ([]*value, error) {
	if err := c.need(0, 1); err != nil {
		return nil, err
	}
	v := c.in(0)
	return []*value{boolConst(v != nil && (v.kind != KindOptional || len(v.elems) > 0))}, nil
}

func convOptionalGetElement(c *nodeCtx) ([]*value, error) {
	if err := c.need(1, 1); err != nil {
		return nil, err
	}
	v := c.in(0)
	if v.kind != KindOptional {
		return []*value{v}, nil // opset 18: a plain tensor or sequence is its own element
	}
	if len(v.elems) == 0 {
		return nil, c.errf(ErrInvalidModel, "the optional input is empty")
	}
	return []*value{v.elems[0]}, nil
}

// toValue turns an import value (all constant) into a Value.
func toValue(v *value) (Value, bool) {
	switch v.kind {
	case KindSequence:
		out := Value{Kind: KindSequence, Seq: []ge.HostTensor{}}
		for _, e := range v.elems {
			if e.c == nil {
				return Value{}, false
			}
			out.Seq = append(out.Seq, *e.c)
		}
		return out, true
	case KindOptional:
		out := Value{Kind: KindOptional}
		if len(v.elems) > 0 {
			e, ok := toValue(v.elems[0])
			if !ok {
				return Value{}, false
			}
			out.Elem = &e
		}
		return out, true
	}
	if v.c == nil {
		return Value{}, false
	}
	return Value{Kind: KindTensor, Tensor: *v.c}, true
}

// fromValue turns a run's Value into an import value.
func fromValue(v Value, elem acl.DataType) *value {
	switch v.Kind {
	case KindSequence:
		s := seqOf(elem, nil)
		for i := range v.Seq {
			h := v.Seq[i]
			h.Data = aligned(h.Data)
			s.elems = append(s.elems, &value{desc: h.Desc, c: &h})
			s.elem = h.Desc.DataType
		}
		return s
	case KindOptional:
		o := &value{kind: KindOptional, elem: elem}
		if v.Elem != nil {
			e := fromValue(*v.Elem, elem)
			o.elems = []*value{e}
		}
		return o
	}
	h := v.Tensor
	h.Data = aligned(h.Data)
	return &value{desc: h.Desc, c: &h}
}
