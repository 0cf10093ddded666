package acl_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/ge/onnx"
)

// The ONNX models of fallback/testdata/gen_dynamic_onnx.py.
const (
	dynSymbolic = "../fallback/testdata/dyn_symbolic.onnx"
	dynLoop     = "../fallback/testdata/dyn_loop.onnx"
	unsupported = "../fallback/testdata/unsupported.onnx"
)

// dynW is dyn_symbolic.onnx's initializer w ([4, 3]).
func dynW(k, c int) float64 { return (float64(3*k+c) - 5.5) / 4 }

func f32s(b []byte, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func f32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// TestModelUnknownDims: through the idiomatic API on the fallback, an ONNX
// model with a symbolic dim (and an output whose length is an input's
// value) loads once from its file and runs at several shapes, with device
// buffers and synchronously, with pinned host buffers (staged) on a
// stream: Dataset.SetTensorDesc gives each run's shapes, Dataset.TensorDesc
// reads the outputs' real shapes, and the outputs equal a reference
// computed here from the ops' definitions.
func TestModelUnknownDims(t *testing.T) {
	_, _, d := open(t)
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	m, err := d.LoadModelFile(dynSymbolic)
	require.NoError(t, err)
	desc := m.Desc()
	require.Equal(t, []int64{-1, 4}, desc.Inputs[0].Dims)
	require.True(t, desc.Inputs[1].Dynamic())
	require.False(t, desc.Inputs[2].Dynamic(), "k is a scalar")
	r, err := desc.InputDimsRange(1)
	require.NoError(t, err)
	require.Equal(t, [][2]int64{{1, -1}, {4, 4}}, r)
	require.Equal(t, []int64{-1}, desc.Outputs[2].Dims)
	require.Zero(t, desc.Inputs[0].Size)

	const maxN = 6
	type bufs struct{ x, y, k, sum, proj, seq acl.Memory }
	run := func(t *testing.T, b bufs, exec func(in, out *acl.Dataset) error, write func(acl.Memory, []byte), read func(acl.Memory) []byte) {
		in, err := d.NewDatasetOf(b.x, b.y, b.k)
		require.NoError(t, err)
		out, err := d.NewDatasetOf(b.sum, b.proj, b.seq)
		require.NoError(t, err)
		for _, rows := range []int{2, 6, 1, 4} {
			x, y := make([]float32, 4*rows), make([]float32, 4*rows)
			for i := range x {
				x[i], y[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
			}
			k := 1 + rng.Int64N(maxN)
			write(b.x, f32Bytes(x))
			write(b.y, f32Bytes(y))
			write(b.k, binary.LittleEndian.AppendUint64(nil, uint64(k)))
			shape := []int64{int64(rows), 4}
			require.NoError(t, in.SetTensorDesc(0, &acl.TensorDesc{DataType: acl.Float32, Format: acl.FormatND, Dims: shape}))
			require.NoError(t, in.SetTensorDesc(1, &acl.TensorDesc{DataType: acl.Float32, Format: acl.FormatND, Dims: shape}))
			require.NoError(t, exec(in, out))

			for i, want := range [][]int64{{int64(rows), 4}, {int64(rows), 3}, {k}} {
				td, err := out.TensorDesc(i)
				require.NoError(t, err)
				require.NotNil(t, td, "output %d", i)
				assert.Equal(t, want, td.Dims, "rows %d: output %d's real shape", rows, i)
			}
			sum := f32s(read(b.sum), 4*rows)
			for i := range sum {
				require.Equal(t, max(x[i]+y[i], 0), sum[i], "Relu(x + y) element %d", i)
			}
			proj := f32s(read(b.proj), 3*rows)
			for rr := range rows {
				for c := range 3 {
					var want float64
					for kk := range 4 {
						want += float64(x[4*rr+kk]) * dynW(kk, c)
					}
					require.InDelta(t, want, float64(proj[3*rr+c]), 1e-5*(1+math.Abs(want)), "x × w [%d %d]", rr, c)
				}
			}
			seq := read(b.seq)
			for i := range k {
				require.Equal(t, uint64(i), binary.LittleEndian.Uint64(seq[8*i:]), "Range element %d", i)
			}
		}
	}
	dev := func(n uintptr) acl.Memory { return devMem(t, d, n) }
	run(t, bufs{dev(16 * maxN), dev(16 * maxN), dev(8), dev(16 * maxN), dev(12 * maxN), dev(8 * maxN)},
		m.Execute,
		func(mm acl.Memory, b []byte) { require.NoError(t, mm.(*acl.DeviceBuffer).CopyFromHost(b)) },
		func(mm acl.Memory) []byte {
			b := make([]byte, mm.Size())
			require.NoError(t, mm.(*acl.DeviceBuffer).CopyToHost(b))
			return b
		})

	// Pinned host buffers on a stream: the Model stages them through
	// device memory, and hands the descriptions across.
	ma, err := d.LoadModelFile(dynSymbolic)
	require.NoError(t, err)
	st, err := d.NewStream()
	require.NoError(t, err)
	host := func(n uintptr) acl.Memory { return hostMem(t, d, n) }
	run(t, bufs{host(16 * maxN), host(16 * maxN), host(8), host(16 * maxN), host(12 * maxN), host(8 * maxN)},
		func(in, out *acl.Dataset) error {
			if err := ma.ExecuteAsync(st, in, out); err != nil {
				return err
			}
			return st.Synchronize()
		},
		func(mm acl.Memory, b []byte) { copy(mm.(*acl.HostBuffer).Bytes(), b) },
		func(mm acl.Memory) []byte { return mm.(*acl.HostBuffer).Bytes() })

	// No gears on this model.
	in, err := d.NewDatasetOf(dev(64))
	require.NoError(t, err)
	require.ErrorIs(t, m.SetDynamicHW(in, 2, 2), acl.ErrInvalidParam)
	require.ErrorIs(t, m.SetInputDynamicDims(in, []int64{1}), acl.ErrInvalidParam)
	require.Empty(t, desc.HW)
}

// TestModelLoadONNXErrorTypes: a refused ONNX model's error keeps the
// importer's *onnx.Error and kind through Device.LoadModel and
// LoadModelFile, with its ACL code; a truncated .onnx file says it is not
// a valid ONNX model through both.
func TestModelLoadONNXErrorTypes(t *testing.T) {
	_, _, d := open(t)
	blob, err := os.ReadFile(unsupported)
	require.NoError(t, err)
	_, err1 := d.LoadModel(blob)
	_, err2 := d.LoadModelFile(unsupported)
	for _, err := range []error{err1, err2} {
		var oe *onnx.Error
		require.ErrorAs(t, err, &oe)
		assert.Equal(t, "NoSuchOp", oe.Op)
		assert.ErrorIs(t, err, onnx.ErrUnsupportedOp)
		assert.ErrorIs(t, err, acl.ErrInvalidParam, "ACL_ERROR_GE_PARAM_INVALID is an invalid parameter")
		assert.Equal(t, acl.CodeGEParamInvalid, acl.CodeOf(err))
	}

	good, err := os.ReadFile(dynSymbolic)
	require.NoError(t, err)
	cut := good[:len(good)*2/3]
	path := filepath.Join(t.TempDir(), "cut.onnx")
	require.NoError(t, os.WriteFile(path, cut, 0o600))
	_, err1 = d.LoadModel(cut)
	_, err2 = d.LoadModelFile(path)
	for _, err := range []error{err1, err2} {
		require.ErrorContains(t, err, "not a valid ONNX model")
		assert.ErrorIs(t, err, onnx.ErrInvalidModel)
	}
}

// TestModelUnknownDimsTimeout: a Loop that never ends (M = 2^62, its
// condition always true) stops at the fallback's execution timeout with
// ACL_ERROR_GE_MODEL_EXECUTE_TIMEOUT, synchronously and as the stream's
// error; no hang, no panic.
func TestModelUnknownDimsTimeout(t *testing.T) {
	_, _, d := open(t, fallback.WithModelExecuteTimeout(200*time.Millisecond))
	m, err := d.LoadModelFile(dynLoop)
	require.NoError(t, err)
	x, y := devMem(t, d, 4), devMem(t, d, 4)
	in, err := d.NewDatasetOf(x)
	require.NoError(t, err)
	out, err := d.NewDatasetOf(y)
	require.NoError(t, err)
	start := time.Now()
	err = m.Execute(in, out)
	assert.Equal(t, acl.CodeGEModelExecuteTimeout, acl.CodeOf(err))
	assert.ErrorIs(t, err, acl.ErrTimeout)
	assert.ErrorIs(t, err, onnx.ErrCanceled)
	assert.Less(t, time.Since(start), 10*time.Second)

	ma, err := d.LoadModelFile(dynLoop)
	require.NoError(t, err)
	st, err := d.NewStream()
	require.NoError(t, err)
	require.NoError(t, ma.ExecuteAsync(st, in, out))
	err = st.Synchronize()
	assert.Equal(t, acl.CodeGEModelExecuteTimeout, acl.CodeOf(err))
	assert.ErrorContains(t, err, "run canceled", "the stream's error carries the run's code and text")
}

// TestModelUnknownDimsConcurrent: goroutines sharing one model with
// unknown dims, each with its own datasets and shapes, get their own
// results: the shapes travel with each run's datasets, and the Model
// serializes the runs.
func TestModelUnknownDimsConcurrent(t *testing.T) {
	_, _, d := open(t)
	m, err := d.LoadModelFile(dynSymbolic)
	require.NoError(t, err)
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	const workers, runs, maxN = 4, 12, 5
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			errs <- func() error {
				rng := rand.New(rand.NewPCG(seed, uint64(w)))
				mems := []uintptr{16 * maxN, 16 * maxN, 8, 16 * maxN, 12 * maxN, 8 * maxN}
				bufs := make([]*acl.DeviceBuffer, len(mems))
				for i, n := range mems {
					b, err := d.Malloc(n, acl.MemMallocHugeFirst)
					if err != nil {
						return err
					}
					bufs[i] = b
				}
				in, err := d.NewDatasetOf(bufs[0], bufs[1], bufs[2])
				if err != nil {
					return err
				}
				out, err := d.NewDatasetOf(bufs[3], bufs[4], bufs[5])
				if err != nil {
					return err
				}
				for range runs {
					rows := 1 + rng.IntN(maxN)
					x, y := make([]float32, 4*rows), make([]float32, 4*rows)
					for i := range x {
						x[i], y[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
					}
					k := 1 + rng.Int64N(maxN)
					for i, b := range [][]byte{f32Bytes(x), f32Bytes(y), binary.LittleEndian.AppendUint64(nil, uint64(k))} {
						if err := bufs[i].CopyFromHost(b); err != nil {
							return err
						}
					}
					shape := []int64{int64(rows), 4}
					for i := range 2 {
						if err := in.SetTensorDesc(i, &acl.TensorDesc{DataType: acl.Float32, Format: acl.FormatND, Dims: shape}); err != nil {
							return err
						}
					}
					if err := m.Execute(in, out); err != nil {
						return err
					}
					got := make([]byte, mems[3])
					if err := bufs[3].CopyToHost(got); err != nil {
						return err
					}
					sum := f32s(got, 4*rows)
					for i := range sum {
						if want := max(x[i]+y[i], 0); sum[i] != want {
							return fmt.Errorf("worker %d rows %d: sum[%d] = %g, want %g", w, rows, i, sum[i], want)
						}
					}
					td, err := out.TensorDesc(2)
					if err != nil {
						return err
					}
					if len(td.Dims) != 1 || td.Dims[0] != k {
						return fmt.Errorf("worker %d: seq dims %v, want [%d]", w, td.Dims, k)
					}
				}
				return nil
			}()
		}()
	}
	for range workers {
		require.NoError(t, <-errs)
	}
}
