package fallback

import (
	"encoding/binary"
	"math"
	"os"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge/getest"
	"github.com/ascend-go/cann/ge/onnx"
)

// TestModelDynamicBatch: an ONNX model with a symbolic batch, imported
// with batch gears, loads as one model whose description is a device's
// (batch dim -1, the largest gear's sizes, the extra batch input, the
// gears); every gear, chosen with SetDynamicBatchSize, computes the same
// rows as a static model of that batch run by ge's reference executor;
// a batch that is not a gear is refused with GE's code, at
// SetDynamicBatchSize and at execution.
func TestModelDynamicBatch(t *testing.T) {
	n := newTestNPU(t)
	rng := newRand(t)
	blob, err := os.ReadFile("../ge/onnx/testdata/gonnx/mlp.onnx")
	require.NoError(t, err)
	gears := []int{1, 2, 4, 8}
	bm, err := onnx.CompileBatch(blob, onnx.WithDynamicBatch(gears))
	require.NoError(t, err)
	mb, err := bm.MarshalBinary()
	require.NoError(t, err)
	id := loadBlob(t, n, mb)

	d, err := n.CreateDesc()
	require.NoError(t, err)
	defer func() { require.NoError(t, n.DestroyDesc(d)) }()
	require.NoError(t, n.GetDesc(d, id))
	require.Equal(t, uintptr(2), n.GetNumInputs(d))
	var dims acl.IODims
	require.NoError(t, n.GetInputDims(d, 0, &dims))
	require.Equal(t, []int64{-1, 3}, dims.Shape())
	require.Equal(t, uintptr(8*3*4), n.GetInputSizeByIndex(d, 0))
	idx, err := n.GetInputIndexByName(d, acl.DynamicTensorName)
	require.NoError(t, err)
	require.Equal(t, uintptr(1), idx)
	require.Equal(t, acl.Int32, n.GetInputDataType(d, idx))
	require.Equal(t, uintptr(4), n.GetInputSizeByIndex(d, idx))
	require.NoError(t, n.GetOutputDims(d, 0, &dims))
	require.Equal(t, []int64{8, 2}, dims.Shape())
	require.NoError(t, n.GetCurOutputDims(d, 0, &dims))
	require.Equal(t, []int64{8, 2}, dims.Shape(), "before a batch is chosen: the description's dims")
	requireCode(t, acl.CodeInvalidParam, n.GetCurOutputDims(d, 1, &dims))
	var b acl.Batch
	require.NoError(t, n.GetDynamicBatch(d, &b))
	require.Equal(t, []uint64{1, 2, 4, 8}, b.Gears())
	gc, err := n.GetInputDynamicGearCount(d, ^uintptr(0))
	require.NoError(t, err)
	require.Zero(t, gc)
	_, err = n.GetInputDynamicGearCount(d, 0)
	requireCode(t, acl.CodeInvalidParam, err)

	xb := devBytes(t, n, int(n.GetInputSizeByIndex(d, 0)))
	bb := devBytes(t, n, 4)
	yb := devBytes(t, n, int(n.GetOutputSizeByIndex(d, 0)))
	ids, _ := newDataset(t, n, xb, bb)
	ods, _ := newDataset(t, n, yb)
	s := mkStream(t, n)

	// A second load of the same model runs asynchronously (one model id
	// runs with one kind of execution).
	aid := loadBlob(t, n, mb)
	for round, g := range []int{4, 1, 8, 2, 8, 1} {
		x := getest.RandF32(rng, g*3)
		putF32s(xb, x)
		clear(yb)
		if round%2 == 0 {
			require.NoError(t, n.SetDynamicBatchSize(id, ids, idx, uint64(g)))
			require.NoError(t, n.GetCurOutputDims(d, 0, &dims))
			require.Equal(t, []int64{int64(g), 2}, dims.Shape(), "the chosen gear's output dims")
			require.NoError(t, n.Execute(id, ids, ods))
		} else {
			require.NoError(t, n.SetDynamicBatchSize(aid, ids, idx, uint64(g)))
			runAsync(t, n, aid, ids, ods, s)
		}
		require.Equal(t, uint32(g), binary.LittleEndian.Uint32(bb))
		static, err := onnx.Compile(blob, onnx.WithInputShape("data_input", []int64{int64(g), 3}))
		require.NoError(t, err)
		want, err := getest.Run(static, [][]byte{getest.F32Bytes(x)})
		require.NoError(t, err)
		got := yb[:len(want[0])]
		for i := 0; i < len(got); i += 4 {
			require.Equal(t, math.Float32frombits(binary.LittleEndian.Uint32(want[0][i:])), math.Float32frombits(binary.LittleEndian.Uint32(got[i:])),
				"batch %d element %d", g, i/4)
		}
		if len(want[0]) < len(yb) {
			require.Zero(t, binary.LittleEndian.Uint32(yb[len(want[0]):]), "batch %d wrote past its rows", g)
		}
	}

	// Not a gear: refused where GE refuses it, and the buffer is left.
	requireCode(t, acl.CodeGEDynamicBatchSizeInvalid, n.SetDynamicBatchSize(id, ids, idx, 3))
	require.Equal(t, uint32(1), binary.LittleEndian.Uint32(bb))
	requireCode(t, acl.CodeInvalidParam, n.SetDynamicBatchSize(id, ids, idx, 0))
	requireCode(t, acl.CodeInvalidParam, n.SetDynamicBatchSize(id, ids, 7, 2))
	requireCode(t, acl.CodeGEExecModelIDInvalid, n.SetDynamicBatchSize(id+50, ids, idx, 2))
	// A batch input overwritten with a value that is no gear.
	binary.LittleEndian.PutUint32(bb, 5)
	err = n.Execute(id, ids, ods)
	requireCode(t, acl.CodeGEDynamicBatchSizeInvalid, err)
	require.ErrorContains(t, err, "[1 2 4 8]")
	// The batch input left out: the IO count is the model's.
	short, _ := newDataset(t, n, xb)
	requireCode(t, acl.CodeGEFailure, n.Execute(id, short, ods))

	// A static model takes no batch.
	static, err := onnx.Compile(blob, onnx.WithInputShape("data_input", []int64{2, 3}))
	require.NoError(t, err)
	sb, err := static.MarshalBinary()
	require.NoError(t, err)
	sid := loadBlob(t, n, sb)
	requireCode(t, acl.CodeGEDynamicBatchSizeInvalid, n.SetDynamicBatchSize(sid, ids, idx, 2))
	require.NoError(t, n.GetDesc(d, sid))
	require.NoError(t, n.GetDynamicBatch(d, &b))
	require.Zero(t, b.BatchCount)

	require.NoError(t, n.Unload(sid))
	require.NoError(t, n.Unload(aid))
	require.NoError(t, n.Unload(id))
	require.Empty(t, n.loadedModels())
}

