package hccltest

import (
	"testing"
	"time"
	"unsafe"

	"github.com/ascend-go/cann/hccl"
)

// testErrors: argument checks every backend makes on entry.
func (s *suite) testErrors(t *testing.T) {
	n := 2
	g := s.newGroup(t, n).mustInit()
	errs := g.some([]int{0}, func(w *worker) error {
		b := g.b
		st := w.r.Stream()
		buf, err := w.alloc(4096)
		if err != nil {
			return err
		}
		defer w.free(buf)
		c := w.comm
		// Null communicator.
		code(t, hccl.EPtr, b.AllReduce(buf, buf, 4, hccl.Float32, hccl.Sum, 0, st), "AllReduce on a null comm")
		code(t, hccl.EPtr, b.Barrier(0, st), "Barrier on a null comm")
		_, err = b.GetRankSize(0)
		code(t, hccl.EPtr, err, "GetRankSize of a null comm")
		_, err = b.GetRankId(0)
		code(t, hccl.EPtr, err, "GetRankId of a null comm")
		_, err = b.GetCommName(0)
		code(t, hccl.EPtr, err, "GetCommName of a null comm")
		code(t, hccl.EPtr, b.CommDestroy(0), "CommDestroy of a null comm")
		// Null buffers with a non-zero count.
		code(t, hccl.EPtr, b.AllReduce(nil, buf, 4, hccl.Float32, hccl.Sum, c, st), "AllReduce with a null send buffer")
		code(t, hccl.EPtr, b.AllReduce(buf, nil, 4, hccl.Float32, hccl.Sum, c, st), "AllReduce with a null recv buffer")
		code(t, hccl.EPtr, b.Broadcast(nil, 4, hccl.Float32, 0, c, st), "Broadcast with a null buffer")
		code(t, hccl.EPtr, b.AllGather(buf, nil, 4, hccl.Float32, c, st), "AllGather with a null recv buffer")
		code(t, hccl.EPtr, b.ReduceScatter(nil, buf, 4, hccl.Float32, hccl.Sum, c, st), "ReduceScatter with a null send buffer")
		code(t, hccl.EPtr, b.Send(nil, 4, hccl.Float32, 1, c, st), "Send with a null buffer")
		code(t, hccl.EPtr, b.Recv(nil, 4, hccl.Float32, 1, c, st), "Recv with a null buffer")
		// Undefined enums.
		code(t, hccl.EPara, b.AllReduce(buf, buf, 4, hccl.DataType(13), hccl.Sum, c, st), "AllReduce with data type 13")
		code(t, hccl.EPara, b.AllReduce(buf, buf, 4, hccl.DataTypeReserved, hccl.Sum, c, st), "AllReduce with data type 255")
		code(t, hccl.EPara, b.AllReduce(buf, buf, 4, hccl.Float32, hccl.ReduceOp(4), c, st), "AllReduce with op 4")
		code(t, hccl.EPara, b.AllReduce(buf, buf, 4, hccl.Float32, hccl.ReduceReserved, c, st), "AllReduce with op 255")
		code(t, hccl.EPara, b.Broadcast(buf, 4, hccl.DataType(-1), 0, c, st), "Broadcast with data type -1")
		code(t, hccl.EPara, b.Send(buf, 4, hccl.DataType(18), 1, c, st), "Send with data type 18")
		// Types that cannot be reduced.
		for _, dt := range []hccl.DataType{hccl.Int128, hccl.HiFloat8, hccl.Float8E4M3, hccl.Float8E5M2, hccl.Float8E8M0} {
			code(t, hccl.ENotSupport, b.AllReduce(buf, buf, 4, dt, hccl.Sum, c, st), "AllReduce of %v", dt)
			code(t, hccl.ENotSupport, b.ReduceScatter(buf, buf, 2, dt, hccl.Max, c, st), "ReduceScatter of %v", dt)
		}
		// Ranks out of range or the caller's own.
		code(t, hccl.EPara, b.Broadcast(buf, 4, hccl.Float32, uint32(n), c, st), "Broadcast with root = size")
		code(t, hccl.EPara, b.Send(buf, 4, hccl.Float32, uint32(n), c, st), "Send to rank = size")
		code(t, hccl.EPara, b.Recv(buf, 4, hccl.Float32, 1<<31, c, st), "Recv from rank 2^31")
		code(t, hccl.EPara, b.Send(buf, 4, hccl.Float32, 0, c, st), "Send to self")
		code(t, hccl.EPara, b.Recv(buf, 4, hccl.Float32, 0, c, st), "Recv from self")
		item := hccl.SendRecvItem{Type: hccl.SendType, Buf: buf, Count: 4, DataType: hccl.Float32, RemoteRank: 0}
		code(t, hccl.EPara, b.BatchSendRecv([]hccl.SendRecvItem{item}, c, st), "BatchSendRecv item to self")
		item.RemoteRank = 5
		code(t, hccl.EPara, b.BatchSendRecv([]hccl.SendRecvItem{item}, c, st), "BatchSendRecv item to rank 5")
		item.RemoteRank, item.Type = 1, hccl.SendRecvType(2)
		code(t, hccl.EPara, b.BatchSendRecv([]hccl.SendRecvItem{item}, c, st), "BatchSendRecv item of type 2")
		item.Type, item.Buf = hccl.SendType, nil
		code(t, hccl.EPtr, b.BatchSendRecv([]hccl.SendRecvItem{item}, c, st), "BatchSendRecv item with a null buffer")
		item.Buf, item.DataType = buf, hccl.DataType(99)
		code(t, hccl.EPara, b.BatchSendRecv([]hccl.SendRecvItem{item}, c, st), "BatchSendRecv item with data type 99")
		// AlltoAllV slices shorter than the rank size.
		one := []uint64{0}
		code(t, hccl.EPara, b.AlltoAllV(buf, one, one, hccl.Int8, buf, one, one, hccl.Int8, c, st), "AlltoAllV with 1-entry slices on 2 ranks")
		// Async error: none recorded.
		r, err := b.GetCommAsyncError(c)
		if err != nil || r != hccl.Success {
			t.Errorf("GetCommAsyncError = %v, %v; want HCCL_SUCCESS", r, err)
		}
		return nil
	})
	g.noErr("argument checks", errs)
	// Nothing above joined a rendezvous: the ranks are still in step.
	g.noErr("Barrier after argument errors", g.each(func(w *worker) error { return g.b.Barrier(w.comm, w.r.Stream()) }))

	// A destroyed handle is rejected.
	h := g.ws[1].comm
	g.noErr("CommDestroy", g.destroy())
	errs = g.some([]int{1}, func(w *worker) error {
		_, err := g.b.GetRankSize(h)
		code(t, hccl.EPara, err, "GetRankSize of a destroyed comm")
		code(t, hccl.EPara, g.b.Barrier(h, w.r.Stream()), "Barrier on a destroyed comm")
		code(t, hccl.EPara, g.b.CommDestroy(h), "CommDestroy twice")
		return nil
	})
	g.noErr("destroyed handle", errs)
}

