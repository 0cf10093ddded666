package gert_test

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/gert"
	"github.com/ascend-go/cann/ge/getest"
)

// opCase is one op call: its inputs (descriptions and bytes) and attributes.
type opCase struct {
	op    string
	in    []gert.IODesc
	data  [][]byte
	attrs gert.OpAttrs
}

func f32(rng *rand.Rand, shape ...int64) (gert.IODesc, []byte) {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return gert.IODesc{DataType: acl.Float32, Shape: shape, Format: acl.FormatND}, getest.F32Bytes(getest.RandF32(rng, int(n)))
}

func i32(vals ...int32) (gert.IODesc, []byte) {
	b := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	}
	return gert.IODesc{DataType: acl.Int32, Shape: gert.Shape{int64(len(vals))}, Format: acl.FormatND}, b
}

// opCases covers every kernel and alias op of ge but those in notSingleOps
// (TestSingleOpCasesCoverEveryOp checks it), on random data with odd shapes.
func opCases(rng *rand.Rand) []opCase {
	mk := func(op string, attrs gert.OpAttrs, ins ...func() (gert.IODesc, []byte)) opCase {
		c := opCase{op: op, attrs: attrs}
		for _, f := range ins {
			d, b := f()
			c.in, c.data = append(c.in, d), append(c.data, b)
		}
		return c
	}
	t := func(shape ...int64) func() (gert.IODesc, []byte) {
		return func() (gert.IODesc, []byte) { return f32(rng, shape...) }
	}
	var cs []opCase
	var eqB []byte // Equal's second input, made with its first
	for _, op := range []string{"Add", "Sub", "Mul", "Div"} {
		cs = append(cs, mk(op, nil, t(3, 17), t(3, 17)))
	}
	for _, op := range []string{"Relu", "Gelu", "Silu", "Memcpy"} {
		cs = append(cs, mk(op, nil, t(5, 7, 3)))
	}
	cs = append(cs,
		mk("MatMul", nil, t(7, 13), t(13, 5)),
		mk("MatMul", gert.OpAttrs{"transpose_b": true}, t(7, 13), t(5, 13)),
		mk("Softmax", gert.OpAttrs{"axis": int64(-1)}, t(4, 31)),
		mk("LayerNorm", gert.OpAttrs{"epsilon": float32(1e-5)}, t(6, 19), t(19), t(19)),
		mk("RMSNorm", gert.OpAttrs{"epsilon": float32(1e-6)}, t(6, 19), t(19)),
		mk("Gather", gert.OpAttrs{"axis": int64(0)}, t(9, 4), func() (gert.IODesc, []byte) { return i32(3, 0, 8, 3) }),
		mk("Cast", gert.OpAttrs{"dst_type": int64(acl.Float16)}, t(11)),
		mk("Concat", gert.OpAttrs{"axis": int64(1)}, t(3, 2), t(3, 5)),
		mk("Slice", gert.OpAttrs{"begin": []int64{1, 2}, "size": []int64{2, -1}}, t(4, 9)),
	)
	for _, op := range []string{"Pow", "Max", "Min", "Less", "Greater"} {
		cs = append(cs, mk(op, nil, t(3, 17), t(17)))
	}
	// Equal on random floats would be all false: half the pairs are equal.
	eq := func() (gert.IODesc, []byte) {
		d, b := f32(rng, 3, 17)
		c := append([]byte(nil), b...)
		for i := 0; i < len(c); i += 8 {
			c[i] ^= 0x40
		}
		eqB = c
		return d, b
	}
	cs = append(cs, mk("Equal", nil, eq, func() (gert.IODesc, []byte) {
		return gert.IODesc{DataType: acl.Float32, Shape: gert.Shape{3, 17}, Format: acl.FormatND}, eqB
	}))
	cs = append(cs, mk("Where", nil, func() (gert.IODesc, []byte) { return bools(rng, 4, 1) }, t(4, 6), t(6)))
	for _, op := range []string{"Sigmoid", "Tanh", "Erf", "Exp", "Log", "Sqrt", "Reciprocal", "Neg", "Abs", "Softplus", "Identity"} {
		cs = append(cs, mk(op, nil, t(5, 7, 3)))
	}
	cs = append(cs,
		mk("PRelu", nil, t(5, 7), t(7)),
		mk("LeakyRelu", gert.OpAttrs{"alpha": float32(0.07)}, t(5, 7)),
		mk("Elu", gert.OpAttrs{"alpha": float32(0.8)}, t(5, 7)),
		mk("Selu", gert.OpAttrs{"alpha": float32(1.6), "gamma": float32(1.05)}, t(5, 7)),
		mk("Clip", gert.OpAttrs{"min": float32(-0.5), "max": float32(0.7)}, t(5, 7)),
		mk("LogSoftmax", gert.OpAttrs{"axis": int64(1)}, t(4, 13)),
		mk("Conv", gert.OpAttrs{"strides": []int64{1, 2}, "pads": []int64{1, 0, 1, 1}}, t(2, 3, 7, 6), t(4, 3, 3, 2), t(4)),
		mk("ConvTranspose", gert.OpAttrs{"strides": []int64{2, 2}}, t(1, 2, 4, 3), t(2, 3, 3, 3)),
		mk("MaxPool", gert.OpAttrs{"kernel_shape": []int64{2, 3}, "strides": []int64{2, 1}}, t(2, 3, 6, 7)),
		mk("AvgPool", gert.OpAttrs{"kernel_shape": []int64{3, 2}, "pads": []int64{1, 1, 1, 1}}, t(1, 2, 5, 5)),
		mk("BatchNorm", gert.OpAttrs{"epsilon": float32(1e-5)}, t(2, 3, 4, 5), t(3), t(3), t(3), func() (gert.IODesc, []byte) { return positive(rng, 3) }),
		mk("ReduceMean", gert.OpAttrs{"axes": []int64{1}}, t(4, 6, 5)),
		mk("ReduceSum", gert.OpAttrs{"axes": []int64{0, 2}, "keepdims": true}, t(4, 6, 5)),
		mk("ReduceMax", gert.OpAttrs{"axes": []int64{-1}}, t(4, 6, 5)),
		mk("ReduceMin", gert.OpAttrs{"axes": []int64{0}}, t(4, 6, 5)),
		mk("ReduceProd", gert.OpAttrs{"axes": []int64{2}}, t(4, 6, 5)),
		mk("Transpose", gert.OpAttrs{"perm": []int64{2, 0, 1}}, t(3, 4, 5)),
		mk("StridedSlice", gert.OpAttrs{"starts": []int64{0, 1}, "ends": []int64{4, 9}, "steps": []int64{2, 3}}, t(4, 9)),
		mk("Expand", gert.OpAttrs{"shape": []int64{3, 4, 5}}, t(4, 1)),
		mk("Pad", gert.OpAttrs{"pads": []int64{1, 0, 0, 2}, "value": float32(0.5)}, t(3, 4)),
		mk("Reshape", gert.OpAttrs{"shape": []int64{6, -1}}, t(3, 4, 5)),
		// RNNs: X [seq, batch, input], W, R, B, initial h (and c, peepholes).
		mk("GRU", gert.OpAttrs{"hidden_size": int64(4)}, t(3, 2, 5), t(1, 12, 5), t(1, 12, 4), t(1, 24), t(1, 2, 4)),
		mk("LSTM", gert.OpAttrs{"hidden_size": int64(4)}, t(3, 2, 5), t(1, 16, 5), t(1, 16, 4), t(1, 32), t(1, 2, 4), t(1, 2, 4), t(1, 12)),
	)
	for _, more := range moreOpCases {
		cs = append(cs, more(rng)...)
	}
	return cs
}

