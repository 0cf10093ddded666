package ge_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/hccl"
)

// ioAllReduce builds y0 = AllReduce(x), y1 = x ⊙ x: the AllReduce reads a
// model input and writes a model output, the Mul shares the input.
func ioAllReduce(opts ...ge.OpOption) *ge.Graph {
	g := ge.NewGraph("io_allreduce")
	x := g.Data("x", 0, acl.Float32, []int64{4, 16})
	y0 := g.HcclAllReduce(x, hccl.Sum, "tp", append([]ge.OpOption{ge.Name("ar")}, opts...)...)
	g.Output(y0, g.Mul(x, x, ge.Name("sq")))
	return g
}

// chainAllReduce builds y = relu(AllReduce(x · w)): the AllReduce touches
// no model IO.
func chainAllReduce(opts ...ge.OpOption) *ge.Graph {
	g := ge.NewGraph("chain_allreduce")
	x := g.Data("x", 0, acl.Float32, []int64{4, 8})
	w := g.ConstFloat32("w", acl.Float32, []int64{8, 16}, make([]float32, 8*16))
	h := g.HcclAllReduce(g.MatMul(x, w, ge.Name("fc")), hccl.Max, "", append([]ge.OpOption{ge.Name("ar")}, opts...)...)
	g.Output(g.Relu(h, ge.Name("relu")))
	return g
}

func taskNamed(t *testing.T, m *ge.CompiledModel, name string) *ge.Task {
	t.Helper()
	for i := range m.Tasks {
		if m.Tasks[i].Name == name {
			return &m.Tasks[i]
		}
	}
	t.Fatalf("no task %q", name)
	return nil
}

func TestHcclAllReduceOp(t *testing.T) {
	assert.True(t, ge.OpHcclAllReduce.IsCollective())
	assert.True(t, ge.OpHcclAllReduce.HasTask())
	assert.False(t, ge.OpMatMul.IsCollective())
	assert.False(t, ge.OpType(101).IsCollective(), "reserved but undefined")
	assert.Equal(t, "HcclAllReduce", ge.OpHcclAllReduce.String())
	assert.Nil(t, ge.KernelFor(ge.OpHcclAllReduce), "no kernel runs a collective alone")
	for _, r := range []hccl.ReduceOp{hccl.Sum, hccl.Prod, hccl.Max, hccl.Min} {
		p, err := ge.ParseReduceOp(r.String())
		require.NoError(t, err)
		assert.Equal(t, r, p)
		assert.True(t, r.Valid())
	}
	_, err := ge.ParseReduceOp("avg")
	require.Error(t, err)
	assert.False(t, hccl.ReduceOp(4).Valid())
	assert.Equal(t, "HcclReduceOp(4)", hccl.ReduceOp(4).String())

	m := compile(t, chainAllReduce(), ge.WithoutFusion()) // the tasks as built
	ar := taskNamed(t, m, "ar")
	assert.Equal(t, ge.DefaultGroup, ge.CollectiveGroup(ar), "no group attribute: the world group")
	assert.Equal(t, "max", ar.Attrs.String(ge.AttrReduction))
	assert.Equal(t, []ge.OpType{ge.OpMatMul, ge.OpHcclAllReduce, ge.OpRelu}, taskOps(m))
	m = compile(t, ioAllReduce())
	assert.Equal(t, "tp", ge.CollectiveGroup(taskNamed(t, m, "ar")))
}

