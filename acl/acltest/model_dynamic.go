package acltest

import (
	"math"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
)

// dynIOs is the model with unknown dims (ATC's -1): rows of x and the
// length of ids are each run's.
var dynIOs = []ModelIO{
	{In: "x", Out: "y", DataType: acl.Float32, Format: acl.FormatND, Dims: []int64{-1, 3}, Addend: math.Float32bits(0.75)},
	{In: "ids", Out: "ids_out", DataType: acl.Int32, Format: acl.FormatND, Dims: []int64{-1}, Addend: 5},
}

// dynMax bounds the rows of a run: the buffers are sized for it.
const dynMax = 8

// at returns io with its -1 dims set to n.
func (io ModelIO) at(n int64) ModelIO {
	io.Dims = append([]int64(nil), io.Dims...)
	for i, d := range io.Dims {
		if d < 0 {
			io.Dims[i] = n
		}
	}
	return io
}

// modelDynamicAPI: the queries and gear choices of acl_mdl.h's dynamic
// half on the static test model, and the model with unknown dims when the
// backend can build one.
func (s *suite) modelDynamicAPI(t *testing.T) {
	t.Run("DynamicQueriesStatic", func(t *testing.T) { s.modelBackend(t).dynamicStatic(t) })
	t.Run("DatasetTensorDesc", func(t *testing.T) { s.modelBackend(t).datasetTensorDesc(t) })
	t.Run("UnknownDims", func(t *testing.T) { s.modelBackend(t).unknownDims(t) })
}

// dynamicStatic: a static input's dims range is each dim itself (GE's
// GetDimsRange, hicann/ge api/acl/acl_model/model/model_om2.cpp:510-523);
// a static model has no image-size gears; choosing an image size or dynamic dims for it fails
// with GeExecutor's codes (hicann/ge runtime/v1/executor/ge_executor.cc:
// 443-454, 470-475, 613-620) after the ACL layer's argument checks
// (api/acl/acl_model/model/model.cpp:1884-1901, 1920-1945: 100000).
func (m *modelSuite) dynamicStatic(t *testing.T) {
	m.bind(t)
	id := m.load(t)
	d, err := m.mb.CreateDesc()
	require.NoError(t, err)
	defer func() { assert.NoError(t, m.mb.DestroyDesc(d)) }()
	require.NoError(t, m.mb.GetDesc(d, id))

	var r acl.IODimsRange
	r.RangeCount = 77
	for k, io := range modelIOs {
		require.NoError(t, m.mb.GetInputDimsRange(d, uintptr(k), &r))
		want := make([][2]int64, len(io.Dims))
		for j, v := range io.Dims {
			want[j] = [2]int64{v, v}
		}
		assert.Equal(t, want, r.Ranges(), "a static input %d ranges over its dims", k)
	}
	expect(t, acl.CodeInvalidParam, "GetInputDimsRange into NULL", func() error { return m.mb.GetInputDimsRange(d, 0, nil) })
	expect(t, acl.CodeInvalidParam, "GetInputDimsRange past the inputs", func() error {
		return m.mb.GetInputDimsRange(d, uintptr(len(modelIOs)), &r)
	})
	var dims acl.IODims
	require.NoError(t, m.mb.GetInputDimsV2(d, 0, &dims))
	assert.Equal(t, modelIOs[0].Dims, dims.Shape(), "V2 is V1 without AIPP")
	var hw acl.HW
	hw.HWCount = 9
	require.NoError(t, m.mb.GetDynamicHW(d, ^uintptr(0), &hw))
	assert.Zero(t, hw.HWCount)
	expect(t, acl.CodeInvalidParam, "GetDynamicHW into NULL", func() error { return m.mb.GetDynamicHW(d, ^uintptr(0), nil) })

	buf := m.devBytes(t, make([]byte, 16))
	short := m.devBytes(t, make([]byte, 4))
	ds := m.dataset(t, []unsafe.Pointer{buf, short}, []int{16, 4})
	expect(t, acl.CodeInvalidParam, "SetDynamicHWSize height 0", func() error { return m.mb.SetDynamicHWSize(id, ds, 0, 0, 8) })
	expect(t, acl.CodeInvalidParam, "SetDynamicHWSize no buffer at index", func() error { return m.mb.SetDynamicHWSize(id, ds, 5, 8, 8) })
	expect(t, acl.CodeInvalidParam, "SetDynamicHWSize NULL dataset", func() error { return m.mb.SetDynamicHWSize(id, 0, 0, 8, 8) })
	expect(t, acl.CodeGEDynamicInputLengthInvalid, "SetDynamicHWSize into 4 bytes", func() error { return m.mb.SetDynamicHWSize(id, ds, 1, 8, 8) })
	expect(t, acl.CodeGEDynamicBatchSizeInvalid, "SetDynamicHWSize of no gear", func() error { return m.mb.SetDynamicHWSize(id, ds, 0, 8, 8) })
	var dd acl.IODims
	expect(t, acl.CodeInvalidParam, "SetInputDynamicDims dimCount 0", func() error { return m.mb.SetInputDynamicDims(id, ds, 0, &dd) })
	expect(t, acl.CodeInvalidParam, "SetInputDynamicDims NULL dims", func() error { return m.mb.SetInputDynamicDims(id, ds, 0, nil) })
	dd.DimCount = 3
	expect(t, acl.CodeGEDynamicInputLengthInvalid, "SetInputDynamicDims without dims gears", func() error {
		return m.mb.SetInputDynamicDims(id, ds, 0, &dd)
	})
}

