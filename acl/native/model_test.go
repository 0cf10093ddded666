package native_test

import (
	"encoding/binary"
	"math"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/acl/acltest"
	"github.com/ascend-go/cann/acl/native"
)

// The model API's contract is asserted by the conformance suite
// (acltest, subtests Model/...) on this stub and on the fallback; the tests
// here cover what only the stub's model format shows: its work and weight
// memory.

// stubModel serializes a model in the stub's format (see
// testdata/stub/model.c): output k = input k + the addend in weight slot k.
func stubModel(ios []acltest.ModelIO, workSize uint64) []byte {
	return stubModelGears(ios, workSize, nil)
}

// stubModelGears is stubModel with batch gears (a dynamic-batch model).
func stubModelGears(ios []acltest.ModelIO, workSize uint64, gears []uint64) []byte {
	le := binary.LittleEndian
	n := len(ios)
	b := make([]byte, 32, 32+2*n*144+8*len(gears)+8*n)
	copy(b, "STUBOM01")
	le.PutUint32(b[8:], uint32(n))
	reuse := uint32(0)
	for k, s := range ios {
		if s.ReuseInput {
			reuse |= 1 << k
		}
		if s.CopyOnly {
			reuse |= 1 << (8 + k)
		}
	}
	le.PutUint32(b[12:], uint32(len(gears))|reuse<<16)
	le.PutUint64(b[16:], workSize)
	le.PutUint64(b[24:], uint64(8*n))
	desc := func(name string, s acltest.ModelIO) {
		d := make([]byte, 144)
		copy(d[:63], name)
		le.PutUint32(d[64:], uint32(s.DataType))
		le.PutUint32(d[68:], uint32(s.Format))
		le.PutUint64(d[72:], uint64(len(s.Dims)))
		for i, v := range s.Dims {
			le.PutUint64(d[80+8*i:], uint64(v))
		}
		b = append(b, d...)
	}
	for _, s := range ios {
		desc(s.In, s)
	}
	for _, s := range ios {
		desc(s.Out, s)
	}
	for _, g := range gears {
		b = le.AppendUint64(b, g)
	}
	for _, s := range ios {
		w := make([]byte, 8)
		le.PutUint32(w, s.Addend)
		b = append(b, w...)
	}
	return b
}

var testIOs = []acltest.ModelIO{
	{In: "x", Out: "y", DataType: acl.Float32, Format: acl.FormatNCHW, Dims: []int64{2, 3, 4, 5}, Addend: math.Float32bits(1.5)},
	{In: "ids", Out: "ids_out", DataType: acl.Int32, Format: acl.FormatND, Dims: []int64{7}, Addend: uint32(0xfffffffd)}, // -3
}

// pinnedCopy places b in MallocHost memory (load calls keep model memory).
func pinnedCopy(t *testing.T, s *stub, b []byte) unsafe.Pointer {
	t.Helper()
	p, err := s.MallocHost(uintptr(len(b)))
	require.NoError(t, err)
	copy(unsafe.Slice((*byte)(p), len(b)), b)
	t.Cleanup(func() { _ = s.FreeHost(p) })
	return p
}

// devBytes allocates device memory holding b.
func devBytes(t *testing.T, s *stub, b []byte) unsafe.Pointer {
	t.Helper()
	d, err := s.Malloc(uintptr(len(b)), acl.MemMallocHugeFirst)
	require.NoError(t, err)
	require.NoError(t, s.Memcpy(d, uintptr(len(b)), unsafe.Pointer(&b[0]), uintptr(len(b)), acl.MemcpyHostToDevice))
	t.Cleanup(func() { _ = s.Free(d) })
	return d
}

func readDev(t *testing.T, s *stub, d unsafe.Pointer, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	require.NoError(t, s.Memcpy(unsafe.Pointer(&b[0]), uintptr(n), d, uintptr(n), acl.MemcpyDeviceToHost))
	return b
}

// dataset builds a dataset of data buffers over the given memory.
func dataset(t *testing.T, s *stub, mem []unsafe.Pointer, sizes []int) acl.DatasetHandle {
	t.Helper()
	ds, err := s.CreateDataset()
	require.NoError(t, err)
	for i, p := range mem {
		buf, err := s.CreateDataBuffer(p, uintptr(sizes[i]))
		require.NoError(t, err)
		require.NoError(t, s.AddDatasetBuffer(ds, buf))
		t.Cleanup(func() { assert.NoError(t, s.DestroyDataBuffer(buf)) })
	}
	t.Cleanup(func() { assert.NoError(t, s.DestroyDataset(ds)) })
	return ds
}