// TestHcclZeroCopyFlags: GE's rule for HCCL tasks. Absent flags disable
// every address; a flag of 1 enables one; any 1 makes the task capable;
// an IO reached through a disabled address lies in the feature map and is
// copied, exactly as with NoZeroCopy.
func TestHcclZeroCopyFlags(t *testing.T) {
	cases := []struct {
		name          string
		opts          []ge.OpOption
		inZC, outZC   bool
		capable       bool
		slotNoZC      [2]bool
		compileOption []ge.CompileOption
	}{
		{name: "absent", slotNoZC: [2]bool{true, true}},
		{name: "both", opts: []ge.OpOption{ge.HcclZeroCopyFlags([]int64{1}, []int64{1})}, inZC: true, outZC: true, capable: true},
		{name: "input only", opts: []ge.OpOption{ge.HcclZeroCopyFlags([]int64{1}, []int64{0})}, inZC: true, capable: true, slotNoZC: [2]bool{false, true}},
		{name: "output only", opts: []ge.OpOption{ge.HcclZeroCopyFlags([]int64{0}, []int64{1})}, outZC: true, capable: true, slotNoZC: [2]bool{true, false}},
		{name: "input list alone", opts: []ge.OpOption{ge.HcclZeroCopyFlags([]int64{1}, nil)}, inZC: true, capable: true, slotNoZC: [2]bool{false, true}},
		{name: "zeros", opts: []ge.OpOption{ge.HcclZeroCopyFlags([]int64{0}, []int64{0})}, slotNoZC: [2]bool{true, true}},
		{name: "not 1", opts: []ge.OpOption{ge.HcclZeroCopyFlags([]int64{2}, []int64{-1})}, slotNoZC: [2]bool{true, true}},
		{name: "NoZeroCopy wins", opts: []ge.OpOption{ge.HcclZeroCopyFlags([]int64{1}, []int64{1}), ge.NoZeroCopy()}, slotNoZC: [2]bool{true, true}},
		{name: "compile option wins", opts: []ge.OpOption{ge.HcclZeroCopyFlags([]int64{1}, []int64{1})}, slotNoZC: [2]bool{true, true},
			compileOption: []ge.CompileOption{ge.NoZeroCopyOps("ar")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := compile(t, ioAllReduce(c.opts...), c.compileOption...)
			assert.Equal(t, c.inZC, m.Inputs[0].ZeroCopy, "input x")
			assert.Equal(t, c.outZC, m.Outputs[0].ZeroCopy, "output y0")
			assert.True(t, m.Outputs[1].ZeroCopy, "y1 is written by a capable op")
			ar := taskNamed(t, m, "ar")
			assert.Equal(t, c.capable, ar.ZeroCopyCapable())
			for i, a := range ar.Args {
				assert.Equal(t, c.slotNoZC[i], a.NoZeroCopy, "slot %d", i)
				want := ge.MemModelIO
				if a.NoZeroCopy {
					want = ge.MemFeatureMap
				}
				assert.Equal(t, want, a.Mem, "slot %d", i)
			}
			for _, d := range []ge.IODesc{m.Inputs[0], m.Outputs[0]} {
				assert.Equal(t, d.ZeroCopy, d.BasicOffset >= m.FeatureMapSize(), "%s: copied IO lies in the feature map", d.Name)
			}
			// The Mul reads x wherever x lives: from the caller (zero copy)
			// or from the copy in the feature map.
			sq := taskNamed(t, m, "sq")
			assert.Equal(t, ar.Args[0].Buffer, sq.Args[0].Buffer)
		})
	}

	// Absent flags plan memory exactly like NoZeroCopy on the op.
	absent := compile(t, ioAllReduce())
	viaOption := compile(t, ioAllReduce(ge.HcclZeroCopyFlags([]int64{1}, []int64{1}), ge.NoZeroCopy()))
	assert.Equal(t, absent.Plan, viaOption.Plan)
	assert.Equal(t, absent.Inputs, viaOption.Inputs)
	assert.Equal(t, absent.Outputs, viaOption.Outputs)
	assert.Equal(t, absent.MemorySize, viaOption.MemorySize)

	// Flags on an HCCL task that touches no IO change no IO.
	for _, opts := range [][]ge.OpOption{nil, {ge.HcclZeroCopyFlags([]int64{1}, []int64{1})}} {
		m := compile(t, chainAllReduce(opts...))
		assert.True(t, m.Inputs[0].ZeroCopy)
		assert.True(t, m.Outputs[0].ZeroCopy)
		for _, a := range taskNamed(t, m, "ar").Args {
			assert.Equal(t, ge.MemFeatureMap, a.Mem)
			assert.Equal(t, opts == nil, a.NoZeroCopy)
		}
	}
}

