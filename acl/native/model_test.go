package native_test

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/acl/native"
)

// ioSpec describes one input (and its output twin) of a stub model.
type ioSpec struct {
	in, out string
	dtype   acl.DataType // acl.Float32 or acl.Int32
	format  acl.Format
	dims    []int64
	addend  uint32 // bits of the float32 or int32 added to every element
}

func (s ioSpec) elems() int {
	n := 1
	for _, d := range s.dims {
		n *= int(d)
	}
	return n
}

// stubModel serializes a model in the stub's format (see
// testdata/stub/model.c).
func stubModel(ios []ioSpec, workSize uint64) []byte {
	return stubModelGears(ios, workSize, nil)
}

// stubModelGears is stubModel with batch gears (a dynamic-batch model).
func stubModelGears(ios []ioSpec, workSize uint64, gears []uint64) []byte {
	le := binary.LittleEndian
	n := len(ios)
	b := make([]byte, 32, 32+2*n*144+8*len(gears)+8*n)
	copy(b, "STUBOM01")
	le.PutUint32(b[8:], uint32(n))
	le.PutUint32(b[12:], uint32(len(gears)))
	le.PutUint64(b[16:], workSize)
	le.PutUint64(b[24:], uint64(8*n))
	desc := func(name string, s ioSpec) {
		d := make([]byte, 144)
		copy(d[:63], name)
		le.PutUint32(d[64:], uint32(s.dtype))
		le.PutUint32(d[68:], uint32(s.format))
		le.PutUint64(d[72:], uint64(len(s.dims)))
		for i, v := range s.dims {
			le.PutUint64(d[80+8*i:], uint64(v))
		}
		b = append(b, d...)
	}
	for _, s := range ios {
		desc(s.in, s)
	}
	for _, s := range ios {
		desc(s.out, s)
	}
	for _, g := range gears {
		b = le.AppendUint64(b, g)
	}
	for _, s := range ios {
		w := make([]byte, 8)
		le.PutUint32(w, s.addend)
		b = append(b, w...)
	}
	return b
}

// reference computes what the stub model must output for input k.
func reference(s ioSpec, in []byte) []byte {
	le := binary.LittleEndian
	out := make([]byte, len(in))
	for j := 0; j+4 <= len(in); j += 4 {
		x := le.Uint32(in[j:])
		if s.dtype == acl.Float32 {
			le.PutUint32(out[j:], math.Float32bits(math.Float32frombits(x)+math.Float32frombits(s.addend)))
		} else {
			le.PutUint32(out[j:], uint32(int32(x)+int32(s.addend)))
		}
	}
	return out
}

var testIOs = []ioSpec{
	{in: "x", out: "y", dtype: acl.Float32, format: acl.FormatNCHW, dims: []int64{2, 3, 4, 5}, addend: math.Float32bits(1.5)},
	{in: "ids", out: "ids_out", dtype: acl.Int32, format: acl.FormatND, dims: []int64{7}, addend: uint32(0xfffffffd)}, // -3
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

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	// Keep float inputs finite so that the reference and the stub agree
	// bit for bit (NaN payloads may differ).
	for j := 3; j < n; j += 4 {
		b[j] &= 0x3f
	}
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

// ioMem holds random inputs in device memory and zeroed outputs.
type ioMem struct {
	in, out []unsafe.Pointer
	inBytes [][]byte
	sizes   []int
	inDS    acl.DatasetHandle
}

func newIOMem(t *testing.T, s *stub, rng *rand.Rand, ios []ioSpec) *ioMem {
	t.Helper()
	m := &ioMem{}
	for _, spec := range ios {
		n := spec.elems() * 4
		b := randBytes(rng, n)
		m.inBytes = append(m.inBytes, b)
		m.in = append(m.in, devBytes(t, s, b))
		m.out = append(m.out, devBytes(t, s, make([]byte, n)))
		m.sizes = append(m.sizes, n)
	}
	m.inDS = dataset(t, s, m.in, m.sizes)
	return m
}

func (m *ioMem) outDS(t *testing.T, s *stub) acl.DatasetHandle {
	return dataset(t, s, m.out, m.sizes)
}

func (m *ioMem) check(t *testing.T, s *stub, ios []ioSpec) {
	t.Helper()
	for k, spec := range ios {
		require.Equal(t, reference(spec, m.inBytes[k]), readDev(t, s, m.out[k], m.sizes[k]), "output %d", k)
	}
}

func newRNG() *rand.Rand { return rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3)) }