// TestModelStubMemory: the stub keeps its weights in the caller's weight
// memory and an execution counter in the work memory, and draws both from
// the device in 512-byte units; a load beyond the device's memory is
// ACL_ERROR_GE_MEMORY_ALLOCATION (docs/misuse.md).
func TestModelStubMemory(t *testing.T) {
	s := initStub(t)
	s.bound(t)
	model := stubModel(testIOs, 64)
	mp := pinnedCopy(t, s, model)
	workSize, weightSize, err := s.QuerySizeFromMem(mp, uintptr(len(model)))
	require.NoError(t, err)
	assert.Equal(t, uintptr(64), workSize)
	assert.Equal(t, uintptr(16), weightSize)
	work := devBytes(t, s, make([]byte, workSize))
	weight := devBytes(t, s, make([]byte, weightSize))
	id, err := s.LoadFromMemWithMem(mp, uintptr(len(model)), work, workSize, weight, weightSize)
	require.NoError(t, err)
	assert.Equal(t, model[len(model)-16:], readDev(t, s, weight, 16), "weights copied into the caller's memory")

	in := make([]byte, testIOs[0].Bytes())
	for i := range in {
		in[i] = byte(i % 61)
	}
	inIDs := make([]byte, testIOs[1].Bytes())
	mem := []unsafe.Pointer{devBytes(t, s, in), devBytes(t, s, inIDs)}
	out := []unsafe.Pointer{devBytes(t, s, make([]byte, len(in))), devBytes(t, s, make([]byte, len(inIDs)))}
	sizes := []int{len(in), len(inIDs)}
	inDS, outDS := dataset(t, s, mem, sizes), dataset(t, s, out, sizes)
	require.NoError(t, s.Execute(id, inDS, outDS))
	require.NoError(t, s.Execute(id, inDS, outDS))
	assert.Equal(t, uint64(2), binary.LittleEndian.Uint64(readDev(t, s, work, 8)), "execution counter in the work memory")

	// New weights in the caller's memory change the result.
	spec := testIOs[0]
	spec.Addend = math.Float32bits(-0.25)
	w := make([]byte, 4)
	binary.LittleEndian.PutUint32(w, spec.Addend)
	require.NoError(t, s.Memcpy(weight, 4, unsafe.Pointer(&w[0]), 4, acl.MemcpyHostToDevice))
	require.NoError(t, s.Execute(id, inDS, outDS))
	assert.Equal(t, spec.Want(in), readDev(t, s, out[0], len(in)))
	require.NoError(t, s.Unload(id))

	free0, _, err := s.GetMemInfo(acl.HBMMem)
	require.NoError(t, err)
	id, err = s.LoadFromMem(mp, uintptr(len(model)))
	require.NoError(t, err)
	free1, _, err := s.GetMemInfo(acl.HBMMem)
	require.NoError(t, err)
	assert.Equal(t, free0-1024, free1, "work and weight memory come from the device (512-byte units)")
	require.NoError(t, s.Unload(id))

	huge := stubModel(testIOs, 512<<20)
	_, err = s.LoadFromMem(pinnedCopy(t, s, huge), uintptr(len(huge)))
	assert.Equal(t, acl.CodeGEMemoryAllocation, acl.CodeOf(err))
}

func TestModelMissingSymbol(t *testing.T) {
	s := initStub(t, "STUB_OMIT_OPTIONAL")
	assert.False(t, s.Has("aclmdlExecuteAsync"))
	err := s.ExecuteAsync(1, 0, 0, 0)
	assert.ErrorIs(t, err, acl.ErrNotSupported)
	assert.Equal(t, "aclmdlExecuteAsync", err.(*acl.Error).Op)
	assert.Contains(t, native.ModelSymbols(), "aclmdlExecute")
}

// loadTest loads the test model from pinned memory on the bound thread's
// device.
func loadTest(t *testing.T, s *stub) acl.ModelID {
	t.Helper()
	model := stubModel(testIOs, 64)
	id, err := s.LoadFromMem(pinnedCopy(t, s, model), uintptr(len(model)))
	require.NoError(t, err)
	return id
}

func TestModelLeak(t *testing.T) {
	s := initStub(t)
	s.bound(t)
	loadTest(t, s)
	assert.Equal(t, []string{"1 model(s)"}, s.live()[len(s.live())-1:])
	require.NoError(t, s.ResetDevice(0))
	assert.Equal(t, []string{"1 model(s)"}, s.leaks(), "the model is one leak; its memory is not reported again")
}

