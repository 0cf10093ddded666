package fallback

import (
	"errors"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge/getest"
	"github.com/ascend-go/cann/ge/onnx"
)

// The models of testdata/gen_dynamic_onnx.py. dynW is its initializer w.
var dynW = func() [4][3]float32 {
	var w [4][3]float32
	for i := range 12 {
		w[i/3][i%3] = (float32(i) - 5.5) / 4
	}
	return w
}()

// dynRef computes the outputs of dyn_symbolic.onnx for x and y ([n, 4])
// and k: Relu(x + y), x × w and 0, 1, …, k-1, from the definitions.
func dynRef(x, y []float32, n int, k int64) (sum []float32, proj []float64, seq []int64) {
	sum = make([]float32, 4*n)
	for i := range sum {
		sum[i] = max(x[i]+y[i], 0)
	}
	proj = make([]float64, 3*n)
	for r := range n {
		for c := range 3 {
			var s float64
			for k := range 4 {
				s += float64(x[4*r+k]) * float64(dynW[k][c])
			}
			proj[3*r+c] = s
		}
	}
	seq = []int64{}
	for i := range k {
		seq = append(seq, i)
	}
	return sum, proj, seq
}

// dynIO is the device buffers and datasets of dyn_symbolic.onnx, sized for
// up to maxN rows.
type dynIO struct {
	x, y, k, sum, proj, seq []byte
	in, out                 acl.DatasetHandle
}

func newDynIO(t *testing.T, n *NPU, maxN int) *dynIO {
	v := &dynIO{x: devBytes(t, n, 16*maxN), y: devBytes(t, n, 16*maxN), k: devBytes(t, n, 8), sum: devBytes(t, n, 16*maxN),
		proj: devBytes(t, n, 12*maxN), seq: devBytes(t, n, 8*maxN)}
	v.in, _ = newDataset(t, n, v.x, v.y, v.k)
	v.out, _ = newDataset(t, n, v.sum, v.proj, v.seq)
	return v
}

// setShapes sets the run's input descriptions ([nx, 4] and [ny, 4]).
func setShapes(t *testing.T, n *NPU, ds acl.DatasetHandle, dims ...[]int64) {
	t.Helper()
	for i, d := range dims {
		h, err := n.CreateTensorDesc(acl.Float32, d, acl.FormatND)
		require.NoError(t, err)
		require.NoError(t, n.SetDatasetTensorDesc(ds, h, uintptr(i)))
		require.NoError(t, n.DestroyTensorDesc(h), "the dataset holds a copy")
	}
}

// outDesc reads output i's description from the output dataset.
func outDesc(t *testing.T, n *NPU, ds acl.DatasetHandle, i int) (acl.DataType, []int64) {
	t.Helper()
	h := n.GetDatasetTensorDesc(ds, uintptr(i))
	require.NotZero(t, h, "output %d has a description", i)
	dims := make([]int64, n.GetTensorDescNumDims(h))
	for k := range dims {
		v, err := n.GetTensorDescDimV2(h, uintptr(k))
		require.NoError(t, err)
		dims[k] = v
	}
	return n.GetTensorDescType(h), dims
}

func randF32(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.Float64()*2 - 1)
	}
	return v
}

// setK writes k.
func (v *dynIO) setK(k int64) { *(*int64)(unsafe.Pointer(&v.k[0])) = k }

// checkDynRun compares a run's outputs and their descriptions with dynRef.
func checkDynRun(t *testing.T, n *NPU, v *dynIO, x, y []float32, rows int, k int64) {
	t.Helper()
	sum, proj, seq := dynRef(x, y, rows, k)
	dt, dims := outDesc(t, n, v.out, 0)
	require.Equal(t, acl.Float32, dt)
	require.Equal(t, []int64{int64(rows), 4}, dims)
	require.Equal(t, sum, getF32s(v.sum, 4*rows), "rows %d: Relu(x + y)", rows)
	_, dims = outDesc(t, n, v.out, 1)
	require.Equal(t, []int64{int64(rows), 3}, dims)
	requireClose(t, proj, getF32s(v.proj, 3*rows), "x × w")
	dt, dims = outDesc(t, n, v.out, 2)
	require.Equal(t, acl.Int64, dt)
	require.Equal(t, []int64{k}, dims, "Range's length is k's value")
	got := unsafe.Slice((*int64)(unsafe.Pointer(&v.seq[0])), len(seq))
	require.Equal(t, seq, slices.Clone(got))
}

