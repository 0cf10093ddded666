package bench

import (
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/acl/native"
	"github.com/ascend-go/cann/internal/stubbuild"
)

// nativeFixture is the native backend over the C stub, initialised, with
// device 0 current on the benchmark's (locked) thread and the resources the
// measured calls use.
type nativeFixture struct {
	b      *native.Backend
	stream acl.StreamHandle
	dev    unsafe.Pointer
	host   unsafe.Pointer
	calls  uintptr // stub_call_count
}

const copyBytes = 64 // small, so the copy itself does not hide the call cost

// openNative builds the stub (its own instance: the define only makes the
// build distinct), opens and initialises it. The calling goroutine is locked
// to its thread until the benchmark ends, as context-bound calls require.
func openNative(b *testing.B) *nativeFixture {
	b.Helper()
	lib := stubbuild.BuildWith(b, "../acl/native/testdata/stub", native.LibACL,
		stubbuild.Options{Defines: []string{"STUB_INSTANCE_BENCH"}})
	be, err := native.Open(native.WithLibraryPath(lib))
	if err != nil {
		b.Fatal(err)
	}
	f := &nativeFixture{b: be, calls: be.Symbol("stub_call_count")}
	runtime.LockOSThread()
	must(b, be.Init(""))
	must(b, be.SetDevice(0))
	if f.stream, err = be.CreateStream(); err != nil {
		b.Fatal(err)
	}
	if f.dev, err = be.Malloc(copyBytes, acl.MemMallocHugeFirst); err != nil {
		b.Fatal(err)
	}
	if f.host, err = be.MallocHost(copyBytes); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = be.Free(f.dev)
		_ = be.FreeHost(f.host)
		_ = be.DestroyStream(f.stream)
		_ = be.ResetDevice(0)
		_ = be.Finalize()
		_ = be.Close()
		runtime.UnlockOSThread()
	})
	return f
}

func must(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}

// ffiCalls reads the stub's count of C calls.
func (f *nativeFixture) ffiCalls() uint64 {
	r, _, _ := purego.SyscallN(f.calls)
	return uint64(r)
}

// rawVsNative times n calls of each function in alternating blocks, so
// that load changes on the machine affect both alike, and returns the
// ratio of the native to the raw time.
func rawVsNative(n int, raw, wrapped func()) float64 {
	const rounds = 8
	per := max(n/rounds, 1)
	var tRaw, tNative time.Duration
	for range rounds {
		t0 := time.Now()
		for range per {
			raw()
		}
		t1 := time.Now()
		for range per {
			wrapped()
		}
		t2 := time.Now()
		tRaw += t1.Sub(t0)
		tNative += t2.Sub(t1)
	}
	return float64(tNative) / float64(tRaw)
}

// BenchmarkNativeCall measures the per-call overhead of the purego binding
// over the C stub, beside a bare purego.SyscallN of the same symbol in the
// same run. x_raw is the binding's time over the bare call's (target
// ≤ 1.3); ffi_calls/op counts the C calls of one method call.
func BenchmarkNativeCall(b *testing.B) {
	b.Run("GetDevice/raw", func(b *testing.B) {
		f := openNative(b)
		fn := f.b.Symbol("aclrtGetDevice")
		b.ReportAllocs()
		for b.Loop() {
			var id int32
			purego.SyscallN(fn, uintptr(unsafe.Pointer(&id)))
		}
	})
	b.Run("GetDevice/native", func(b *testing.B) {
		f := openNative(b)
		fn := f.b.Symbol("aclrtGetDevice")
		raw := func() {
			var id int32
			purego.SyscallN(fn, uintptr(unsafe.Pointer(&id)))
		}
		wrapped := func() { _, _ = f.b.GetDevice() }
		c0 := f.ffiCalls()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := f.b.GetDevice(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(f.ffiCalls()-c0)/float64(b.N), "ffi_calls/op")
		b.ReportMetric(rawVsNative(b.N, raw, wrapped), "x_raw")
	})
	b.Run("MemcpyAsync/raw", func(b *testing.B) {
		f := openNative(b)
		fn := f.b.Symbol("aclrtMemcpyAsync")
		b.SetBytes(copyBytes)
		b.ReportAllocs()
		for b.Loop() {
			purego.SyscallN(fn, uintptr(f.dev), copyBytes, uintptr(f.host), copyBytes,
				uintptr(acl.MemcpyHostToDevice), uintptr(f.stream))
		}
		must(b, f.b.SynchronizeStream(f.stream))
	})
	b.Run("MemcpyAsync/native", func(b *testing.B) {
		f := openNative(b)
		fn := f.b.Symbol("aclrtMemcpyAsync")
		raw := func() {
			purego.SyscallN(fn, uintptr(f.dev), copyBytes, uintptr(f.host), copyBytes,
				uintptr(acl.MemcpyHostToDevice), uintptr(f.stream))
		}
		wrapped := func() {
			_ = f.b.MemcpyAsync(f.dev, copyBytes, f.host, copyBytes, acl.MemcpyHostToDevice, f.stream)
		}
		c0 := f.ffiCalls()
		b.SetBytes(copyBytes)
		b.ReportAllocs()
		for b.Loop() {
			if err := f.b.MemcpyAsync(f.dev, copyBytes, f.host, copyBytes, acl.MemcpyHostToDevice, f.stream); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(f.ffiCalls()-c0)/float64(b.N), "ffi_calls/op")
		b.ReportMetric(rawVsNative(b.N, raw, wrapped), "x_raw")
		must(b, f.b.SynchronizeStream(f.stream))
	})
	b.Run("Malloc+Free/native", func(b *testing.B) {
		// An allocation round trip: two calls, each with an output or a
		// pointer argument.
		f := openNative(b)
		b.ReportAllocs()
		for b.Loop() {
			p, err := f.b.Malloc(4096, acl.MemMallocHugeFirst)
			if err != nil {
				b.Fatal(err)
			}
			if err := f.b.Free(p); err != nil {
				b.Fatal(err)
			}
		}
	})
}
