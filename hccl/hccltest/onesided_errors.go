package hccltest

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/ascend-go/cann/hccl"
)

func (s *suite) testOneSidedErrors(t *testing.T) {
	n := min(3, s.maxRanks)
	rng := s.rng(t)
	g := s.newGroup(t, n).mustInit()
	st := s.setupOneSided(t, g, rng)
	b := g.b

	// Argument checks of registration, on rank 0 alone.
	g.noErr("registration checks", g.some([]int{0}, func(w *worker) error {
		c, mt := w.comm, w.r.MemType()
		p := st.region[0]
		_, err := b.RegisterMem(c, 1, mt, nil, 64)
		code(t, hccl.EPtr, err, "RegisterMem of a null address")
		_, err = b.RegisterMem(c, 1, mt, p, 0)
		code(t, hccl.EPara, err, "RegisterMem of size 0")
		_, err = b.RegisterMem(c, 1, hccl.MemType(7), p, 64)
		code(t, hccl.EPara, err, "RegisterMem of memory type 7")
		_, err = b.RegisterMem(c, uint32(n), mt, p, 64)
		code(t, hccl.EPara, err, "RegisterMem for rank = size")
		_, err = b.RegisterMem(0, 1, mt, p, 64)
		code(t, hccl.EPtr, err, "RegisterMem on a null comm")

		var junk hccl.MemDesc
		for i := range junk {
			junk[i] = byte(i*13 + 1)
		}
		code(t, hccl.ENotFound, b.DeregisterMem(c, &junk), "DeregisterMem of bytes never registered")
		code(t, hccl.EPtr, b.DeregisterMem(c, nil), "DeregisterMem of a null descriptor")
		d, err := b.RegisterMem(c, 1, mt, p, 128)
		if err != nil {
			return err
		}
		if err := b.DeregisterMem(c, &d); err != nil {
			return fmt.Errorf("DeregisterMem: %w", err)
		}
		code(t, hccl.ENotFound, b.DeregisterMem(c, &d), "DeregisterMem twice")

		_, err = b.EnableMemAccess(c, &junk)
		code(t, hccl.EPara, err, "EnableMemAccess of bytes no peer produced")
		_, err = b.EnableMemAccess(c, &st.desc[0][1])
		code(t, hccl.EPara, err, "EnableMemAccess of the caller's own descriptor")
		_, err = b.EnableMemAccess(c, &st.peer[0][1])
		code(t, hccl.EPara, err, "EnableMemAccess of a descriptor already enabled")
		_, err = b.EnableMemAccess(c, nil)
		code(t, hccl.EPtr, err, "EnableMemAccess of a null descriptor")
		code(t, hccl.ENotFound, b.DisableMemAccess(c, &junk), "DisableMemAccess of bytes never enabled")

		// A timeout of -2 s or less: HCCL_E_PARA, before any rendezvous
		// (one_sided_service_adapt.cc:277-290; -1 is never, 0 the connect
		// timeout).
		_, err = b.ExchangeMemDesc(c, 1, nil, -2, make([]hccl.MemDesc, 1))
		code(t, hccl.EPara, err, "ExchangeMemDesc with timeout -2")
		// Offering a descriptor registered for another rank fails before
		// any rendezvous.
		if n >= 3 {
			remote := make([]hccl.MemDesc, 2)
			_, err = b.ExchangeMemDesc(c, 1, st.desc[0][2:3], 0, remote)
			code(t, hccl.EPara, err, "ExchangeMemDesc offering rank 2's descriptor to rank 1")
		}
		return nil
	}))

	// Transfers that must fail, on rank 0 reading rank 1, then its own
	// memory. Each batch holds a good descriptor first, whose destination
	// must stay untouched.
	g.noErr("transfer checks", g.some([]int{0}, func(w *worker) error {
		c := w.comm
		m := st.mem[0][1]
		pre := randBytes(rng, 256)
		buf, err := w.buffer(pre, 0)
		if err != nil {
			return err
		}
		defer w.free(buf)
		check := func(peer int, good, d hccl.OneSideOpDesc, want hccl.Result, what string) {
			t.Helper()
			for _, put := range []bool{false, true} {
				op, f := "BatchGet", b.BatchGet
				if put {
					op, f = "BatchPut", b.BatchPut
				}
				code(t, want, f(c, uint32(peer), []hccl.OneSideOpDesc{good, d}, w.r.Stream()), "%s %s", op, what)
			}
			if err := w.r.Sync(); err != nil {
				t.Errorf("Sync after a failed batch: %v", err)
			}
			got, err := w.read(buf, len(pre))
			if err != nil {
				t.Error(err)
				return
			}
			if dd := firstDiff(pre, got); dd != "" {
				t.Errorf("BatchGet %s: the good descriptor of the failed batch moved data: %s", what, dd)
			}
		}
		good := hccl.OneSideOpDesc{LocalAddr: buf, RemoteAddr: m.Addr, Count: 16, DataType: hccl.Uint8}
		bad := func(d hccl.OneSideOpDesc, want hccl.Result, what string) {
			t.Helper()
			check(1, good, d, want, what)
		}
		local := unsafe.Add(buf, 64)
		bad(hccl.OneSideOpDesc{LocalAddr: local, RemoteAddr: m.Addr + uintptr(m.Size) - 4, Count: 8, DataType: hccl.Uint8},
			hccl.EPara, "running past the end of the peer's memory")
		bad(hccl.OneSideOpDesc{LocalAddr: local, RemoteAddr: m.Addr + uintptr(m.Size) - 8, Count: 2, DataType: hccl.Uint64},
			hccl.EPara, "of 2 × uint64 from 8 bytes before the end")
		bad(hccl.OneSideOpDesc{LocalAddr: local, RemoteAddr: 16, Count: 8, DataType: hccl.Uint8},
			hccl.ENotFound, "from an address no peer registered")
		bad(hccl.OneSideOpDesc{LocalAddr: local, RemoteAddr: st.mem[0][1].Addr, Count: 8, DataType: hccl.DataType(13)},
			hccl.EPara, "with data type 13")
		bad(hccl.OneSideOpDesc{LocalAddr: nil, RemoteAddr: m.Addr, Count: 8, DataType: hccl.Uint8},
			hccl.EPtr, "into a null local address")
		if n >= 3 {
			// Rank 2's memory is enabled, but the batch names rank 1.
			bad(hccl.OneSideOpDesc{LocalAddr: local, RemoteAddr: st.mem[0][2].Addr, Count: 8, DataType: hccl.Uint8},
				hccl.ENotFound, "from rank 2's memory addressed to rank 1")
		}

		// The caller's own rank: memory it registered on the communicator
		// (for any peer) is reachable without exchange or enable; the
		// range checks are those of a peer's memory.
		own, ownSize := uintptr(st.region[0]), uintptr(st.size[0])
		goodSelf := hccl.OneSideOpDesc{LocalAddr: buf, RemoteAddr: own, Count: 16, DataType: hccl.Uint8}
		self := func(d hccl.OneSideOpDesc, want hccl.Result, what string) {
			t.Helper()
			check(0, goodSelf, d, want, what+" (own rank)")
		}
		self(hccl.OneSideOpDesc{LocalAddr: local, RemoteAddr: own + ownSize - 4, Count: 8, DataType: hccl.Uint8},
			hccl.EPara, "running past the end of the caller's registered memory")
		self(hccl.OneSideOpDesc{LocalAddr: local, RemoteAddr: 16, Count: 8, DataType: hccl.Uint8},
			hccl.ENotFound, "from an address nobody registered")
		unreg, err := w.alloc(64)
		if err != nil {
			return err
		}
		self(hccl.OneSideOpDesc{LocalAddr: local, RemoteAddr: uintptr(unreg), Count: 8, DataType: hccl.Uint8},
			hccl.ENotFound, "from the caller's memory it never registered")
		if err := w.free(unreg); err != nil {
			return err
		}
		self(hccl.OneSideOpDesc{LocalAddr: local, RemoteAddr: own, Count: 8, DataType: hccl.DataType(13)},
			hccl.EPara, "with data type 13")
		self(hccl.OneSideOpDesc{LocalAddr: nil, RemoteAddr: own, Count: 8, DataType: hccl.Uint8},
			hccl.EPtr, "into a null local address")
		// The failed BatchPuts left the caller's own memory alone.
		head, err := w.read(st.region[0], 16)
		if err != nil {
			return err
		}
		if d := firstDiff(st.data[0][:16], head); d != "" {
			t.Errorf("a failed BatchPut to the own rank moved data: %s", d)
		}
		// A good batch to the own rank reads the own memory.
		if err := b.BatchGet(c, 0, []hccl.OneSideOpDesc{goodSelf}, w.r.Stream()); err != nil {
			t.Errorf("BatchGet from the caller's own registered memory: %v", err)
		} else if err := w.r.Sync(); err != nil {
			t.Errorf("Sync after BatchGet from the own rank: %v", err)
		} else if got, err := w.read(buf, 16); err != nil {
			t.Error(err)
		} else if d := firstDiff(st.data[0][:16], got); d != "" {
			t.Errorf("BatchGet from the own rank: %s", d)
		}
		if err := w.r.Write(buf, pre); err != nil {
			return err
		}

		code(t, hccl.EPara, b.BatchGet(c, uint32(n), []hccl.OneSideOpDesc{good}, w.r.Stream()), "BatchGet from rank = size")
		code(t, hccl.EPtr, b.BatchGet(0, 1, []hccl.OneSideOpDesc{good}, w.r.Stream()), "BatchGet on a null comm")
		if err := b.BatchGet(c, 1, nil, w.r.Stream()); err != nil {
			t.Errorf("BatchGet of an empty batch: %v", err)
		}
		return w.r.Sync()
	}))

	// Registered and exchanged but never enabled; then enabled and
	// disabled; then enabled and deregistered by the owner while in use.
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
		code(t, hccl.ENotFound, get(), "BatchGet from memory exchanged but not enabled")
		m, err := b.EnableMemAccess(c, &recv0)
		if err != nil {
			return fmt.Errorf("EnableMemAccess: %w", err)
		}
		if m.Size != 1024 {
			return fmt.Errorf("EnableMemAccess: size %d, want 1024", m.Size)
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
		code(t, hccl.ENotFound, getM(), "BatchGet after DisableMemAccess")
		code(t, hccl.ENotFound, b.DisableMemAccess(c, &recv0), "DisableMemAccess twice")
		if enabled, err = b.EnableMemAccess(c, &recv0); err != nil {
			return fmt.Errorf("EnableMemAccess again after disabling: %w", err)
		}
		return w.r.Sync()
	}))
	// The owner deregisters while rank 0 still has access. The owner
	// itself reaches that memory until then, and not after.
	g.noErr("owner deregisters", g.some([]int{1}, func(w *worker) error {
		buf, err := w.alloc(64)
		if err != nil {
			return err
		}
		defer w.free(buf)
		selfDesc := []hccl.OneSideOpDesc{{LocalAddr: buf, RemoteAddr: uintptr(extra[1]), Count: 64, DataType: hccl.Uint8}}
		if err := b.BatchGet(w.comm, 1, selfDesc, w.r.Stream()); err != nil {
			return fmt.Errorf("BatchGet from the owner's own registered memory: %w", err)
		}
		if err := w.r.Sync(); err != nil {
			return err
		}
		if err := b.DeregisterMem(w.comm, &d10); err != nil {
			return err
		}
		code(t, hccl.ENotFound, b.BatchGet(w.comm, 1, selfDesc, w.r.Stream()), "BatchGet from the own rank's deregistered memory")
		code(t, hccl.ENotFound, b.BatchPut(w.comm, 1, selfDesc, w.r.Stream()), "BatchPut into the own rank's deregistered memory")
		return w.r.Sync()
	}))
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
		code(t, hccl.ENotFound, err, "EnableMemAccess of a descriptor its owner deregistered")
		return nil
	}))
	g.some([]int{0, 1}, func(w *worker) error { return w.free(extra[w.rank]) })

	// A receive capacity smaller than the peer's offer fails on the
	// receiving side only.
	g.noErr("capacity", g.some([]int{0, 1}, func(w *worker) error {
		peer := 1 - w.rank
		if w.rank == 1 {
			_, err := b.ExchangeMemDesc(w.comm, uint32(peer), []hccl.MemDesc{st.desc[1][0], st.desc[1][0]}, 0, make([]hccl.MemDesc, 4))
			return err
		}
		_, err := b.ExchangeMemDesc(w.comm, uint32(peer), nil, 0, make([]hccl.MemDesc, 1))
		code(t, hccl.EPara, err, "ExchangeMemDesc receiving 2 descriptors into capacity 1")
		return nil
	}))
	st.teardown(g)
	g.noErr("CommDestroy", g.destroy())
}