// TestModelDynamicONNX: an ONNX model with a symbolic dim and a
// data-dependent output loads once as a model with unknown dims; its
// description reports -1 and the ranges; it runs at several shapes in one
// process, synchronously and on a stream, each run's output shapes on the
// output dataset and its values equal to a reference computed here; each
// shape tuple is planned once.
func TestModelDynamicONNX(t *testing.T) {
	n := newTestNPU(t)
	rng := newRand(t)
	blob, err := os.ReadFile("testdata/dyn_symbolic.onnx")
	require.NoError(t, err)
	id := loadBlob(t, n, blob)

	d, err := n.CreateDesc()
	require.NoError(t, err)
	require.NoError(t, n.GetDesc(d, id))
	var dims acl.IODims
	require.NoError(t, n.GetInputDims(d, 0, &dims))
	require.Equal(t, []int64{-1, 4}, dims.Shape())
	require.NoError(t, n.GetInputDimsV2(d, 1, &dims))
	require.Equal(t, "y", dims.NameString())
	require.Equal(t, []int64{-1, 4}, dims.Shape())
	require.Zero(t, n.GetInputSizeByIndex(d, 0), "an unbounded input has no size")
	for i, want := range [][]int64{{-1, 4}, {-1, 3}, {-1}} {
		require.NoError(t, n.GetOutputDims(d, uintptr(i), &dims))
		require.Equal(t, want, dims.Shape(), "output %d", i)
		requireCode(t, acl.CodeAPINotSupport, n.GetCurOutputDims(d, uintptr(i), &dims), "runtime v2: the dataset has the shapes")
	}
	var r acl.IODimsRange
	require.NoError(t, n.GetInputDimsRange(d, 0, &r))
	require.Equal(t, [][2]int64{{1, -1}, {4, 4}}, r.Ranges())
	var hw acl.HW
	require.NoError(t, n.GetDynamicHW(d, ^uintptr(0), &hw))
	require.Zero(t, hw.HWCount)
	require.NoError(t, n.DestroyDesc(d))

	const maxN = 9
	v := newDynIO(t, n, maxN)
	shapes := []int{3, 7, 1, 7, 9}
	for _, rows := range shapes {
		x, y, k := randF32(rng, 4*rows), randF32(rng, 4*rows), 1+rng.Int64N(maxN)
		putF32s(v.x, x)
		putF32s(v.y, y)
		v.setK(k)
		setShapes(t, n, v.in, []int64{int64(rows), 4}, []int64{int64(rows), 4})
		require.NoError(t, n.Execute(id, v.in, v.out))
		checkDynRun(t, n, v, x, y, rows, k)
	}
	st, err := n.ModelStats(id)
	require.NoError(t, err)
	require.Equal(t, uint64(len(shapes)), st.Executions)
	require.Equal(t, int64(4), st.Compiles, "one plan per distinct shape")
	require.Equal(t, int64(1), st.PlanHits)
	require.Equal(t, int64(len(shapes)), st.Interpreted, "Range's length needs k's value")

	// A second model of the same bytes runs on a stream: the outputs and
	// their shapes are there once the stream has passed the run.
	ida := loadBlob(t, n, blob)
	s := mkStream(t, n)
	for _, rows := range []int{2, 8, 5} {
		x, y, k := randF32(rng, 4*rows), randF32(rng, 4*rows), 1+rng.Int64N(maxN)
		putF32s(v.x, x)
		putF32s(v.y, y)
		v.setK(k)
		setShapes(t, n, v.in, []int64{int64(rows), 4}, []int64{int64(rows), 4})
		require.NoError(t, n.ExecuteAsync(ida, v.in, v.out, s))
		require.NoError(t, n.SynchronizeStream(s))
		checkDynRun(t, n, v, x, y, rows, k)
	}
	require.NoError(t, n.Unload(ida))
	require.NoError(t, n.Unload(id))
}