func TestModelDescribe(t *testing.T) {
	s := initStub(t)
	s.bound(t)
	model := stubModel(testIOs, 64)
	mp := pinnedCopy(t, s, model)
	work, weight, err := s.QuerySizeFromMem(mp, uintptr(len(model)))
	require.NoError(t, err)
	assert.Equal(t, uintptr(64), work)
	assert.Equal(t, uintptr(16), weight)

	id, err := s.LoadFromMem(mp, uintptr(len(model)))
	require.NoError(t, err)
	assert.NotZero(t, id)
	d, err := s.CreateDesc()
	require.NoError(t, err)
	assert.Zero(t, s.GetNumInputs(d), "an unfilled description")
	require.NoError(t, s.GetDesc(d, id))
	assert.Equal(t, uintptr(2), s.GetNumInputs(d))
	assert.Equal(t, uintptr(2), s.GetNumOutputs(d))
	for k, spec := range testIOs {
		i := uintptr(k)
		assert.Equal(t, uintptr(spec.elems()*4), s.GetInputSizeByIndex(d, i))
		assert.Equal(t, uintptr(spec.elems()*4), s.GetOutputSizeByIndex(d, i))
		assert.Equal(t, spec.in, s.GetInputNameByIndex(d, i))
		assert.Equal(t, spec.out, s.GetOutputNameByIndex(d, i))
		assert.Equal(t, spec.dtype, s.GetInputDataType(d, i))
		assert.Equal(t, spec.dtype, s.GetOutputDataType(d, i))
		assert.Equal(t, spec.format, s.GetInputFormat(d, i))
		assert.Equal(t, spec.format, s.GetOutputFormat(d, i))
		var dims acl.IODims
		dims.DimCount = 99
		require.NoError(t, s.GetInputDims(d, i, &dims))
		assert.Equal(t, spec.in, dims.NameString())
		assert.Equal(t, spec.dims, dims.Shape())
		require.NoError(t, s.GetOutputDims(d, i, &dims))
		assert.Equal(t, spec.out, dims.NameString())
		assert.Equal(t, spec.dims, dims.Shape())
		idx, err := s.GetInputIndexByName(d, spec.in)
		require.NoError(t, err)
		assert.Equal(t, i, idx)
	}
	// Out of range: the C zero values.
	assert.Zero(t, s.GetInputSizeByIndex(d, 2))
	assert.Empty(t, s.GetInputNameByIndex(d, 2))
	assert.Equal(t, acl.DTUndefined, s.GetInputDataType(d, 2))
	assert.Equal(t, acl.FormatUndefined, s.GetOutputFormat(d, 2))
	var dims acl.IODims
	assert.ErrorIs(t, s.GetInputDims(d, 2, &dims), acl.ErrInvalidParam)
	_, err = s.GetInputIndexByName(d, "nope")
	assert.ErrorIs(t, err, acl.ErrInvalidParam)
	assert.ErrorContains(t, err, `no input named "nope"`)
	_, err = s.GetInputIndexByName(d, "x\x00y")
	assert.ErrorIs(t, err, acl.ErrInvalidParam)

	require.NoError(t, s.Unload(id))
	assert.ErrorIs(t, s.GetDesc(d, id), acl.ErrInvalidModelID)
	assert.ErrorIs(t, s.Unload(id), acl.ErrInvalidModelID)
	require.NoError(t, s.DestroyDesc(d))
	assert.ErrorIs(t, s.DestroyDesc(d), acl.ErrInvalidParam)
	assert.ErrorIs(t, s.DestroyDesc(0), acl.ErrInvalidParam)
	assert.Zero(t, s.GetNumInputs(d), "a destroyed description")
}

