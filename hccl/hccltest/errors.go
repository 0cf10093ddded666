package hccltest

import (
	"bytes"
	"fmt"
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
		// op_base.cc:3656: "An empty comm given, skip destroy" → HCCL_SUCCESS.
		code(t, hccl.Success, b.CommDestroy(0), "CommDestroy of a null comm")
		// Null buffers with a non-zero count.
		code(t, hccl.EPtr, b.AllReduce(nil, buf, 4, hccl.Float32, hccl.Sum, c, st), "AllReduce with a null send buffer")
		code(t, hccl.EPtr, b.AllReduce(buf, nil, 4, hccl.Float32, hccl.Sum, c, st), "AllReduce with a null recv buffer")
		code(t, hccl.EPtr, b.Broadcast(nil, 4, hccl.Float32, 0, c, st), "Broadcast with a null buffer")
		code(t, hccl.EPtr, b.AllGather(buf, nil, 4, hccl.Float32, c, st), "AllGather with a null recv buffer")
		code(t, hccl.EPtr, b.ReduceScatter(nil, buf, 4, hccl.Float32, hccl.Sum, c, st), "ReduceScatter with a null send buffer")
		code(t, hccl.EPtr, b.Send(nil, 4, hccl.Float32, 1, c, st), "Send with a null buffer")
		code(t, hccl.EPtr, b.Recv(nil, 4, hccl.Float32, 1, c, st), "Recv with a null buffer")
		// Undefined enums: HCCL_E_NOT_SUPPORT (param_check.cc:281-325,
		// HcomCheckDataType / HcomCheckReductionOp).
		code(t, hccl.ENotSupport, b.AllReduce(buf, buf, 4, hccl.DataType(13), hccl.Sum, c, st), "AllReduce with data type 13")
		code(t, hccl.ENotSupport, b.AllReduce(buf, buf, 4, hccl.DataTypeReserved, hccl.Sum, c, st), "AllReduce with data type 255")
		code(t, hccl.ENotSupport, b.AllReduce(buf, buf, 4, hccl.Float32, hccl.ReduceOp(4), c, st), "AllReduce with op 4")
		code(t, hccl.ENotSupport, b.AllReduce(buf, buf, 4, hccl.Float32, hccl.ReduceReserved, c, st), "AllReduce with op 255")
		code(t, hccl.ENotSupport, b.Broadcast(buf, 4, hccl.DataType(-1), 0, c, st), "Broadcast with data type -1")
		code(t, hccl.ENotSupport, b.Send(buf, 4, hccl.DataType(18), 1, c, st), "Send with data type 18")
		// Types that cannot be reduced: int128 and the 8-bit floats; the
		// unsigned types and fp64 (hccl_communicator_host.cc:1002-1006,
		// CheckDataType); PROD of int16 and bf16 on A2/A3
		// (param_check.cc:327-345).
		for _, dt := range []hccl.DataType{hccl.Int128, hccl.HiFloat8, hccl.Float8E4M3, hccl.Float8E5M2, hccl.Float8E8M0,
			hccl.Uint8, hccl.Uint16, hccl.Uint32, hccl.Uint64, hccl.Float64} {
			code(t, hccl.ENotSupport, b.AllReduce(buf, buf, 4, dt, hccl.Sum, c, st), "AllReduce of %v", dt)
			code(t, hccl.ENotSupport, b.ReduceScatter(buf, buf, 2, dt, hccl.Max, c, st), "ReduceScatter of %v", dt)
		}
		for _, dt := range []hccl.DataType{hccl.Int16, hccl.BFloat16} {
			code(t, hccl.ENotSupport, b.AllReduce(buf, buf, 4, dt, hccl.Prod, c, st), "AllReduce PROD of %v", dt)
			code(t, hccl.ENotSupport, b.ReduceScatter(buf, buf, 2, dt, hccl.Prod, c, st), "ReduceScatter PROD of %v", dt)
		}
		// Counts above SYS_MAX_COUNT 0x7FFFFFFFF (hccl_common.h:64;
		// param_check.cc:150-158): HCCL_E_PARA.
		code(t, hccl.EPara, b.AllReduce(buf, buf, 0x7FFFFFFFF+1, hccl.Int8, hccl.Sum, c, st), "AllReduce of 0x800000000 elements")
		code(t, hccl.EPara, b.Broadcast(buf, 1<<40, hccl.Int8, 0, c, st), "Broadcast of 2^40 elements")
		// Null stream: HCCL_E_PTR (op_base_host.cc:79-82).
		code(t, hccl.EPtr, b.AllReduce(buf, buf, 4, hccl.Float32, hccl.Sum, c, 0), "AllReduce on a null stream")
		code(t, hccl.EPtr, b.Barrier(c, 0), "Barrier on a null stream")
		code(t, hccl.EPtr, b.Send(buf, 4, hccl.Float32, 1, c, 0), "Send on a null stream")
		// Count 0 succeeds before anything else is checked (op_base_host.cc:67).
		code(t, hccl.Success, b.AllReduce(nil, nil, 0, hccl.Float32, hccl.Sum, 0, 0), "AllReduce of 0 elements on a null comm")
		// AlltoAllV with one buffer for both directions: HCCL_E_PARA
		// (param_check.cc:163-165).
		{
			cnt, dsp := []uint64{1, 1}, []uint64{0, 1}
			code(t, hccl.EPara, b.AlltoAllV(buf, cnt, dsp, hccl.Int32, buf, cnt, dsp, hccl.Int32, c, st), "AlltoAllV with sendBuf == recvBuf")
		}
		// Ranks out of range or the caller's own.
		code(t, hccl.EPara, b.Broadcast(buf, 4, hccl.Float32, uint32(n), c, st), "Broadcast with root = size")
		code(t, hccl.EPara, b.Send(buf, 4, hccl.Float32, uint32(n), c, st), "Send to rank = size")
		code(t, hccl.EPara, b.Recv(buf, 4, hccl.Float32, 1<<31, c, st), "Recv from rank 2^31")
		code(t, hccl.EPara, b.Send(buf, 4, hccl.Float32, 0, c, st), "Send to self")
		code(t, hccl.EPara, b.Recv(buf, 4, hccl.Float32, 0, c, st), "Recv from self")
		// An unmatched item naming this rank: HCCL_E_PARA
		// (coll_batch_send_recv_executor.cc:118-150).
		item := hccl.SendRecvItem{Type: hccl.SendType, Buf: buf, Count: 4, DataType: hccl.Float32, RemoteRank: 0}
		code(t, hccl.EPara, b.BatchSendRecv([]hccl.SendRecvItem{item}, c, st), "BatchSendRecv unmatched item to self")
		item.RemoteRank = 5
		code(t, hccl.EPara, b.BatchSendRecv([]hccl.SendRecvItem{item}, c, st), "BatchSendRecv item to rank 5")
		item.RemoteRank, item.Type = 1, hccl.SendRecvType(2)
		code(t, hccl.EPara, b.BatchSendRecv([]hccl.SendRecvItem{item}, c, st), "BatchSendRecv item of type 2")
		item.Type, item.Buf = hccl.SendType, nil
		code(t, hccl.EPtr, b.BatchSendRecv([]hccl.SendRecvItem{item}, c, st), "BatchSendRecv item with a null buffer")
		item.Buf, item.DataType = buf, hccl.DataType(99)
		code(t, hccl.ENotSupport, b.BatchSendRecv([]hccl.SendRecvItem{item}, c, st), "BatchSendRecv item with data type 99")
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
	// A matched send and receive naming this rank in one BatchSendRecv is
	// a local copy (coll_batch_send_recv_executor.cc:118-150).
	g.noErr("BatchSendRecv to self", g.some([]int{0}, func(w *worker) error {
		rng := s.rng(t)
		data := make([]byte, 256)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		src, err := w.buffer(data, len(data))
		if err != nil {
			return err
		}
		defer w.free(src)
		dst, err := w.buffer(nil, len(data))
		if err != nil {
			return err
		}
		defer w.free(dst)
		items := []hccl.SendRecvItem{
			{Type: hccl.RecvType, Buf: dst, Count: 64, DataType: hccl.Int32, RemoteRank: 0},
			{Type: hccl.SendType, Buf: src, Count: 64, DataType: hccl.Int32, RemoteRank: 0},
		}
		if err := g.b.BatchSendRecv(items, w.comm, w.r.Stream()); err != nil {
			return err
		}
		if err := w.r.Sync(); err != nil {
			return err
		}
		got, err := w.read(dst, len(data))
		if err != nil {
			return err
		}
		if !bytes.Equal(got, data) {
			return fmt.Errorf("BatchSendRecv to self: the receive buffer differs from the sent data")
		}
		return nil
	}))
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

// testTimeout: a rank that never arrives makes the others fail within the
// configured timeout: with HCCL_E_TIMEOUT at initialisation and at the
// first operation, at synchronize (507048) later. The three subtests use
// groups of their own and mostly wait: on a ConcurrentEnv they run in parallel.
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
	timed := func(t *testing.T, what string, errs []error, start time.Time) {
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

	initSub := func(t *testing.T) {
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
		timed(t, "CommInitRootInfo with a rank missing", errs, start)
	}

	// The first operation builds the links: a missing rank fails it at
	// the call with HCCL_E_TIMEOUT after HCCL_CONNECT_TIMEOUT
	// (hccl_socket_manager.cc:807-825); later operations return at once
	// and fail the stream with 507048 after HCCL_EXEC_TIMEOUT
	// (hccl-vs-source.md, "a rank never arrives"). The suite's timeout is
	// both.
	collective := func(t *testing.T) {
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
		timed(t, "first AllReduce with a rank missing", errs, start)
		// The late rank finds the collective abandoned.
		errs = g.some([]int{absent}, func(w *worker) error {
			buf, err := w.alloc(64)
			if err != nil {
				return err
			}
			defer w.free(buf)
			return g.b.AllReduce(buf, buf, 4, hccl.Int32, hccl.Sum, w.comm, w.r.Stream())
		})
		code(t, hccl.ETimeout, errs[absent], "late rank at an abandoned first AllReduce")
		// The ranks are in step again; this operation builds the links.
		g.noErr("Barrier after a timeout", g.each(func(w *worker) error {
			if err := g.b.Barrier(w.comm, w.r.Stream()); err != nil {
				return err
			}
			return w.r.Sync()
		}))

		start = time.Now()
		errs = g.some(present, func(w *worker) error { return g.b.Barrier(w.comm, w.r.Stream()) })
		allCode(t, hccl.Success, errs, present, "later Barrier with a rank missing (the call only enqueues)")
		s.syncFails(t, g, present, start, "later Barrier with a rank missing", true)
		g.noErr("CommDestroy", g.destroy())
	}

	recv := func(t *testing.T) {
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
		code(t, hccl.ETimeout, errs[0], "first Recv with no sender")
		if el < to*9/10 || el > slack {
			t.Errorf("first Recv with no sender returned after %v, timeout %v", el, to)
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
		code(t, hccl.ETimeout, errs[1], "first Send with no receiver")
		if el < to*9/10 || el > slack {
			t.Errorf("first Send with no receiver returned after %v, timeout %v", el, to)
		}
		// A matched pair builds the links; then a Recv with no sender
		// returns at once and fails the stream.
		g.noErr("Send/Recv", g.each(func(w *worker) error {
			buf, err := w.alloc(64)
			if err != nil {
				return err
			}
			defer w.free(buf)
			if w.rank == 0 {
				err = g.b.Recv(buf, 4, hccl.Int32, 1, w.comm, w.r.Stream())
			} else {
				err = g.b.Send(buf, 4, hccl.Int32, 0, w.comm, w.r.Stream())
			}
			if err != nil {
				return err
			}
			return w.r.Sync()
		}))
		start = time.Now()
		errs = g.some([]int{0}, func(w *worker) error {
			// The buffer outlives the queued Recv (the group frees it at
			// the end): freed under it, the task would fail for that.
			buf, err := w.alloc(64)
			if err != nil {
				return err
			}
			return g.b.Recv(buf, 4, hccl.Int32, 1, w.comm, w.r.Stream())
		})
		code(t, hccl.Success, errs[0], "later Recv with no sender (the call only enqueues)")
		s.syncFails(t, g, []int{0}, start, "later Recv with no sender", false)
		g.noErr("CommDestroy", g.destroy())
	}
	s.runAll(t, []subtest{{"Init", initSub}, {"Collective", collective}, {"Recv", recv}})
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
		// Leave one-sided state and a window behind on purpose. The window
		// comes first: once a collective made the CCL buffer, none can be
		// registered (hccl_communicator_host.cc:9282-9283).
		mem := make([]unsafe.Pointer, n)
		g.each(func(w *worker) error {
			p, err := w.alloc(4096)
			if err != nil {
				return err
			}
			mem[w.rank] = p
			if _, err := g.b.CommRegister(w.comm, p, 4096, 0); err != nil {
				return err
			}
			peer := uint32((w.rank + 1) % n)
			_, err = g.b.RegisterMem(w.comm, peer, w.r.MemType(), p, 4096)
			return err
		})
		// A collective is refused while the window is registered (ch:2296-2306).
		g.each(func(w *worker) error {
			buf, err := w.alloc(256)
			if err != nil {
				return err
			}
			defer w.free(buf)
			return g.b.AllReduce(buf, buf, 8, hccl.Float32, hccl.Sum, w.comm, w.r.Stream())
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
