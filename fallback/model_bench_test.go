package fallback

import (
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/ge"
)

// benchNPU is newTestNPU for benchmarks: device memory for the largest
// case, device 0 set on the locked thread.
func benchNPU(b *testing.B) *NPU {
	b.Helper()
	n, err := New(WithDeviceMemory(256<<20), WithHostMemory(256<<20))
	if err != nil {
		b.Fatal(err)
	}
	runtime.LockOSThread()
	b.Cleanup(func() {
		_ = n.Close()
		runtime.UnlockOSThread()
	})
	if err := n.Init(""); err != nil {
		b.Fatal(err)
	}
	if err := n.SetDevice(0); err != nil {
		b.Fatal(err)
	}
	return n
}

// reluModel is y = relu(x) over elems float32s: a model whose run time is
// dominated by moving its IO, so the copies zero copy removes show.
func reluModel(b *testing.B, elems int64) []byte {
	b.Helper()
	g := ge.NewGraph("relu")
	g.Output(g.Relu(g.Data("x", 0, acl.Float32, []int64{elems})))
	m, err := ge.Compile(g)
	if err != nil {
		b.Fatal(err)
	}
	blob, err := m.MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	return blob
}

// BenchmarkModelExecuteAsync runs ExecuteAsync plus a stream synchronize
// with device buffers (zero copy) and reports the ratio to the same
// execution with the data in pinned host buffers, staged as acl.Model does
// (model IO must be device memory: one H2D and one D2H copy on the
// stream), measured in the same run (x_copy < 1: zero copy is faster).
func BenchmarkModelExecuteAsync(b *testing.B) {
	for _, elems := range []int64{1 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("bytes=%d", 4*elems), func(b *testing.B) {
			n := benchNPU(b)
			blob := reluModel(b, elems)
			id, err := n.LoadFromMem(unsafe.Pointer(&blob[0]), uintptr(len(blob)))
			if err != nil {
				b.Fatal(err)
			}
			size := uintptr(4 * elems)
			datasets := func(x, y unsafe.Pointer) (acl.DatasetHandle, acl.DatasetHandle) {
				var ds [2]acl.DatasetHandle
				for i, p := range []unsafe.Pointer{x, y} {
					ds[i], _ = n.CreateDataset()
					h, _ := n.CreateDataBuffer(p, size)
					if err := n.AddDatasetBuffer(ds[i], h); err != nil {
						b.Fatal(err)
					}
				}
				return ds[0], ds[1]
			}
			alloc := func(host bool) unsafe.Pointer {
				var p unsafe.Pointer
				var err error
				if host {
					p, err = n.MallocHost(size)
				} else {
					p, err = n.Malloc(size, acl.MemMallocHugeFirst)
				}
				if err != nil {
					b.Fatal(err)
				}
				return p
			}
			dx, dy := alloc(false), alloc(false)
			din, dout := datasets(dx, dy)
			hx, hy := alloc(true), alloc(true)
			s, err := n.CreateStream()
			if err != nil {
				b.Fatal(err)
			}
			run := func(in, out acl.DatasetHandle) {
				if err := n.ExecuteAsync(id, in, out, s); err != nil {
					b.Fatal(err)
				}
				if err := n.SynchronizeStream(s); err != nil {
					b.Fatal(err)
				}
			}
			run(din, dout)
			n.ResetCounters()
			b.SetBytes(int64(2 * size))
			b.ReportAllocs()
			for b.Loop() {
				run(din, dout)
			}
			per := b.Elapsed() / time.Duration(b.N)
			c := n.Counters()
			b.ReportMetric(float64(c.Copies())/float64(b.N), "copies/op")
			b.ReportMetric(float64(c.Launches)/float64(b.N), "launches/op")

			staged := func() {
				if err := n.MemcpyAsync(dx, size, hx, size, acl.MemcpyHostToDevice, s); err != nil {
					b.Fatal(err)
				}
				if err := n.ExecuteAsync(id, din, dout, s); err != nil {
					b.Fatal(err)
				}
				if err := n.MemcpyAsync(hy, size, dy, size, acl.MemcpyDeviceToHost, s); err != nil {
					b.Fatal(err)
				}
				if err := n.SynchronizeStream(s); err != nil {
					b.Fatal(err)
				}
			}
			staged()
			start := time.Now()
			for range b.N {
				staged()
			}
			copied := time.Since(start) / time.Duration(b.N)
			b.ReportMetric(float64(copied.Nanoseconds()), "copy_ns/op")
			b.ReportMetric(float64(per)/float64(max(copied, 1)), "x_copy")
		})
	}
}