// TestModelDynamicMisuse: each wrong use of a model with unknown dims is
// a typed error with GE's code (model_dynamic.go cites the source), never
// a panic or a hang.
func TestModelDynamicMisuse(t *testing.T) {
	n := newTestNPU(t, WithModelExecuteTimeout(300*time.Millisecond))
	rng := newRand(t)
	blob, err := os.ReadFile("testdata/dyn_symbolic.onnx")
	require.NoError(t, err)
	id := loadBlob(t, n, blob)
	v := newDynIO(t, n, 4)
	putF32s(v.x, randF32(rng, 16))
	putF32s(v.y, randF32(rng, 16))
	v.setK(3)

	// No description for an input of unknown dims.
	requireCode(t, acl.CodeGEFailure, n.Execute(id, v.in, v.out), "no description")
	setShapes(t, n, v.in, []int64{2, 4})
	err = n.Execute(id, v.in, v.out)
	requireCode(t, acl.CodeGEFailure, err, "y has no description")
	require.ErrorContains(t, err, "input 1 (y)")

	// Outside the range: a fixed dim changed, a rank changed, a 0 dim.
	for _, bad := range [][]int64{{2, 5}, {2, 4, 1}, {0, 4}} {
		setShapes(t, n, v.in, bad, []int64{2, 4})
		err = n.Execute(id, v.in, v.out)
		requireCode(t, acl.CodeInvalidParam, err, "dims %v", bad)
		require.ErrorContains(t, err, "shape out of shape range")
	}

	// One symbol, two values: the error names both inputs.
	setShapes(t, n, v.in, []int64{2, 4}, []int64{3, 4})
	err = n.Execute(id, v.in, v.out)
	requireCode(t, acl.CodeGEParamInvalid, err)
	var oe *onnx.Error
	require.ErrorAs(t, err, &oe)
	require.ErrorIs(t, err, onnx.ErrShapeMismatch)
	require.ErrorContains(t, err, `"x"`)
	require.ErrorContains(t, err, `"y"`)

	// An input buffer shorter than its shape.
	setShapes(t, n, v.in, []int64{5, 4}, []int64{5, 4})
	requireCode(t, acl.CodeGEFailure, n.Execute(id, v.in, v.out), "input buffer of 4 rows, shape of 5")

	// An output buffer too small for the run's real shape.
	small, _ := newDataset(t, n, v.sum, v.proj, devBytes(t, n, 8))
	setShapes(t, n, v.in, []int64{4, 4}, []int64{4, 4})
	v.setK(4)
	err = n.Execute(id, v.in, small)
	requireCode(t, acl.CodeGEFailure, err, "Range's 4 values do not fit 8 bytes")
	require.ErrorContains(t, err, "less than")

	// Buffer counts: fewer inputs than the model's (the ACL layer's
	// check), outputs other than the model's.
	two, _ := newDataset(t, n, v.x, v.y)
	requireCode(t, acl.CodeInvalidParam, n.Execute(id, two, v.out), "two input buffers for three inputs")
	setShapes(t, n, v.in, []int64{2, 4}, []int64{2, 4})
	v.setK(3)
	outTwo, _ := newDataset(t, n, v.sum, v.proj)
	requireCode(t, acl.CodeGEFailure, n.Execute(id, v.in, outTwo), "two output buffers for three outputs")

	// Empty output buffers (NULL, 0) get device memory of the run's real
	// size from aclmdlExecute, which the caller frees.
	empty, bufs := newDataset(t, n, nil, nil, nil)
	require.NoError(t, n.Execute(id, v.in, empty))
	for i, want := range []uintptr{2 * 16, 2 * 12, 3 * 8} {
		p := n.GetDataBufferAddr(bufs[i])
		require.NotNil(t, p, "output %d allocated", i)
		require.Equal(t, want, n.GetDataBufferSizeV2(bufs[i]), "output %d has its real size", i)
		require.NoError(t, n.Free(p))
	}

	// Description entry past the buffers; a NULL one removes it.
	h, err := n.CreateTensorDesc(acl.Float32, []int64{1, 4}, acl.FormatND)
	require.NoError(t, err)
	requireCode(t, acl.CodeInvalidParam, n.SetDatasetTensorDesc(v.in, h, 3))
	requireCode(t, acl.CodeInvalidParam, n.SetDatasetTensorDesc(0, h, 0))
	require.NoError(t, n.DestroyTensorDesc(h))
	require.NoError(t, n.SetDatasetTensorDesc(v.in, 0, 0))
	require.Zero(t, n.GetDatasetTensorDesc(v.in, 0))
	require.Zero(t, n.GetDatasetTensorDesc(v.in, 7))
	_, err = n.GetTensorDescDimV2(0, 0)
	requireCode(t, acl.CodeInvalidParam, err)

	// Gears the fallback does not build.
	bb := devBytes(t, n, 16)
	gds, _ := newDataset(t, n, bb)
	requireCode(t, acl.CodeGEDynamicBatchSizeInvalid, n.SetDynamicHWSize(id, gds, 0, 4, 4))
	requireCode(t, acl.CodeInvalidParam, n.SetDynamicHWSize(id, gds, 0, 0, 4))
	requireCode(t, acl.CodeInvalidParam, n.SetDynamicHWSize(id, gds, 3, 4, 4))
	var dd acl.IODims
	dd.DimCount = 2
	requireCode(t, acl.CodeGEDynamicInputLengthInvalid, n.SetInputDynamicDims(id, gds, 0, &dd))
	dd.DimCount = 0
	requireCode(t, acl.CodeInvalidParam, n.SetInputDynamicDims(id, gds, 0, &dd))

	// A Loop that never ends stops at the execution timeout, synchronously
	// and on a stream.
	loop, err := os.ReadFile("testdata/dyn_loop.onnx")
	require.NoError(t, err)
	lid := loadBlob(t, n, loop)
	lx, lo := devBytes(t, n, 4), devBytes(t, n, 4)
	lin, _ := newDataset(t, n, lx)
	lout, _ := newDataset(t, n, lo)
	start := time.Now()
	err = n.Execute(lid, lin, lout)
	requireCode(t, acl.CodeGEModelExecuteTimeout, err)
	require.ErrorIs(t, err, onnx.ErrCanceled)
	require.Less(t, time.Since(start), 10*time.Second)
	lid2 := loadBlob(t, n, loop)
	s := mkStream(t, n)
	require.NoError(t, n.ExecuteAsync(lid2, lin, lout, s))
	requireCode(t, acl.CodeGEModelExecuteTimeout, n.SynchronizeStream(s))
}

