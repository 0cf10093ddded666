package onnx

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	pb "github.com/ascend-go/cann/ge/onnx/internal/onnxpb"
)

// Attribute access: every read marks the attribute as understood; an
// attribute a converter never reads makes the import fail, so nothing is
// silently ignored.

func (c *nodeCtx) attr(name string) *pb.AttributeProto {
	c.read[name] = true
	return c.attrs[name]
}

func (c *nodeCtx) has(name string) bool { _, ok := c.attrs[name]; return ok }

// ignore marks attributes that do not affect inference (Dropout's seed,
// BatchNorm's momentum).
func (c *nodeCtx) ignore(names ...string) {
	for _, n := range names {
		c.read[n] = true
	}
}

func (c *nodeCtx) intAttr(name string, def int64) int64 {
	if a := c.attr(name); a != nil {
		return a.GetI()
	}
	return def
}

func (c *nodeCtx) floatAttr(name string, def float64) float64 {
	if a := c.attr(name); a != nil {
		return float64(a.GetF())
	}
	return def
}

func (c *nodeCtx) intsAttr(name string) ([]int64, bool) {
	if a := c.attr(name); a != nil {
		return append([]int64{}, a.GetInts()...), true
	}
	return nil, false
}

func (c *nodeCtx) strAttr(name, def string) string {
	if a := c.attr(name); a != nil {
		return string(a.GetS())
	}
	return def
}

// constInts returns the values of a constant int32/int64 input (shape,
// axes, pads, ...), or ErrDynamicShape when the input is computed at run
// time.
func (c *nodeCtx) constInts(v *value, what string) ([]int64, error) {
	if v.c == nil {
		return nil, c.errf(ErrDynamicShape, "%s must be a constant (or fold to one)", what)
	}
	dt := v.c.Desc.DataType
	if dt != acl.Int64 && dt != acl.Int32 {
		return nil, c.errf(ErrInvalidModel, "%s has data type %s, want int64", what, dt)
	}
	n := int(v.c.Desc.NumElements())
	out := make([]int64, n)
	for i := range out {
		if dt == acl.Int64 {
			out[i] = int64(binary.LittleEndian.Uint64(v.c.Data[8*i:]))
		} else {
			out[i] = int64(int32(binary.LittleEndian.Uint32(v.c.Data[4*i:])))
		}
	}
	return out, nil
}

// constFloat returns the single value of a constant numeric input.
func (c *nodeCtx) constFloat(v *value, what string) (float64, error) {
	if v.c == nil {
		return 0, c.errf(ErrDynamicShape, "%s must be a constant (or fold to one)", what)
	}
	if v.c.Desc.NumElements() != 1 {
		return 0, c.errf(ErrInvalidModel, "%s must hold one value, has %s", what, v.c.Desc)
	}
	h, err := ge.EvalOp(ge.OpCast, ge.Attrs{ge.AttrDstType: ge.IntAttr(int64(acl.Float64))}, []ge.HostTensor{*v.c})
	if err != nil {
		return 0, c.errf(ErrUnsupportedDataType, "%s: %v", what, err)
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(h[0].Data)), nil
}

// scalar makes a constant of type dt and the given dims holding v.
func scalar(dt acl.DataType, dims []int64, v float64) (*value, error) {
	one := konst(acl.Float64, nil, binary.LittleEndian.AppendUint64(nil, math.Float64bits(v)))
	h, err := ge.EvalOp(ge.OpCast, ge.Attrs{ge.AttrDstType: ge.IntAttr(int64(dt))}, []ge.HostTensor{*one.c})
	if err != nil {
		return nil, err
	}
	if len(dims) == 0 {
		return &value{desc: h[0].Desc, c: &h[0]}, nil
	}
	if n := (ge.TensorDesc{DataType: dt, Dims: dims}).Size(); n > maxFoldBytes || n <= 0 {
		return nil, fmt.Errorf("%w: a constant of %s%v is too large to materialise", ErrInvalidModel, dt, dims)
	}
	out, err := ge.EvalOp(ge.OpExpand, ge.Attrs{ge.AttrShape: ge.IntsAttr(dims)}, h)
	if err != nil {
		return nil, err
	}
	return &value{desc: out[0].Desc, c: &out[0]}, nil
}

// int64s makes a constant int64 vector.
func int64s(v []int64) *value {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	return konst(acl.Int64, []int64{int64(len(v))}, b)
}

// tensorOf decodes a tensor attribute.
func (c *nodeCtx) tensorOf(t *pb.TensorProto) (*value, error) {
	h, err := decodeTensor(t, c.im.cfg.dir)
	if err != nil {
		return nil, c.wrap(err)
	}
	return &value{desc: h.Desc, c: &h}, nil
}

// normAxis maps an ONNX axis (negative from the end) into [0, rank).
func (c *nodeCtx) normAxis(axis int64, rank int) (int, error) {
	if axis < -int64(rank) || axis >= int64(rank) {
		return 0, c.errf(ErrInvalidModel, "axis %d out of range for rank %d", axis, rank)
	}
	if axis < 0 {
		axis += int64(rank)
	}
	return int(axis), nil
}