func TestModelExecute(t *testing.T) {
	s := initStub(t)
	s.bound(t)
	rng := newRNG()
	model := stubModel(testIOs, 64)
	id, err := s.LoadFromMem(pinnedCopy(t, s, model), uintptr(len(model)))
	require.NoError(t, err)
	defer func() { assert.NoError(t, s.Unload(id)) }()
	m := newIOMem(t, s, rng, testIOs)
	out := m.outDS(t, s)

	assert.Equal(t, uintptr(2), s.GetDatasetNumBuffers(out))
	buf := s.GetDatasetBuffer(out, 1)
	require.NotZero(t, buf)
	assert.Equal(t, m.out[1], s.GetDataBufferAddr(buf))
	assert.Equal(t, uintptr(m.sizes[1]), s.GetDataBufferSizeV2(buf))
	assert.Zero(t, s.GetDatasetBuffer(out, 2))
	assert.Nil(t, s.GetDataBufferAddr(0))

	require.NoError(t, s.Execute(id, m.inDS, out))
	m.check(t, s, testIOs)

	// Point output 1 at other memory: the next run writes there.
	other := devBytes(t, s, make([]byte, m.sizes[1]))
	require.NoError(t, s.UpdateDataBuffer(buf, other, uintptr(m.sizes[1])))
	assert.Equal(t, other, s.GetDataBufferAddr(buf))
	m.inBytes[1] = randBytes(rng, m.sizes[1])
	require.NoError(t, s.Memcpy(m.in[1], uintptr(m.sizes[1]), unsafe.Pointer(&m.inBytes[1][0]), uintptr(m.sizes[1]), acl.MemcpyHostToDevice))
	require.NoError(t, s.Execute(id, m.inDS, out))
	assert.Equal(t, reference(testIOs[1], m.inBytes[1]), readDev(t, s, other, m.sizes[1]))
}

func TestModelExecuteAsync(t *testing.T) {
	s := initStub(t)
	s.bound(t)
	model := stubModel(testIOs, 64)
	id, err := s.LoadFromMem(pinnedCopy(t, s, model), uintptr(len(model)))
	require.NoError(t, err)
	defer func() { assert.NoError(t, s.Unload(id)) }()
	st, err := s.CreateStream()
	require.NoError(t, err)
	defer func() { assert.NoError(t, s.DestroyStream(st)) }()
	m := newIOMem(t, s, newRNG(), testIOs)
	out := m.outDS(t, s)

	release, err := s.hold(st)
	require.NoError(t, err)
	require.NoError(t, s.ExecuteAsync(id, m.inDS, out, st))
	assert.Equal(t, make([]byte, m.sizes[0]), readDev(t, s, m.out[0], m.sizes[0]), "ran before the stream reached it")
	release()
	require.NoError(t, s.SynchronizeStream(st))
	m.check(t, s, testIOs)

	// Plain host memory may not take part in asynchronous work.
	plain := make([]byte, m.sizes[0])
	hostDS := dataset(t, s, []unsafe.Pointer{unsafe.Pointer(&plain[0]), m.in[1]}, m.sizes)
	err = s.ExecuteAsync(id, hostDS, out, st)
	assert.Equal(t, acl.CodeRTParamInvalid, acl.CodeOf(err), "%v", err)
	// A model id runs with one kind of execution (hicann/ge davinci_model.cc:7636-7638).
	assert.Equal(t, acl.CodeGEFailure, acl.CodeOf(s.Execute(id, hostDS, out)), "aclmdlExecute after aclmdlExecuteAsync")
}

