package native_test

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/acl/acltest"
	"github.com/ascend-go/cann/acl/native"
)

// stubModelRanged is stubModel with a dims-range table (bit 31 of the io
// count): ranges[k] gives input k's (lo, hi) per dim, used for its -1
// dims.
func stubModelRanged(ios []acltest.ModelIO, ranges [][][2]int64) []byte {
	b := stubModel(ios, 64)
	le := binary.LittleEndian
	le.PutUint32(b[8:], le.Uint32(b[8:])|1<<31)
	weights := 8 * len(ios)
	table := make([]byte, 0, len(ios)*8*16)
	for k := range ios {
		for i := range 8 {
			var r [2]int64
			if i < len(ranges[k]) {
				r = ranges[k][i]
			}
			table = le.AppendUint64(table, uint64(r[0]))
			table = le.AppendUint64(table, uint64(r[1]))
		}
	}
	at := len(b) - weights
	return append(append(append([]byte(nil), b[:at]...), table...), b[at:]...)
}

// execDesc is one input description the stub recorded.
type execDesc struct {
	dt     acl.DataType
	format acl.Format
	dims   []int64
}

// recorded returns the description of input k the stub was given in its
// dynamic run r (0-based since the stub library was loaded).
func (s *stub) recorded(r uint64, k uint32) (execDesc, bool) {
	var dims [8]int64
	var dt, f int32
	n := int32(s.ccall("stub_exec_desc", uintptr(r), uintptr(k), uintptr(unsafe.Pointer(&dims[0])),
		uintptr(unsafe.Pointer(&dt)), uintptr(unsafe.Pointer(&f))))
	if n < 0 {
		return execDesc{}, false
	}
	return execDesc{acl.DataType(dt), acl.Format(f), append([]int64(nil), dims[:n]...)}, true
}

// TestModelUnknownDimsIdiomatic: through acl's Go surface over the C stub,
// a model with unknown dims and a ranged one runs at several shapes in
// one process: Dataset.SetTensorDesc hands each run's real shapes to the
// library (the stub records what it was given: asserted here), the
// outputs equal the reference (input + addend) and Dataset.TensorDesc
// reads their real shapes; ModelDesc reports -1 and the ranges; a shape
// outside a range is ACL_ERROR_INVALID_PARAM, no description
// ACL_ERROR_GE_FAILURE.
func TestModelUnknownDimsIdiomatic(t *testing.T) {
	s := openStub(t, "STUB_INSTANCE_DYNAMIC")
	rt, err := acl.Init(s.Backend, "")
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, rt.Close()) })
	d, err := rt.OpenDevice(0)
	require.NoError(t, err)
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))

	ios := []acltest.ModelIO{
		{In: "x", Out: "y", DataType: acl.Float32, Format: acl.FormatNCHW, Dims: []int64{-1, 3, -1, 2}, Addend: math.Float32bits(-1.25)},
		{In: "ids", Out: "ids_out", DataType: acl.Int32, Format: acl.FormatND, Dims: []int64{-1}, Addend: 11},
	}
	ranges := [][][2]int64{{{1, 4}, {3, 3}, {2, 6}, {2, 2}}, {{1, -1}}}
	m, err := d.LoadModel(stubModelRanged(ios, ranges))
	require.NoError(t, err)
	desc := m.Desc()
	require.Equal(t, []int64{-1, 3, -1, 2}, desc.Inputs[0].Dims)
	require.True(t, desc.Inputs[0].Dynamic())
	require.Equal(t, []int64{-1}, desc.Outputs[1].Dims)
	r, err := desc.InputDimsRange(0)
	require.NoError(t, err)
	require.Equal(t, ranges[0], r)
	r, err = desc.InputDimsRange(1)
	require.NoError(t, err)
	require.Equal(t, ranges[1], r)
	_, err = desc.InputDimsRange(2)
	require.ErrorIs(t, err, acl.ErrInvalidParam)

	const maxX, maxIDs = 4 * 3 * 6 * 2 * 4, 64 * 4
	x, ids := devMem(t, d, maxX), devMem(t, d, maxIDs)
	y, idsOut := devMem(t, d, maxX), devMem(t, d, maxIDs)
	in, err := d.NewDatasetOf(x, ids)
	require.NoError(t, err)
	out, err := d.NewDatasetOf(y, idsOut)
	require.NoError(t, err)

	runs0 := uint64(s.ccall("stub_dyn_runs"))
	shapes := []struct{ x, ids []int64 }{
		{[]int64{1, 3, 2, 2}, []int64{5}}, {[]int64{4, 3, 6, 2}, []int64{64}}, {[]int64{2, 3, 5, 2}, []int64{1}}, {[]int64{3, 3, 3, 2}, []int64{17}},
	}
	for i, sh := range shapes {
		xb := randFloats(rng, acl.TensorDesc{DataType: acl.Float32, Dims: sh.x}.Elements())
		ib := randInts(rng, sh.ids[0])
		require.NoError(t, x.CopyFromHost(xb))
		require.NoError(t, ids.CopyFromHost(ib))
		require.NoError(t, in.SetTensorDesc(0, &acl.TensorDesc{DataType: acl.Float32, Format: acl.FormatNCHW, Dims: sh.x}))
		require.NoError(t, in.SetTensorDesc(1, &acl.TensorDesc{DataType: acl.Int32, Format: acl.FormatND, Dims: sh.ids}))
		require.NoError(t, m.Execute(in, out))

		for k, want := range [][]int64{sh.x, sh.ids} {
			got, ok := s.recorded(runs0+uint64(i), uint32(k))
			require.True(t, ok, "run %d input %d recorded", i, k)
			assert.Equal(t, want, got.dims, "run %d: the library was given input %d's real shape", i, k)
			assert.Equal(t, ios[k].DataType, got.dt)
			assert.Equal(t, ios[k].Format, got.format)
		}
		yd, err := out.TensorDesc(0)
		require.NoError(t, err)
		require.NotNil(t, yd)
		assert.Equal(t, &acl.TensorDesc{DataType: acl.Float32, Format: acl.FormatNCHW, Dims: sh.x}, yd)
		id, err := out.TensorDesc(1)
		require.NoError(t, err)
		assert.Equal(t, sh.ids, id.Dims)

		got := make([]byte, maxX)
		require.NoError(t, y.CopyToHost(got))
		assert.Equal(t, ios[0].Want(xb), got[:len(xb)], "run %d: y = x - 1.25", i)
		gotIDs := make([]byte, maxIDs)
		require.NoError(t, idsOut.CopyToHost(gotIDs))
		assert.Equal(t, ios[1].Want(ib), gotIDs[:len(ib)], "run %d: ids + 11", i)
	}
	require.Equal(t, runs0+uint64(len(shapes)), uint64(s.ccall("stub_dyn_runs")))

	require.NoError(t, in.SetTensorDesc(0, &acl.TensorDesc{DataType: acl.Float32, Format: acl.FormatNCHW, Dims: []int64{5, 3, 2, 2}}))
	assert.Equal(t, acl.CodeInvalidParam, acl.CodeOf(m.Execute(in, out)), "5 rows: outside [1, 4]")
	require.NoError(t, in.SetTensorDesc(0, nil))
	assert.Equal(t, acl.CodeGEFailure, acl.CodeOf(m.Execute(in, out)), "no description for x")
	td, err := in.TensorDesc(0)
	require.NoError(t, err)
	assert.Nil(t, td)
	assert.ErrorIs(t, in.SetTensorDesc(2, &acl.TensorDesc{DataType: acl.Int32, Dims: []int64{1}}), acl.ErrInvalidParam)
	// An unknown rank reads back as dims [-2] (aclGetTensorDescNumDims
	// reports ACL_UNKNOWN_RANK).
	require.NoError(t, in.SetTensorDesc(1, &acl.TensorDesc{DataType: acl.Int32, Format: acl.FormatND, Dims: []int64{-2}}))
	td, err = in.TensorDesc(1)
	require.NoError(t, err)
	assert.Equal(t, []int64{-2}, td.Dims)

	// Gears the stub's models do not have.
	assert.Equal(t, acl.CodeInvalidParam, acl.CodeOf(m.SetDynamicHW(in, 4, 4)), "no gear input")
	assert.Equal(t, acl.CodeInvalidParam, acl.CodeOf(m.SetInputDynamicDims(in, nil)))
}

