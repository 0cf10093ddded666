package dl_test

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ascend-go/cann/internal/dl"
)

// callLib loads the primary test library, whose dl_* functions stand for a
// binding's C API: dl_fail records a per-thread message as
// aclGetRecentErrMsg does, dl_recent reads and clears it.
func callLib(t *testing.T) *dl.Library {
	f := newFixture(t)
	return open(t, spec(f.dir(t, "call", map[string]string{primaryName: f.primary})))
}

func lookup(t *testing.T, l *dl.Library, name string) uintptr {
	t.Helper()
	fn := l.Lookup(name)
	require.NotZero(t, fn, name)
	return fn
}

func TestCallCapturesMessage(t *testing.T) {
	l := callLib(t)
	fail, recent := lookup(t, l, "dl_fail"), lookup(t, l, "dl_recent")
	msg, _ := dl.CString("stub: the device refused")
	code := uintptr(100000 + rand.IntN(1000))

	f := dl.GetFrame()
	defer dl.PutFrame(f)
	f.Args[0], f.Args[1] = code, uintptr(unsafe.Pointer(&msg[0]))
	r, got := dl.Call(fail, f, 2, recent)
	assert.Equal(t, int32(code), int32(r))
	assert.Equal(t, "stub: the device refused", got, "the failed call's message, read on its thread")

	// Success reads no message: the one recorded stays for the library's
	// own reader.
	f.Args[0] = 0
	r, got = dl.Call(fail, f, 2, recent)
	assert.Zero(t, int32(r))
	assert.Empty(t, got)
	assert.Equal(t, "stub: the device refused", dl.Message(recent))
	assert.Empty(t, dl.Message(0), "no message function, no message")
	runtime.KeepAlive(msg) // C held its address until dl_recent read it

	// Without a message function a failure carries the code only.
	f.Args[0] = code
	r, got = dl.Call(fail, f, 2, 0)
	assert.Equal(t, int32(code), int32(r))
	assert.Empty(t, got)
}

func TestCallPtr(t *testing.T) {
	l := callLib(t)
	mk, recent := lookup(t, l, "dl_make"), lookup(t, l, "dl_recent")
	f := dl.GetFrame()
	defer dl.PutFrame(f)
	f.Args[0] = 1
	p, msg := dl.CallPtr(mk, f, 1, recent)
	assert.NotZero(t, p)
	assert.Empty(t, msg)
	f.Args[0] = 0
	p, msg = dl.CallPtr(mk, f, 1, recent)
	assert.Zero(t, p)
	assert.Equal(t, "dl_make: refused", msg, "NULL is the constructor's failure")
}

func TestFrameArgumentsAndOutputs(t *testing.T) {
	l := callLib(t)
	sum, out := lookup(t, l, "dl_sum10"), lookup(t, l, "dl_out")
	f := dl.GetFrame()
	var want uintptr
	for i := range f.Args {
		v := uintptr(rand.IntN(1 << 20))
		f.Args[i] = v
		want += uintptr(i+1) * v
	}
	assert.Equal(t, want, dl.CallRaw(sum, f, len(f.Args)), "all ten argument slots reach C in order")
	dl.PutFrame(f)

	f = dl.GetFrame()
	assert.Equal(t, dl.Frame{}, *f, "a frame from the pool starts zeroed")
	f.Args[0], f.Args[1], f.Args[2] = f.Outp(0), f.Outp(1), f.Outp(2)
	r, _ := dl.Call(out, f, 3, 0)
	require.Zero(t, int32(r))
	assert.Equal(t, [3]uint64{11, 22, 33}, f.Out, "C writes the output slots")
	dl.PutFrame(f)
}

func TestCallDoesNotAllocate(t *testing.T) {
	l := callLib(t)
	fail, recent := lookup(t, l, "dl_fail"), lookup(t, l, "dl_recent")
	allocs := testing.AllocsPerRun(200, func() {
		f := dl.GetFrame()
		r, _ := dl.Call(fail, f, 2, recent)
		if r != 0 {
			panic("dl_fail(0) failed")
		}
		dl.PutFrame(f)
	})
	assert.Zero(t, allocs)
}

func TestEscapeReturnsTheAddress(t *testing.T) {
	b := make([]byte, 8)
	assert.Equal(t, uintptr(unsafe.Pointer(&b[0])), dl.Escape(unsafe.Pointer(&b[0])))
}

func TestBindingClose(t *testing.T) {
	l := callLib(t)
	var b dl.Binding
	b.Set(l)
	assert.Equal(t, l.Paths(), b.Paths())
	assert.Equal(t, l.Path(), b.Path())
	assert.NotZero(t, b.Symbol("dl_fail"))
	assert.Contains(t, b.NotExported("dl_absent"), "dl_absent is not exported by "+l.Path())
	assert.False(t, b.Closed())
	require.NoError(t, b.Close())
	assert.True(t, b.Closed())
	assert.Zero(t, b.Symbol("dl_fail"), "no symbol after Close")
	require.NoError(t, b.Close(), "Close is idempotent")
	assert.Zero(t, l.Refs(), "the opener's reference is released once")
}