func TestModelWithMem(t *testing.T) {
	s := initStub(t)
	s.bound(t)
	model := stubModel(testIOs, 64)
	mp := pinnedCopy(t, s, model)
	workSize, weightSize, err := s.QuerySizeFromMem(mp, uintptr(len(model)))
	require.NoError(t, err)
	work := devBytes(t, s, make([]byte, workSize))
	weight := devBytes(t, s, make([]byte, weightSize))

	_, err = s.LoadFromMemWithMem(mp, uintptr(len(model)), work, workSize-1, weight, weightSize)
	assert.ErrorIs(t, err, acl.ErrInvalidParam, "work memory too small")
	host := pinnedCopy(t, s, make([]byte, workSize))
	_, err = s.LoadFromMemWithMem(mp, uintptr(len(model)), host, workSize, weight, weightSize)
	assert.Equal(t, acl.CodeGEParamInvalid, acl.CodeOf(err), "work memory on the host")

	id, err := s.LoadFromMemWithMem(mp, uintptr(len(model)), work, workSize, weight, weightSize)
	require.NoError(t, err)
	defer func() { assert.NoError(t, s.Unload(id)) }()
	assert.Equal(t, model[len(model)-16:], readDev(t, s, weight, 16), "weights copied into the caller's memory")

	m := newIOMem(t, s, newRNG(), testIOs)
	out := m.outDS(t, s)
	require.NoError(t, s.Execute(id, m.inDS, out))
	require.NoError(t, s.Execute(id, m.inDS, out))
	assert.Equal(t, uint64(2), binary.LittleEndian.Uint64(readDev(t, s, work, 8)), "execution counter in the work memory")

	// New weights in the caller's memory change the result.
	spec := testIOs[0]
	spec.addend = math.Float32bits(-0.25)
	w := make([]byte, 4)
	binary.LittleEndian.PutUint32(w, spec.addend)
	require.NoError(t, s.Memcpy(weight, 4, unsafe.Pointer(&w[0]), 4, acl.MemcpyHostToDevice))
	require.NoError(t, s.Execute(id, m.inDS, out))
	assert.Equal(t, reference(spec, m.inBytes[0]), readDev(t, s, m.out[0], m.sizes[0]))
}

// setOpt sets a size_t or pointer attribute.
func setOpt(t *testing.T, s *stub, h acl.ModelConfigHandle, attr acl.ModelConfigAttr, v uintptr) {
	t.Helper()
	require.NoError(t, s.SetConfigOpt(h, attr, unsafe.Pointer(&v), unsafe.Sizeof(v)))
}