func randFloats(rng *rand.Rand, n int64) []byte {
	b := make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(rng.NormFloat64())))
	}
	return b
}

func randInts(rng *rand.Rand, n int64) []byte {
	b := make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(b[4*i:], rng.Uint32())
	}
	return b
}

func devMem(t *testing.T, d *acl.Device, n uintptr) *acl.DeviceBuffer {
	t.Helper()
	b, err := d.Malloc(n, acl.MemMallocHugeFirst)
	require.NoError(t, err)
	return b
}

// TestModelDynamicMissingSymbols: a library without the dynamic-shape
// symbols opens; their methods report ACL_ERROR_API_NOT_SUPPORT (or the C
// failure value), so acl reads a model's description without ranges.
func TestModelDynamicMissingSymbols(t *testing.T) {
	s := initStub(t, "STUB_OMIT_OPTIONAL")
	for _, name := range []string{"aclmdlSetDatasetTensorDesc", "aclmdlGetDatasetTensorDesc", "aclmdlGetInputDimsRange",
		"aclmdlGetDynamicHW", "aclmdlSetDynamicHWSize", "aclmdlSetInputDynamicDims", "aclmdlGetInputDimsV2", "aclGetTensorDescDimV2"} {
		assert.False(t, s.Has(name), name)
	}
	assert.Contains(t, native.ModelSymbols(), "aclmdlSetDatasetTensorDesc")
	assert.Contains(t, native.OpSymbols(), "aclGetTensorDescDimV2")
	for what, err := range map[string]error{
		"SetDatasetTensorDesc": s.SetDatasetTensorDesc(1, 1, 0),
		"GetInputDimsRange":    s.GetInputDimsRange(1, 0, &acl.IODimsRange{}),
		"GetDynamicHW":         s.GetDynamicHW(1, 0, &acl.HW{}),
		"SetDynamicHWSize":     s.SetDynamicHWSize(1, 1, 0, 1, 1),
		"SetInputDynamicDims":  s.SetInputDynamicDims(1, 1, 0, &acl.IODims{}),
		"GetInputDimsV2":       s.GetInputDimsV2(1, 0, &acl.IODims{}),
	} {
		assert.ErrorIs(t, err, acl.ErrNotSupported, what)
		assert.Equal(t, acl.CodeAPINotSupport, acl.CodeOf(err), what)
	}
	_, err := s.GetTensorDescDimV2(1, 0)
	assert.ErrorIs(t, err, acl.ErrNotSupported)
	assert.Zero(t, s.GetDatasetTensorDesc(1, 0))
	assert.Equal(t, acl.DTUndefined, s.GetTensorDescType(1))
	assert.Zero(t, s.GetTensorDescNumDims(1))
}