// TestHcclAllReduceErrors: bad flag lengths, types, reductions and
// attributes are compile errors naming the node.
func TestHcclAllReduceErrors(t *testing.T) {
	cases := []struct {
		name string
		g    func() *ge.Graph
		code acl.Code
		msg  string
	}{
		{"two input flags", func() *ge.Graph { return ioAllReduce(ge.HcclZeroCopyFlags([]int64{1, 1}, []int64{1})) },
			acl.CodeGEParamInvalid, "input_zero_copy_flag has 2 entries, the op has 1 inputs"},
		{"empty output flags", func() *ge.Graph { return ioAllReduce(ge.HcclZeroCopyFlags([]int64{1}, []int64{})) },
			acl.CodeGEParamInvalid, "output_zero_copy_flag has 0 entries, the op has 1 outputs"},
		{"chain, two output flags", func() *ge.Graph { return chainAllReduce(ge.HcclZeroCopyFlags(nil, []int64{0, 1})) },
			acl.CodeGEParamInvalid, "output_zero_copy_flag has 2 entries"},
		{"flags of the wrong kind", func() *ge.Graph {
			return ioAllReduce(ge.WithAttr(ge.AttrInputZeroCopyFlag, ge.IntAttr(1)))
		}, acl.CodeGEParamInvalid, `attribute "input_zero_copy_flag" has kind`},
		{"bool tensor", func() *ge.Graph {
			g := ge.NewGraph("b")
			x := g.Data("x", 0, acl.Bool, []int64{4})
			g.Output(g.HcclAllReduce(x, hccl.Sum, "g", ge.Name("ar")))
			return g
		}, acl.CodeUnsupportedDataType, "HCCL cannot reduce"},
		{"bad reduction", func() *ge.Graph { return ioAllReduce(ge.WithAttr(ge.AttrReduction, ge.StringAttr("avg"))) },
			acl.CodeGEParamInvalid, `reduction "avg"`},
		{"undefined reduce op", func() *ge.Graph {
			g := ge.NewGraph("r")
			x := g.Data("x", 0, acl.Float32, []int64{4})
			g.Output(g.HcclAllReduce(x, hccl.ReduceOp(9), "g", ge.Name("ar")))
			return g
		}, acl.CodeGEParamInvalid, "HcclReduceOp(9)"},
		{"AddOp without reduction", func() *ge.Graph {
			g := ge.NewGraph("r")
			x := g.Data("x", 0, acl.Float32, []int64{4})
			g.Output(g.AddOp(ge.OpHcclAllReduce, []*ge.Tensor{x}, ge.Attrs{ge.AttrGroup: ge.StringAttr("g")}, ge.Name("ar")).Output(0))
			return g
		}, acl.CodeGEParamInvalid, `missing "reduction"`},
		{"two inputs", func() *ge.Graph {
			g := ge.NewGraph("r")
			x := g.Data("x", 0, acl.Float32, []int64{4})
			g.Output(g.AddOp(ge.OpHcclAllReduce, []*ge.Tensor{x, x}, ge.Attrs{ge.AttrReduction: ge.StringAttr("sum")}, ge.Name("ar")).Output(0))
			return g
		}, acl.CodeGEParamInvalid, "takes 1 inputs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := ge.Compile(c.g())
			require.Nil(t, m)
			require.Error(t, err)
			assert.Equal(t, c.code, acl.CodeOf(err), "%v", err)
			assert.Contains(t, err.Error(), `node "ar" (HcclAllReduce)`)
			assert.Contains(t, err.Error(), c.msg)
		})
	}
}

// TestHcclModelFormat: the op number and every attribute round-trip; a
// model whose slot claims an address its flags disable is refused by
// MarshalBinary and ParseModel.
func TestHcclModelFormat(t *testing.T) {
	for _, g := range []*ge.Graph{
		ioAllReduce(), ioAllReduce(ge.HcclZeroCopyFlags([]int64{1}, []int64{0})), chainAllReduce(ge.HcclZeroCopyFlags([]int64{1}, []int64{1})),
	} {
		m := compile(t, g)
		b, err := m.MarshalBinary()
		require.NoError(t, err)
		p, err := ge.ParseModel(b)
		require.NoError(t, err)
		require.Equal(t, m, p)
		b2, err := p.MarshalBinary()
		require.NoError(t, err)
		require.Equal(t, b, b2)
		ar := taskNamed(t, p, "ar")
		assert.Equal(t, ge.OpHcclAllReduce, ar.Op)
		assert.Equal(t, m.Tasks, p.Tasks)
	}

	m := compile(t, ioAllReduce(ge.HcclZeroCopyFlags([]int64{1}, []int64{1})))
	b, err := m.MarshalBinary()
	require.NoError(t, err)
	// Find the encoded input flag list (key, kind 3, count 1, value 1) and
	// turn the value into 0: the slot still takes the caller's address,
	// which the flag now forbids.
	key := []byte(ge.AttrInputZeroCopyFlag)
	at := bytes.Index(b, key)
	require.Positive(t, at)
	v := at + len(key)
	require.Equal(t, byte(ge.AttrInts), b[v])
	require.Equal(t, uint32(1), binary.LittleEndian.Uint32(b[v+1:]))
	require.Equal(t, uint64(1), binary.LittleEndian.Uint64(b[v+5:]))
	bad := bytes.Clone(b)
	binary.LittleEndian.PutUint64(bad[v+5:], 0)
	_, err = ge.ParseModel(fixHeader(bad))
	require.Error(t, err)
	assert.Equal(t, acl.CodeDeserializeModel, acl.CodeOf(err))
	assert.Contains(t, err.Error(), "zero-copy flags disable it")
	// A flag list of the wrong length is refused the same way.
	bad = bytes.Clone(b)
	binary.LittleEndian.PutUint32(bad[v+1:], 0)
	bad = append(bad[:v+5:v+5], bad[v+13:]...)
	for off := ge.HeaderSize; off < len(bad); {
		n := binary.LittleEndian.Uint64(bad[off+8:])
		if binary.LittleEndian.Uint32(bad[off:]) == 5 { // the tasks section lost 8 bytes
			n -= 8
			binary.LittleEndian.PutUint64(bad[off+8:], n)
		}
		off += 16 + int(n)
	}
	_, err = ge.ParseModel(fixHeader(bad))
	require.Error(t, err)
	assert.Equal(t, acl.CodeDeserializeModel, acl.CodeOf(err))
	assert.Contains(t, err.Error(), "input_zero_copy_flag has 0 entries")

	// The same through MarshalBinary: an edited model is refused.
	edited := compile(t, ioAllReduce())
	ar := taskNamed(t, edited, "ar")
	ar.Args[0].NoZeroCopy = false
	_, err = edited.MarshalBinary()
	require.Error(t, err)
	assert.Equal(t, acl.CodeInvalidParam, acl.CodeOf(err))
	// A slot more restrictive than its flag is fine (NoZeroCopyOps).
	restricted := compile(t, ioAllReduce(ge.HcclZeroCopyFlags([]int64{1}, []int64{1})), ge.NoZeroCopyOps("ar"))
	_, err = restricted.MarshalBinary()
	require.NoError(t, err)
}