func TestModelLoadWithConfig(t *testing.T) {
	s := initStub(t)
	s.bound(t)
	rng := newRNG()
	model := stubModel(testIOs, 64)
	mp := pinnedCopy(t, s, model)

	h, err := s.CreateConfigHandle()
	require.NoError(t, err)
	_, err = s.LoadWithConfig(h)
	assert.ErrorIs(t, err, acl.ErrInvalidParam, "no load type")
	prio := int32(1)
	require.NoError(t, s.SetConfigOpt(h, acl.MdlPriorityInt32, unsafe.Pointer(&prio), 4))
	assert.ErrorIs(t, s.SetConfigOpt(h, acl.MdlPriorityInt32, unsafe.Pointer(&prio), 8), acl.ErrInvalidParam, "wrong value size")
	for _, bad := range []int32{-1, 8} {
		assert.ErrorIs(t, s.SetConfigOpt(h, acl.MdlPriorityInt32, unsafe.Pointer(&bad), 4), acl.ErrInvalidParam, "priority %d", bad)
	}
	v := uintptr(0)
	assert.ErrorIs(t, s.SetConfigOpt(h, 99, unsafe.Pointer(&v), 8), acl.ErrInvalidParam, "undefined attribute")
	assert.ErrorIs(t, s.SetConfigOpt(h, acl.MdlMemSizet, nil, 8), acl.ErrInvalidParam, "NULL value")
	setOpt(t, s, h, acl.MdlLoadTypeSizet, acl.MdlLoadFromMemWithQ)
	_, err = s.LoadWithConfig(h)
	assert.ErrorIs(t, err, acl.ErrNotSupported)

	work := devBytes(t, s, make([]byte, 64))
	weight := devBytes(t, s, make([]byte, 16))
	setOpt(t, s, h, acl.MdlLoadTypeSizet, acl.MdlLoadFromMemWithMem)
	setOpt(t, s, h, acl.MdlMemAddrPtr, uintptr(mp))
	setOpt(t, s, h, acl.MdlMemSizet, uintptr(len(model)))
	_, err = s.LoadWithConfig(h)
	assert.ErrorIs(t, err, acl.ErrInvalidParam, "memory attributes missing")
	setOpt(t, s, h, acl.MdlWorkspaceAddrPtr, uintptr(work))
	setOpt(t, s, h, acl.MdlWorkspaceSizet, 64)
	setOpt(t, s, h, acl.MdlWeightAddrPtr, uintptr(weight))
	setOpt(t, s, h, acl.MdlWeightSizet, 16)
	id, err := s.LoadWithConfig(h)
	require.NoError(t, err)
	require.NoError(t, s.DestroyConfigHandle(h))
	assert.ErrorIs(t, s.DestroyConfigHandle(h), acl.ErrInvalidParam)

	m := newIOMem(t, s, rng, testIOs)
	require.NoError(t, s.Execute(id, m.inDS, m.outDS(t, s)))
	m.check(t, s, testIOs)
	assert.Equal(t, uint64(1), binary.LittleEndian.Uint64(readDev(t, s, work, 8)))
	require.NoError(t, s.Unload(id))

	// From a file; the path string lives in pinned memory, as a pointer
	// attribute's target must outlive the call.
	file := filepath.Join(t.TempDir(), "m.om")
	require.NoError(t, os.WriteFile(file, model, 0o644))
	path := pinnedCopy(t, s, append([]byte(file), 0))
	h, err = s.CreateConfigHandle()
	require.NoError(t, err)
	defer func() { assert.NoError(t, s.DestroyConfigHandle(h)) }()
	setOpt(t, s, h, acl.MdlLoadTypeSizet, acl.MdlLoadFromFile)
	setOpt(t, s, h, acl.MdlPathPtr, uintptr(path))
	id, err = s.LoadWithConfig(h)
	require.NoError(t, err)
	m2 := newIOMem(t, s, rng, testIOs)
	require.NoError(t, s.Execute(id, m2.inDS, m2.outDS(t, s)))
	m2.check(t, s, testIOs)
	require.NoError(t, s.Unload(id))
}

