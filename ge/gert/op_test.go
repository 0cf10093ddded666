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

// opCases covers every kernel op of ge, on random data with odd shapes.
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
	return cs
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
