package gert_test

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
	"github.com/ascend-go/cann/ge"
	"github.com/ascend-go/cann/ge/gert"
	"github.com/ascend-go/cann/ge/getest"
	"github.com/ascend-go/cann/internal/npuhook"
)

const addN = 1000 // elements of the Add model's tensors

// addModel is GE's ZeroCopyST graph: one Add of two inputs.
func addModel(t testing.TB) []byte {
	g := ge.NewGraph("add")
	x := g.Data("x", 0, acl.Float32, []int64{addN})
	y := g.Data("y", 1, acl.Float32, []int64{addN})
	g.Output(g.Add(x, y, ge.Name("z")))
	cm, err := ge.Compile(g)
	require.NoError(t, err)
	blob, err := cm.MarshalBinary()
	require.NoError(t, err)
	return blob
}

type fixture struct {
	npu *fallback.NPU
	dev *acl.Device
	s   *acl.Stream
	ex  *gert.Executor
}

func newFixture(t testing.TB, opts gert.LoweringOptions) *fixture {
	npu, err := fallback.New()
	require.NoError(t, err)
	rt, err := acl.Init(npu, "")
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close() })
	dev, err := rt.OpenDevice(0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = dev.Close() })
	s, err := dev.NewStream()
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	ex, err := gert.Load(dev, addModel(t), opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ex.Close() })
	return &fixture{npu: npu, dev: dev, s: s, ex: ex}
}

// deviceTensor returns a device tensor holding v, owned (freed with the
// tensor).
func (f *fixture) deviceTensor(t testing.TB, v []float32) *gert.Tensor {
	return upload(t, f.dev, gert.IODesc{DataType: acl.Float32, Shape: gert.Shape{int64(len(v))}}, getest.F32Bytes(v))
}

// upload returns an owned device tensor of description d on dev holding b
// (freed at the end of the test).
func upload(t testing.TB, dev *acl.Device, d gert.IODesc, b []byte) *gert.Tensor {
	td, err := (&gert.DeviceAllocator{Dev: dev}).Malloc(uint64(len(b)))
	require.NoError(t, err)
	tn := gert.NewTensor(d.Shape, d.DataType, gert.OnDeviceHbm)
	require.NoError(t, tn.SetData(td))
	if len(b) > 0 {
		p, _ := tn.Addr()
		require.NoError(t, dev.Do(func() error {
			return dev.Runtime().Backend().Memcpy(p, uintptr(len(b)), unsafe.Pointer(&b[0]), uintptr(len(b)), acl.MemcpyHostToDevice)
		}))
	}
	t.Cleanup(func() { _ = tn.Free() })
	return tn
}

func (f *fixture) read(t testing.TB, tn *gert.Tensor) []float32 {
	p, err := tn.Addr()
	require.NoError(t, err)
	out := make([]float32, addN)
	if tn.Placement().OnHostSide() {
		copy(out, unsafe.Slice((*float32)(p), addN))
		return out
	}
	require.NoError(t, f.dev.Do(func() error {
		return f.dev.Runtime().Backend().Memcpy(unsafe.Pointer(&out[0]), 4*addN, p, 4*addN, acl.MemcpyDeviceToHost)
	}))
	return out
}

func sum(x, y []float32) []float32 {
	z := make([]float32, len(x))
	for i := range x {
		z[i] = x[i] + y[i]
	}
	return z
}

// launchHolds reports whether the model's last launch has a slot holding p.
func (f *fixture) launchHolds(t testing.TB, p unsafe.Pointer) bool {
	ls, err := npuhook.Of(f.npu).ModelLaunches(f.ex.Model().ID())
	require.NoError(t, err)
	for _, l := range ls {
		for _, a := range l.Args {
			if uintptr(a) == uintptr(p) {
				return true
			}
		}
	}
	return false
}

