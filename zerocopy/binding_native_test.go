package zerocopy_test

import (
	"encoding/binary"
	"github.com/ascend-go/cann/ge/getest"
	"math"
	"runtime"
	"testing"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/acl/native"
	"github.com/ascend-go/cann/internal/stubbuild"
	"github.com/ascend-go/cann/zerocopy"
)

// stubAddModel serializes a model in the C stub's own format (see
// acl/native/testdata/stub/model.c): one float32 input "x" of n values and
// one output "y" = x + addend.
func stubAddModel(n int, addend float32) []byte {
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

// TestBindingNativeStub runs a Binding over the purego backend and the C
// stub: correct results, and exactly one C call per steady-state RunAsync
// (the stub counts every ACL call).
func TestBindingNativeStub(t *testing.T) {
	be := stubBackend(t, "STUB_INSTANCE_ZEROCOPY_TEST")
	calls := be.Symbol("stub_call_count")
	require.NotZero(t, calls)
	ffi := func() uint64 { r, _, _ := purego.SyscallN(calls); return uint64(r) }

	rt, err := acl.Init(be, "")
	require.NoError(t, err)
	defer func() { require.NoError(t, rt.Close()) }()
	d, err := rt.OpenDevice(0)
	require.NoError(t, err)
	const n, addend = 1000, 0.75
	m, err := d.LoadModel(stubAddModel(n, addend))
	require.NoError(t, err)
	st, err := d.NewStream()
	require.NoError(t, err)
	b, err := zerocopy.Bind(m, zerocopy.WithDeviceOnly())
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Close()) }()

	rng := newRand(t)
	x := getest.RandF32(rng, n)
	require.NoError(t, b.Input(0).(*acl.DeviceBuffer).CopyFromHost(getest.F32Bytes(x)))

	// From a goroutine that never bound a context: the first run binds it.
	done := make(chan error)
	go func() { done <- b.RunAsync(st) }()
	require.NoError(t, <-done)

	runtime.LockOSThread() // the steady state: this thread keeps the context
	defer runtime.UnlockOSThread()
	require.NoError(t, b.RunAsync(st))
	const runs = 200
	c0 := ffi()
	for range runs {
		require.NoError(t, b.RunAsync(st))
	}
	assert.Equal(t, uint64(runs), ffi()-c0, "one C call per RunAsync")
	require.NoError(t, st.Synchronize())

	y := getest.BytesF32(read(t, b.Output(0), 4*n))
	for i := range x {
		require.Equal(t, x[i]+addend, y[i], "y[%d]", i)
	}
}

// stubBackend builds the ACL C stub with the model instance define selects
// and opens the purego backend over it (closed when the test ends).
func stubBackend(t *testing.T, define string) *native.Backend {
	t.Helper()
	lib := stubbuild.BuildWith(t, "../acl/native/testdata/stub", native.LibACL,
		stubbuild.Options{Defines: []string{define}})
	be, err := native.Open(native.WithLibraryPath(lib))
	require.NoError(t, err)
	t.Cleanup(func() { _ = be.Close() })
	return be
}
