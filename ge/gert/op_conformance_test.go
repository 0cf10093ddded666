package gert_test

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/acl/native"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/ge/gert"
	"github.com/ascend-go/cann/ge/getest"
	"github.com/ascend-go/cann/internal/stubbuild"
)

// opEnv is a device and stream of one backend.
type opEnv struct {
	dev *acl.Device
	s   *acl.Stream
}

func openEnv(t testing.TB, be acl.Backend) opEnv {
	rt, err := acl.Init(be, "")
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close() })
	dev, err := rt.OpenDevice(0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = dev.Close() })
	s, err := dev.NewStream()
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return opEnv{dev, s}
}

func (e opEnv) tensor(t testing.TB, v []float32) *gert.Tensor {
	return upload(t, e.dev, gert.IODesc{DataType: acl.Float32, Shape: gert.Shape{int64(len(v))}}, getest.F32Bytes(v))
}

func (e opEnv) read(t testing.TB, tn *gert.Tensor) []float32 {
	p, _ := tn.Addr()
	out := make([]float32, tn.Size()/4)
	be := e.dev.Runtime().Backend()
	require.NoError(t, e.dev.Do(func() error {
		return be.Memcpy(unsafe.Pointer(&out[0]), uintptr(tn.Size()), p, uintptr(tn.Size()), acl.MemcpyDeviceToHost)
	}))
	return out
}

// singleOpSuite is the single-op conformance run on every backend: the ops
// both the fallback and the C stub implement, and ACL's op codes for misuse.
func singleOpSuite(t *testing.T, e opEnv) {
	rng := rand.New(rand.NewPCG(31, 32))
	const n = 257
	xv, yv := getest.RandF32(rng, n), getest.RandF32(rng, n)
	x, y := e.tensor(t, xv), e.tensor(t, yv)
	for _, c := range []struct {
		op  string
		in  []*gert.Tensor
		ref func(i int) float32
	}{
		{"Add", []*gert.Tensor{x, y}, func(i int) float32 { return xv[i] + yv[i] }},
		{"Mul", []*gert.Tensor{x, y}, func(i int) float32 { return xv[i] * yv[i] }},
		{"Relu", []*gert.Tensor{x}, func(i int) float32 { return max(xv[i], 0) }},
	} {
		t.Run(c.op, func(t *testing.T) {
			z := e.tensor(t, make([]float32, n))
			require.NoError(t, gert.RunOp(e.s, c.op, c.in, []*gert.Tensor{z}, nil))
			require.NoError(t, e.s.Synchronize())
			got := e.read(t, z)
			for i := range got {
				require.Equal(t, c.ref(i), got[i], "element %d", i)
			}
		})
	}
	z := e.tensor(t, make([]float32, n))
	short := e.tensor(t, make([]float32, n-1))
	for _, c := range []struct {
		name  string
		op    string
		in    []*gert.Tensor
		out   []*gert.Tensor
		attrs gert.OpAttrs
		code  acl.Code
	}{
		{"unknown op", "NoSuchOp", []*gert.Tensor{x}, []*gert.Tensor{z}, nil, acl.CodeOpNotFound},
		{"wrong arity", "Add", []*gert.Tensor{x}, []*gert.Tensor{z}, nil, acl.CodeOpInputNotMatch},
		{"float attribute", "Relu", []*gert.Tensor{x}, []*gert.Tensor{z}, gert.OpAttrs{"alpha": float32(0.5)}, acl.CodeOpAttrNotMatch},
		{"list attribute", "Relu", []*gert.Tensor{x}, []*gert.Tensor{z}, gert.OpAttrs{"perm": []int64{1, 0}}, acl.CodeOpAttrNotMatch},
		{"output shape", "Relu", []*gert.Tensor{x}, []*gert.Tensor{short}, nil, acl.CodeOpOutputNotMatch},
		{"no output", "Relu", []*gert.Tensor{x}, nil, nil, acl.CodeOpOutputNotMatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := gert.RunOp(e.s, c.op, c.in, c.out, c.attrs)
			require.Error(t, err)
			assert.Equal(t, c.code, acl.CodeOf(err), "%v", err)
		})
	}
	require.NoError(t, e.s.Synchronize())
}

func TestSingleOpConformanceFallback(t *testing.T) {
	npu, err := fallback.New()
	require.NoError(t, err)
	singleOpSuite(t, openEnv(t, npu))
}

func TestSingleOpConformanceNativeStub(t *testing.T) {
	be := openStub(t)
	singleOpSuite(t, openEnv(t, be))
}

func openStub(t testing.TB) *native.Backend {
	lib := stubbuild.BuildWith(t, "../../acl/native/testdata/stub", native.LibACL,
		stubbuild.Options{Defines: []string{"STUB_INSTANCE_GERT_TEST"}})
	be, err := native.Open(native.WithLibraryPath(lib))
	require.NoError(t, err)
	t.Cleanup(func() { _ = be.Close() })
	return be
}

// BenchmarkOpRunNativeStub measures a steady-state Op.Run over the stub:
// C calls per op (one aclopCompileAndExecuteV2) and time.
func BenchmarkOpRunNativeStub(b *testing.B) {
	be := openStub(b)
	calls := be.Symbol("stub_call_count")
	ffi := func() uint64 { r, _, _ := purego.SyscallN(calls); return uint64(r) }
	e := openEnv(b, be)
	const n = 1024
	x, z := e.tensor(b, make([]float32, n)), e.tensor(b, make([]float32, n))
	d := gert.IODesc{DataType: acl.Float32, Shape: gert.Shape{n}, Format: acl.FormatND}
	op, err := gert.NewOp(e.dev, "Relu", []gert.IODesc{d}, []gert.IODesc{d}, nil)
	require.NoError(b, err)
	defer op.Close()
	in, out := []*gert.Tensor{x}, []*gert.Tensor{z}
	// The steady state of a thread that keeps its context bound (Device.Do
	// binds it on the first run).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	require.NoError(b, op.Run(e.s, in, out))
	b.ReportAllocs()
	c0, k := ffi(), 0
	for b.Loop() {
		if err := op.Run(e.s, in, out); err != nil {
			b.Fatal(err)
		}
		k++
	}
	b.ReportMetric(float64(ffi()-c0)/float64(k), "ffi_calls/op")
	require.NoError(b, e.s.Synchronize())
}