// TestExecuteZeroCopyTwice is GE's ZeroCopyST: a single Add executed twice
// with device outputs — each run writes the caller's address, no memcpy.
func TestExecuteZeroCopyTwice(t *testing.T) {
	f := newFixture(t, gert.LoweringOptions{})
	rng := rand.New(rand.NewPCG(1, 2))
	for run := range 2 {
		xv, yv := getest.RandF32(rng, addN), getest.RandF32(rng, addN)
		x, y := f.deviceTensor(t, xv), f.deviceTensor(t, yv)
		z := f.deviceTensor(t, make([]float32, addN))
		before := f.npu.Counters().Copies()
		require.NoError(t, f.ex.Execute(f.s, []*gert.Tensor{x, y}, []*gert.Tensor{z}, nil))
		require.NoError(t, f.s.Synchronize())
		assert.Equal(t, before, f.npu.Counters().Copies(), "run %d copied", run)
		zp, _ := z.Addr()
		assert.True(t, f.launchHolds(t, zp), "run %d: the launch does not write the output tensor's address", run)
		assert.Equal(t, sum(xv, yv), f.read(t, z))
	}
	assert.Zero(t, f.ex.Stats().Copies)
}

// TestExecuteHostOutputCopies: an output tensor on the host gets a device
// buffer and one D2H copy; the result is right.
func TestExecuteHostOutputCopies(t *testing.T) {
	f := newFixture(t, gert.LoweringOptions{})
	rng := rand.New(rand.NewPCG(3, 4))
	xv, yv := getest.RandF32(rng, addN), getest.RandF32(rng, addN)
	x, y := f.deviceTensor(t, xv), f.deviceTensor(t, yv)
	host := make([]float32, addN)
	z := gert.NewTensor(gert.Shape{addN}, acl.Float32, gert.OnHost)
	require.NoError(t, z.SetData(gert.NewTensorData(unsafe.Pointer(&host[0]), 4*addN, gert.OnHost, nil)))
	before := f.npu.Counters()
	require.NoError(t, f.ex.Execute(f.s, []*gert.Tensor{x, y}, []*gert.Tensor{z}, nil))
	after := f.npu.Counters()
	assert.Equal(t, before.D2H.Copies+1, after.D2H.Copies)
	assert.Equal(t, uint64(1), f.ex.Stats().Copies)
	assert.Equal(t, sum(xv, yv), host)
	assert.False(t, f.launchHolds(t, unsafe.Pointer(&host[0])))
}

// countingAlloc counts the allocations an executor asks for.
type countingAlloc struct {
	gert.DeviceAllocator
	n int
}

func (a *countingAlloc) Malloc(size uint64) (*gert.TensorData, error) {
	a.n++
	return a.DeviceAllocator.Malloc(size)
}

// TestExecuteEmptyOutputAllocates: an output without data is allocated from
// the caller's allocator into the caller's tensor, with no copy.
func TestExecuteEmptyOutputAllocates(t *testing.T) {
	f := newFixture(t, gert.LoweringOptions{})
	rng := rand.New(rand.NewPCG(5, 6))
	xv, yv := getest.RandF32(rng, addN), getest.RandF32(rng, addN)
	x, y := f.deviceTensor(t, xv), f.deviceTensor(t, yv)
	z := gert.NewTensor(nil, 0, gert.OnDeviceHbm)
	alloc := &countingAlloc{DeviceAllocator: gert.DeviceAllocator{Dev: f.dev}}
	before := f.npu.Counters().Copies()
	require.NoError(t, f.ex.Execute(f.s, []*gert.Tensor{x, y}, []*gert.Tensor{z}, alloc))
	require.NoError(t, f.s.Synchronize())
	assert.Equal(t, 1, alloc.n)
	assert.Equal(t, before, f.npu.Counters().Copies())
	assert.True(t, z.Data().Owned())
	assert.Equal(t, gert.Shape{addN}, z.Shape.Storage, "the executor writes the output's shape")
	assert.Equal(t, sum(xv, yv), f.read(t, z))
	zp, _ := z.Addr()
	assert.True(t, f.launchHolds(t, zp))
	live := f.npu.Counters().Allocs - f.npu.Counters().Frees
	require.NoError(t, z.Free())
	assert.Equal(t, live-1, f.npu.Counters().Allocs-f.npu.Counters().Frees, "freeing the tensor frees the allocation")
}

