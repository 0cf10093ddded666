package zcrt

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/hccl"
)

// hcclModel compiles y0 = AllReduce(x), y1 = x ⊙ x: the AllReduce (task 0)
// reads a model input and writes a model output; the Mul (task 1) shares
// the input.
func hcclModel(t *testing.T, flags ...ge.OpOption) *ge.CompiledModel {
	t.Helper()
	g := ge.NewGraph("hccl")
	x := g.Data("x", 0, acl.Float32, []int64{8, 32})
	y0 := g.HcclAllReduce(x, hccl.Sum, "g", append([]ge.OpOption{ge.Name("ar")}, flags...)...)
	g.Output(y0, g.Mul(x, x, ge.Name("sq")))
	m, err := ge.Compile(g)
	require.NoError(t, err)
	require.Equal(t, ge.OpHcclAllReduce, m.Tasks[0].Op)
	return m
}

// hcclBufs returns device user buffers for the model's IO at made-up
// addresses (the runtime never dereferences them).
func hcclBufs(m *ge.CompiledModel, base uintptr) (in, out []UserBuffer) {
	for _, d := range m.Inputs {
		in = append(in, UserBuffer{Addr: base, Size: uintptr(d.Size), Place: PlaceDevice})
		base += 1 << 20
	}
	for _, d := range m.Outputs {
		out = append(out, UserBuffer{Addr: base, Size: uintptr(d.Size), Place: PlaceDevice})
		base += 1 << 20
	}
	return in, out
}

// TestHcclFlagsRefresh: with both flags 1 the AllReduce's slots are model
// IO addresses in the IO records, its task refreshes by model IO, and an
// execution patches them with the caller's buffers, no copy; a new buffer
// re-patches exactly the slots of that IO.
func TestHcclFlagsRefresh(t *testing.T) {
	m := hcclModel(t, ge.HcclZeroCopyFlags([]int64{1}, []int64{1}))
	r := newRuntime(t, m, Config{})
	assert.Equal(t, RefreshByModelIO, r.TaskRefresh(0))
	assert.Equal(t, []AddrType{AddrModelIO, AddrModelIO}, []AddrType{r.SlotType(0, 0), r.SlotType(0, 1)})
	x, y0 := r.Inputs()[0], r.Outputs()[0]
	require.True(t, x.ZeroCopy())
	require.True(t, y0.ZeroCopy())
	require.Len(t, x.Slots, 3, "x is read by the AllReduce and twice by the Mul")
	assert.Equal(t, SlotRecord{Task: 0, Arg: 0, Index: 0, Size: x.Size}, x.Slots[0])
	assert.Equal(t, SlotRecord{Task: 0, Arg: 1, Index: 1, Size: y0.Size}, y0.Slots[0])

	in, out := hcclBufs(m, 0x10000000)
	var e Exec
	require.NoError(t, r.Prepare("test", in, out, &e))
	assert.Zero(t, e.Copies())
	assert.Equal(t, 5, r.Apply(&e), "x three times, y0, y1")
	assert.Equal(t, []uint64{uint64(in[0].Addr), uint64(out[0].Addr)}, r.TaskArgs(0))

	in[0].Addr += 0x100000000
	require.NoError(t, r.Prepare("test", in, out, &e))
	assert.Equal(t, 3, r.Apply(&e), "only x's slots")
	assert.Equal(t, []uint64{uint64(in[0].Addr), uint64(out[0].Addr)}, r.TaskArgs(0))
	assert.Equal(t, uint64(in[0].Addr), r.TaskArgs(1)[0])
}

// TestHcclFlagsCopyOnly: without flags (or with 0) the IO the AllReduce
// touches is copy-only; its slots keep the model's own blocks, the task
// has no model-IO refresh, and device buffers are copied.
func TestHcclFlagsCopyOnly(t *testing.T) {
	for _, flags := range [][]ge.OpOption{nil, {ge.HcclZeroCopyFlags([]int64{0}, []int64{0})}} {
		m := hcclModel(t, flags...)
		r := newRuntime(t, m, Config{})
		assert.Zero(t, r.TaskRefresh(0))
		assert.Equal(t, RefreshByModelIO, r.TaskRefresh(1), "the Mul still writes y1 in place")
		x, y0 := r.Inputs()[0], r.Outputs()[0]
		assert.Equal(t, CopyInFeatureMap, x.CopyOnly)
		assert.Equal(t, CopyInFeatureMap, y0.CopyOnly)
		in, out := hcclBufs(m, 0x10000000)
		var e Exec
		require.NoError(t, r.Prepare("test", in, out, &e))
		assert.Equal(t, 2, e.Copies())
		assert.True(t, e.In[0].Copy)
		assert.True(t, e.Out[0].Copy)
		assert.False(t, e.Out[1].Copy)
		r.Apply(&e)
		assert.Equal(t, []uint64{uint64(r.ModelAddr(&x)), uint64(r.ModelAddr(&y0))}, r.TaskArgs(0))
		assert.Equal(t, uint64(r.ModelAddr(&x)), r.TaskArgs(1)[0], "the Mul reads the copy")
	}
}

// TestHcclDisabledSlotAtRuntime: a model whose IO block is zero-copy but
// whose HCCL slot cannot take an external address (a slot more restrictive
// than its flag, as a model from elsewhere may carry) is made copy-only by
// the runtime, as GE's DisableZeroCopy; the slot becomes a fixed address.
func TestHcclDisabledSlotAtRuntime(t *testing.T) {
	m := hcclModel(t, ge.HcclZeroCopyFlags([]int64{1}, []int64{1}))
	m.Tasks[0].Args[0].NoZeroCopy = true
	b, err := m.MarshalBinary()
	require.NoError(t, err, "more restrictive than the flag: valid")
	m, err = ge.ParseModel(b)
	require.NoError(t, err)
	r := newRuntime(t, m, Config{})
	x := r.Inputs()[0]
	assert.Equal(t, CopyNoZeroCopyConsumer, x.CopyOnly)
	assert.Equal(t, AddrFixed, r.SlotType(0, 0))
	assert.Equal(t, AddrModelIO, r.SlotType(0, 1))
	assert.Equal(t, RefreshByModelIO, r.TaskRefresh(0), "the output slot still refreshes")
	in, out := hcclBufs(m, 0x10000000)
	var e Exec
	require.NoError(t, r.Prepare("test", in, out, &e))
	assert.Equal(t, 1, e.Copies())
	assert.True(t, e.In[0].Copy)
	r.Apply(&e)
	assert.Equal(t, []uint64{uint64(r.ModelAddr(&x)), uint64(out[0].Addr)}, r.TaskArgs(0))
}