// TestModelLoadONNXErrors: a refused ONNX model's error keeps the
// importer's type and kind through the load, with its ACL code; bytes
// that start as an ONNX model but are cut say the ONNX model is invalid.
func TestModelLoadONNXErrors(t *testing.T) {
	n := newTestNPU(t)
	blob, err := os.ReadFile("testdata/unsupported.onnx")
	require.NoError(t, err)
	_, err = n.LoadFromMem(unsafe.Pointer(&blob[0]), uintptr(len(blob)))
	var oe *onnx.Error
	require.ErrorAs(t, err, &oe)
	require.Equal(t, "NoSuchOp", oe.Op)
	require.ErrorIs(t, err, onnx.ErrUnsupportedOp)
	requireCode(t, acl.CodeGEParamInvalid, err)
	var ae *acl.Error
	require.True(t, errors.As(err, &ae))
	require.Equal(t, "aclmdlLoadFromMem", ae.Op)

	good, err := os.ReadFile("testdata/dyn_symbolic.onnx")
	require.NoError(t, err)
	for _, cut := range []int{len(good) / 2, len(good) - 3} {
		_, err = n.LoadFromMem(unsafe.Pointer(&good[0]), uintptr(cut))
		require.ErrorContains(t, err, "not a valid ONNX model", "cut at %d", cut)
		require.ErrorIs(t, err, onnx.ErrInvalidModel)
	}
	require.Empty(t, n.loadedModels())
}