// moreOpCases adds the cases of ops added after 0.1.0, one file per
// family appending its function in init.
var moreOpCases []func(rng *rand.Rand) []opCase

// notSingleOps are the ge kernel ops the single-op API does not run, and
// why.
var notSingleOps = map[string]string{
	"HcclAllReduce": "a collective: it needs a communicator, which aclopCompileAndExecuteV2 has no argument for",
}

// TestSingleOpCasesCoverEveryOp: every kernel and alias op ge registers has
// a case in opCases (or a reason in notSingleOps), so that an op added to
// ge is run through the single-op API too.
func TestSingleOpCasesCoverEveryOp(t *testing.T) {
	have := map[string]bool{}
	for _, c := range opCases(rand.New(rand.NewPCG(1, 1))) {
		have[c.op] = true
	}
	n := 0
	for v := range 1 << 16 {
		op := ge.OpType(v)
		if !op.Known() || !(op.HasTask() || op.IsAlias()) {
			continue
		}
		n++
		if _, skip := notSingleOps[op.String()]; !skip {
			assert.True(t, have[op.String()], "op %s has no single-op case", op)
		}
	}
	assert.Greater(t, n, len(notSingleOps))
}

func bools(rng *rand.Rand, shape ...int64) (gert.IODesc, []byte) {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.IntN(2))
	}
	return gert.IODesc{DataType: acl.Bool, Shape: shape, Format: acl.FormatND}, b
}

