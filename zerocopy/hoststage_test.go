package zerocopy_test

import (
	"errors"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge/getest"
	"github.com/ascend-go/cann/zerocopy"
)

// requireCode fails t unless err is an *acl.Error with code want.
func requireCode(t *testing.T, want acl.Code, err error, what string) {
	t.Helper()
	var e *acl.Error
	require.True(t, errors.As(err, &e), "%s: %v is not an *acl.Error", what, err)
	require.Equal(t, want, e.Code, "%s: %v", what, err)
}

// rawHostRun runs model m once with the backend's own aclmdlExecuteAsync on
// datasets over host buffers (no staging): the device path passes them as
// device memory (hicann/ge api/acl/acl_model/model/model.cpp:750, 777) and
// the task that addresses them faults (docs/misuse.md: 507015 at the
// stream).
func rawHostRun(t *testing.T, d *acl.Device, m *acl.Model, st *acl.Stream, in, out []acl.Memory) {
	t.Helper()
	mb := d.Runtime().Backend().(acl.ModelBackend)
	ins, err := d.NewDatasetOf(in...)
	require.NoError(t, err)
	defer func() { require.NoError(t, ins.Close()) }()
	outs, err := d.NewDatasetOf(out...)
	require.NoError(t, err)
	defer func() { require.NoError(t, outs.Close()) }()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b := d.Runtime().Backend()
	require.NoError(t, b.SetCurrentContext(d.Context()))
	require.NoError(t, mb.ExecuteAsync(m.ID(), ins.Handle(), outs.Handle(), st.Handle()), "the call succeeds")
	requireCode(t, acl.CodeRTAICoreException, b.SynchronizeStream(st.Handle()), "raw ExecuteAsync on host buffers")
}

// TestBindingHostBuffersStaged (fallback): a Binding of pinned host
// buffers, and a Model executed on datasets of them, give the reference
// results with Run, RunAsync and Model.Execute: acl.Model stages them
// through device memory, which the backend's own execute on the same
// buffers shows is needed.
func TestBindingHostBuffersStaged(t *testing.T) {
	e := newEnv(t)
	st, err := e.dev.NewStream()
	require.NoError(t, err)
	b, err := zerocopy.Bind(e.m, zerocopy.WithHostBuffers())
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Close()) }()
	mems := func(n int, f func(int) acl.Memory) []acl.Memory {
		out := make([]acl.Memory, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	for k := range 6 {
		y, z := e.feed(t, b)
		if k%2 == 0 {
			require.NoError(t, b.Run())
		} else {
			require.NoError(t, b.RunAsync(st))
			require.NoError(t, st.Synchronize())
		}
		e.verify(t, b, y, z)
		st2, err := e.npu.ModelStats(e.m.ID())
		require.NoError(t, err)
		require.Zero(t, st2.IOCopies, "the model itself sees device memory only")
	}

	// The same host buffers without staging fail on the device path (a
	// second load: one model id runs with one kind of execute).
	m2, err := e.dev.LoadModel(e.p.Blob)
	require.NoError(t, err)
	defer func() { require.NoError(t, m2.Close()) }()
	rawHostRun(t, e.dev, m2, st, mems(2, b.Input), mems(2, b.Output))

	// Mixed datasets on a Model: input 0 and output 1 pinned, the others
	// device memory; Execute.
	hx, err := e.dev.MallocHost(b.Input(0).Size())
	require.NoError(t, err)
	defer func() { require.NoError(t, hx.Close()) }()
	dz, err := e.dev.Malloc(b.Output(1).Size(), acl.MemMallocHugeFirst)
	require.NoError(t, err)
	defer func() { require.NoError(t, dz.Close()) }()
	db, err := e.dev.Malloc(b.Input(1).Size(), acl.MemMallocHugeFirst)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	hy, err := e.dev.MallocHost(b.Output(0).Size())
	require.NoError(t, err)
	defer func() { require.NoError(t, hy.Close()) }()
	in, err := e.dev.NewDatasetOf(hx, db)
	require.NoError(t, err)
	defer func() { require.NoError(t, in.Close()) }()
	out, err := e.dev.NewDatasetOf(hy, dz)
	require.NoError(t, err)
	defer func() { require.NoError(t, out.Close()) }()
	for range 2 {
		x, bias := getest.RandF32(e.rng, e.p.M*e.p.K), getest.RandF32(e.rng, e.p.M*e.p.N)
		write(t, hx, getest.F32Bytes(x))
		write(t, db, getest.F32Bytes(bias))
		y, z := e.p.Ref(x, bias)
		require.NoError(t, m2.ExecuteAsync(st, in, out))
		require.NoError(t, st.Synchronize())
		requireClose(t, y, getest.BytesF32(read(t, hy, 4*len(y))), "y")
		requireClose(t, z, getest.BytesF32(read(t, dz, 4*len(z))), "z")
	}
}

// TestBindingNativeStubHostBuffers: the same over the purego backend and
// the C stub.
func TestBindingNativeStubHostBuffers(t *testing.T) {
	be := stubBackend(t, "STUB_INSTANCE_ZEROCOPY_HOST_TEST")
	rt, err := acl.Init(be, "")
	require.NoError(t, err)
	defer func() { require.NoError(t, rt.Close()) }()
	d, err := rt.OpenDevice(0)
	require.NoError(t, err)
	const n, addend = 300, -1.25
	m, err := d.LoadModel(stubAddModel(n, addend))
	require.NoError(t, err)
	st, err := d.NewStream()
	require.NoError(t, err)
	b, err := zerocopy.Bind(m, zerocopy.WithHostBuffers())
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Close()) }()
	rng := newRand(t)
	for k := range 6 {
		x := getest.RandF32(rng, n)
		write(t, b.Input(0), getest.F32Bytes(x))
		if k%2 == 0 {
			require.NoError(t, b.RunAsync(st))
			require.NoError(t, st.Synchronize())
		} else {
			require.NoError(t, b.Run())
		}
		y := getest.BytesF32(read(t, b.Output(0), 4*n))
		for i := range x {
			require.Equal(t, x[i]+addend, y[i], "run %d: y[%d]", k, i)
		}
	}
	m2, err := d.LoadModel(stubAddModel(n, addend))
	require.NoError(t, err)
	defer func() { require.NoError(t, m2.Close()) }()
	rawHostRun(t, d, m2, st, []acl.Memory{b.Input(0)}, []acl.Memory{b.Output(0)})
}