// TestModelDynamicCompiledPlans: an ONNX model with a symbolic batch
// (ge/onnx/testdata/gonnx/mlp.onnx, data_input [batch_size, 3]) is
// compiled once per batch it runs at and the plan reused; each run equals
// the same model compiled by ge at that fixed shape and run by ge's
// reference executor.
func TestModelDynamicCompiledPlans(t *testing.T) {
	n := newTestNPU(t)
	rng := newRand(t)
	blob, err := os.ReadFile("../ge/onnx/testdata/gonnx/mlp.onnx")
	require.NoError(t, err)
	id := loadBlob(t, n, blob)
	const maxB = 7
	x, y := devBytes(t, n, 12*maxB), devBytes(t, n, 8*maxB)
	in, _ := newDataset(t, n, x)
	out, _ := newDataset(t, n, y)
	batches := []int64{1, 4, 2, 4, 7, 1}
	for _, b := range batches {
		xs := randF32(rng, int(3*b))
		putF32s(x, xs)
		setShapes(t, n, in, []int64{b, 3})
		require.NoError(t, n.Execute(id, in, out))
		_, dims := outDesc(t, n, out, 0)
		require.Equal(t, []int64{b, 2}, dims)

		fixed, err := onnx.Compile(blob, onnx.WithInputShape("data_input", []int64{b, 3}))
		require.NoError(t, err)
		want, err := getest.Run(fixed, [][]byte{slices.Clone(x[:12*b])})
		require.NoError(t, err)
		require.Equal(t, want[0], slices.Clone(y[:8*b]), "batch %d", b)
	}
	st, err := n.ModelStats(id)
	require.NoError(t, err)
	require.Equal(t, ModelStats{Executions: uint64(len(batches)), Plans: 4, Compiles: 4, PlanHits: 2}, st)

	// More shapes than the cache holds: the least recently used plans go.
	big := devBytes(t, n, 12*40)
	bigOut := devBytes(t, n, 8*40)
	bin, _ := newDataset(t, n, big)
	bout, _ := newDataset(t, n, bigOut)
	for b := int64(8); b < 8+onnx.DefaultMaxPlans; b++ {
		setShapes(t, n, bin, []int64{b, 3})
		require.NoError(t, n.Execute(id, bin, bout))
	}
	st, err = n.ModelStats(id)
	require.NoError(t, err)
	require.Equal(t, onnx.DefaultMaxPlans, st.Plans)
	require.Equal(t, int64(4+onnx.DefaultMaxPlans), st.Compiles)
	require.Equal(t, int64(4), st.Evictions)
}

// TestModelDynamicCloseStopsRun: with the execution timeout off, a Loop
// that never ends runs until the NPU closes, and then ends with an error.
func TestModelDynamicCloseStopsRun(t *testing.T) {
	n, err := New(WithDeviceMemory(testMem), WithHostMemory(testMem), WithModelExecuteTimeout(0))
	require.NoError(t, err)
	loop, err := os.ReadFile("testdata/dyn_loop.onnx")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		done <- func() error {
			if err := n.Init(""); err != nil {
				return err
			}
			if err := n.SetDevice(0); err != nil {
				return err
			}
			id, err := n.LoadFromMem(unsafe.Pointer(&loop[0]), uintptr(len(loop)))
			if err != nil {
				return err
			}
			p, err := n.Malloc(8, acl.MemMallocHugeFirst)
			if err != nil {
				return err
			}
			in, err := n.CreateDataset()
			if err != nil {
				return err
			}
			out, err := n.CreateDataset()
			if err != nil {
				return err
			}
			for _, ds := range []acl.DatasetHandle{in, out} {
				b, err := n.CreateDataBuffer(p, 4)
				if err != nil {
					return err
				}
				if err := n.AddDatasetBuffer(ds, b); err != nil {
					return err
				}
			}
			return n.Execute(id, in, out)
		}()
	}()
	select {
	case err := <-done:
		t.Fatalf("the run ended on its own: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	require.NoError(t, n.Close())
	select {
	case err := <-done:
		require.Error(t, err)
		t.Logf("after Close: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not stop when the NPU closed")
	}
}
