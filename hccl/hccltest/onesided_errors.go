package hccltest

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/ascend-go/cann/hccl"
)

// testOneSidedErrors asserts the one-sided rows of docs/misuse.md, each as
// the device's one-sided service decides it. Sources: hcomm legacy tree
// (hicann/hcomm src/legacy/ascend910/, read through libochao-huawei/hcomm
// @8958adb), directory framework/communicator/impl/one_sided_service/
// (adapt = one_sided_service_adapt.cc, service =
// hccl_one_sided_service.cc, conn = hccl_one_sided_conn.cc) and
// platform/resource/transport/onesided/transport_mem.cc. An exception
// thrown by the service becomes a code in
// framework/common/src/exception/exception_handler.cc:18-74: logic_error
// (EXCEPTION_THROW_IF_COND_ERR) HCCL_E_INTERNAL, out_of_range
// HCCL_E_NOT_FOUND.
func (s *suite) testOneSidedErrors(t *testing.T) {
	n := min(3, s.maxRanks)
	rng := s.rng(t)
	g := s.newGroup(t, n).mustInit()
	b := g.b
	if s.opts.SkipOneSided {
		s.skip(t, "Options.SkipOneSided")
	}

	var junk hccl.MemDesc
	for i := range junk {
		junk[i] = byte(i*13 + 1)
	}
	// Before any registration or exchange.
	early := make([]unsafe.Pointer, n)
	var early10 hccl.MemDesc // rank 1's registration for rank 0, never exchanged
	errs := g.some([]int{0}, func(w *worker) error {
		// Nothing registered: HCCL_E_NOT_FOUND (service:232-235).
		return b.DeregisterMem(w.comm, &junk)
	})
	s.unsupported(t, OneSided, errs[0])
	code(t, hccl.ENotFound, errs[0], "DeregisterMem with nothing registered")
	g.noErr("early registration", g.some([]int{1}, func(w *worker) error {
		p, err := w.alloc(256)
		if err != nil {
			return err
		}
		early[1] = p
		early10, err = b.RegisterMem(w.comm, 0, w.r.MemType(), p, 256)
		return err
	}))
	g.noErr("before any exchange", g.some([]int{0}, func(w *worker) error {
		buf, err := w.alloc(64)
		if err != nil {
			return err
		}
		defer w.free(buf)
		// No connection to the owner yet: HCCL_E_INTERNAL (service:455-463).
		_, err = b.EnableMemAccess(w.comm, &early10)
		code(t, hccl.EInternal, err, "EnableMemAccess before any ExchangeMemDesc with the owner")
		code(t, hccl.EInternal, b.DisableMemAccess(w.comm, &early10), "DisableMemAccess before any ExchangeMemDesc with the owner")
		// No connection: out_of_range, HCCL_E_NOT_FOUND (service:537-545).
		err = b.BatchGet(w.comm, 1, []hccl.OneSideOpDesc{{LocalAddr: buf, RemoteAddr: uintptr(early[1]), Count: 8, DataType: hccl.Uint8}}, w.r.Stream())
		code(t, hccl.ENotFound, err, "BatchGet before any ExchangeMemDesc with the peer")
		err = b.BatchPut(w.comm, 1, []hccl.OneSideOpDesc{{LocalAddr: buf, RemoteAddr: uintptr(early[1]), Count: 8, DataType: hccl.Uint8}}, w.r.Stream())
		code(t, hccl.ENotFound, err, "BatchPut before any ExchangeMemDesc with the peer")
		return w.r.Sync()
	}))
	g.noErr("early deregistration", g.some([]int{1}, func(w *worker) error {
		if err := b.DeregisterMem(w.comm, &early10); err != nil {
			return err
		}
		return w.free(early[1])
	}))

	st := s.setupOneSided(t, g, rng)

	// Argument checks of registration, on rank 0 alone.
	g.noErr("registration checks", g.some([]int{0}, func(w *worker) error {
		c, mt := w.comm, w.r.MemType()
		p := st.region[0]
		_, err := b.RegisterMem(c, 1, mt, nil, 64)
		code(t, hccl.EPtr, err, "RegisterMem of a null address") // adapt:153-156
		_, err = b.RegisterMem(c, 1, mt, p, 0)
		code(t, hccl.EPara, err, "RegisterMem of size 0") // adapt:186-192
		_, err = b.RegisterMem(c, 1, hccl.MemType(7), p, 64)
		code(t, hccl.EPara, err, "RegisterMem of memory type 7") // adapt:183-185
		_, err = b.RegisterMem(c, uint32(n), mt, p, 64)
		code(t, hccl.ENotFound, err, "RegisterMem for rank = size") // service:94 rankList.at
		_, err = b.RegisterMem(0, 1, mt, p, 64)
		code(t, hccl.EPtr, err, "RegisterMem on a null comm") // adapt:150-152
		if d, err := b.RegisterMem(c, 0, mt, p, 64); err != nil || d != (hccl.MemDesc{}) {
			t.Errorf("RegisterMem for the caller's own rank: %v (descriptor zero: %v), want success registering nothing", err, d == hccl.MemDesc{}) // adapt:175-181
		}

		// Something is registered: an unknown descriptor is HCCL_E_INTERNAL
		// (service:245-247).
		code(t, hccl.EInternal, b.DeregisterMem(c, &junk), "DeregisterMem of bytes never registered")
		code(t, hccl.EPtr, b.DeregisterMem(c, nil), "DeregisterMem of a null descriptor") // adapt:231-234
		d, err := b.RegisterMem(c, 1, mt, p, 128)
		if err != nil {
			return err
		}
		if err := b.DeregisterMem(c, &d); err != nil {
			return fmt.Errorf("DeregisterMem: %w", err)
		}
		code(t, hccl.EInternal, b.DeregisterMem(c, &d), "DeregisterMem twice")

		// Bytes no peer produced for this rank: HCCL_E_INTERNAL (the
		// service finds no connection for the owner they name, or the
		// connection cannot read them: service:455-463, conn:257-258).
		_, err = b.EnableMemAccess(c, &junk)
		code(t, hccl.EInternal, err, "EnableMemAccess of bytes no peer produced")
		_, err = b.EnableMemAccess(c, &st.desc[0][1])
		code(t, hccl.EInternal, err, "EnableMemAccess of the caller's own descriptor")
		_, err = b.EnableMemAccess(c, nil)
		code(t, hccl.EPtr, err, "EnableMemAccess of a null descriptor") // adapt:337-339
		// Not enabled: HCCL_E_INTERNAL (conn:303-304).
		code(t, hccl.EInternal, b.DisableMemAccess(c, &junk), "DisableMemAccess of bytes never enabled")

		// ExchangeMemDesc: a timeout of -2 s or less is HCCL_E_PARA, before
		// any rendezvous (adapt:277-290; -1 is never, 0 the connect
		// timeout); the caller's own rank succeeds with nothing
		// (adapt:306-312); a rank out of range is HCCL_E_NOT_FOUND
		// (service:273-278).
		_, err = b.ExchangeMemDesc(c, 1, nil, -2, make([]hccl.MemDesc, 1))
		code(t, hccl.EPara, err, "ExchangeMemDesc with timeout -2")
		if k, err := b.ExchangeMemDesc(c, 0, st.desc[0][1:2], -1, make([]hccl.MemDesc, 1)); err != nil || k != 0 {
			t.Errorf("ExchangeMemDesc with the caller's own rank: %d, %v; want 0, success", k, err)
		}
		_, err = b.ExchangeMemDesc(c, uint32(n), nil, 0, make([]hccl.MemDesc, 1))
		code(t, hccl.ENotFound, err, "ExchangeMemDesc with rank = size")
		return nil
	}))

	// ExchangeMemDesc sends what it is given; the receiver checks that
	// each descriptor it received is addressed to it and fails with
	// HCCL_E_INTERNAL otherwise (transport_mem.cc:128-142). The sender
	// succeeds.
	g.noErr("exchange of a descriptor for another rank", g.some([]int{0, 1}, func(w *worker) error {
		if w.rank == 0 {
			offer := junk
			if n >= 3 {
				offer = st.desc[0][2] // registered for rank 2
			}
			_, err := b.ExchangeMemDesc(w.comm, 1, []hccl.MemDesc{offer}, 0, make([]hccl.MemDesc, 1))
			if err != nil {
				t.Errorf("ExchangeMemDesc: the sender of a descriptor not addressed to the receiver: %v, want success", err)
			}
			return nil
		}
		_, err := b.ExchangeMemDesc(w.comm, 0, nil, 0, make([]hccl.MemDesc, 1))
		code(t, hccl.EInternal, err, "ExchangeMemDesc: receiving a descriptor not addressed to this rank")
		return nil
	}))
	// The device does not check the receiving capacity (transport_mem.cc:
	// 175-199): the call succeeds with the peer's count; the backends
	// here store only what fits.
	g.noErr("capacity", g.some([]int{0, 1}, func(w *worker) error {
		if w.rank == 1 {
			_, err := b.ExchangeMemDesc(w.comm, 0, []hccl.MemDesc{st.desc[1][0], st.desc[1][0]}, 0, make([]hccl.MemDesc, 4))
			return err
		}
		remote := make([]hccl.MemDesc, 1)
		k, err := b.ExchangeMemDesc(w.comm, 1, nil, 0, remote)
		if err != nil || k != 2 {
			t.Errorf("ExchangeMemDesc receiving 2 descriptors into capacity 1: %d, %v; want 2 (the device does not check the capacity)", k, err)
		} else if remote[0] != st.peer[0][1] {
			t.Errorf("ExchangeMemDesc receiving 2 descriptors into capacity 1: the first is not the one sent")
		}
		return nil
	}))

	// Transfers that must fail, on rank 0 reading rank 1. Each batch holds
	// a good descriptor first: the device queues descriptors one by one
	// (conn:357-383), so the good one has moved its bytes when the call
	// fails at the bad one — unless the call fails before the descriptors
	// (HcclBatchParaCheck, adapt:400-429).
	g.noErr("transfer checks", g.some([]int{0}, func(w *worker) error {
		c := w.comm
		m := st.mem[0][1]
		pre := randBytes(rng, 256)
		buf, err := w.buffer(pre, 0)
		if err != nil {
			return err
		}
		defer w.free(buf)
		check := func(peer int, good, d hccl.OneSideOpDesc, want hccl.Result, moves bool, what string) {
			t.Helper()
			for _, put := range []bool{false, true} {
				if err := w.r.Write(buf, pre); err != nil {
					t.Error(err)
					return
				}
				op, f, g := "BatchGet", b.BatchGet, good
				if put {
					// The good write lands at bytes 32..47 of the peer's
					// region, away from what the good read reads.
					op, f = "BatchPut", b.BatchPut
					g.RemoteAddr += 32
				}
				code(t, want, f(c, uint32(peer), []hccl.OneSideOpDesc{g, d}, w.r.Stream()), "%s %s", op, what)
				if err := w.r.Sync(); err != nil {
					t.Errorf("%s %s: Sync after a failed batch: %v", op, what, err)
				}
				if put {
					continue
				}
				got, err := w.read(buf, len(pre))
				if err != nil {
					t.Error(err)
					return
				}
				want := pre
				if moves {
					want = append(append([]byte(nil), st.data[1][:16]...), pre[16:]...)
				}
				if dd := firstDiff(want, got); dd != "" {
					t.Errorf("BatchGet %s: the good descriptor before the bad one (moved: %v): %s", what, moves, dd)
				}
			}
		}
		good := hccl.OneSideOpDesc{LocalAddr: buf, RemoteAddr: m.Addr, Count: 16, DataType: hccl.Uint8}
		bad := func(d hccl.OneSideOpDesc, want hccl.Result, what string) {
			t.Helper()
			check(1, good, d, want, true, what)
		}
		local := unsafe.Add(buf, 64)
		// The remote range is looked up among the enabled memory
		// (conn:372-375): HCCL_E_INTERNAL when no enabled range holds it.
		bad(hccl.OneSideOpDesc{LocalAddr: local, RemoteAddr: m.Addr + uintptr(m.Size) - 4, Count: 8, DataType: hccl.Uint8},
			hccl.EInternal, "running past the end of the peer's memory")
		bad(hccl.OneSideOpDesc{LocalAddr: local, RemoteAddr: m.Addr + uintptr(m.Size) - 8, Count: 2, DataType: hccl.Uint64},
			hccl.EInternal, "of 2 × uint64 from 8 bytes before the end")
		bad(hccl.OneSideOpDesc{LocalAddr: local, RemoteAddr: 16, Count: 8, DataType: hccl.Uint8},
			hccl.EInternal, "from an address no peer registered")
		if n >= 3 {
			// Rank 2's memory is enabled, but the batch names rank 1.
			bad(hccl.OneSideOpDesc{LocalAddr: local, RemoteAddr: st.mem[0][2].Addr, Count: 8, DataType: hccl.Uint8},
				hccl.EInternal, "from rank 2's memory addressed to rank 1")
		}
		// SalGetDataTypeSize fails with HCCL_E_PARA (conn:363-366).
		bad(hccl.OneSideOpDesc{LocalAddr: local, RemoteAddr: m.Addr, Count: 8, DataType: hccl.DataType(13)},
			hccl.EPara, "with data type 13")
		bad(hccl.OneSideOpDesc{LocalAddr: nil, RemoteAddr: m.Addr, Count: 8, DataType: hccl.Uint8},
			hccl.EPtr, "into a null local address")
		// The caller's own rank: HCCL_E_PARA before any descriptor
		// (adapt:427-429).
		check(0, hccl.OneSideOpDesc{LocalAddr: buf, RemoteAddr: uintptr(st.region[0]), Count: 16, DataType: hccl.Uint8},
			hccl.OneSideOpDesc{LocalAddr: local, RemoteAddr: uintptr(st.region[0]), Count: 8, DataType: hccl.Uint8},
			hccl.EPara, false, "addressed to the caller's own rank")
		// The failed BatchPuts to rank 1 moved their good descriptor
		// (pre[:16] to bytes 32..47 of rank 1's region): check, then put
		// the region back.
		back := hccl.OneSideOpDesc{LocalAddr: buf, RemoteAddr: m.Addr + 32, Count: 16, DataType: hccl.Uint8}
		if err := b.BatchGet(c, 1, []hccl.OneSideOpDesc{back}, w.r.Stream()); err != nil {
			return err
		}
		if err := w.r.Sync(); err != nil {
			return err
		}
		if got, err := w.read(buf, 16); err != nil {
			return err
		} else if dd := firstDiff(pre[:16], got); dd != "" {
			t.Errorf("BatchPut [good, bad]: the good descriptor did not move its bytes: %s", dd)
		}
		if err := w.r.Write(buf, st.data[1][32:48]); err != nil {
			return err
		}
		if err := b.BatchPut(c, 1, []hccl.OneSideOpDesc{back}, w.r.Stream()); err != nil {
			t.Errorf("BatchPut restoring rank 1's region: %v", err)
		}
		code(t, hccl.EPara, b.BatchGet(c, uint32(n), []hccl.OneSideOpDesc{good}, w.r.Stream()), "BatchGet from rank = size") // adapt:426
		code(t, hccl.EPtr, b.BatchGet(0, 1, []hccl.OneSideOpDesc{good}, w.r.Stream()), "BatchGet on a null comm")            // adapt:403
		if err := b.BatchGet(c, 1, nil, w.r.Stream()); err != nil {
			t.Errorf("BatchGet of an empty batch: %v", err) // adapt:407-409
		}
		// At most 256 descriptors per batch (adapt:47, 410-413).
		many := make([]hccl.OneSideOpDesc, hccl.MaxOneSideDescs+1)
		for i := range many {
			many[i] = good
		}
		code(t, hccl.EPara, b.BatchGet(c, 1, many, w.r.Stream()), "BatchGet of %d descriptors", len(many))
		code(t, hccl.EPara, b.BatchPut(c, 1, many, w.r.Stream()), "BatchPut of %d descriptors", len(many))
		if err := b.BatchGet(c, 1, many[:hccl.MaxOneSideDescs], w.r.Stream()); err != nil {
			t.Errorf("BatchGet of %d descriptors: %v", hccl.MaxOneSideDescs, err)
		}
		return w.r.Sync()
	}))

	// Registered and exchanged but never enabled; then enabled twice and
	// disabled twice (reference-counted, conn:259-271, 309-320); then
	// enabled and deregistered by the owner while in use.
	extra := make([]unsafe.Pointer, n)
	var d10 hccl.MemDesc // rank 1's extra registration for rank 0
	var recv0 hccl.MemDesc
	var enabled hccl.CommMem // rank 0's view of rank 1's extra memory
	g.noErr("second registration", g.some([]int{0, 1}, func(w *worker) error {
		p, err := w.alloc(1024)
		if err != nil {
			return err
		}
		extra[w.rank] = p
		if w.rank == 0 {
			remote := make([]hccl.MemDesc, 1)
			k, err := b.ExchangeMemDesc(w.comm, 1, nil, 0, remote)
			if err != nil {
				return err
			}
			if k != 1 {
				return fmt.Errorf("ExchangeMemDesc: actualNum %d, want 1", k)
			}
			recv0 = remote[0]
			return nil
		}
		if d10, err = b.RegisterMem(w.comm, 0, w.r.MemType(), p, 1024); err != nil {
			return err
		}
		_, err = b.ExchangeMemDesc(w.comm, 0, []hccl.MemDesc{d10}, 0, make([]hccl.MemDesc, 1))
		return err
	}))
	g.noErr("access state checks", g.some([]int{0}, func(w *worker) error {
		c := w.comm
		buf, err := w.alloc(64)
		if err != nil {
			return err
		}
		defer w.free(buf)
		get := func() error {
			return b.BatchGet(c, 1, []hccl.OneSideOpDesc{{LocalAddr: buf, RemoteAddr: uintptr(extra[1]), Count: 64, DataType: hccl.Uint8}}, w.r.Stream())
		}
		code(t, hccl.EInternal, get(), "BatchGet from memory exchanged but not enabled")
		m, err := b.EnableMemAccess(c, &recv0)
		if err != nil {
			return fmt.Errorf("EnableMemAccess: %w", err)
		}
		if m.Size != 1024 {
			return fmt.Errorf("EnableMemAccess: size %d, want 1024", m.Size)
		}
		if m2, err := b.EnableMemAccess(c, &recv0); err != nil || m2 != m {
			t.Errorf("EnableMemAccess twice: %+v, %v; want %+v, success (reference-counted)", m2, err, m)
		}
		getM := func() error {
			return b.BatchGet(c, 1, []hccl.OneSideOpDesc{{LocalAddr: buf, RemoteAddr: m.Addr, Count: 64, DataType: hccl.Uint8}}, w.r.Stream())
		}
		if err := getM(); err != nil {
			return fmt.Errorf("BatchGet once enabled: %w", err)
		}
		if err := b.DisableMemAccess(c, &recv0); err != nil {
			return fmt.Errorf("DisableMemAccess: %w", err)
		}
		if err := getM(); err != nil {
			t.Errorf("BatchGet after one DisableMemAccess of two enables: %v", err)
		}
		if err := b.DisableMemAccess(c, &recv0); err != nil {
			return fmt.Errorf("DisableMemAccess of the second enable: %w", err)
		}
		code(t, hccl.EInternal, getM(), "BatchGet after DisableMemAccess")
		code(t, hccl.EInternal, b.DisableMemAccess(c, &recv0), "DisableMemAccess once more than enabled")
		if enabled, err = b.EnableMemAccess(c, &recv0); err != nil {
			return fmt.Errorf("EnableMemAccess again after disabling: %w", err)
		}
		return w.r.Sync()
	}))
	g.noErr("owner deregisters", g.some([]int{1}, func(w *worker) error { return b.DeregisterMem(w.comm, &d10) }))
	g.noErr("deregistered while in use", g.some([]int{0}, func(w *worker) error {
		buf, err := w.alloc(64)
		if err != nil {
			return err
		}
		defer w.free(buf)
		err = b.BatchGet(w.comm, 1, []hccl.OneSideOpDesc{{LocalAddr: buf, RemoteAddr: enabled.Addr, Count: 8, DataType: hccl.Uint8}}, w.r.Stream())
		code(t, hccl.ERemote, err, "BatchGet from memory the owner deregistered")
		err = b.BatchPut(w.comm, 1, []hccl.OneSideOpDesc{{LocalAddr: buf, RemoteAddr: enabled.Addr, Count: 8, DataType: hccl.Uint8}}, w.r.Stream())
		code(t, hccl.ERemote, err, "BatchPut into memory the owner deregistered")
		if err := b.DisableMemAccess(w.comm, &recv0); err != nil {
			return fmt.Errorf("DisableMemAccess of deregistered memory: %w", err)
		}
		_, err = b.EnableMemAccess(w.comm, &recv0)
		// The owner's deregistration destroyed the IPC name; the import
		// fails with HCCL_E_RUNTIME (hcomm legacy hccl_mem.cc:369-378,
		// adapter_rts.cc:1353-1359, exception_handler.cc runtime_error).
		code(t, hccl.ERuntime, err, "EnableMemAccess of a descriptor its owner deregistered")
		return w.r.Sync()
	}))
	g.some([]int{0, 1}, func(w *worker) error { return w.free(extra[w.rank]) })
	st.teardown(g)
	g.noErr("CommDestroy", g.destroy())
}