// TestModelDynamicBatchWithMem: a dynamic-batch model runs in caller
// memory of the size QuerySizeFromMem reports (every gear side by side);
// less than the gears' feature maps is refused.
func TestModelDynamicBatchWithMem(t *testing.T) {
	n := newTestNPU(t)
	blob, err := os.ReadFile("../ge/onnx/testdata/gonnx/mlp.onnx")
	require.NoError(t, err)
	bm, err := onnx.CompileBatch(blob, onnx.WithDynamicBatch([]int{2, 1}))
	require.NoError(t, err)
	mb, err := bm.MarshalBinary()
	require.NoError(t, err)
	p, size := unsafe.Pointer(&mb[0]), uintptr(len(mb))
	work, weight, err := n.QuerySizeFromMem(p, size)
	require.NoError(t, err)
	var sum int64
	for _, g := range bm.Gears {
		sum += g.Model.MemorySize
	}
	require.Equal(t, uintptr(sum), work)
	wk, wt := mustMalloc(t, n, work), mustMalloc(t, n, max(weight, 1))
	var fm int64
	for _, g := range bm.Gears {
		fm += g.Model.FeatureMapSize()
	}
	_, err = n.LoadFromMemWithMem(p, size, wk, uintptr(fm)-1, wt, weight)
	requireCode(t, acl.CodeGEParamInvalid, err, "less than the gears' feature maps")
	id, err := n.LoadFromMemWithMem(p, size, wk, work, wt, weight)
	require.NoError(t, err)

	xb, bb, yb := devBytes(t, n, 2*3*4), devBytes(t, n, 8), devBytes(t, n, 2*2*4)
	ids, _ := newDataset(t, n, xb, bb)
	ods, _ := newDataset(t, n, yb)
	x := []float32{1, 2, 3, -1, -2, -3}
	putF32s(xb, x)
	require.NoError(t, n.SetDynamicBatchSize(id, ids, 1, 2))
	require.Equal(t, uint64(2), binary.LittleEndian.Uint64(bb), "an 8-byte batch buffer gets 8 bytes")
	require.NoError(t, n.Execute(id, ids, ods))
	static, err := onnx.Compile(blob, onnx.WithInputShape("data_input", []int64{2, 3}))
	require.NoError(t, err)
	want, err := getest.Run(static, [][]byte{getest.F32Bytes(x)})
	require.NoError(t, err)
	require.Equal(t, want[0], yb)
	require.NoError(t, n.Unload(id))
}

// TestModelDynamicBatchOneModelID: the gears are one model id: after a
// synchronous run of one gear an asynchronous run of another is refused
// as GE refuses mixed execution kinds.
func TestModelDynamicBatchOneModelID(t *testing.T) {
	n := newTestNPU(t)
	blob, err := os.ReadFile("../ge/onnx/testdata/gonnx/mlp.onnx")
	require.NoError(t, err)
	bm, err := onnx.CompileBatch(blob, onnx.WithDynamicBatch([]int{1, 2}))
	require.NoError(t, err)
	mb, err := bm.MarshalBinary()
	require.NoError(t, err)
	id := loadBlob(t, n, mb)
	xb, bb, yb := devBytes(t, n, 2*3*4), devBytes(t, n, 4), devBytes(t, n, 2*2*4)
	ids, _ := newDataset(t, n, xb, bb)
	ods, _ := newDataset(t, n, yb)
	require.NoError(t, n.SetDynamicBatchSize(id, ids, 1, 1))
	require.NoError(t, n.Execute(id, ids, ods))
	require.NoError(t, n.SetDynamicBatchSize(id, ids, 1, 2))
	requireCode(t, acl.CodeGEFailure, n.ExecuteAsync(id, ids, ods, mkStream(t, n)))
	require.NoError(t, n.Execute(id, ids, ods))
	require.NoError(t, n.Unload(id))
}
