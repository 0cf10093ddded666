package acl_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/ascend-go/cann/acl"
)

// rawPerOp times n iterations of call on a thread locked once with ctx
// current: the cost of the bare backend call, the baseline the idiomatic
// layer's per-call lock and bind is compared with.
func rawPerOp(b *testing.B, be acl.Backend, ctx acl.ContextHandle, n int, call func() error) time.Duration {
	b.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := be.SetCurrentContext(ctx); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	for range n {
		if err := call(); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start) / time.Duration(n)
}

// report adds the baseline and the ratio to it.
func report(b *testing.B, raw time.Duration) {
	per := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(raw.Nanoseconds()), "raw_ns/op")
	b.ReportMetric(float64(per)/float64(max(raw, 1)), "x_raw")
}

// BenchmarkCopyFromHost: DeviceBuffer.CopyFromHost against the bare
// backend Memcpy of the same bytes.
func BenchmarkCopyFromHost(b *testing.B) {
	for _, n := range []int{64, 64 << 10, 4 << 20} {
		b.Run(fmt.Sprintf("bytes=%d", n), func(b *testing.B) {
			_, rt, d := open(b)
			buf := devMem(b, d, uintptr(n))
			src := make([]byte, n)
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				if err := buf.CopyFromHost(src); err != nil {
					b.Fatal(err)
				}
			}
			be := rt.Backend()
			report(b, rawPerOp(b, be, d.Context(), b.N, func() error {
				return be.Memcpy(buf.Ptr(), buf.Size(), unsafe.Pointer(&src[0]), uintptr(n), acl.MemcpyHostToDevice)
			}))
		})
	}
}

// BenchmarkStreamRoundTrip: queue a memset and synchronize, through the
// idiomatic Stream and buffer against the bare backend calls.
func BenchmarkStreamRoundTrip(b *testing.B) {
	_, d, st := openStream(b)
	buf := devMem(b, d, 4096)
	b.ReportAllocs()
	for b.Loop() {
		if err := buf.MemsetAsync(1, st); err != nil {
			b.Fatal(err)
		}
		if err := st.Synchronize(); err != nil {
			b.Fatal(err)
		}
	}
	be := d.Runtime().Backend()
	report(b, rawPerOp(b, be, d.Context(), b.N, func() error {
		if err := be.MemsetAsync(buf.Ptr(), 4096, 1, 4096, st.Handle()); err != nil {
			return err
		}
		return be.SynchronizeStream(st.Handle())
	}))
}

// BenchmarkStreamWait: Wait with a cancellable context (bounded polling)
// against the plain Synchronize, both through the idiomatic layer.
func BenchmarkStreamWait(b *testing.B) {
	_, d, st := openStream(b)
	buf := devMem(b, d, 4096)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ReportAllocs()
	for b.Loop() {
		if err := buf.MemsetAsync(1, st); err != nil {
			b.Fatal(err)
		}
		if err := st.Wait(ctx); err != nil {
			b.Fatal(err)
		}
	}
	per := b.Elapsed() / time.Duration(b.N)
	start := time.Now()
	for range b.N {
		if err := buf.MemsetAsync(1, st); err != nil {
			b.Fatal(err)
		}
		if err := st.Synchronize(); err != nil {
			b.Fatal(err)
		}
	}
	syncPer := time.Since(start) / time.Duration(b.N)
	b.ReportMetric(float64(syncPer.Nanoseconds()), "sync_ns/op")
	b.ReportMetric(float64(per)/float64(max(syncPer, 1)), "x_sync")
}