// setDesc gives entry i of ds the description (dt, dims, ND).
func (m *modelSuite) setDesc(t *testing.T, ds acl.DatasetHandle, i int, dt acl.DataType, dims []int64) {
	t.Helper()
	h, err := m.mb.CreateTensorDesc(dt, dims, acl.FormatND)
	require.NoError(t, err)
	require.NoError(t, m.mb.SetDatasetTensorDesc(ds, h, uintptr(i)))
	require.NoError(t, m.mb.DestroyTensorDesc(h), "the dataset keeps a copy")
}

// readDesc reads entry i's description; ok false for none.
func (m *modelSuite) readDesc(t *testing.T, ds acl.DatasetHandle, i int) (dt acl.DataType, f acl.Format, dims []int64, ok bool) {
	t.Helper()
	h := m.mb.GetDatasetTensorDesc(ds, uintptr(i))
	if h == 0 {
		return acl.DTUndefined, acl.FormatUndefined, nil, false
	}
	dims = make([]int64, m.mb.GetTensorDescNumDims(h))
	for k := range dims {
		v, err := m.mb.GetTensorDescDimV2(h, uintptr(k))
		require.NoError(t, err)
		dims[k] = v
	}
	expect(t, acl.CodeInvalidParam, "GetTensorDescDimV2 past the dims", func() error {
		_, err := m.mb.GetTensorDescDimV2(h, uintptr(len(dims)))
		return err
	})
	return m.mb.GetTensorDescType(h), m.mb.GetTensorDescFormat(h), dims, true
}

