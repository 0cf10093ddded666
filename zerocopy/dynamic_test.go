package zerocopy_test

import (
	"context"
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/zerocopy"
)

// TestBindingUnknownDims: a Binding of an ONNX model with a symbolic dim
// (fallback/testdata/dyn_symbolic.onnx: Relu(x + y), x × w, Range(0, k))
// feeds each run's shapes with WriteInputDims and reads the outputs at
// their real shapes with ReadOutputDims, at several shapes in one process,
// synchronously and on a stream; the values equal a reference computed
// here. An unbounded IO needs WithMaxBytes or the caller's memory; an
// output read before any run, or a shape that is not the data's, is
// refused.
func TestBindingUnknownDims(t *testing.T) {
	npu, err := fallback.New()
	require.NoError(t, err)
	rt, err := acl.Init(npu, "")
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, rt.Close()) })
	d, err := rt.OpenDevice(0)
	require.NoError(t, err)
	rng := newRand(t)
	m, err := d.LoadModelFile("../fallback/testdata/dyn_symbolic.onnx")
	require.NoError(t, err)

	_, err = zerocopy.Bind(m)
	require.ErrorIs(t, err, acl.ErrInvalidParam)
	require.ErrorContains(t, err, "WithMaxBytes")

	const maxN = 7
	b, err := zerocopy.Bind(m, zerocopy.WithMaxBytes(16*maxN))
	require.NoError(t, err)
	defer func() { assert.NoError(t, b.Close()) }()
	_, _, err = b.ReadOutputDims(0)
	require.ErrorIs(t, err, acl.ErrInvalidParam, "no run has set the output's shape")
	dims, err := b.OutputShape(0)
	require.Error(t, err)
	require.Nil(t, dims)

	st, err := d.NewStream()
	require.NoError(t, err)
	for i, rows := range []int{3, 7, 1, 5} {
		x, y := make([]float32, 4*rows), make([]float32, 4*rows)
		for j := range x {
			x[j], y[j] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
		}
		k := 1 + rng.Int64N(2*maxN)
		shape := []int64{int64(rows), 4}
		require.NoError(t, b.WriteInputDims(0, shape, x))
		require.NoError(t, b.WriteInputDims(1, shape, y))
		require.NoError(t, zerocopy.WriteInput(b, 2, []int64{k}))
		if i%2 == 0 {
			require.NoError(t, b.Run())
		} else {
			require.NoError(t, b.RunAsync(st))
			require.NoError(t, b.Wait(context.Background()))
		}

		sum, sd, err := b.ReadOutputDims(0)
		require.NoError(t, err)
		require.Equal(t, shape, sd)
		require.Len(t, sum, 4*rows)
		for j := range sum {
			require.Equal(t, max(x[j]+y[j], 0), sum[j], "Relu(x + y)[%d]", j)
		}
		proj, pd, err := b.ReadOutputDims(1)
		require.NoError(t, err)
		require.Equal(t, []int64{int64(rows), 3}, pd)
		want := make([]float64, 3*rows)
		for r := range rows {
			for c := range 3 {
				for kk := range 4 {
					want[3*r+c] += float64(x[4*r+kk]) * (float64(3*kk+c) - 5.5) / 4
				}
			}
		}
		requireClose(t, want, proj, "x × w")
		seq, qd, err := zerocopy.ReadOutputDims[int64](b, 2)
		require.NoError(t, err)
		require.Equal(t, []int64{k}, qd, "Range's length is k")
		for j, v := range seq {
			require.Equal(t, int64(j), v)
		}
		got, err := b.OutputShape(2)
		require.NoError(t, err)
		require.Equal(t, []int64{k}, got)
		n, err := zerocopy.ReadOutput[int64](b, 2)
		require.NoError(t, err)
		require.Len(t, n, int(k), "ReadOutput reads the real shape too")
	}

	require.ErrorIs(t, b.WriteInputDims(0, []int64{2, 4}, make([]float32, 7)), acl.ErrInvalidParam, "7 values for 2×4")
	require.ErrorIs(t, b.WriteInputDims(0, []int64{maxN + 1, 4}, make([]float32, 4*maxN+4)), acl.ErrInvalidParam, "past the buffer")
	require.NoError(t, b.SetInputShape(0, []int64{2, 5}))
	require.ErrorIs(t, b.Run(), acl.ErrInvalidParam, "a fixed dim changed: out of range")
	dims, err = b.OutputShape(1)
	require.NoError(t, err, "the last good run's shape stays")
	require.Equal(t, []int64{5, 3}, dims)
}