func (s *suite) testWindows(t *testing.T) {
	n := min(3, s.maxRanks)
	g := s.newGroup(t, n).mustInit()
	b := g.b
	wins := make([]hccl.RegistrationHandle, n)
	mem := make([]unsafe.Pointer, n)
	errs := g.each(func(w *worker) error {
		p, err := w.alloc(8192)
		if err != nil {
			return err
		}
		mem[w.rank] = p
		wins[w.rank], err = b.CommRegister(w.comm, p, 8192, 0)
		return err
	})
	s.unsupported(t, Windows, errs[0])
	g.noErr("CommRegister", errs)
	g.noErr("CommExchangeMem", g.each(func(w *worker) error {
		var peers []uint32
		for q := 0; q < n; q++ {
			if q != w.rank {
				peers = append(peers, uint32(q))
			}
		}
		return b.CommExchangeMem(w.comm, wins[w.rank], peers)
	}))
	g.noErr("window checks", g.some([]int{0}, func(w *worker) error {
		c := w.comm
		_, err := b.CommRegister(c, nil, 64, 0)
		code(t, hccl.EPtr, err, "CommRegister of a null address")
		_, err = b.CommRegister(c, mem[0], 0, 0)
		code(t, hccl.EPara, err, "CommRegister of size 0")
		_, err = b.CommRegister(c, mem[0], 64, 1)
		code(t, hccl.EPara, err, "CommRegister with flag 1")
		code(t, hccl.EPara, b.CommExchangeMem(c, wins[0], []uint32{0}), "CommExchangeMem with self")
		code(t, hccl.EPara, b.CommExchangeMem(c, wins[0], []uint32{uint32(n)}), "CommExchangeMem with rank = size")
		code(t, hccl.ENotFound, b.CommExchangeMem(c, wins[0]+12345, []uint32{1}), "CommExchangeMem of an unknown window")
		code(t, hccl.ENotFound, b.CommDeregister(c, wins[0]+12345), "CommDeregister of an unknown window")
		return nil
	}))
	g.noErr("CommDeregister", g.each(func(w *worker) error {
		if err := b.CommDeregister(w.comm, wins[w.rank]); err != nil {
			return err
		}
		code(t, hccl.ENotFound, b.CommDeregister(w.comm, wins[w.rank]), "CommDeregister twice")
		return w.free(mem[w.rank])
	}))
	g.noErr("CommDestroy", g.destroy())
}