// positive returns n float32 values in [0.5, 1.5) (a variance).
func positive(rng *rand.Rand, n int64) (gert.IODesc, []byte) {
	v := make([]float32, n)
	for i := range v {
		v[i] = 0.5 + rng.Float32()
	}
	return gert.IODesc{DataType: acl.Float32, Shape: gert.Shape{n}, Format: acl.FormatND}, getest.F32Bytes(v)
}

// reference runs the op as a one-node ge model in the host interpreter
// (getest.Run: inputs copied into an arena, outputs copied out).
func reference(t *testing.T, c opCase) ([]gert.IODesc, [][]byte) {
	g := ge.NewGraph("ref")
	var args []*ge.Tensor
	for i, d := range c.in {
		args = append(args, g.Data("x"+string(rune('0'+i)), i, d.DataType, d.Shape))
	}
	typ, ok := ge.OpByName(c.op)
	require.True(t, ok, c.op)
	attrs := ge.Attrs{}
	for k, v := range c.attrs {
		switch v := v.(type) {
		case bool:
			attrs[k] = ge.BoolAttr(v)
		case int64:
			attrs[k] = ge.IntAttr(v)
		case float32:
			attrs[k] = ge.FloatAttr(float64(v))
		case []int64:
			attrs[k] = ge.IntsAttr(v)
		case string:
			attrs[k] = ge.StringAttr(v)
		}
	}
	node := g.AddOp(typ, args, attrs)
	var outs []*ge.Tensor
	for i := range node.NumOutputs() {
		outs = append(outs, node.Output(i))
	}
	g.Output(outs...)
	m, err := ge.Compile(g)
	require.NoError(t, err, c.op)
	got, err := getest.Run(m, c.data)
	require.NoError(t, err, c.op)
	var ds []gert.IODesc
	for _, o := range m.Outputs {
		ds = append(ds, gert.IODesc{DataType: o.DataType, Shape: o.Dims, Format: acl.FormatND})
	}
	return ds, got
}

// TestSingleOpEveryOp runs every ge kernel op through ACL's single-op API on
// the fallback: the outputs equal the model interpreter's, and nothing is
// copied (the op reads and writes the caller's device tensors).
func TestSingleOpEveryOp(t *testing.T) {
	f := newFixture(t, gert.LoweringOptions{})
	rng := rand.New(rand.NewPCG(21, 22))
	for _, c := range opCases(rng) {
		t.Run(c.op, func(t *testing.T) {
			outDesc, want := reference(t, c)
			var ins, outs []*gert.Tensor
			for i, d := range c.in {
				ins = append(ins, f.deviceBytes(t, d, c.data[i]))
			}
			for i, d := range outDesc {
				outs = append(outs, f.deviceBytes(t, d, make([]byte, len(want[i]))))
			}
			before := f.npu.Counters().Copies()
			require.NoError(t, gert.RunOp(f.s, c.op, ins, outs, c.attrs))
			require.NoError(t, f.s.Synchronize())
			assert.Equal(t, before, f.npu.Counters().Copies(), "single-op execution copied")
			for i, o := range outs {
				assert.Equal(t, want[i], f.readBytes(t, o, len(want[i])), "output %d", i)
			}
		})
	}
}