// TestAlwaysZeroCopyEmptyOutput: with always_zero_copy an output without
// memory is PARAM_INVALID on every run, and nothing is allocated.
func TestAlwaysZeroCopyEmptyOutput(t *testing.T) {
	f := newFixture(t, gert.LoweringOptions{AlwaysZeroCopy: true})
	x, y := f.deviceTensor(t, make([]float32, addN)), f.deviceTensor(t, make([]float32, addN))
	for run := range 2 {
		z := gert.NewTensor(gert.Shape{addN}, acl.Float32, gert.OnDeviceHbm)
		alloc := &countingAlloc{DeviceAllocator: gert.DeviceAllocator{Dev: f.dev}}
		err := f.ex.Execute(f.s, []*gert.Tensor{x, y}, []*gert.Tensor{z}, alloc)
		require.Error(t, err, "run %d", run)
		assert.Equal(t, acl.CodeGEParamInvalid, acl.CodeOf(err))
		assert.Contains(t, err.Error(), "E13031")
		assert.Contains(t, err.Error(), "output 0")
		assert.Zero(t, alloc.n)
		err = f.ex.Execute(f.s, []*gert.Tensor{x, y}, []*gert.Tensor{nil}, alloc)
		assert.Equal(t, acl.CodeGEParamInvalid, acl.CodeOf(err))
	}
	short := f.deviceTensor(t, make([]float32, addN-1))
	short.Shape = gert.StorageShape{Origin: gert.Shape{addN}, Storage: gert.Shape{addN}}
	err := f.ex.Execute(f.s, []*gert.Tensor{x, y}, []*gert.Tensor{short}, nil)
	assert.Equal(t, acl.CodeGEParamInvalid, acl.CodeOf(err))
	assert.Contains(t, err.Error(), "smaller than the actual size[4000]")
}

func TestExecuteMisuse(t *testing.T) {
	f := newFixture(t, gert.LoweringOptions{AlwaysExternalAllocator: true, OutputReuseInputs: [][2]int{{0, 0}}})
	x, y := f.deviceTensor(t, make([]float32, addN)), f.deviceTensor(t, make([]float32, addN))
	z := f.deviceTensor(t, make([]float32, addN))
	alloc := &gert.DeviceAllocator{Dev: f.dev}
	for name, call := range map[string]func() error{
		"too few inputs":   func() error { return f.ex.Execute(f.s, []*gert.Tensor{x}, []*gert.Tensor{z}, alloc) },
		"too many outputs": func() error { return f.ex.Execute(f.s, []*gert.Tensor{x, y}, []*gert.Tensor{z, z}, alloc) },
		"nil input":        func() error { return f.ex.Execute(f.s, []*gert.Tensor{x, nil}, []*gert.Tensor{z}, alloc) },
		"no allocator":     func() error { return f.ex.Execute(f.s, []*gert.Tensor{x, y}, []*gert.Tensor{z}, nil) },
		"reuse pair":       func() error { return f.ex.Execute(f.s, []*gert.Tensor{x, y}, []*gert.Tensor{z}, alloc) },
		"nil stream":       func() error { return f.ex.Execute(nil, []*gert.Tensor{x, y}, []*gert.Tensor{z}, alloc) },
	} {
		err := call()
		require.Error(t, err, name)
		assert.Equal(t, acl.CodeGEParamInvalid, acl.CodeOf(err), "%s: %v", name, err)
	}
	// The output written in place of input 0 satisfies the reuse pair.
	require.NoError(t, f.ex.Execute(f.s, []*gert.Tensor{x, y}, []*gert.Tensor{x}, alloc))
	require.NoError(t, f.s.Synchronize())

	require.NoError(t, f.ex.Close())
	require.NoError(t, f.ex.Close())
	err := f.ex.Execute(f.s, []*gert.Tensor{x, y}, []*gert.Tensor{z}, alloc)
	assert.Equal(t, acl.CodeGEParamInvalid, acl.CodeOf(err))
	var nilEx *gert.Executor
	assert.Equal(t, acl.CodeGEParamInvalid, acl.CodeOf(nilEx.Execute(f.s, nil, nil, nil)))
}

