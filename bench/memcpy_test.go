package bench

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
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
// (copy/<size>). Inside each H2D/D2H benchmark, copy() between the very
// same two buffers is timed before and after the loop; x_copy is that
// baseline time over the Memcpy time (1 = no overhead; the target is
// ≥ 0.8 from 1 MiB up).
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
	base := baselineCopy(dstB, srcB)

	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		if err := npu.Memcpy(dst, uintptr(n), src, uintptr(n), kind); err != nil {
			b.Fatal(err)
		}
	}
	per := float64(b.Elapsed()) / float64(b.N)
	base = (base + baselineCopy(dstB, srcB)) / 2
	b.ReportMetric(base/per, "x_copy")
}

// baselineCopy returns the mean time in ns of copy(dst, src), over enough
// repetitions (at least 4, about 256 MiB in all) to be stable.
func baselineCopy(dst, src []byte) float64 {
	reps := max(4, (256<<20)/len(src))
	t0 := time.Now()
	for range reps {
		copy(dst, src)
	}
	return float64(time.Since(t0)) / float64(reps)
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