func TestModelErrors(t *testing.T) {
	s := openStub(t)
	model := stubModel(testIOs, 64)
	_, err := s.LoadFromMem(unsafe.Pointer(&model[0]), uintptr(len(model)))
	assert.ErrorIs(t, err, acl.ErrUninitialized, "before aclInit")
	require.NoError(t, s.Init(""))
	s.bound(t)
	mp := pinnedCopy(t, s, model)

	bad := append([]byte(nil), model...)
	bad[0] = 'X'
	_, err = s.LoadFromMem(pinnedCopy(t, s, bad), uintptr(len(bad)))
	// hicann/ge base/common/helper/model_helper.cc:1083 and
	// runtime/om2/om2_model_executor.cc:1698-1706.
	assert.Equal(t, acl.CodeGEParamInvalid, acl.CodeOf(err))
	_, err = s.LoadFromMem(mp, uintptr(len(model)-1))
	assert.Equal(t, acl.CodeGEExecModelDataSizeInvalid, acl.CodeOf(err))
	_, _, err = s.QuerySizeFromMem(nil, 100)
	assert.ErrorIs(t, err, acl.ErrInvalidParam)
	_, err = s.LoadFromMem(mp, 0)
	assert.ErrorIs(t, err, acl.ErrInvalidParam)

	id, err := s.LoadFromMem(mp, uintptr(len(model)))
	require.NoError(t, err)
	defer func() { assert.NoError(t, s.Unload(id)) }()
	m := newIOMem(t, s, newRNG(), testIOs)
	out := m.outDS(t, s)

	assert.ErrorIs(t, s.Execute(id+100, m.inDS, out), acl.ErrInvalidModelID)
	assert.ErrorIs(t, s.Execute(id, 0, out), acl.ErrInvalidParam)
	one := dataset(t, s, m.in[:1], m.sizes[:1])
	// E13025 is logged, ACL_ERROR_GE_FAILURE returned (hicann/ge davinci_model.cc:6673).
	assert.Equal(t, acl.CodeGEFailure, acl.CodeOf(s.Execute(id, one, out)), "too few inputs")
	assert.Equal(t, acl.CodeGEFailure, acl.CodeOf(s.Execute(id, m.inDS, one)), "too few outputs")

	// A buffer at most 64 bytes short is accepted, a shorter one is not.
	short := func(by int) acl.DatasetHandle {
		sizes := append([]int(nil), m.sizes...)
		sizes[0] -= by
		return dataset(t, s, m.out, sizes)
	}
	require.NoError(t, s.Execute(id, m.inDS, short(64)))
	err = s.Execute(id, m.inDS, short(68))
	assert.Equal(t, acl.CodeGEFailure, acl.CodeOf(err))
	assert.ErrorContains(t, err, "output 0 (y): buffer of 412 bytes, the model needs 480")

	freed, err := s.Malloc(uintptr(m.sizes[0]), acl.MemMallocHugeFirst)
	require.NoError(t, err)
	require.NoError(t, s.Free(freed))
	for name, c := range map[string]struct {
		p    unsafe.Pointer
		want acl.Code
	}{"NULL": {nil, acl.CodeGEExecModelAddrInvalid}, "freed": {freed, acl.CodeRTParamInvalid}} {
		ds := dataset(t, s, []unsafe.Pointer{c.p, m.out[1]}, m.sizes)
		assert.Equal(t, c.want, acl.CodeOf(s.Execute(id, m.inDS, ds)), name)
	}

	buf, err := s.CreateDataBuffer(m.in[0], 4)
	require.NoError(t, err)
	require.NoError(t, s.DestroyDataBuffer(buf))
	assert.ErrorIs(t, s.DestroyDataBuffer(buf), acl.ErrInvalidParam)
	assert.ErrorIs(t, s.UpdateDataBuffer(buf, nil, 0), acl.ErrInvalidParam)
	assert.ErrorIs(t, s.AddDatasetBuffer(m.inDS, buf), acl.ErrInvalidParam)
	assert.ErrorIs(t, s.AddDatasetBuffer(0, 0), acl.ErrInvalidParam)
	assert.ErrorIs(t, s.DestroyDataset(0), acl.ErrInvalidParam)
	assert.Zero(t, s.GetDataBufferSizeV2(buf))
	assert.Zero(t, s.GetDatasetNumBuffers(0))

	// A thread whose context was destroyed has no current context.
	done := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		ctx, err := s.CreateContext(0)
		if err == nil {
			err = s.DestroyContext(ctx)
		}
		if err == nil {
			err = s.Execute(id, m.inDS, out)
		}
		done <- err
	}()
	assert.Equal(t, acl.CodeRTContextNull, acl.CodeOf(<-done))
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