// datasetTensorDesc: a dataset keeps a copy of each description set on it
// (hicann/ge api/acl/acl_model/model/model_om2.cpp:965-990): the caller
// may destroy its own; NULL removes the entry's; an index past the
// buffers or a NULL dataset is ACL_ERROR_INVALID_PARAM; the getter answers
// NULL for none or a bad argument (model_om2.cpp:951-963).
func (m *modelSuite) datasetTensorDesc(t *testing.T) {
	m.bind(t)
	a, b := m.devBytes(t, make([]byte, 64)), m.devBytes(t, make([]byte, 64))
	ds := m.dataset(t, []unsafe.Pointer{a, b}, []int{64, 64})
	assert.Zero(t, m.mb.GetDatasetTensorDesc(ds, 0), "no description before one is set")
	m.setDesc(t, ds, 1, acl.Int32, []int64{2, 8})
	dt, f, dims, ok := m.readDesc(t, ds, 1)
	require.True(t, ok)
	assert.Equal(t, acl.Int32, dt)
	assert.Equal(t, acl.FormatND, f)
	assert.Equal(t, []int64{2, 8}, dims)
	m.setDesc(t, ds, 1, acl.Float32, []int64{16})
	_, _, dims, _ = m.readDesc(t, ds, 1)
	assert.Equal(t, []int64{16}, dims, "a second description replaces the first")
	require.NoError(t, m.mb.SetDatasetTensorDesc(ds, 0, 1))
	assert.Zero(t, m.mb.GetDatasetTensorDesc(ds, 1), "NULL removes it")
	assert.Zero(t, m.mb.GetDatasetTensorDesc(ds, 2), "past the buffers")
	assert.Zero(t, m.mb.GetDatasetTensorDesc(0, 0), "NULL dataset")
	h, err := m.mb.CreateTensorDesc(acl.Float32, []int64{1}, acl.FormatND)
	require.NoError(t, err)
	defer func() { assert.NoError(t, m.mb.DestroyTensorDesc(h)) }()
	expect(t, acl.CodeInvalidParam, "SetDatasetTensorDesc past the buffers", func() error { return m.mb.SetDatasetTensorDesc(ds, h, 2) })
	expect(t, acl.CodeInvalidParam, "SetDatasetTensorDesc NULL dataset", func() error { return m.mb.SetDatasetTensorDesc(0, h, 0) })
	assert.Equal(t, acl.DTUndefined, m.mb.GetTensorDescType(0))
	assert.Zero(t, m.mb.GetTensorDescNumDims(0))
}

