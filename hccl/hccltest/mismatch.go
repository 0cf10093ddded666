package hccltest

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/ascend-go/cann/hccl"
)

// testMismatch: ranks of one collective that disagree on an argument all
// get HCCL_E_PARA, and the communicator stays usable.
func (s *suite) testMismatch(t *testing.T) {
	n := min(3, s.maxRanks)
	g := s.newGroup(t, n).mustInit()
	const count = 16
	last := n - 1
	type call func(w *worker, a, b unsafe.Pointer) error
	cases := []struct {
		name string
		f    call
	}{
		{"AllReduce count", func(w *worker, a, b unsafe.Pointer) error {
			c := uint64(count)
			if w.rank == last {
				c = count - 1
			}
			return g.b.AllReduce(a, b, c, hccl.Float32, hccl.Sum, w.comm, w.r.Stream())
		}},
		{"AllReduce data type", func(w *worker, a, b unsafe.Pointer) error {
			dt := hccl.Float32
			if w.rank == last {
				dt = hccl.Int32
			}
			return g.b.AllReduce(a, b, count, dt, hccl.Sum, w.comm, w.r.Stream())
		}},
		{"AllReduce op", func(w *worker, a, b unsafe.Pointer) error {
			op := hccl.Sum
			if w.rank == last {
				op = hccl.Max
			}
			return g.b.AllReduce(a, b, count, hccl.Float32, op, w.comm, w.r.Stream())
		}},
		{"Broadcast root", func(w *worker, a, b unsafe.Pointer) error {
			root := uint32(0)
			if w.rank == last {
				root = 1
			}
			return g.b.Broadcast(a, count, hccl.Int8, root, w.comm, w.r.Stream())
		}},
		{"ReduceScatter op", func(w *worker, a, b unsafe.Pointer) error {
			op := hccl.Min
			if w.rank == 0 {
				op = hccl.Prod
			}
			return g.b.ReduceScatter(a, b, 2, hccl.Int16, op, w.comm, w.r.Stream())
		}},
		{"AllGather count", func(w *worker, a, b unsafe.Pointer) error {
			c := uint64(4)
			if w.rank == 0 {
				c = 3
			}
			return g.b.AllGather(a, b, c, hccl.Int8, w.comm, w.r.Stream())
		}},
		{"operation", func(w *worker, a, b unsafe.Pointer) error {
			if w.rank == last {
				return g.b.AllGather(a, b, 4, hccl.Int8, w.comm, w.r.Stream())
			}
			return g.b.AllReduce(a, b, 4, hccl.Int8, hccl.Sum, w.comm, w.r.Stream())
		}},
		{"Barrier vs AllReduce", func(w *worker, a, b unsafe.Pointer) error {
			if w.rank == 0 {
				return g.b.Barrier(w.comm, w.r.Stream())
			}
			return g.b.AllReduce(a, b, 4, hccl.Int8, hccl.Sum, w.comm, w.r.Stream())
		}},
		{"AlltoAllV counts", func(w *worker, a, b unsafe.Pointer) error {
			sc, sd, rc, rd := make([]uint64, n), make([]uint64, n), make([]uint64, n), make([]uint64, n)
			for j := 0; j < n; j++ {
				sc[j], rc[j] = 2, 2
				sd[j], rd[j] = uint64(2*j), uint64(2*j)
			}
			if w.rank == 0 {
				sc[last] = 1 // rank last expects 2 from rank 0
			}
			return g.b.AlltoAllV(a, sc, sd, hccl.Int32, b, rc, rd, hccl.Int32, w.comm, w.r.Stream())
		}},
	}
	for _, c := range cases {
		errs := g.each(func(w *worker) error {
			a, err := w.alloc(1024)
			if err != nil {
				return err
			}
			defer w.free(a)
			b, err := w.alloc(1024)
			if err != nil {
				return err
			}
			defer w.free(b)
			return c.f(w, a, b)
		})
		allCode(t, hccl.EPara, errs, nil, "mismatched "+c.name)
		// The communicator is still usable and in step.
		g.noErr("AllReduce after mismatched "+c.name, g.each(func(w *worker) error {
			a, err := w.alloc(64)
			if err != nil {
				return err
			}
			defer w.free(a)
			if err := g.b.AllReduce(a, a, 4, hccl.Int32, hccl.Max, w.comm, w.r.Stream()); err != nil {
				return err
			}
			return w.r.Sync()
		}))
	}

	// AlltoAllV whose send and receive types differ.
	errs := g.each(func(w *worker) error {
		a, _ := w.alloc(256)
		defer w.free(a)
		b, _ := w.alloc(256)
		defer w.free(b)
		cnt, dsp := make([]uint64, n), make([]uint64, n)
		for j := range cnt {
			cnt[j], dsp[j] = 1, uint64(j)
		}
		return g.b.AlltoAllV(a, cnt, dsp, hccl.Int32, b, cnt, dsp, hccl.Float32, w.comm, w.r.Stream())
	})
	for r, err := range errs {
		code(t, hccl.EPara, err, "AlltoAllV with send type int32 and receive type fp32, rank %d", r)
	}

	// Send/Recv disagreeing on count or type: both sides fail.
	for _, c := range []struct {
		name     string
		rc       uint64
		sdt, rdt hccl.DataType
	}{{"count", 7, hccl.Int32, hccl.Int32}, {"type", 8, hccl.Int32, hccl.Float32}} {
		errs := g.some([]int{0, 1}, func(w *worker) error {
			a, err := w.alloc(256)
			if err != nil {
				return err
			}
			defer w.free(a)
			if w.rank == 0 {
				return g.b.Send(a, 8, c.sdt, 1, w.comm, w.r.Stream())
			}
			return g.b.Recv(a, c.rc, c.rdt, 0, w.comm, w.r.Stream())
		})
		allCode(t, hccl.EPara, errs, []int{0, 1}, fmt.Sprintf("Send/Recv mismatched %s", c.name))
	}
	g.noErr("CommDestroy", g.destroy())
}