// fakeComm records what RunCollective asks for and reduces a single rank:
// recv = send.
type fakeComm struct {
	count uint64
	dt    acl.DataType
	op    hccl.ReduceOp
	err   error
}

func (f *fakeComm) AllReduce(send, recv []byte, count uint64, dt acl.DataType, op hccl.ReduceOp) error {
	f.count, f.dt, f.op = count, dt, op
	if f.err != nil {
		return f.err
	}
	if uint64(len(send)) != count*uint64(dt.Size()) || len(recv) != len(send) {
		return fmt.Errorf("buffers of %d and %d bytes for %d × %s", len(send), len(recv), count, dt)
	}
	copy(recv, send)
	return nil
}

func TestRunCollective(t *testing.T) {
	g := ge.NewGraph("rc")
	x := g.Data("x", 0, acl.BFloat16, []int64{3, 5})
	g.Output(g.Relu(g.HcclAllReduce(x, hccl.Prod, "g", ge.Name("ar"))))
	m := compile(t, g)
	ar := taskNamed(t, m, "ar")
	send, recv := make([]byte, 64), make([]byte, 64)
	for i := range send {
		send[i] = byte(i)
	}
	f := &fakeComm{}
	require.NoError(t, ge.RunCollective(ar, [][]byte{send, recv}, f))
	assert.Equal(t, fakeComm{count: 15, dt: acl.BFloat16, op: hccl.Prod}, *f)
	assert.Equal(t, send[:30], recv[:30])
	assert.Equal(t, make([]byte, 34), recv[30:], "only the tensor's bytes are written")

	boom := errors.New("peer lost")
	require.ErrorIs(t, ge.RunCollective(ar, [][]byte{send, recv}, &fakeComm{err: boom}), boom, "the communicator's error is returned as is")

	code := func(err error) acl.Code { t.Helper(); require.Error(t, err); return acl.CodeOf(err) }
	assert.Equal(t, acl.CodeFeatureUnsupported, code(ge.RunCollective(ar, [][]byte{send, recv}, nil)))
	assert.Equal(t, acl.CodeRTParamInvalid, code(ge.RunCollective(ar, [][]byte{send, recv[:29]}, f)))
	assert.Equal(t, acl.CodeInvalidParam, code(ge.RunCollective(ar, [][]byte{send}, f)))
	relu := taskNamed(t, m, "relu_1")
	assert.Equal(t, acl.CodeFeatureUnsupported, code(ge.RunCollective(relu, [][]byte{send, recv}, f)))
	assert.Equal(t, acl.CodeFeatureUnsupported, code(ge.RunTask(ar, [][]byte{send, recv})), "RunTask has no kernel for it")
	broken := *ar
	broken.Attrs = ar.Attrs.Clone()
	broken.Attrs[ge.AttrReduction] = ge.StringAttr("mean")
	assert.Equal(t, acl.CodeInvalidParam, code(ge.RunCollective(&broken, [][]byte{send, recv}, f)))
}
