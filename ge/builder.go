package ge

import (
	"strconv"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/floatx"
)

// Data adds model input number index with the given type and dims (format
// ND unless WithFormat says otherwise). Indexes must be unique and, by
// Compile time, cover 0..n-1.
func (g *Graph) Data(name string, index int, dt acl.DataType, dims []int64, opts ...OpOption) *Tensor {
	if g == nil {
		g = NewGraph("") // a nil graph's nodes go nowhere; its Err reports it
	}
	n := g.addOp(OpData, nil, Attrs{AttrIndex: IntAttr(int64(index))}, append([]OpOption{Name(name)}, opts...)...)
	g.setSource(n, dt, dims, opts)
	if index < 0 {
		g.record(g.nodeErr(n, acl.CodeGEParamInvalid, "input index %d is negative", index))
	}
	for _, o := range g.nodes {
		if o != n && o.op == OpData && o.attrs.Int(AttrIndex, -1) == int64(index) {
			g.record(g.nodeErr(n, acl.CodeGEParamInvalid, "input index %d already used by node %q", index, o.name))
		}
	}
	return n.outs[0]
}

// Const adds a constant (a weight) holding value, the raw little-endian
// bytes of a dt tensor with the given dims; value is copied.
func (g *Graph) Const(name string, dt acl.DataType, dims []int64, value []byte, opts ...OpOption) *Tensor {
	n := g.addOp(OpConst, nil, nil, append([]OpOption{Name(name)}, opts...)...)
	g.setSource(n, dt, dims, opts)
	if d := n.outs[0].desc; d.DataType != acl.DTUndefined && int64(len(value)) != d.Size() {
		g.record(g.nodeErr(n, acl.CodeGEParamInvalid, "value holds %d bytes, %s needs %d", len(value), d, d.Size()))
	}
	n.value = append([]byte(nil), value...)
	return n.outs[0]
}

// ConstFloat32 adds a constant of float type dt (float32, float16 or
// bfloat16) from float32 values, rounding each to nearest even.
func (g *Graph) ConstFloat32(name string, dt acl.DataType, dims []int64, vals []float32, opts ...OpOption) *Tensor {
	b := make([]byte, len(vals)*max(dt.Size(), 0))
	switch dt {
	case acl.Float32:
		for i, v := range vals {
			putF32(b[4*i:], v)
		}
	case acl.Float16:
		floatx.EncodeF16(b, vals)
	case acl.BFloat16:
		floatx.EncodeBF16(b, vals)
	default:
		t := g.Const(name, dt, dims, nil, opts...)
		g.record(g.nodeErr(t.node, acl.CodeUnsupportedDataType, "ConstFloat32 needs a float type, got %s", dt))
		return t
	}
	return g.Const(name, dt, dims, b, opts...)
}

// setSource sets the descriptor of a Data or Const node.
func (g *Graph) setSource(n *Node, dt acl.DataType, dims []int64, opts []OpOption) {
	cfg := opConfig{format: acl.FormatND}
	for _, o := range opts {
		o(&cfg)
	}
	d := TensorDesc{DataType: dt, Format: cfg.format, Dims: cloneDims(dims)}
	if err := checkDesc(d); err != nil {
		g.record(g.nodeErr(n, acl.CodeGEParamInvalid, "%v", err))
		return
	}
	n.outs[0].desc = d
}

// Output adds the NetOutput node: the model outputs, in order. A graph has
// exactly one.
func (g *Graph) Output(ts ...*Tensor) *Node {
	if g == nil {
		return g.addOp(OpNetOutput, ts, nil)
	}
	for _, o := range g.nodes {
		if o.op == OpNetOutput {
			n := g.addOp(OpNetOutput, ts, nil)
			g.record(g.nodeErr(n, acl.CodeGEParamInvalid, "graph already has NetOutput %q", o.name))
			return n
		}
	}
	return g.addOp(OpNetOutput, ts, nil, Name("NetOutput"))
}

// OutputNamed adds the NetOutput node like Output and names the model
// outputs (what aclmdlGetOutputNameByIndex reports) instead of the default
// "node:index"; names and ts have the same length.
func (g *Graph) OutputNamed(names []string, ts ...*Tensor) *Node {
	n := g.Output(ts...)
	if len(names) != len(ts) {
		g.record(g.nodeErr(n, acl.CodeGEParamInvalid, "%d output names for %d outputs", len(names), len(ts)))
		return n
	}
	for i, name := range names {
		n.attrs[outputNameAttr(i)] = StringAttr(name)
	}
	return n
}

func outputNameAttr(i int) string { return "output_name_" + strconv.Itoa(i) }

// MatMul multiplies the last two dims: [..., M, K] × [..., K, N] → [..., M, N]
// (TransposeA / TransposeB take the stored operand as [K, M] / [N, K]).
// Batch dims broadcast numpy-style. float16 and bfloat16 accumulate in
// float32 and round once.
func (g *Graph) MatMul(a, b *Tensor, opts ...OpOption) *Tensor {
	return g.single(OpMatMul, []*Tensor{a, b}, nil, opts)
}

