package hcclsim_test

import (
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"

	"github.com/ascend-go/cann/hccl"
)

// BenchmarkDescriptors measures the per-descriptor cost of the in-process
// one-sided and local-copy paths: batches of hccl.MaxOneSideDescs
// descriptors of 64 B (an Engram row) at random offsets of a 1 MiB source
// into a packed destination, queued 16 batches per stream synchronize.
// op=CopyLocal2 alternates between two source allocations, as Engram's
// local copies read own rows and cache hits.
// ns/desc is the time per descriptor, call and stream task together;
// x_memmove its ratio to a plain Go loop making the same 64-byte copies
// between two Go slices, measured in the same run (the floor: the
// simulator's memory is the same host memory).
func BenchmarkDescriptors(b *testing.B) {
	const (
		rows, row = hccl.MaxOneSideDescs, 64
		size      = 1 << 20
		batches   = 16
	)
	rng := rand.New(rand.NewPCG(1, 2))
	offs := make([]int, rows)
	for i := range offs {
		offs[i] = rng.IntN(size/row) * row
	}
	npu := newNPU(b, 2)
	sim := newSim(b, npu)
	g := newGroup(b, &npuEnv{npu: npu, sim: sim}, 2)
	mem := make([]unsafe.Pointer, 2)
	var second unsafe.Pointer // rank 0's second source
	g.must("alloc", g.each(func(w *rankW) error {
		var err error
		if mem[w.rank], err = w.buf(nil, size); err != nil || w.rank != 0 {
			return err
		}
		second, err = w.buf(nil, size)
		return err
	}))
	enabled := exchangeAll(b, g, mem, size)
	for _, op := range []string{"CopyLocal", "CopyLocal2", "BatchGet", "BatchPut"} {
		b.Run("op="+op, func(b *testing.B) {
			g.on(0, func(w *rankW) error {
				dst, err := w.buf(nil, rows*row)
				if err != nil {
					return err
				}
				src := [2]uintptr{uintptr(mem[0]), uintptr(mem[0])}
				switch op {
				case "CopyLocal2":
					src[1] = uintptr(second)
				case "BatchGet", "BatchPut":
					src[0], src[1] = enabled[0][1].Addr, enabled[0][1].Addr
				}
				descs := make([]hccl.OneSideOpDesc, rows)
				for i, o := range offs {
					descs[i] = hccl.OneSideOpDesc{LocalAddr: unsafe.Add(dst, i*row), RemoteAddr: src[i%2] + uintptr(o), Count: row, DataType: hccl.Uint8}
				}
				call := func() error {
					switch op {
					case "CopyLocal", "CopyLocal2":
						return sim.CopyLocal(w.comm, descs, w.r.Stream())
					case "BatchGet":
						return sim.BatchGet(w.comm, 1, descs, w.r.Stream())
					}
					return sim.BatchPut(w.comm, 1, descs, w.r.Stream())
				}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					for range batches {
						if err := call(); err != nil {
							return err
						}
					}
					if err := w.r.Sync(); err != nil {
						return err
					}
				}
				b.StopTimer()
				ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N*batches*rows)
				memmove := measureMemmove(offs, row, size, b.N*batches)
				b.ReportMetric(ns, "ns/desc")
				b.ReportMetric(ns/memmove, "x_memmove")
				return nil
			})
		})
	}
}

// measureMemmove is the time in ns of one row-byte copy of a plain Go loop
// gathering the rows at offs, about reps gathers in all (the gather of
// BenchmarkDescriptors without the simulator): the fastest of eight
// rounds, so that a preemption on a loaded machine does not count.
func measureMemmove(offs []int, row, size, reps int) float64 {
	src, dst := make([]byte, size), make([]byte, len(offs)*row)
	per := max(reps/8, 1)
	best := time.Duration(1<<63 - 1)
	for range 8 {
		t0 := time.Now()
		for range per {
			for i, o := range offs {
				copy(dst[i*row:(i+1)*row], src[o:o+row])
			}
		}
		best = min(best, time.Since(t0))
	}
	return float64(best.Nanoseconds()) / float64(per*len(offs))
}