// unknownDims: a model with unknown dims reports -1 and the dims' ranges;
// each run takes its real input shapes from the input dataset's
// descriptions and reports its outputs' on the output dataset; it runs at
// several shapes, synchronously and on a stream, each output equal to the
// reference. GE's runtime v2 execute (model.cpp:567-700) refuses an input
// of unknown dims without a description (its -1 dims pass the range check,
// graph_metadef/graph/utils/tensor_utils.cc:375-378, and the execution
// cannot size them: ACL_ERROR_GE_FAILURE, model.cpp:668-671), dims outside
// the range or of another rank (ACL_ERROR_INVALID_PARAM, model.cpp:
// 619-621) and an output buffer smaller than the output
// (runtime/v2/kernel/common_kernel_impl/memory_copy.cc:566-571 →
// ACL_ERROR_GE_FAILURE).
func (m *modelSuite) unknownDims(t *testing.T) {
	if m.opt.DynamicModel == nil {
		t.Skip("no builder of a model with unknown dims for this backend (Options.DynamicModel is nil)")
	}
	blob, err := m.opt.DynamicModel(dynIOs)
	require.NoError(t, err, "Options.DynamicModel")
	m.bind(t)
	id, err := m.mb.LoadFromMem(m.modelCopy(t, blob), uintptr(len(blob)))
	require.NoError(t, err)
	defer func() { assert.NoError(t, m.mb.Unload(id)) }()
	d, err := m.mb.CreateDesc()
	require.NoError(t, err)
	defer func() { assert.NoError(t, m.mb.DestroyDesc(d)) }()
	require.NoError(t, m.mb.GetDesc(d, id))
	for k, io := range dynIOs {
		i := uintptr(k)
		var dims acl.IODims
		require.NoError(t, m.mb.GetInputDims(d, i, &dims))
		assert.Equal(t, io.Dims, dims.Shape(), "input %d", k)
		require.NoError(t, m.mb.GetInputDimsV2(d, i, &dims))
		assert.Equal(t, io.Dims, dims.Shape(), "input %d (V2)", k)
		require.NoError(t, m.mb.GetOutputDims(d, i, &dims))
		assert.Equal(t, io.Dims, dims.Shape(), "output %d", k)
		// GE's runtime v2 executor runs such a model, for which the
		// call is refused (model.cpp:1981-1985): the output dataset
		// carries the real shapes.
		expect(t, acl.CodeAPINotSupport, "GetCurOutputDims of a model with unknown dims", func() error {
			return m.mb.GetCurOutputDims(d, i, &dims)
		})
		assert.Zero(t, m.mb.GetInputSizeByIndex(d, i), "an unbounded input has no size")
		var r acl.IODimsRange
		require.NoError(t, m.mb.GetInputDimsRange(d, i, &r))
		want := make([][2]int64, len(io.Dims))
		for j, v := range io.Dims {
			want[j] = [2]int64{v, v}
			if v < 0 {
				want[j] = [2]int64{1, -1}
			}
		}
		assert.Equal(t, want, r.Ranges(), "input %d ranges", k)
	}

	var in, out []unsafe.Pointer
	var sizes []int
	for _, io := range dynIOs {
		n := io.at(dynMax).Bytes()
		in, out, sizes = append(in, m.devBytes(t, make([]byte, n))), append(out, m.devBytes(t, make([]byte, n))), append(sizes, n)
	}
	inDS, outDS := m.dataset(t, in, sizes), m.dataset(t, out, sizes)
	run := func(t *testing.T, exec func() error, rows, ids int64) {
		t.Helper()
		ns := []int64{rows, ids}
		var feeds [][]byte
		for k, io := range dynIOs {
			at := io.at(ns[k])
			b := m.inputBytes(at.Bytes())
			require.NoError(t, m.b.Memcpy(in[k], uintptr(sizes[k]), hostPtr(b), uintptr(len(b)), acl.MemcpyHostToDevice))
			m.setDesc(t, inDS, k, io.DataType, at.Dims)
			feeds = append(feeds, b)
		}
		require.NoError(t, exec())
		for k, io := range dynIOs {
			at := io.at(ns[k])
			assert.Equal(t, at.Want(feeds[k]), m.readDev(t, out[k], at.Bytes()), "output %d at %v", k, at.Dims)
			dt, _, dims, ok := m.readDesc(t, outDS, k)
			require.True(t, ok, "output %d has its real shape", k)
			assert.Equal(t, io.DataType, dt)
			assert.Equal(t, at.Dims, dims, "output %d's real shape", k)
		}
	}
	for _, sh := range [][2]int64{{2, 7}, {8, 1}, {5, 3}, {2, 7}} {
		run(t, func() error { return m.mb.Execute(id, inDS, outDS) }, sh[0], sh[1])
	}
	ida, err := m.mb.LoadFromMem(m.modelCopy(t, blob), uintptr(len(blob)))
	require.NoError(t, err)
	defer func() { assert.NoError(t, m.mb.Unload(ida)) }()
	st := m.newStream(t)
	for _, sh := range [][2]int64{{3, 2}, {1, 8}, {6, 6}} {
		run(t, func() error {
			if err := m.mb.ExecuteAsync(ida, inDS, outDS, st); err != nil {
				return err
			}
			return m.b.SynchronizeStream(st)
		}, sh[0], sh[1])
	}

	// Refusals.
	bare := m.dataset(t, in, sizes)
	expect(t, acl.CodeGEFailure, "Execute without descriptions", func() error { return m.mb.Execute(id, bare, outDS) })
	m.setDesc(t, inDS, 0, acl.Float32, []int64{2, 4})
	expect(t, acl.CodeInvalidParam, "Execute with a fixed dim changed", func() error { return m.mb.Execute(id, inDS, outDS) })
	m.setDesc(t, inDS, 0, acl.Float32, []int64{2, 3, 1})
	expect(t, acl.CodeInvalidParam, "Execute with another rank", func() error { return m.mb.Execute(id, inDS, outDS) })
	m.setDesc(t, inDS, 0, acl.Float32, []int64{0, 3})
	expect(t, acl.CodeInvalidParam, "Execute with a 0 dim", func() error { return m.mb.Execute(id, inDS, outDS) })
	m.setDesc(t, inDS, 0, acl.Float32, []int64{dynMax, 3})
	m.setDesc(t, inDS, 1, acl.Int32, []int64{dynMax})
	smallOut := m.dataset(t, out, []int{sizes[0] - 4, sizes[1]})
	expect(t, acl.CodeGEFailure, "Execute into a short output buffer", func() error { return m.mb.Execute(id, inDS, smallOut) })
}
