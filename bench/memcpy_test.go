package bench

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"github.com/ascend-go/cann/acl"
	"github.com/ascend-go/cann/fallback"
)

// memcpySizes are the copy sizes of BenchmarkMemcpy.
var memcpySizes = []struct {
	name string
	n    int
}{
	{"4KiB", 4 << 10}, {"64KiB", 64 << 10}, {"1MiB", 1 << 20}, {"16MiB", 16 << 20}, {"64MiB", 64 << 20},
}

// BenchmarkMemcpy measures the fallback's synchronous aclrtMemcpy between
// plain host memory (a Go slice) and device memory, H2D and D2H, and
// beside it Go's copy() of the same size between two Go slices
// (copy/<size>). Each H2D/D2H benchmark also reports x_copy: after the
// timed loop, batches of copy() between the very same two buffers and
// batches of Memcpy are timed alternately, and x_copy is the median
// copy() batch time over the median Memcpy batch time (1 = no overhead;
// the target is ≥ 0.8 from 1 MiB up). Alternating keeps the ratio honest
// on a loaded machine, where a baseline timed once drifts.
func BenchmarkMemcpy(b *testing.B) {
	npu, err := fallback.New(fallback.WithDevices(1), fallback.WithDeviceMemory(256<<20), fallback.WithHostMemory(1<<20))
	if err != nil {
		b.Fatal(err)
	}
	defer npu.Close()
	if err := npu.Init(""); err != nil {
		b.Fatal(err)
	}
	for _, dir := range []string{"H2D", "D2H"} {
		for _, sz := range memcpySizes {
			b.Run(dir+"/"+sz.name, func(b *testing.B) { benchFallbackCopy(b, npu, dir == "H2D", sz.n) })
		}
	}
	for _, sz := range memcpySizes {
		b.Run("copy/"+sz.name, func(b *testing.B) {
			src, dst := randomBytes(sz.n), make([]byte, sz.n)
			copy(dst, src)
			b.SetBytes(int64(sz.n))
			b.ReportAllocs()
			for b.Loop() {
				copy(dst, src)
			}
		})
	}
}

func benchFallbackCopy(b *testing.B, npu *fallback.NPU, h2d bool, n int) {
	// The current context belongs to the OS thread; b.Run runs each
	// sub-benchmark on its own goroutine.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := npu.SetDevice(0); err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := npu.ResetDevice(0); err != nil {
			b.Error(err)
		}
	}()
	dev, err := npu.Malloc(uintptr(n), acl.MemMallocHugeFirst)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := npu.Free(dev); err != nil {
			b.Error(err)
		}
	}()
	host := randomBytes(n)
	hostPtr := unsafe.Pointer(unsafe.SliceData(host))
	dst, src, kind := dev, hostPtr, acl.MemcpyHostToDevice
	if !h2d {
		dst, src, kind = hostPtr, dev, acl.MemcpyDeviceToHost
	}
	// Touch every page of both buffers once, so neither side pays page
	// faults inside the measurement.
	if err := npu.Memcpy(dev, uintptr(n), hostPtr, uintptr(n), acl.MemcpyHostToDevice); err != nil {
		b.Fatal(err)
	}
	dstB, srcB := unsafe.Slice((*byte)(dst), n), unsafe.Slice((*byte)(src), n)

	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		if err := npu.Memcpy(dst, uintptr(n), src, uintptr(n), kind); err != nil {
			b.Fatal(err)
		}
	}
	ratio := alternate(n,
		func() { copy(dstB, srcB) },
		func() { _ = npu.Memcpy(dst, uintptr(n), src, uintptr(n), kind) })
	b.ReportMetric(ratio, "x_copy")
}

// alternate times batches of base and of f in turn (about 1 MiB of copies
// per batch) and returns median(base)/median(f).
func alternate(n int, base, f func()) float64 {
	rounds := 15
	if n >= 16<<20 {
		rounds = 11
	}
	ds := medianTimes(n, 1<<20, rounds, base, f)
	return float64(ds[0]) / float64(ds[1])
}

func randomBytes(n int) []byte {
	r := rand.New(rand.NewPCG(uint64(n), 42))
	p := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := r.Uint64()
		for k := range 8 {
			p[i+k] = byte(v >> (8 * k))
		}
	}
	return p
}
