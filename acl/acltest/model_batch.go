package acltest

import (
	"encoding/binary"
	"math"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
)

// batchIOs is the dynamic-batch test model at its largest gear (8).
var batchIOs = []ModelIO{
	{In: "x", Out: "y", DataType: acl.Float32, Format: acl.FormatND, Dims: []int64{8, 6}, Addend: math.Float32bits(-2.25)},
}

// dynamicBatch: a model built with batch gears reports them
// (aclmdlGetDynamicBatch) and its batch input; each gear chosen with
// aclmdlSetDynamicBatchSize computes its rows and sets the current output
// dims; the source's checks and codes (hicann/ge api/acl/acl_model/model/
// model.cpp:1839-1877, runtime/v1/executor/ge_executor.cc:138-160,
// 375-415) refuse batch 0, a missing buffer, an unknown model and a batch
// that is no gear; the dynamic-dims queries take only index -1
// (model_om2.cpp:1846-1874).
func (m *modelSuite) dynamicBatch(t *testing.T) {
	if m.opt.BatchModel == nil {
		t.Skip("no dynamic-batch model builder for this backend (Options.BatchModel is nil)")
	}
	gears := []uint64{1, 2, 4, 8}
	blob, err := m.opt.BatchModel(batchIOs, gears)
	require.NoError(t, err, "Options.BatchModel")
	m.bind(t)
	id, err := m.mb.LoadFromMem(m.modelCopy(t, blob), uintptr(len(blob)))
	require.NoError(t, err)
	defer func() { assert.NoError(t, m.mb.Unload(id)) }()
	d, err := m.mb.CreateDesc()
	require.NoError(t, err)
	defer func() { assert.NoError(t, m.mb.DestroyDesc(d)) }()
	require.NoError(t, m.mb.GetDesc(d, id))

	var b acl.Batch
	require.NoError(t, m.mb.GetDynamicBatch(d, &b))
	assert.Equal(t, gears, b.Gears())
	// A model with gears reports no dims ranges (GE's GetDimsRange,
	// model_om2.cpp:474-480).
	var r acl.IODimsRange
	r.RangeCount = 5
	require.NoError(t, m.mb.GetInputDimsRange(d, 0, &r))
	assert.Zero(t, r.RangeCount, "a gear model has no ranges")
	// ACL-layer NULL and index checks → 100000 (GE model.cpp, log_inner.h).
	expect(t, acl.CodeInvalidParam, "GetDynamicBatch into NULL", func() error { return m.mb.GetDynamicBatch(d, nil) })
	n, err := m.mb.GetInputDynamicGearCount(d, ^uintptr(0))
	require.NoError(t, err)
	assert.Zero(t, n, "batch gears are not dynamic-dims gears")
	expect(t, acl.CodeInvalidParam, "GetInputDynamicGearCount index 0", func() error {
		_, err := m.mb.GetInputDynamicGearCount(d, 0)
		return err
	})
	expect(t, acl.CodeInvalidParam, "GetInputDynamicDims index 0", func() error {
		return m.mb.GetInputDynamicDims(d, 0, make([]acl.IODims, 1))
	})
	idx, err := m.mb.GetInputIndexByName(d, acl.DynamicTensorName)
	require.NoError(t, err)

	// Buffers as the description sizes them (the largest gear).
	nin, nout := m.mb.GetNumInputs(d), m.mb.GetNumOutputs(d)
	alloc := func(size uintptr) unsafe.Pointer { return m.devBytes(t, make([]byte, max(size, 8))) }
	var ins, outs []unsafe.Pointer
	var inSizes, outSizes []int
	for i := range nin {
		size := m.mb.GetInputSizeByIndex(d, i)
		ins, inSizes = append(ins, alloc(size)), append(inSizes, int(size))
	}
	for i := range nout {
		size := m.mb.GetOutputSizeByIndex(d, i)
		outs, outSizes = append(outs, alloc(size)), append(outSizes, int(size))
	}
	inDS, outDS := m.dataset(t, ins, inSizes), m.dataset(t, outs, outSizes)
	xi, err := m.mb.GetInputIndexByName(d, batchIOs[0].In)
	require.NoError(t, err)
	yi := -1
	for i := range nout {
		if m.mb.GetOutputNameByIndex(d, i) == batchIOs[0].Out {
			yi = int(i)
		}
	}
	require.GreaterOrEqual(t, yi, 0, "output %q", batchIOs[0].Out)

	row := batchIOs[0].Bytes() / int(batchIOs[0].Dims[0])
	for _, g := range []uint64{4, 1, 8, 2} {
		x := m.inputBytes(inSizes[xi])
		require.NoError(t, m.b.Memcpy(ins[xi], uintptr(len(x)), hostPtr(x), uintptr(len(x)), acl.MemcpyHostToDevice))
		require.NoError(t, m.mb.SetDynamicBatchSize(id, inDS, idx, g))
		assert.Equal(t, uint32(g), binary.LittleEndian.Uint32(m.readDev(t, ins[idx], 4)), "the batch is written into its input")
		var dims acl.IODims
		require.NoError(t, m.mb.GetCurOutputDims(d, uintptr(yi), &dims))
		assert.Equal(t, []int64{int64(g), batchIOs[0].Dims[1]}, dims.Shape(), "current output dims of batch %d", g)
		require.NoError(t, m.mb.Execute(id, inDS, outDS))
		rows := int(g) * row
		assert.Equal(t, batchIOs[0].Want(x[:rows]), m.readDev(t, outs[yi], rows), "batch %d", g)
	}

	// aclmdlSetDynamicBatchSize: the ACL layer refuses a NULL dataset,
	// batch 0 and a missing buffer → 100000 (GE api/acl/acl_model/model/
	// model.cpp:1839-1860); GeExecutor::SetDynamicBatchSize (runtime/v1/
	// executor/ge_executor.cc:375-415): a buffer under 4 bytes → 145012, an
	// unknown id → 145003, a batch that is no gear → 145013.
	expect(t, acl.CodeGEDynamicBatchSizeInvalid, "a batch that is no gear", func() error { return m.mb.SetDynamicBatchSize(id, inDS, idx, 3) })
	expect(t, acl.CodeInvalidParam, "batch 0", func() error { return m.mb.SetDynamicBatchSize(id, inDS, idx, 0) })
	expect(t, acl.CodeInvalidParam, "no buffer at the index", func() error { return m.mb.SetDynamicBatchSize(id, inDS, nin+3, 2) })
	expect(t, acl.CodeInvalidParam, "NULL dataset", func() error { return m.mb.SetDynamicBatchSize(id, 0, idx, 2) })
	expect(t, acl.CodeGEExecModelIDInvalid, "unknown model", func() error { return m.mb.SetDynamicBatchSize(id+1000, inDS, idx, 2) })
	short := append([]unsafe.Pointer(nil), ins...)
	shortSizes := append([]int(nil), inSizes...)
	shortSizes[idx] = 2
	shortDS := m.dataset(t, short, shortSizes)
	expect(t, acl.CodeGEDynamicInputLengthInvalid, "a 2-byte batch buffer", func() error { return m.mb.SetDynamicBatchSize(id, shortDS, idx, 2) })

	// The static test model has no gears: every batch is refused.
	sid := m.load(t)
	defer func() { assert.NoError(t, m.mb.Unload(sid)) }()
	require.NoError(t, m.mb.GetDesc(d, sid))
	require.NoError(t, m.mb.GetDynamicBatch(d, &b))
	assert.Zero(t, b.BatchCount)
	// A static model has no gears: 145013 (ge_executor.cc:375-415).
	expect(t, acl.CodeGEDynamicBatchSizeInvalid, "a static model", func() error { return m.mb.SetDynamicBatchSize(sid, inDS, idx, 1) })
}