func TestModelDeviceMemory(t *testing.T) {
	s := initStub(t)
	s.bound(t)
	free0, _, err := s.GetMemInfo(acl.HBMMem)
	require.NoError(t, err)
	id := loadTest(t, s)
	free1, _, err := s.GetMemInfo(acl.HBMMem)
	require.NoError(t, err)
	assert.Equal(t, free0-1024, free1, "work and weight memory come from the device (512-byte units)")

	huge := stubModel(testIOs, 512<<20)
	_, err = s.LoadFromMem(pinnedCopy(t, s, huge), uintptr(len(huge)))
	assert.Equal(t, acl.CodeGEMemoryAllocation, acl.CodeOf(err))

	// An output buffer with no memory gets some of the output's size.
	m := newIOMem(t, s, newRNG(), testIOs)
	empty, err := s.CreateDataBuffer(nil, 0)
	require.NoError(t, err)
	defer func() { assert.NoError(t, s.DestroyDataBuffer(empty)) }()
	out := dataset(t, s, m.out[1:], m.sizes[1:])
	ds, err := s.CreateDataset()
	require.NoError(t, err)
	defer func() { assert.NoError(t, s.DestroyDataset(ds)) }()
	require.NoError(t, s.AddDatasetBuffer(ds, empty))
	require.NoError(t, s.AddDatasetBuffer(ds, s.GetDatasetBuffer(out, 0)))
	require.NoError(t, s.Execute(id, m.inDS, ds))
	got := s.GetDataBufferAddr(empty)
	require.NotNil(t, got)
	assert.Equal(t, uintptr(m.sizes[0]), s.GetDataBufferSizeV2(empty))
	assert.Equal(t, reference(testIOs[0], m.inBytes[0]), readDev(t, s, got, m.sizes[0]))
	require.NoError(t, s.Free(got), "the caller frees it")

	before, _, err := s.GetMemInfo(acl.HBMMem)
	require.NoError(t, err)
	require.NoError(t, s.Unload(id))
	after, _, err := s.GetMemInfo(acl.HBMMem)
	require.NoError(t, err)
	assert.Equal(t, before+1024, after, "unload gives the memory back")
}

func TestModelConcurrentExecute(t *testing.T) {
	s := initStub(t)
	s.bound(t)
	id := loadTest(t, s)
	m := newIOMem(t, s, newRNG(), testIOs)
	out := m.outDS(t, s)
	s1, err := s.CreateStream()
	require.NoError(t, err)
	s2, err := s.CreateStream()
	require.NoError(t, err)
	release, err := s.hold(s1)
	require.NoError(t, err)
	require.NoError(t, s.ExecuteAsync(id, m.inDS, out, s1))
	require.NoError(t, s.ExecuteAsync(id, m.inDS, out, s1), "several runs queued on one stream")
	assert.Equal(t, acl.CodeRTModelExecute, acl.CodeOf(s.ExecuteAsync(id, m.inDS, out, s2)), "another stream")
	assert.Equal(t, acl.CodeGEFailure, acl.CodeOf(s.Execute(id, m.inDS, out)), "synchronous run after asynchronous ones (mixed)")

	// Unload waits for the queued runs.
	unloaded := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := s.SetDevice(0); err != nil {
			unloaded <- err
			return
		}
		unloaded <- s.Unload(id)
	}()
	select {
	case err := <-unloaded:
		t.Fatalf("Unload returned (%v) while runs were queued", err)
	case <-time.After(20 * time.Millisecond):
	}
	release()
	require.NoError(t, <-unloaded)
	m.check(t, s, testIOs)
	require.NoError(t, s.SynchronizeStream(s1))
	require.NoError(t, s.DestroyStream(s1))
	require.NoError(t, s.DestroyStream(s2))
	require.NoError(t, s.ResetDevice(0)) // the goroutine's SetDevice
}

func TestModelOtherDevice(t *testing.T) {
	s := initStub(t)
	s.bound(t)
	id := loadTest(t, s)
	m := newIOMem(t, s, newRNG(), testIOs)
	out := m.outDS(t, s)
	require.NoError(t, s.SetDevice(1))
	assert.Equal(t, acl.CodeRTStreamContext, acl.CodeOf(s.Execute(id, m.inDS, out)))
	require.NoError(t, s.ResetDevice(1))
	require.NoError(t, s.SetDevice(0))
	require.NoError(t, s.Execute(id, m.inDS, out))
	require.NoError(t, s.Unload(id))
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
	rng := newRNG()
	ios := []ioSpec{
		{in: "x", out: "y", dtype: acl.Float32, format: acl.FormatND, dims: []int64{8, 3}},
		{in: acl.DynamicTensorName, out: "batch_out", dtype: acl.Int32, format: acl.FormatND, dims: []int64{2}},
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
	m := newIOMem(t, s, rng, ios) // the batch buffer holds 8 bytes
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