// TestExecuteHostInputCopies: a host input is copied in (H2D) and the
// result is right.
func TestExecuteHostInputCopies(t *testing.T) {
	f := newFixture(t, gert.LoweringOptions{})
	rng := rand.New(rand.NewPCG(7, 8))
	xv, yv := getest.RandF32(rng, addN), getest.RandF32(rng, addN)
	x := gert.NewTensor(gert.Shape{addN}, acl.Float32, gert.OnHost)
	require.NoError(t, x.SetData(gert.NewTensorData(unsafe.Pointer(&xv[0]), 4*addN, gert.OnHost, nil)))
	y := f.deviceTensor(t, yv)
	z := f.deviceTensor(t, make([]float32, addN))
	before := f.npu.Counters().H2D.Copies
	require.NoError(t, f.ex.Execute(f.s, []*gert.Tensor{x, y}, []*gert.Tensor{z}, nil))
	require.NoError(t, f.s.Synchronize())
	assert.Equal(t, before+1, f.npu.Counters().H2D.Copies)
	assert.Equal(t, sum(xv, yv), f.read(t, z))
}

// TestExecuteSteadyStateAllocs: a repeated zero-copy Execute with the same
// tensors allocates at most 2 objects per run, backend included (GE's
// target for a steady-state execution), and each run's result is right.
func TestExecuteSteadyStateAllocs(t *testing.T) {
	f := newFixture(t, gert.LoweringOptions{})
	rng := rand.New(rand.NewPCG(7, 8))
	xv, yv := getest.RandF32(rng, addN), getest.RandF32(rng, addN)
	in := []*gert.Tensor{f.deviceTensor(t, xv), f.deviceTensor(t, yv)}
	out := []*gert.Tensor{f.deviceTensor(t, make([]float32, addN))}
	allocs := testing.AllocsPerRun(50, func() {
		if err := f.ex.Execute(f.s, in, out, nil); err != nil {
			t.Fatal(err)
		}
		if err := f.s.Synchronize(); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("allocations per execute: %.2f", allocs)
	assert.LessOrEqual(t, allocs, 2.0)
	assert.Equal(t, sum(xv, yv), f.read(t, out[0]))
}

// TestExecuteOutputShapeIsTheTensors: the shape Execute writes into an
// output tensor is the tensor's own; changing it does not reach the
// executor, whose next run writes the model's shape again.
func TestExecuteOutputShapeIsTheTensors(t *testing.T) {
	f := newFixture(t, gert.LoweringOptions{})
	rng := rand.New(rand.NewPCG(9, 10))
	xv, yv := getest.RandF32(rng, addN), getest.RandF32(rng, addN)
	in := []*gert.Tensor{f.deviceTensor(t, xv), f.deviceTensor(t, yv)}
	z := f.deviceTensor(t, make([]float32, addN))
	require.NoError(t, f.ex.Execute(f.s, in, []*gert.Tensor{z}, nil))
	require.Equal(t, gert.Shape{addN}, z.Shape.Origin)
	z.Shape.Origin[0], z.Shape.Storage[0] = 7, 7
	z2 := f.deviceTensor(t, make([]float32, addN))
	require.NoError(t, f.ex.Execute(f.s, in, []*gert.Tensor{z2}, nil))
	require.NoError(t, f.s.Synchronize())
	assert.Equal(t, gert.Shape{addN}, z2.Shape.Origin)
	assert.Equal(t, gert.Shape{addN}, z2.Shape.Storage)
	assert.Equal(t, sum(xv, yv), f.read(t, z2))
}