// Add returns a + b with numpy broadcasting.
func (g *Graph) Add(a, b *Tensor, opts ...OpOption) *Tensor {
	return g.single(OpAdd, []*Tensor{a, b}, nil, opts)
}

// Sub returns a - b with numpy broadcasting.
func (g *Graph) Sub(a, b *Tensor, opts ...OpOption) *Tensor {
	return g.single(OpSub, []*Tensor{a, b}, nil, opts)
}

// Mul returns a · b with numpy broadcasting.
func (g *Graph) Mul(a, b *Tensor, opts ...OpOption) *Tensor {
	return g.single(OpMul, []*Tensor{a, b}, nil, opts)
}

// Div returns a / b with numpy broadcasting (IEEE division: x/0 is ±Inf or
// NaN, not an error).
func (g *Graph) Div(a, b *Tensor, opts ...OpOption) *Tensor {
	return g.single(OpDiv, []*Tensor{a, b}, nil, opts)
}

// Relu returns max(x, 0).
func (g *Graph) Relu(x *Tensor, opts ...OpOption) *Tensor {
	return g.single(OpRelu, []*Tensor{x}, nil, opts)
}

// Gelu returns the tanh form of GELU, as the Ascend Gelu operator:
// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
func (g *Graph) Gelu(x *Tensor, opts ...OpOption) *Tensor {
	return g.single(OpGelu, []*Tensor{x}, nil, opts)
}

// Silu returns x·sigmoid(x).
func (g *Graph) Silu(x *Tensor, opts ...OpOption) *Tensor {
	return g.single(OpSilu, []*Tensor{x}, nil, opts)
}

// Softmax normalises exp(x) along axis (negative counts from the end).
func (g *Graph) Softmax(x *Tensor, axis int, opts ...OpOption) *Tensor {
	return g.single(OpSoftmax, []*Tensor{x}, Attrs{AttrAxis: IntAttr(int64(axis))}, opts)
}

// LayerNorm normalises over the last axis with the population variance:
// (x-mean)/√(var+eps)·gamma + beta; gamma and beta have shape [last dim].
func (g *Graph) LayerNorm(x, gamma, beta *Tensor, eps float64, opts ...OpOption) *Tensor {
	return g.single(OpLayerNorm, []*Tensor{x, gamma, beta}, Attrs{AttrEpsilon: FloatAttr(eps)}, opts)
}

// RMSNorm returns x/√(mean(x²)+eps)·gamma over the last axis.
func (g *Graph) RMSNorm(x, gamma *Tensor, eps float64, opts ...OpOption) *Tensor {
	return g.single(OpRMSNorm, []*Tensor{x, gamma}, Attrs{AttrEpsilon: FloatAttr(eps)}, opts)
}

// Gather picks slices of params along axis by int32 or int64 indices: the
// output dims are params[:axis] + indices + params[axis+1:]. An index
// outside [0, dim) fails the task at run time.
func (g *Graph) Gather(params, indices *Tensor, axis int, opts ...OpOption) *Tensor {
	return g.single(OpGather, []*Tensor{params, indices}, Attrs{AttrAxis: IntAttr(int64(axis))}, opts)
}

// Reshape returns x with new dims (one may be -1). The output is an alias:
// it shares x's memory and runs no kernel.
func (g *Graph) Reshape(x *Tensor, dims []int64, opts ...OpOption) *Tensor {
	return g.single(OpReshape, []*Tensor{x}, Attrs{AttrShape: IntsAttr(dims)}, opts)
}

// Identity returns x as an alias: it shares x's memory and runs no kernel.
func (g *Graph) Identity(x *Tensor, opts ...OpOption) *Tensor {
	return g.single(OpIdentity, []*Tensor{x}, nil, opts)
}

// Cast converts x to dt. Between float types it rounds once to nearest even
// (float8 e4m3fn without saturation: overflow becomes NaN); float to integer
// truncates toward zero, saturates and maps NaN to 0; integer to integer
// wraps; to bool is x != 0. Integers beyond ±2^53 going to float16,
// bfloat16 or float8 pass through float64 and may round twice.
func (g *Graph) Cast(x *Tensor, dt acl.DataType, opts ...OpOption) *Tensor {
	return g.single(OpCast, []*Tensor{x}, Attrs{AttrDstType: IntAttr(int64(dt))}, opts)
}

// Concat joins xs along axis; the other dims must agree.
func (g *Graph) Concat(xs []*Tensor, axis int, opts ...OpOption) *Tensor {
	return g.single(OpConcat, xs, Attrs{AttrAxis: IntAttr(int64(axis))}, opts)
}

// Slice returns x[begin[i] : begin[i]+size[i]] in every dim; a size of -1
// runs to the end of the dim.
func (g *Graph) Slice(x *Tensor, begin, size []int64, opts ...OpOption) *Tensor {
	return g.single(OpSlice, []*Tensor{x}, Attrs{AttrBegin: IntsAttr(begin), AttrSize: IntsAttr(size)}, opts)
}

func putF32(b []byte, v float32) {
	u := float32bits(v)
	b[0], b[1], b[2], b[3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
}