// TestSingleOpMisuse: an unknown op, a wrong arity, an attribute of the
// wrong type or name, mismatched outputs and missing memory each give ACL's
// code.
func TestSingleOpMisuse(t *testing.T) {
	f := newFixture(t, gert.LoweringOptions{})
	rng := rand.New(rand.NewPCG(23, 24))
	d, b := f32(rng, 8)
	x := f.deviceBytes(t, d, b)
	y := f.deviceBytes(t, d, make([]byte, 32))
	wrong := f.deviceBytes(t, gert.IODesc{DataType: acl.Float32, Shape: gert.Shape{9}}, make([]byte, 36))
	for _, c := range []struct {
		name  string
		op    string
		in    []*gert.Tensor
		out   []*gert.Tensor
		attrs gert.OpAttrs
		code  acl.Code
	}{
		{"unknown op", "NoSuchOp", []*gert.Tensor{x}, []*gert.Tensor{y}, nil, acl.CodeOpNotFound},
		{"boundary op", "Data", []*gert.Tensor{x}, []*gert.Tensor{y}, nil, acl.CodeOpNotFound},
		{"too few inputs", "Add", []*gert.Tensor{x}, []*gert.Tensor{y}, nil, acl.CodeOpInputNotMatch},
		{"too many inputs", "Relu", []*gert.Tensor{x, x}, []*gert.Tensor{y}, nil, acl.CodeOpInputNotMatch},
		{"attr type", "Softmax", []*gert.Tensor{x}, []*gert.Tensor{y}, gert.OpAttrs{"axis": "last"}, acl.CodeOpAttrNotMatch},
		{"attr name", "Relu", []*gert.Tensor{x}, []*gert.Tensor{y}, gert.OpAttrs{"alpha": float32(1)}, acl.CodeOpAttrNotMatch},
		{"attr Go type", "Relu", []*gert.Tensor{x}, []*gert.Tensor{y}, gert.OpAttrs{"alpha": struct{}{}}, acl.CodeOpAttrNotMatch},
		{"output shape", "Relu", []*gert.Tensor{x}, []*gert.Tensor{wrong}, nil, acl.CodeOpOutputNotMatch},
		{"output count", "Relu", []*gert.Tensor{x}, []*gert.Tensor{y, y}, nil, acl.CodeOpOutputNotMatch},
		{"output without memory", "Relu", []*gert.Tensor{x}, []*gert.Tensor{gert.NewTensor(gert.Shape{8}, acl.Float32, gert.OnDeviceHbm)}, nil, acl.CodeInvalidParam},
		{"nil input", "Relu", []*gert.Tensor{nil}, []*gert.Tensor{y}, nil, acl.CodeInvalidParam},
	} {
		err := gert.RunOp(f.s, c.op, c.in, c.out, c.attrs)
		require.Error(t, err, c.name)
		assert.Equal(t, c.code, acl.CodeOf(err), "%s: %v", c.name, err)
	}
	assert.Equal(t, acl.CodeInvalidParam, acl.CodeOf(gert.RunOp(nil, "Relu", nil, nil, nil)))
	require.NoError(t, f.s.Synchronize())
}

// deviceBytes returns an owned device tensor of description d holding b.
func (f *fixture) deviceBytes(t testing.TB, d gert.IODesc, b []byte) *gert.Tensor {
	return upload(t, f.dev, d, b)
}

func (f *fixture) readBytes(t testing.TB, tn *gert.Tensor, n int) []byte {
	p, err := tn.Addr()
	require.NoError(t, err)
	out := make([]byte, n)
	require.NoError(t, f.dev.Do(func() error {
		return f.dev.Runtime().Backend().Memcpy(unsafe.Pointer(&out[0]), uintptr(n), p, uintptr(n), acl.MemcpyDeviceToHost)
	}))
	return out
}