// stubDynModel is a model in the C stub's format with one float32 input x
// of dims [-1, 4], its dim 0 ranged [1, maxRows], and y = x + addend.
func stubDynModel(maxRows int64, addend float32) []byte {
	le := binary.LittleEndian
	blob := make([]byte, 32)
	copy(blob, "STUBOM01")
	le.PutUint32(blob[8:], 1|1<<31) // one io, a ranges table
	le.PutUint64(blob[16:], 8)
	le.PutUint64(blob[24:], 8)
	for _, name := range []string{"x", "y"} {
		d := make([]byte, 144)
		copy(d, name)
		le.PutUint32(d[64:], uint32(acl.Float32))
		le.PutUint32(d[68:], uint32(acl.FormatND))
		le.PutUint64(d[72:], 2)
		le.PutUint64(d[80:], math.MaxUint64) // -1
		le.PutUint64(d[88:], 4)
		blob = append(blob, d...)
	}
	ranges := make([]byte, 8*16)
	le.PutUint64(ranges[0:], 1)
	le.PutUint64(ranges[8:], uint64(maxRows))
	blob = append(blob, ranges...)
	w := make([]byte, 8)
	le.PutUint32(w, math.Float32bits(addend))
	return append(blob, w...)
}

// TestBindingUnknownDimsNativeStub: over the purego backend and the C
// stub, the Binding sizes a ranged input from its range (the output, with
// no range, from WithMaxBytes), hands each run's shape to the library and
// reads the output at the shape the library reports.
func TestBindingUnknownDimsNativeStub(t *testing.T) {
	be := stubBackend(t, "STUB_INSTANCE_ZEROCOPY_DYN")
	rt, err := acl.Init(be, "")
	require.NoError(t, err)
	defer func() { require.NoError(t, rt.Close()) }()
	d, err := rt.OpenDevice(0)
	require.NoError(t, err)
	rng := newRand(t)
	m, err := d.LoadModel(stubDynModel(6, 2.5))
	require.NoError(t, err)
	r, err := m.Desc().InputDimsRange(0)
	require.NoError(t, err)
	require.Equal(t, [][2]int64{{1, 6}, {4, 4}}, r)
	b, err := zerocopy.Bind(m, zerocopy.WithMaxBytes(6*4*4))
	require.NoError(t, err)
	defer func() { assert.NoError(t, b.Close()) }()
	assert.Equal(t, uintptr(6*4*4), b.Input(0).Size(), "the range bounds the input")
	for _, rows := range []int{4, 1, 6, 2} {
		x := make([]float32, 4*rows)
		for j := range x {
			x[j] = float32(rng.NormFloat64())
		}
		require.NoError(t, b.WriteInputDims(0, []int64{int64(rows), 4}, x))
		require.NoError(t, b.Run())
		y, dims, err := b.ReadOutputDims(0)
		require.NoError(t, err)
		require.Equal(t, []int64{int64(rows), 4}, dims)
		for j := range x {
			require.Equal(t, x[j]+2.5, y[j])
		}
	}
	require.NoError(t, b.SetInputShape(0, []int64{7, 4}))
	assert.Equal(t, acl.CodeInvalidParam, acl.CodeOf(b.Run()), "7 rows: outside [1, 6]")
}