// TestModelDynamicBatch drives the dynamic-batch functions through the
// stub: the gears a description reports, the dims queries' index rule, and
// aclmdlSetDynamicBatchSize's checks, codes and the batch it writes.
func TestModelDynamicBatch(t *testing.T) {
	s := initStub(t)
	s.bound(t)
	ios := []acltest.ModelIO{
		{In: "x", Out: "y", DataType: acl.Float32, Format: acl.FormatND, Dims: []int64{8, 3}},
		{In: acl.DynamicTensorName, Out: "batch_out", DataType: acl.Int32, Format: acl.FormatND, Dims: []int64{2}},
	}
	gears := []uint64{1, 2, 4, 8}
	model := stubModelGears(ios, 64, gears)
	id, err := s.LoadFromMem(pinnedCopy(t, s, model), uintptr(len(model)))
	require.NoError(t, err)
	defer func() { assert.NoError(t, s.Unload(id)) }()
	d, err := s.CreateDesc()
	require.NoError(t, err)
	defer func() { assert.NoError(t, s.DestroyDesc(d)) }()
	require.NoError(t, s.GetDesc(d, id))

	var b acl.Batch
	require.NoError(t, s.GetDynamicBatch(d, &b))
	assert.Equal(t, gears, b.Gears())
	assert.ErrorIs(t, s.GetDynamicBatch(d, nil), acl.ErrInvalidParam)
	n, err := s.GetInputDynamicGearCount(d, ^uintptr(0))
	require.NoError(t, err)
	assert.Zero(t, n, "batch gears are not dynamic-dims gears")
	_, err = s.GetInputDynamicGearCount(d, 0)
	assert.ErrorIs(t, err, acl.ErrInvalidParam)
	assert.NoError(t, s.GetInputDynamicDims(d, ^uintptr(0), make([]acl.IODims, 1)))
	assert.ErrorIs(t, s.GetInputDynamicDims(d, 1, make([]acl.IODims, 1)), acl.ErrInvalidParam)
	idx, err := s.GetInputIndexByName(d, acl.DynamicTensorName)
	require.NoError(t, err)
	require.Equal(t, uintptr(1), idx)

	var cur acl.IODims
	require.NoError(t, s.GetCurOutputDims(d, 0, &cur))
	assert.Equal(t, []int64{8, 3}, cur.Shape(), "no batch chosen yet: the description's dims")
	// Inputs in device memory; the batch buffer holds 8 bytes.
	var m struct {
		in    []unsafe.Pointer
		sizes []int
		inDS  acl.DatasetHandle
	}
	for _, io := range ios {
		m.in = append(m.in, devBytes(t, s, make([]byte, io.Bytes())))
		m.sizes = append(m.sizes, io.Bytes())
	}
	m.inDS = dataset(t, s, m.in, m.sizes)
	for _, g := range gears {
		require.NoError(t, s.SetDynamicBatchSize(id, m.inDS, idx, g))
		assert.Equal(t, g, binary.LittleEndian.Uint64(readDev(t, s, m.in[1], 8)))
		require.NoError(t, s.GetCurOutputDims(d, 0, &cur))
		assert.Equal(t, []int64{int64(g), 3}, cur.Shape())
	}
	assert.ErrorIs(t, s.GetCurOutputDims(d, 5, &cur), acl.ErrInvalidParam)
	assert.ErrorIs(t, s.GetCurOutputDims(d, 0, nil), acl.ErrInvalidParam)
	small := devBytes(t, s, []byte{9, 9, 9, 9})
	ds4 := dataset(t, s, []unsafe.Pointer{m.in[0], small}, []int{m.sizes[0], 4})
	require.NoError(t, s.SetDynamicBatchSize(id, ds4, idx, 2))
	assert.Equal(t, []byte{2, 0, 0, 0}, readDev(t, s, small, 4), "a 4-byte buffer gets the batch as 4 bytes")

	code := func(err error) acl.Code { return acl.CodeOf(err) }
	assert.Equal(t, acl.CodeGEDynamicBatchSizeInvalid, code(s.SetDynamicBatchSize(id, m.inDS, idx, 3)), "not a gear")
	assert.Equal(t, acl.CodeInvalidParam, code(s.SetDynamicBatchSize(id, m.inDS, idx, 0)), "batch 0")
	assert.Equal(t, acl.CodeInvalidParam, code(s.SetDynamicBatchSize(id, m.inDS, 5, 2)), "no buffer at index")
	assert.Equal(t, acl.CodeInvalidParam, code(s.SetDynamicBatchSize(id, 0, idx, 2)), "NULL dataset")
	assert.Equal(t, acl.CodeGEExecModelIDInvalid, code(s.SetDynamicBatchSize(id+100, m.inDS, idx, 2)), "unknown model")
	tiny := devBytes(t, s, []byte{1, 2})
	ds2 := dataset(t, s, []unsafe.Pointer{m.in[0], tiny}, []int{m.sizes[0], 2})
	assert.Equal(t, acl.CodeGEDynamicInputLengthInvalid, code(s.SetDynamicBatchSize(id, ds2, idx, 2)), "2-byte buffer")

	// A static model has no gears: every batch is refused.
	static := stubModel(ios, 64)
	sid, err := s.LoadFromMem(pinnedCopy(t, s, static), uintptr(len(static)))
	require.NoError(t, err)
	defer func() { assert.NoError(t, s.Unload(sid)) }()
	require.NoError(t, s.GetDesc(d, sid))
	require.NoError(t, s.GetDynamicBatch(d, &b))
	assert.Zero(t, b.BatchCount)
	assert.Equal(t, acl.CodeGEDynamicBatchSizeInvalid, code(s.SetDynamicBatchSize(sid, m.inDS, idx, 1)))
}