// testTimeout: a rank that never arrives makes the others fail with
// HCCL_E_TIMEOUT within the configured timeout.
func (s *suite) testTimeout(t *testing.T) {
	if s.opts.Timeout <= 0 {
		s.skip(t, "Options.Timeout not set")
	}
	to := s.opts.Timeout
	slack := 5*to + 2*time.Second
	n := min(3, s.maxRanks)
	absent := n - 1
	present := make([]int, 0, n-1)
	for r := 0; r < absent; r++ {
		present = append(present, r)
	}
	timed := func(what string, errs []error, start time.Time) {
		t.Helper()
		el := time.Since(start)
		allCode(t, hccl.ETimeout, errs, present, what)
		if el < to*9/10 {
			t.Errorf("%s: returned after %v, before the %v timeout", what, el, to)
		}
		if el > slack {
			t.Errorf("%s: returned after %v, timeout %v", what, el, to)
		}
	}

	t.Run("Init", func(t *testing.T) {
		g := s.newGroup(t, n)
		var root hccl.RootInfo
		g.noErr("GetRootInfo", g.some([]int{0}, func(w *worker) error {
			var err error
			root, err = g.b.GetRootInfo()
			return err
		}))
		start := time.Now()
		errs := g.some(present, func(w *worker) error {
			h, err := g.b.CommInitRootInfo(uint32(n), &root, uint32(w.rank))
			if err == nil {
				w.comm = h
			}
			return err
		})
		timed("CommInitRootInfo with a rank missing", errs, start)
	})

	t.Run("Collective", func(t *testing.T) {
		g := s.newGroup(t, n).mustInit()
		start := time.Now()
		errs := g.some(present, func(w *worker) error {
			buf, err := w.alloc(64)
			if err != nil {
				return err
			}
			defer w.free(buf)
			return g.b.AllReduce(buf, buf, 4, hccl.Int32, hccl.Sum, w.comm, w.r.Stream())
		})
		timed("AllReduce with a rank missing", errs, start)
		// The late rank finds the collective abandoned.
		errs = g.some([]int{absent}, func(w *worker) error {
			buf, err := w.alloc(64)
			if err != nil {
				return err
			}
			defer w.free(buf)
			return g.b.AllReduce(buf, buf, 4, hccl.Int32, hccl.Sum, w.comm, w.r.Stream())
		})
		code(t, hccl.ETimeout, errs[absent], "late rank at an abandoned AllReduce")
		// The ranks are in step again.
		g.noErr("Barrier after a timeout", g.each(func(w *worker) error { return g.b.Barrier(w.comm, w.r.Stream()) }))

		start = time.Now()
		errs = g.some(present, func(w *worker) error { return g.b.Barrier(w.comm, w.r.Stream()) })
		timed("Barrier with a rank missing", errs, start)
		errs = g.some([]int{absent}, func(w *worker) error { return g.b.Barrier(w.comm, w.r.Stream()) })
		code(t, hccl.ETimeout, errs[absent], "late rank at an abandoned Barrier")
		g.noErr("CommDestroy", g.destroy())
	})

	t.Run("Recv", func(t *testing.T) {
		g := s.newGroup(t, 2).mustInit()
		start := time.Now()
		errs := g.some([]int{0}, func(w *worker) error {
			buf, err := w.alloc(64)
			if err != nil {
				return err
			}
			defer w.free(buf)
			return g.b.Recv(buf, 4, hccl.Int32, 1, w.comm, w.r.Stream())
		})
		el := time.Since(start)
		code(t, hccl.ETimeout, errs[0], "Recv with no sender")
		if el < to*9/10 || el > slack {
			t.Errorf("Recv with no sender returned after %v, timeout %v", el, to)
		}
		start = time.Now()
		errs = g.some([]int{1}, func(w *worker) error {
			buf, err := w.alloc(64)
			if err != nil {
				return err
			}
			defer w.free(buf)
			return g.b.Send(buf, 4, hccl.Int32, 0, w.comm, w.r.Stream())
		})
		el = time.Since(start)
		code(t, hccl.ETimeout, errs[1], "Send with no receiver")
		if el < to*9/10 || el > slack {
			t.Errorf("Send with no receiver returned after %v, timeout %v", el, to)
		}
		g.noErr("CommDestroy", g.destroy())
	})
}

