package gert_test

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/acl/native"
	"github.com/ascend-go/cann/ge/gert"
	"github.com/ascend-go/cann/ge/getest"
	"github.com/ascend-go/cann/internal/stubbuild"
)

// stubAddConst serializes the C stub's model format
// (acl/native/testdata/stub/model.c): input "x" of n float32, output
// "y" = x + addend, written by the stub straight into the output buffer.
func stubAddConst(n int, addend float32) []byte {
	le := binary.LittleEndian
	blob := make([]byte, 32)
	copy(blob, "STUBOM01")
	le.PutUint32(blob[8:], 1)
	le.PutUint64(blob[16:], 8)
	le.PutUint64(blob[24:], 8)
	for _, name := range []string{"x", "y"} {
		d := make([]byte, 144)
		copy(d, name)
		le.PutUint32(d[64:], uint32(acl.Float32))
		le.PutUint32(d[68:], uint32(acl.FormatND))
		le.PutUint64(d[72:], 1)
		le.PutUint64(d[80:], uint64(n))
		blob = append(blob, d...)
	}
	w := make([]byte, 8)
	le.PutUint32(w, math.Float32bits(addend))
	return append(blob, w...)
}

// TestExecutorNativeStub runs the V2 scenarios over the purego binding and
// the C stub: device outputs in place (no copy, one C call per steady-state
// run), a host output copied back, an empty output allocated from the
// caller's allocator, and always_zero_copy refusing an empty output.
func TestExecutorNativeStub(t *testing.T) {
	lib := stubbuild.BuildWith(t, "../../acl/native/testdata/stub", native.LibACL,
		stubbuild.Options{Defines: []string{"STUB_INSTANCE_GERT_TEST"}})
	be, err := native.Open(native.WithLibraryPath(lib))
	require.NoError(t, err)
	defer be.Close()
	calls := be.Symbol("stub_call_count")
	require.NotZero(t, calls)
	ffi := func() uint64 { r, _, _ := purego.SyscallN(calls); return uint64(r) }

	rt, err := acl.Init(be, "")
	require.NoError(t, err)
	defer func() { require.NoError(t, rt.Close()) }()
	dev, err := rt.OpenDevice(0)
	require.NoError(t, err)
	s, err := dev.NewStream()
	require.NoError(t, err)
	defer s.Close()
	const n, addend = 1000, 0.5
	blob := stubAddConst(n, addend)
	rng := rand.New(rand.NewPCG(11, 12))
	alloc := &gert.DeviceAllocator{Dev: dev}

	devTensor := func(v []float32) *gert.Tensor {
		td, err := alloc.Malloc(uint64(4 * len(v)))
		require.NoError(t, err)
		tn := gert.NewTensor(gert.Shape{int64(len(v))}, acl.Float32, gert.OnDeviceHbm)
		require.NoError(t, tn.SetData(td))
		p, _ := tn.Addr()
		b := getest.F32Bytes(v)
		require.NoError(t, dev.Do(func() error {
			return be.Memcpy(p, uintptr(len(b)), unsafe.Pointer(&b[0]), uintptr(len(b)), acl.MemcpyHostToDevice)
		}))
		t.Cleanup(func() { _ = tn.Free() })
		return tn
	}
	read := func(tn *gert.Tensor) []float32 {
		p, err := tn.Addr()
		require.NoError(t, err)
		out := make([]float32, n)
		require.NoError(t, dev.Do(func() error {
			return be.Memcpy(unsafe.Pointer(&out[0]), 4*n, p, 4*n, acl.MemcpyDeviceToHost)
		}))
		return out
	}
	want := func(x []float32) []float32 {
		y := make([]float32, len(x))
		for i := range x {
			y[i] = x[i] + addend
		}
		return y
	}

	t.Run("zerocopy", func(t *testing.T) {
		ex, err := gert.Load(dev, blob, gert.LoweringOptions{})
		require.NoError(t, err)
		defer ex.Close()
		xv := getest.RandF32(rng, n)
		x, y := devTensor(xv), devTensor(make([]float32, n))
		for range 2 {
			require.NoError(t, ex.Execute(s, []*gert.Tensor{x}, []*gert.Tensor{y}, nil))
			require.NoError(t, s.Synchronize())
			assert.Equal(t, want(xv), read(y))
		}
		c0 := ffi()
		require.NoError(t, ex.Execute(s, []*gert.Tensor{x}, []*gert.Tensor{y}, nil))
		assert.Equal(t, uint64(1), ffi()-c0, "a steady-state execution is one aclmdlExecuteAsync")
		require.NoError(t, s.Synchronize())
		assert.Zero(t, ex.Stats().Copies)
	})
	t.Run("host output", func(t *testing.T) {
		ex, err := gert.Load(dev, blob, gert.LoweringOptions{})
		require.NoError(t, err)
		defer ex.Close()
		xv := getest.RandF32(rng, n)
		host := make([]float32, n)
		y := gert.NewTensor(gert.Shape{n}, acl.Float32, gert.OnHost)
		require.NoError(t, y.SetData(gert.NewTensorData(unsafe.Pointer(&host[0]), 4*n, gert.OnHost, nil)))
		require.NoError(t, ex.Execute(s, []*gert.Tensor{devTensor(xv)}, []*gert.Tensor{y}, nil))
		assert.Equal(t, want(xv), host)
		assert.Equal(t, uint64(1), ex.Stats().Copies)
	})
	t.Run("empty output", func(t *testing.T) {
		ex, err := gert.Load(dev, blob, gert.LoweringOptions{AlwaysExternalAllocator: true})
		require.NoError(t, err)
		defer ex.Close()
		xv := getest.RandF32(rng, n)
		y := gert.NewTensor(nil, 0, gert.OnDeviceHbm)
		ca := &countingAlloc{DeviceAllocator: gert.DeviceAllocator{Dev: dev}}
		require.NoError(t, ex.Execute(s, []*gert.Tensor{devTensor(xv)}, []*gert.Tensor{y}, ca))
		require.NoError(t, s.Synchronize())
		assert.Equal(t, 1, ca.n)
		assert.Zero(t, ex.Stats().Copies)
		assert.Equal(t, want(xv), read(y))
		require.NoError(t, y.Free())
	})
	t.Run("always zero copy", func(t *testing.T) {
		ex, err := gert.Load(dev, blob, gert.LoweringOptions{AlwaysZeroCopy: true})
		require.NoError(t, err)
		defer ex.Close()
		x := devTensor(make([]float32, n))
		for range 2 {
			err := ex.Execute(s, []*gert.Tensor{x}, []*gert.Tensor{gert.NewTensor(gert.Shape{n}, acl.Float32, gert.OnDeviceHbm)}, alloc)
			assert.Equal(t, acl.CodeGEParamInvalid, acl.CodeOf(err))
			assert.Contains(t, err.Error(), "E13031")
		}
	})
}