// testDestroy: destroying communicators releases everything they hold.
func (s *suite) testDestroy(t *testing.T) {
	lc, counting := s.env.(LiveCounter)
	before := 0
	if counting {
		before = lc.Live()
	}
	n := min(3, s.maxRanks)
	for round := 0; round < 3; round++ {
		g := s.newGroup(t, n).mustInit()
		g.noErr("AllReduce", g.each(func(w *worker) error {
			buf, err := w.alloc(256)
			if err != nil {
				return err
			}
			defer w.free(buf)
			return g.b.AllReduce(buf, buf, 8, hccl.Float32, hccl.Sum, w.comm, w.r.Stream())
		}))
		// Leave one-sided state and a window behind on purpose.
		mem := make([]unsafe.Pointer, n)
		g.each(func(w *worker) error {
			p, err := w.alloc(4096)
			if err != nil {
				return err
			}
			mem[w.rank] = p
			peer := uint32((w.rank + 1) % n)
			d, err := g.b.RegisterMem(w.comm, peer, w.r.MemType(), p, 4096)
			if err != nil {
				return err
			}
			_ = d
			_, err = g.b.CommRegister(w.comm, p, 4096, 0)
			return err
		})
		g.noErr("CommDestroy", g.destroy())
		g.each(func(w *worker) error { return w.free(mem[w.rank]) })
		g.stop()
	}
	if counting {
		if after := lc.Live(); after != before {
			t.Errorf("live backend resources: %d before, %d after destroying every communicator", before, after)
		}
	} else {
		t.Log("env does not count live resources; checked that destroy succeeds only")
	}
}
